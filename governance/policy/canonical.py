"""Canonical JSON: the one serialisation that digests and JSON subjects are computed over."""

import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 characters as they are."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
