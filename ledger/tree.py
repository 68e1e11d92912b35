"""One organization's Merkle tree in the database: leaves one row each, and full tiles
(c2sp.org/tlog-tiles: 256 hashes at tree levels 0, 8, 16, …) written once when they fill.

Any hash of the tree at any size up to the sequenced size is found from at most one tile
(or the leaves and tile roots of the tree's right edge) per 8 levels, so a proof reads a
handful of rows and hashes a few hundred times: O(log n), never the whole tree.
"""

from django.db.models import Q

from ledger.log_models import LogLeaf, LogTile
from ledger.merkle import consistency_path, inclusion_path, subtree_root
from ledger.verify.merkle import node_hash

TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT


class TreeStorageError(Exception):
    """The stored tree is missing hashes it should have: storage was tampered with."""


def _chunks(blob: bytes) -> list[bytes]:
    return [blob[i : i + 32] for i in range(0, len(blob), 32)]


def _tile_root(entries: list[bytes]) -> bytes:
    level = entries
    while len(level) > 1:
        level = [node_hash(level[i], level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


def _load_entries(
    log_id: int, level: int, index: int, width: int, *, edge: bool = False
) -> list[bytes]:
    """The first `width` hashes of tile (level, index): the full tile when written, else
    (the tree's right edge) the leaves, or the roots of the full tiles one level down."""
    if not edge:
        tile = LogTile.objects.filter(log_id=log_id, level=level, index=index)
        for blob in tile.values_list("hashes", flat=True):
            return _chunks(bytes(blob))[:width]
    first = index * TILE_WIDTH
    if level == 0:
        rows = LogLeaf.objects.filter(
            log_id=log_id, index__gte=first, index__lt=first + width
        ).order_by("index")
        found = list(rows.values_list("index", "hash"))
    else:
        rows = LogTile.objects.filter(
            log_id=log_id, level=level - 1, index__gte=first, index__lt=first + width
        ).order_by("index")
        found = list(rows.values_list("index", "root"))
    if [position for position, _ in found] != list(range(first, first + width)):
        raise TreeStorageError(
            f"log {log_id}: tile {level}/{index} is missing hashes (wanted {width})"
        )
    return [bytes(digest) for _, digest in found]


class TreeReader:
    """Hashes of one log's tree as it was at `size` leaves (a checkpoint's size, say).

    A proof first runs with a stand-in for the hashes to learn which tiles it touches, then
    reads them all at once: one query for the full tiles and at most two for the right
    edge (its leaves, and the roots of full tiles one level down), whatever the tree's size.
    """

    def __init__(self, log_id: int, size: int) -> None:
        self.log_id = log_id
        self.size = size
        self._entries: dict[tuple[int, int], list[bytes]] = {}
        self._tiles: dict[tuple[int, int], list[list[bytes]]] = {}
        self._planning: set[tuple[int, int]] | None = None

    def _width(self, level: int, index: int) -> int:
        available = self.size >> (TILE_HEIGHT * level)
        width = min(TILE_WIDTH, available - index * TILE_WIDTH)
        if width <= 0:
            raise TreeStorageError(f"tile {level}/{index} is beyond size {self.size}")
        return width

    def _tile_levels(self, level: int, index: int) -> list[list[bytes]]:
        key = (level, index)
        levels = self._tiles.get(key)
        if levels is None:
            entries = self._entries.pop(key, None)
            if entries is None:
                entries = _load_entries(self.log_id, level, index, self._width(level, index))
            levels = [entries]
            while len(levels[-1]) > 1:
                below = levels[-1]
                levels.append(
                    [node_hash(below[i], below[i + 1]) for i in range(0, len(below) - 1, 2)]
                )
            self._tiles[key] = levels
        return levels

    def node(self, height: int, index: int) -> bytes:
        """The hash of the complete subtree of 2**height leaves starting at index·2**height."""
        level, within = divmod(height, TILE_HEIGHT)
        first_entry = index << within
        tile, offset = divmod(first_entry, TILE_WIDTH)
        if self._planning is not None:
            self._planning.add((level, tile))
            return bytes(32)
        return self._tile_levels(level, tile)[within][offset >> within]

    def _prefetched(self, compute):
        """Run `compute` once to list the tiles it needs, read them together, run it again."""
        self._planning = set()
        try:
            compute()
        finally:
            wanted, self._planning = self._planning, None
        self._load_many(wanted - self._tiles.keys() - self._entries.keys())
        return compute()

    def _load_many(self, keys: set[tuple[int, int]]) -> None:
        if not keys:
            return
        widths = {key: self._width(*key) for key in keys}
        wanted = Q()
        for level, index in keys:
            wanted |= Q(level=level, index=index)
        found = LogTile.objects.filter(Q(log_id=self.log_id) & wanted)
        for level, index, blob in found.values_list("level", "index", "hashes"):
            self._entries[(level, index)] = _chunks(bytes(blob))[: widths[(level, index)]]
        # What has no full tile yet is the tree's right edge: at most one tile per level,
        # read from the leaves (level 0) and the roots of full tiles (one query for all).
        edge = sorted(keys - self._entries.keys())
        roots = Q()
        for level, index in edge:
            first, width = index * TILE_WIDTH, widths[(level, index)]
            if level == 0:
                self._entries[(0, index)] = _load_entries(self.log_id, 0, index, width, edge=True)
            else:
                roots |= Q(level=level - 1, index__gte=first, index__lt=first + width)
        if roots:
            found: dict[tuple[int, int], bytes] = {
                (level, index): bytes(root)
                for level, index, root in LogTile.objects.filter(
                    Q(log_id=self.log_id) & roots
                ).values_list("level", "index", "root")
            }
            for level, index in edge:
                if level == 0:
                    continue
                first, width = index * TILE_WIDTH, widths[(level, index)]
                try:
                    self._entries[(level, index)] = [
                        found[(level - 1, position)] for position in range(first, first + width)
                    ]
                except KeyError:
                    raise TreeStorageError(
                        f"log {self.log_id}: tile {level}/{index} is missing hashes"
                    ) from None

    def mth(self, start: int, end: int) -> bytes:
        return subtree_root(start, end, self.node)

    def root(self) -> bytes:
        return self._prefetched(lambda: self.mth(0, self.size))

    def inclusion(self, index: int) -> list[bytes]:
        return self._prefetched(lambda: inclusion_path(index, self.size, self.mth))

    def consistency(self, first: int) -> list[bytes]:
        return self._prefetched(lambda: consistency_path(first, self.size, self.mth))


def leaves_append(log_id: int, old_size: int, events: list[tuple[int, bytes]]) -> int:
    """Give `events` ([(event id, leaf hash)], in order) the leaves from `old_size` on, and
    write every tile they fill. Runs in the sequencer's transaction; returns the new size."""
    LogLeaf.objects.bulk_create(
        [
            LogLeaf(log_id=log_id, index=old_size + offset, event_id=event_id, hash=digest)
            for offset, (event_id, digest) in enumerate(events)
        ],
        batch_size=2000,
    )
    new_size = old_size + len(events)
    level = 0
    while (new_size >> (TILE_HEIGHT * level)) >= TILE_WIDTH:
        before = old_size >> (TILE_HEIGHT * level)
        after = new_size >> (TILE_HEIGHT * level)
        for tile in range(before // TILE_WIDTH, after // TILE_WIDTH):
            entries = _load_entries(log_id, level, tile, TILE_WIDTH)
            LogTile.objects.create(
                log_id=log_id,
                level=level,
                index=tile,
                hashes=b"".join(entries),
                root=_tile_root(entries),
            )
        level += 1
    return new_size
