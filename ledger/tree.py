"""One organization's Merkle tree in the database: leaves one row each, and full tiles
(c2sp.org/tlog-tiles: 256 hashes at tree levels 0, 8, 16, …) written once when they fill.

Any hash of the tree at any size up to the sequenced size is found from at most one tile
(or the leaves and tile roots of the tree's right edge) per 8 levels, so a proof reads a
handful of rows and hashes a few hundred times: O(log n), never the whole tree.

Tiles never change once written, and neither do the first entries of a partial one (the
tree only grows), so each process keeps the tiles it has read (`TILES`): the upper tiles,
which every proof passes through, are read from the database once.
"""

import hashlib
import threading
from collections import OrderedDict

from django.db import connection

from ledger.log_models import LogLeaf, LogTile, OrgLog
from ledger.merkle import consistency_path, inclusion_path, subtree_root

TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT
HASH = 32

_sha256 = hashlib.sha256


class TreeStorageError(Exception):
    """The stored tree is missing hashes it should have: storage was tampered with."""


def _chunks(blob: bytes) -> list[bytes]:
    return [blob[i : i + HASH] for i in range(0, len(blob), HASH)]


def _pyramid(entries: list[bytes]) -> tuple[bytes, ...]:
    """Every complete subtree hash inside a tile, one bytes string per height (a tile's
    base entries, then their parents, …): RFC 6962 interior nodes, SHA-256(0x01 ‖ l ‖ r)."""
    levels = [b"".join(entries)]
    row = entries
    while len(row) > 1:
        row = [_sha256(b"\x01" + row[i] + row[i + 1]).digest() for i in range(0, len(row) - 1, 2)]
        levels.append(b"".join(row))
    return tuple(levels)


def _tile_root(entries: list[bytes]) -> bytes:
    return _pyramid(entries)[-1]


