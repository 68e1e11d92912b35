"""Agent-written JSON laid out as `json.dumps(value, indent=2, sort_keys=True)` lays it out,
with every key and string literal handed to the caller to make visible.

The notifications (plain text, every hidden character a `\\u…` escape) and the approval page
(HTML, the same characters marked up) must show the same layout, line for line, so that what
the approver reads in the e-mail is what the page shows. Only the walk is shared: the layout's
own punctuation, indentation and newlines come from here, never from the agent, so a caller's
formatters are applied to agent-written text alone.
"""

import json
from collections.abc import Callable, Iterator

Format = Callable[[str], str]


def json_layout(value, *, key: Format, string: Format, scalar: Format) -> str:
    """`value` as indented JSON with sorted keys. `key` and `string` receive a key's or a
    string's JSON literal (quotes and JSON escapes included); `scalar` receives the JSON of a
    number, `true`, `false`, `null` or an empty object or array."""
    return "".join(_parts(value, 0, key, string, scalar))


def _parts(value, depth: int, key: Format, string: Format, scalar: Format) -> Iterator[str]:
    pad = "  " * (depth + 1)
    if isinstance(value, dict) and value:
        yield "{\n"
        for index, name in enumerate(sorted(value)):
            yield pad + key(_literal(str(name))) + ": "
            yield from _parts(value[name], depth + 1, key, string, scalar)
            yield ",\n" if index < len(value) - 1 else "\n"
        yield "  " * depth + "}"
    elif isinstance(value, list) and value:
        yield "[\n"
        for index, item in enumerate(value):
            yield pad
            yield from _parts(item, depth + 1, key, string, scalar)
            yield ",\n" if index < len(value) - 1 else "\n"
        yield "  " * depth + "]"
    elif isinstance(value, str):
        yield string(_literal(value))
    else:
        yield scalar(json.dumps(value, ensure_ascii=False))


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
