"""Building RFC 6962 proofs from the stored tree: audit paths (PATH) and consistency proofs
(PROOF/SUBPROOF), over any source of subtree hashes. Verification lives in
`ledger.verify.merkle`, which an auditor runs without fluidbox."""

from collections.abc import Callable

from ledger.verify.merkle import EMPTY_ROOT, largest_power_of_two_below, node_hash

# MTH(D[start:end]) for the tree being proved.
SubtreeHash = Callable[[int, int], bytes]


def subtree_root(start: int, end: int, node: Callable[[int, int], bytes]) -> bytes:
    """MTH(D[start:end]) from `node(height, index)`, the hash of a complete, aligned subtree.
    A range on the tree's right edge splits into at most log2(n) complete subtrees."""
    size = end - start
    if size == 0:
        return EMPTY_ROOT
    if size & (size - 1) == 0 and start % size == 0:
        return node(size.bit_length() - 1, start // size)
    k = largest_power_of_two_below(size)
    return node_hash(subtree_root(start, start + k, node), subtree_root(start + k, end, node))


def inclusion_path(index: int, size: int, mth: SubtreeHash) -> list[bytes]:
    """PATH(m, D[0:n]) of RFC 6962 §2.1.1, leaf sibling first."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of size {size}")
    path: list[bytes] = []
    start, end = 0, size
    while end - start > 1:
        k = largest_power_of_two_below(end - start)
        if index < start + k:
            path.append(mth(start + k, end))
            end = start + k
        else:
            path.append(mth(start, start + k))
            start += k
    path.reverse()
    return path


def consistency_path(first: int, second: int, mth: SubtreeHash) -> list[bytes]:
    """PROOF(m, D[0:n]) of RFC 6962 §2.1.2; empty when there is nothing to prove."""
    if not 0 <= first <= second:
        raise ValueError(f"no consistency proof from size {first} to size {second}")
    if first == 0 or first == second:
        return []
    path: list[bytes] = []
    m, start, end, complete = first, 0, second, True
    while True:
        size = end - start
        if m == size:
            if not complete:
                path.append(mth(start, end))
            break
        k = largest_power_of_two_below(size)
        if m <= k:
            path.append(mth(start + k, end))
            end = start + k
        else:
            path.append(mth(start, start + k))
            m -= k
            start += k
            complete = False
    path.reverse()
    return path
