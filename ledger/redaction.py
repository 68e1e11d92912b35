"""The redactor: the only way to build a `Redacted` envelope, which is all the ledger accepts."""

import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from fluidbox.canonical import canonical_json, sha256_hex

MASK = "[redacted]"
MAX_STRING = 200
MAX_PREVIEW = 300
MAX_DEPTH = 12
MAX_ITEMS = 50

SECRET_KEY_PATTERN = re.compile(
    r"pass(word|wd|phrase)?|secret|token|authori[sz]ation|api[_-]?key|apikey|cookie|"
    r"credential|private[_-]?key|session[_-]?key|signature|bearer",
    re.IGNORECASE,
)
# Keys whose values are identifiers the ledger needs verbatim even though their names
# look secret-ish (e.g. `session_id` would not match; `tool_call_id` neither).
_ALLOWED_KEYS = frozenset({"session_id", "tool_call_id", "request_key", "token_count"})

_construction_token = object()


class Redacted:
    """A redacted envelope. Construct it with `redact(...)`; anything else raises."""

    __slots__ = ("_data",)

    def __init__(self, data: dict, *, _token: object = None) -> None:
        if _token is not _construction_token:
            raise TypeError("Redacted can only be built by ledger.redaction.redact()")
        self._data = data

    @property
    def data(self) -> dict:
        return self._data


class _SecretRegistry:
    """Plaintexts the vault has handled in this process, masked wherever they show up."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._lock = threading.Lock()

    def add(self, value: str) -> None:
        if value and len(value) >= 4:
            with self._lock:
                self._values.add(value)

    def snapshot(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(sorted(self._values, key=len, reverse=True))


secret_registry = _SecretRegistry()


def register_secret(value: str) -> None:
    secret_registry.add(value)


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, MASK)
    return text


def _scrub(value: Any, secrets: tuple[str, ...], depth: int) -> Any:
    if depth > MAX_DEPTH:
        return "[truncated]"
    if isinstance(value, Mapping):
        out = {}
        for index, (key, item) in enumerate(value.items()):
            if index >= MAX_ITEMS:
                out["…"] = f"{len(value) - MAX_ITEMS} more keys"
                break
            key = str(key)
            if key not in _ALLOWED_KEYS and SECRET_KEY_PATTERN.search(key):
                out[key] = MASK
            else:
                out[key] = _scrub(item, secrets, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        items = [_scrub(item, secrets, depth + 1) for item in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"… {len(value) - MAX_ITEMS} more items")
        return items
    if isinstance(value, str):
        text = mask_secrets(value, secrets)
        if len(text) > MAX_STRING:
            text = text[:MAX_STRING] + f"… ({len(value)} chars)"
        return text
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return _scrub(str(value), secrets, depth)


def redact(data: Mapping[str, Any], *, secrets: Iterable[str] = ()) -> Redacted:
    """Mask secret-looking keys and known secret values, truncate long strings."""
    known = tuple(secrets) + secret_registry.snapshot()
    return Redacted(_scrub(dict(data), known, 0), _token=_construction_token)


def argument_digest(arguments: Any) -> str:
    return sha256_hex(canonical_json(arguments))


def argument_preview(arguments: Any, *, secrets: Iterable[str] = ()) -> str:
    """A truncated, masked preview of arguments for the ledger (never the whole payload)."""
    known = tuple(secrets) + secret_registry.snapshot()
    text = canonical_json(_scrub(arguments, known, 0))
    if len(text) > MAX_PREVIEW:
        text = text[:MAX_PREVIEW] + "…"
    return text


def payload_digest(payload: Any) -> str:
    """Tool results and prompts enter the ledger only as this digest."""
    return sha256_hex(canonical_json(payload))