class TileCache:
    """The tiles this process has read, least recently used dropped first.

    A key names content that cannot change: (log, created, level, index, width) is the first
    `width` entries of a tile, fixed once the tree holds them. The log's creation time is in
    the key because an id can be handed out again after a rollback (SQLite reuses them).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._tiles: OrderedDict[tuple, tuple[bytes, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> tuple[bytes, ...] | None:
        with self._lock:
            found = self._tiles.get(key)
            if found is not None:
                self._tiles.move_to_end(key)
            return found

    def put(self, key: tuple, levels: tuple[bytes, ...]) -> None:
        with self._lock:
            self._tiles[key] = levels
            self._tiles.move_to_end(key)
            while len(self._tiles) > self.capacity:
                self._tiles.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._tiles.clear()

    def __len__(self) -> int:
        return len(self._tiles)


# ~16 KiB a tile: 8 MiB per process at most. Enough for every upper tile of a log of 10^9
# leaves (a proof touches one tile per 8 levels) and the most recent leaf tiles.
TILES = TileCache(capacity=512)


def _sql(model, *fields: str) -> list[str]:
    quote = connection.ops.quote_name
    return [quote(model._meta.db_table)] + [
        quote(model._meta.get_field(name).column) for name in fields
    ]


def _fetch(log_id: int, full: set, edge: dict) -> dict[tuple[int, int], list[bytes]]:
    """Entries of tiles of one log, in one round trip whatever they are: the stored full
    tiles `full` ({(level, index)}), and `edge` ({(level, index): width}), tiles of the
    right edge built from their first `width` leaves (level 0) or roots of full tiles one
    level down. A full tile asked for as edge (a smaller tree's partial tile) is read whole
    and cut."""
    tiles, t_log, t_level, t_index, t_hashes, t_root = _sql(
        LogTile, "log", "level", "index", "hashes", "root"
    )
    leaves, l_log, l_index, l_hash = _sql(LogLeaf, "log", "index", "hash")
    parts, params = [], []
    # One branch per tile, each an equality on the unique (log, level, index) index: with an
    # OR of them, the planner may walk all of a new log's tiles before its statistics exist.
    for level, index in [*full, *edge]:
        parts.append(
            f"SELECT 0, {t_level}, {t_index}, {t_hashes} FROM {tiles} "
            f"WHERE {t_log} = %s AND {t_level} = %s AND {t_index} = %s"
        )
        params += [log_id, level, index]
    for (level, index), width in edge.items():
        first = index * TILE_WIDTH
        if level == 0:
            parts.append(
                f"SELECT 1, 0, {l_index}, {l_hash} FROM {leaves} "
                f"WHERE {l_log} = %s AND {l_index} >= %s AND {l_index} < %s"
            )
            params += [log_id, first, first + width]
        else:
            parts.append(
                f"SELECT 2, {t_level}, {t_index}, {t_root} FROM {tiles} "
                f"WHERE {t_log} = %s AND {t_level} = %s AND {t_index} >= %s AND {t_index} < %s"
            )
            params += [log_id, level - 1, first, first + width]
    if not parts:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        rows = cursor.fetchall()
    stored: dict[tuple[int, int], bytes] = {}
    below: dict[tuple[int, int], bytes] = {}  # (level of the tile they build, index): hash
    for kind, level, index, blob in rows:
        if kind == 0:
            stored[(level, index)] = bytes(blob)
        else:
            below[(level + (kind == 2), index)] = bytes(blob)
    found: dict[tuple[int, int], list[bytes]] = {}
    for key in full:
        if key not in stored:
            raise TreeStorageError(f"log {log_id}: tile {key[0]}/{key[1]} is missing")
        found[key] = _chunks(stored[key])
    for (level, index), width in edge.items():
        if (level, index) in stored:
            found[(level, index)] = _chunks(stored[(level, index)])[:width]
            continue
        first = index * TILE_WIDTH
        try:
            found[(level, index)] = [below[(level, n)] for n in range(first, first + width)]
        except KeyError:
            raise TreeStorageError(
                f"log {log_id}: tile {level}/{index} is missing hashes (wanted {width})"
            ) from None
    return found


class TreeReader:
    """Hashes of one log's tree as it was at `size` leaves (a checkpoint's size, say).

    A proof first runs with a stand-in for the hashes to learn which tiles it touches, then
    takes those this process has not cached from the database in one query, whatever the
    tree's size. `cache=None` reads everything from storage.
    """

    def __init__(self, log: OrgLog, size: int, *, cache: TileCache | None = TILES) -> None:
        self.log_id = log.pk
        self.size = size
        self._log_key = (log.pk, log.created_at)
        self._cache = cache
        self._tiles: dict[tuple[int, int], tuple[bytes, ...]] = {}
        self._planning: set[tuple[int, int]] | None = None

    def _width(self, level: int, index: int) -> int:
        available = self.size >> (TILE_HEIGHT * level)
        width = min(TILE_WIDTH, available - index * TILE_WIDTH)
        if width <= 0:
            raise TreeStorageError(f"tile {level}/{index} is beyond size {self.size}")
        return width

    def node(self, height: int, index: int) -> bytes:
        """The hash of the complete subtree of 2**height leaves starting at index·2**height."""
        level, within = divmod(height, TILE_HEIGHT)
        first_entry = index << within
        tile, offset = divmod(first_entry, TILE_WIDTH)
        if self._planning is not None:
            self._planning.add((level, tile))
            return bytes(HASH)
        levels = self._tiles.get((level, tile))
        if levels is None:  # outside a planned computation: read it now
            self._load_many({(level, tile)})
            levels = self._tiles[(level, tile)]
        start = (offset >> within) * HASH
        digest = levels[within][start : start + HASH] if within < len(levels) else b""
        if len(digest) != HASH:
            raise TreeStorageError(f"log {self.log_id}: no node {height}/{index} in tile {tile}")
        return digest

    def _prefetched(self, compute):
        """Run `compute` once to list the tiles it needs, read them together, run it again."""
        self._planning = set()
        try:
            compute()
        finally:
            wanted, self._planning = self._planning, None
        self._load_many(wanted - self._tiles.keys())
        return compute()

    def _cache_key(self, level: int, index: int) -> tuple:
        return (*self._log_key, level, index, self._width(level, index))

    def _keep(self, key: tuple[int, int], entries: list[bytes]) -> None:
        levels = _pyramid(entries)
        self._tiles[key] = levels
        if self._cache is not None:
            self._cache.put(self._cache_key(*key), levels)

    def _load_many(self, keys: set[tuple[int, int]]) -> None:
        if self._cache is not None:
            for key in list(keys):
                levels = self._cache.get(self._cache_key(*key))
                if levels is not None:
                    self._tiles[key] = levels
                    keys.discard(key)
        if not keys:
            return
        widths = {key: self._width(*key) for key in keys}
        full = {key for key, width in widths.items() if width == TILE_WIDTH}
        edge = {key: width for key, width in widths.items() if width < TILE_WIDTH}
        for key, entries in _fetch(self.log_id, full, edge).items():
            self._keep(key, entries)

    def leaf_of_event(self, event_id: int) -> tuple[int, bytes] | None:
        """The event's leaf (index, hash), None if it has none, read together with the
        leaf's tile so that an inclusion proof right after needs no second query when the
        tiles above it are cached."""
        leaves, l_log, l_index, l_hash, l_event = _sql(LogLeaf, "log", "index", "hash", "event")
        tiles, t_log, t_level, t_index, t_hashes = _sql(LogTile, "log", "level", "index", "hashes")
        with connection.cursor() as cursor:
            # By the event alone (its unique index): with the log in the WHERE too, the
            # planner may scan all of a new log's leaves before its statistics exist.
            cursor.execute(
                f"SELECT l.{l_log}, l.{l_index}, l.{l_hash}, t.{t_hashes} FROM {leaves} l "
                f"LEFT JOIN {tiles} t ON t.{t_log} = l.{l_log} AND t.{t_level} = 0 "
                f"AND t.{t_index} = l.{l_index} / {TILE_WIDTH:d} "
                f"WHERE l.{l_event} = %s",
                [event_id],
            )
            row = cursor.fetchone()
        if row is None or row[0] != self.log_id:
            return None
        _, index, digest, blob = row
        tile = index // TILE_WIDTH
        if blob is not None and index < self.size and (0, tile) not in self._tiles:
            levels = self._cache.get(self._cache_key(0, tile)) if self._cache else None
            if levels is not None:
                self._tiles[(0, tile)] = levels
            else:
                self._keep((0, tile), _chunks(bytes(blob))[: self._width(0, tile)])
        return index, bytes(digest)

    def mth(self, start: int, end: int) -> bytes:
        return subtree_root(start, end, self.node)

    def root(self) -> bytes:
        return self._prefetched(lambda: self.mth(0, self.size))

    def inclusion(self, index: int) -> list[bytes]:
        return self._prefetched(lambda: inclusion_path(index, self.size, self.mth))

    def consistency(self, first: int) -> list[bytes]:
        return self._prefetched(lambda: consistency_path(first, self.size, self.mth))


class TreeAppender:
    """Appends leaves to one log's tree inside the sequencer's transaction: the leaf rows,
    and every tile they fill, hashed from what is in hand. Only the partial tile at each
    level that existed before is read back, once."""

    def __init__(self, log_id: int, size: int) -> None:
        self.log_id = log_id
        self.size = size
        self._edge: dict[int, list[bytes]] = {}  # level -> entries of its partial tile

    def _partial(self, level: int) -> list[bytes]:
        entries = self._edge.get(level)
        if entries is None:
            count = self.size >> (TILE_HEIGHT * level)
            tile, width = divmod(count, TILE_WIDTH)
            entries = (
                _fetch(self.log_id, set(), {(level, tile): width})[(level, tile)] if width else []
            )
            self._edge[level] = entries
        return entries

    def append(self, leaves: list[tuple[int, bytes]]) -> int:
        """Give `leaves` ([(event id, leaf hash)], in order) the next indexes and write the
        tiles they complete. Returns the new size."""
        if not leaves:
            return self.size
        _leaves_insert(self.log_id, self.size, leaves)
        tiles: list[LogTile] = []
        pending = [digest for _, digest in leaves]
        level = 0
        while pending:
            entries = self._partial(level)
            entries.extend(pending)
            first_tile = self.size >> (TILE_HEIGHT * (level + 1))
            full = len(entries) // TILE_WIDTH
            pending = []
            for offset in range(full):
                chunk = entries[offset * TILE_WIDTH : (offset + 1) * TILE_WIDTH]
                root = _tile_root(chunk)
                tiles.append(
                    LogTile(
                        log_id=self.log_id,
                        level=level,
                        index=first_tile + offset,
                        hashes=b"".join(chunk),
                        root=root,
                    )
                )
                pending.append(root)
            self._edge[level] = entries[full * TILE_WIDTH :]
            level += 1
        if tiles:
            LogTile.objects.bulk_create(tiles)
        self.size += len(leaves)
        return self.size


def _leaves_insert(log_id: int, first: int, leaves: list[tuple[int, bytes]]) -> None:
    table = connection.ops.quote_name(LogLeaf._meta.db_table)
    columns = ", ".join(
        connection.ops.quote_name(LogLeaf._meta.get_field(name).column)
        for name in ("log", "index", "event", "hash")
    )
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # COPY: one round trip and no statement to parse, however many leaves. The text
            # is written here, a line per leaf: cheaper than adapting each value.
            text = "".join(
                f"{log_id}\t{first + offset}\t{event_id}\t\\\\x{digest.hex()}\n"
                for offset, (event_id, digest) in enumerate(leaves)
            )
            with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                copy.write(text.encode("ascii"))
        else:
            cursor.executemany(
                f"INSERT INTO {table} ({columns}) VALUES (%s, %s, %s, %s)",
                [
                    (log_id, first + offset, event_id, digest)
                    for offset, (event_id, digest) in enumerate(leaves)
                ],
            )


def leaves_append(log_id: int, old_size: int, events: list[tuple[int, bytes]]) -> int:
    """Give `events` ([(event id, leaf hash)], in order) the leaves from `old_size` on, and
    write every tile they fill. Runs in the sequencer's transaction; returns the new size."""
    return TreeAppender(log_id, old_size).append(events)
