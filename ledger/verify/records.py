"""Reading a bundle's lines into records, strictly: an auditor and any other reader of the
same file must see the same thing. A duplicate key (one reader keeps the first, Python the
last), a field no hash or signature covers, or a value of the wrong type is refused, naming
the record, before anything is checked against it."""

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

KINDS = ("bundle", "key", "checkpoint", "consistency", "event", "end")
_HEX64 = re.compile(r"[0-9a-f]{64}")
# Run ids and event types are printed in verdicts: no spaces, no control characters.
_NAME = re.compile(r"[0-9A-Za-z][0-9A-Za-z._:-]{0,127}")
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]", re.ASCII)


class BundleError(Exception):
    """The first record that does not hold, and why."""

    def __init__(self, record: int, what: str, problem: str) -> None:
        self.record = record
        self.what = what
        self.problem = problem
        super().__init__(f"record {record} ({what}): {problem}")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _text_or_null(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _list_or_null(value: Any) -> bool:
    return value is None or isinstance(value, list)


def is_name(value: Any) -> bool:
    return isinstance(value, str) and bool(_NAME.fullmatch(value))


def _hex_hash(value: Any) -> bool:
    return isinstance(value, str) and bool(_HEX64.fullmatch(value))


def _seq(value: Any) -> bool:
    return _count(value) and value >= 1


def _any(value: Any) -> bool:
    return True


_Check = tuple[Callable[[Any], bool], str]
COUNT: _Check = (_count, "a whole number (0 or more)")
TEXT: _Check = (_text, "a string")
TEXT_OR_NULL: _Check = (_text_or_null, "a string or null")
LIST_OR_NULL: _Check = (_list_or_null, "a list of base64 hashes or null")
NAME: _Check = (is_name, "an id of letters, digits and . _ : - (at most 128)")
HEX_HASH: _Check = (_hex_hash, "64 lowercase hex digits")
SEQ: _Check = (_seq, "a whole number from 1")
ANY: _Check = (_any, "")

# Each kind's fields: those it must have, then those it may have. Nothing else is accepted.
FIELDS: dict[str, tuple[dict[str, _Check], dict[str, _Check]]] = {
    "bundle": (
        {"format": TEXT, "origin": TEXT, "scope": TEXT, "tree_size": COUNT},
        {"org": TEXT_OR_NULL, "run": TEXT_OR_NULL, "exported_at": TEXT_OR_NULL},
    ),
    "key": ({"vkey": TEXT}, {"created_at": TEXT_OR_NULL, "retired_at": TEXT_OR_NULL}),
    "checkpoint": ({"note": TEXT}, {}),
    "consistency": (
        {"from": COUNT, "to": COUNT, "path": LIST_OR_NULL},
        {"unavailable": TEXT},
    ),
    "event": (
        {
            "leaf": COUNT,
            "run": NAME,
            "seq": SEQ,
            "type": NAME,
            "at": TEXT,
            "data": ANY,
            "prev_hash": HEX_HASH,
            "hash": HEX_HASH,
        },
        {"inclusion": LIST_OR_NULL, "unavailable": TEXT},
    ),
    "end": ({"events": COUNT}, {}),
}


_SEPARATORS = (",", ":")  # ledger/export.py's


class _Refused(ValueError):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict:
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise _Refused(f"the key {twice!r} appears twice in one object")
    return record


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


def _decode(number: int, line: str | bytes) -> Any:
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise BundleError(number, "line", f"not UTF-8: {error.reason}") from None
    if not line.strip():
        raise BundleError(number, "line", "empty line inside the bundle")
    try:
        value = json.loads(line, parse_constant=_constant)
        if json.dumps(value, ensure_ascii=False, separators=_SEPARATORS) != line.rstrip("\n"):
            # Not as the exporter writes it (which a key given twice could not be): read it
            # again keeping every key. Parsing every line so would halve the verifier's speed.
            value = json.loads(line, object_pairs_hook=_object, parse_constant=_constant)
    except _Refused as error:
        raise BundleError(number, "line", str(error)) from None
    except (ValueError, RecursionError) as error:
        raise BundleError(number, "line", f"not JSON: {error}") from None
    if _ESCAPED_SURROGATE.search(line):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise BundleError(
                number, "line", "a string holds a lone surrogate: not UTF-8 text"
            ) from None
    return value


def read_records(lines: Iterable[str | bytes]) -> Iterator[tuple[int, str, dict]]:
    """(line number, kind, record) for every line, each checked against its kind's fields."""
    for number, line in enumerate(lines, start=1):
        record = _decode(number, line)
        if not isinstance(record, dict) or "record" not in record:
            if isinstance(record, dict) and {"seq", "type", "hash"} <= record.keys():
                raise BundleError(
                    number,
                    "line",
                    "an event as the events API and the portal's 'export JSON Lines' serve it, "
                    "not a bundle record: verify what `manage.py ledger export` writes",
                )
            raise BundleError(number, "line", "not a bundle record")
        kind = record["record"]
        if kind not in KINDS:
            shown = kind if isinstance(kind, str) and kind.isprintable() else repr(kind)
            raise BundleError(number, "line", f"unknown record type {shown[:60]!r}")
        yield number, kind, record


_CHECKS = {kind: {"record": ANY, **must, **may} for kind, (must, may) in FIELDS.items()}


def check_fields(number: int, kind: str, record: dict) -> None:
    required, _ = FIELDS[kind]
    checks = _CHECKS[kind]
    for name in required:
        if name not in record:
            raise BundleError(number, kind, f"no {name!r} field")
    for name, value in record.items():
        check = checks.get(name)
        if check is None:
            unknown = sorted(record.keys() - checks.keys())[0]
            raise BundleError(
                number, kind, f"unknown field {unknown[:60]!r}: no hash or signature covers it"
            )
        valid, meaning = check
        if not valid(value):
            raise BundleError(number, kind, f"{name!r} must be {meaning}")
