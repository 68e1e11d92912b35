"""The API's one JSON parser: it refuses what `json.loads` would crash on or quietly resolve."""

import json
import re
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# Far deeper than any request body fluidbox defines (tool schemas are bounded at 32 levels),
# far shallower than the recursion limit that turns a deep body into a RecursionError.
MAX_JSON_DEPTH = 64

# A JSON string literal (escapes included), so brackets inside strings are not counted.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class JsonRefused(ValueError):
    """The text is JSON we will not read: too deep, or an object repeats a key."""


def json_depth(text: str, *, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep arrays and objects nest, found without recursion (stops counting past
    `limit`). Malformed text may be over-counted; `json.loads` refuses it anyway."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = deepest = 0
    for char in brackets:
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                # Last-one-wins would let `{"tool": "read_file", "tool": "run_command"}`
                # mean one thing to a reviewer or proxy and another to the gate.
                raise JsonRefused(f"duplicate key {key[:100]!r} in a JSON object")
            seen.add(key)
    return obj


def _refuse_constant(name: str):
    raise JsonRefused(f"{name} is not valid JSON")


def loads_strict(text: str) -> Any:
    """`json.loads` that refuses duplicate keys, NaN/Infinity and nesting over MAX_JSON_DEPTH
    (checked before parsing, so no RecursionError can happen)."""
    if json_depth(text) > MAX_JSON_DEPTH:
        raise JsonRefused(f"JSON nests deeper than {MAX_JSON_DEPTH} levels")
    return json.loads(
        text, object_pairs_hook=_object_without_duplicates, parse_constant=_refuse_constant
    )


def json_refusal(body: bytes) -> str | None:
    """Why `loads_strict` refuses this body (too deep, a repeated key, NaN), or None. Other
    syntax errors are not reported: for a body another parser reads (the MCP SDK's), only
    what that parser would silently accept or crash on matters here.

    That includes a body `loads_strict` cannot read as UTF-8 but `json.loads` reads anyway:
    given bytes, it also reads UTF-16 and UTF-32 and skips a UTF-8 byte order mark, and
    the MCP SDK hands it the body's bytes. Such a body would carry a repeated key (a second
    tool name) past the checks above, so it is refused too (RFC 8259: JSON is UTF-8)."""
    try:
        loads_strict(body.decode("utf-8"))
    except JsonRefused as refused:
        return str(refused)
    except ValueError:  # not UTF-8 (UnicodeDecodeError is a ValueError), or not JSON
        pass
    else:
        return None
    try:
        json.loads(body)
    except (ValueError, RecursionError):
        return None  # the other parser refuses it too, with its own answer
    return "the body is not UTF-8 JSON (a byte order mark, or UTF-16 or UTF-32)"


class StrictJSONParser(JSONParser):
    """DRF's JSON parser with `loads_strict`: too deep or duplicated keys are a 400."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = stream.read().decode(encoding)
        except UnicodeDecodeError:
            raise ParseError(f"JSON parse error - the body is not {encoding} text") from None
        except LookupError:
            raise ParseError(f"unknown charset {encoding[:40]!r}") from None
        try:
            return loads_strict(text)
        except JsonRefused as refused:
            raise ParseError(f"JSON refused - {refused}") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
