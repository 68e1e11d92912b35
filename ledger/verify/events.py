"""How a ledger event's hash is computed, restated without Django: the chain link
`hash = sha256(prev_hash + canonical event)` and the Merkle leaf it becomes."""

import hashlib
import json
from typing import Any

from .merkle import leaf_hash

GENESIS_HASH = "0" * 64


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 as is: the one byte-exact form fluidbox hashes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def event_hash(*, prev_hash: str, run: str, seq: int, type: str, at: str, data: Any) -> str:
    body = canonical_json({"run": run, "seq": seq, "type": type, "at": at, "data": data})
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


def event_leaf_hash(event_hash_hex: str) -> bytes:
    """The Merkle leaf of an event is its chain hash (32 bytes), hashed as an RFC 6962 leaf."""
    return leaf_hash(bytes.fromhex(event_hash_hex))
