"""Canonical JSON and digests: the one byte-exact form every hash in fluidbox is taken over.

It lives here, beside the settings and outside every app, because the policy engine (which
imports nothing from Django), the gate, the API and the ledger all depend on the same bytes.
"""

import hashlib
import json
from typing import Any

# One encoder for the process: `json.dumps` with options builds a new one on every call, and
# the gate takes several canonical forms per decision. An encoder keeps no state between calls.
_encoder = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 characters as they are."""
    return _encoder.encode(value)


def sha256_hex(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def digest_of(value: Any) -> str:
    return sha256_hex(canonical_json(value))
