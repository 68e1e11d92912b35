"""RFC 6962 / RFC 9162 Merkle tree hashing and proof verification (SHA-256).

Leaves are hashed with a 0x00 prefix and interior nodes with 0x01, so a leaf can never be
passed off as a node. Standard library only: an auditor runs this without fluidbox.
"""

import hashlib
from collections.abc import Sequence

EMPTY_ROOT = hashlib.sha256(b"").digest()


class ProofError(Exception):
    """A proof does not prove what it claims."""


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def largest_power_of_two_below(n: int) -> int:
    """The k of RFC 6962's split: the largest power of two smaller than n (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


class CompactRange:
    """The perfect subtrees covering leaves [0, size): enough to know the root at every size
    while leaves stream past, in O(log n) memory."""

    def __init__(self) -> None:
        self.size = 0
        self._stack: list[tuple[int, bytes]] = []  # (height, hash), heights decreasing

    def append(self, hashed_leaf: bytes) -> None:
        height, digest = 0, hashed_leaf
        while self._stack and self._stack[-1][0] == height:
            _, left = self._stack.pop()
            digest = node_hash(left, digest)
            height += 1
        self._stack.append((height, digest))
        self.size += 1

    def root(self) -> bytes:
        if not self._stack:
            return EMPTY_ROOT
        digest = self._stack[-1][1]
        for _, left in reversed(self._stack[:-1]):
            digest = node_hash(left, digest)
        return digest


def root_of(hashed_leaves: Sequence[bytes]) -> bytes:
    tree = CompactRange()
    for digest in hashed_leaves:
        tree.append(digest)
    return tree.root()


def verify_inclusion(
    hashed_leaf: bytes, index: int, size: int, path: Sequence[bytes], root: bytes
) -> None:
    """RFC 9162 §2.1.3.2. Raises ProofError unless `path` proves leaf `index` in `root`."""
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is outside a tree of size {size}")
    fn, sn, digest = index, size - 1, hashed_leaf
    for sibling in path:
        if sn == 0:
            raise ProofError("inclusion path is longer than the tree is high")
        if fn & 1 or fn == sn:
            digest = node_hash(sibling, digest)
            if not fn & 1:
                while True:
                    fn >>= 1
                    sn >>= 1
                    if fn & 1 or fn == 0:
                        break
        else:
            digest = node_hash(digest, sibling)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("inclusion path is shorter than the tree is high")
    if digest != root:
        raise ProofError("inclusion path does not lead to the root")


def verify_consistency(
    first: int, second: int, path: Sequence[bytes], first_root: bytes, second_root: bytes
) -> None:
    """RFC 9162 §2.1.4.2. Raises ProofError unless the tree of size `second` with
    `second_root` extends the tree of size `first` with `first_root`."""
    if first > second:
        raise ProofError(f"a tree of size {first} cannot grow into one of size {second}")
    if first == second:
        if path:
            raise ProofError("a tree is consistent with itself without a proof")
        if first_root != second_root:
            raise ProofError(f"two different roots for the same tree size {first}")
        return
    if first == 0:
        if path:
            raise ProofError("the empty tree is consistent with every tree without a proof")
        if first_root != EMPTY_ROOT:
            raise ProofError("a tree of size 0 must have the empty root")
        return
    if not path:
        raise ProofError("consistency path is empty")
    nodes = list(path)
    if first & (first - 1) == 0:
        nodes.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = nodes[0]
    for node in nodes[1:]:
        if sn == 0:
            raise ProofError("consistency path is longer than needed")
        if fn & 1 or fn == sn:
            fr = node_hash(node, fr)
            sr = node_hash(node, sr)
            if not fn & 1:
                while True:
                    fn >>= 1
                    sn >>= 1
                    if fn & 1 or fn == 0:
                        break
        else:
            sr = node_hash(sr, node)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("consistency path is shorter than needed")
    if fr != first_root:
        raise ProofError(f"the proof does not reproduce the root of size {first}")
    if sr != second_root:
        raise ProofError(f"the proof does not reproduce the root of size {second}")
