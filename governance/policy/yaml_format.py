"""Reading policy YAML strictly and writing it back stably.

Reading refuses what makes a file mean something other than what a reviewer
sees: duplicate keys (PyYAML would silently keep the last), anchors and aliases
(`*name`, which also makes an unquoted pattern like `*` fail loudly instead of
being read as an alias), tags beyond plain YAML, several documents in one file,
and files over `MAX_YAML_BYTES`. It also refuses, as a problem like any other, what
would crash PyYAML itself: nesting deeper than `MAX_YAML_DEPTH` (its composer
recurses) and an integer too long for Python to convert.

Writing quotes every string as a YAML double-quoted scalar with invisible and
control characters escaped (`"\\u200b"`), so an exported policy shows exactly what
it matches and reads back to the same document (and digest).
"""

import math
from typing import Any

import yaml

from governance.policy.invisible import escape_char, is_invisible

MAX_YAML_BYTES = 1024 * 1024
# Far deeper than any policy or bundle (a bundle's schema nested past the freeze guard's 32
# levels still imports, and its tool freezes uncallable), far below the recursion limit:
# PyYAML's composer takes about three frames a level.
MAX_YAML_DEPTH = 100


class YamlProblem(ValueError):
    pass


class _StrictLoader(yaml.SafeLoader):
    _depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise YamlProblem(
                f"line {event.start_mark.line + 1}: aliases (*name) are not allowed; "
                "quote patterns that start with `*`"
            )
        if getattr(event, "anchor", None):
            raise YamlProblem(f"line {event.start_mark.line + 1}: anchors (&name) are not allowed")
        if self._depth >= MAX_YAML_DEPTH:
            raise YamlProblem(
                f"line {event.start_mark.line + 1}: nested deeper than {MAX_YAML_DEPTH} levels"
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            line = key_node.start_mark.line + 1
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise YamlProblem(f"line {line}: merge keys (<<) are not allowed")
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool | type(None)):
                raise YamlProblem(f"line {line}: mapping keys must be plain scalars")
            if key in seen:
                raise YamlProblem(f"line {line}: duplicate key {key!r}")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_YAML_BYTES:
        raise YamlProblem(f"the file is larger than {MAX_YAML_BYTES // 1024} KiB")
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except YamlProblem:
        raise
    except yaml.YAMLError as error:
        hint = "; quote patterns that start with `*`" if "alias" in str(error) else ""
        raise YamlProblem(f"invalid YAML: {error}{hint}") from None
    except ValueError as error:  # int("9" * 5000): over Python's digit limit
        raise YamlProblem(f"invalid YAML: {error}") from None


def quote(text: str) -> str:
    """`text` as a YAML double-quoted scalar, invisible characters escaped."""
    out = ['"']
    for char in text:
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) < 0x20 or char == "\x7f" or is_invisible(char) or not _printable(char):
            out.append(escape_char(char) if ord(char) > 0xFF else f"\\x{ord(char):02x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _printable(char: str) -> bool:
    code = ord(char)
    return (
        0x20 <= code <= 0x7E
        or code == 0x85
        or 0xA0 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    )


def flow(value: Any) -> str:
    """A JSON value as YAML flow syntax that reads back to the same value and type."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite numbers are not JSON")
        text = repr(value)
        if "e" in text:
            mantissa, exponent = text.split("e")
            if "." not in mantissa:
                mantissa += ".0"
            sign = "" if exponent.startswith(("-", "+")) else "+"
            text = f"{mantissa}e{sign}{exponent}"
        return text
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, list):
        return "[" + ", ".join(flow(item) for item in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items())
        return "{" + ", ".join(f"{quote(k)}: {flow(v)}" for k, v in items) + "}"
    raise ValueError(f"{type(value).__name__} is not a JSON value")
