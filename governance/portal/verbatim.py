"""Showing exactly what would run: every character visible, the invisible and look-alike ones
escaped and highlighted, long runs of spaces marked with their length, so a reviewer cannot
miss them."""

import json
import re

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from governance.json_layout import json_layout
from governance.policy.invisible import (
    LONG_SPACE_RUN,
    describe_invisible,
    escape_char,
    escape_invisible,
    flagged,
)

_SPACE_RUN = re.compile(f" {{{LONG_SPACE_RUN},}}")
# A URL's scheme, then its authority up to the last `@` in it: the user and password it carries.
_USERINFO = re.compile(r"^([^:/?#]+://)[^/?#]*@")


def person(user, missing: str = "") -> SafeString | str:
    """A person's username, marked like an agent name: `аlice` with a Cyrillic `а` must not
    read as alice wherever a page says who decided, invoked, owns or holds something."""
    if user is None or user == "":
        return missing
    name = user.get_username() if hasattr(user, "get_username") else str(user)
    return highlighted(name, layout_is_visible=False)


def highlighted(text: str, *, layout_is_visible: bool = True) -> SafeString:
    """HTML of `text` with each invisible, bidi or look-alike character as a marked `\\u…`
    escape and each long run of spaces marked with its length.

    The escapes read exactly as `governance.policy.escape_invisible` writes them (the
    notifications' form), so the page and the webhook show the same text. With
    `layout_is_visible=False` (call keys, rules, anything shown on one line) newlines and tabs
    are escapes too, and so is every run of spaces; otherwise a run right after a newline is
    indentation and left alone.
    """
    positions = flagged(text, layout_is_visible=layout_is_visible)
    runs = [
        m.span()
        for m in _SPACE_RUN.finditer(text)
        if not layout_is_visible or m.start() == 0 or text[m.start() - 1] != "\n"
    ]
    if not positions and not runs:
        return escape(text)
    marks = sorted([(i, i + 1, "char") for i in positions] + [(a, b, "spaces") for a, b in runs])
    parts = []
    at = 0
    for start, end, kind in marks:
        parts.append(escape(text[at:start]))
        if kind == "spaces":
            count = end - start
            parts.append(
                format_html(
                    '<mark class="fb-spaces" title="{} spaces" data-spaces="{}">{}</mark>',
                    count,
                    count,
                    text[start:end],
                )
            )
        else:
            char = text[start]
            parts.append(
                format_html(
                    '<mark class="fb-invisible" title="{}">{}</mark>',
                    describe_invisible(char, positions[start]),
                    escape_char(char),
                )
            )
        at = end
    parts.append(escape(text[at:]))
    return mark_safe("".join(parts))


def has_invisible(text: str, *, layout_is_visible: bool = True) -> bool:
    return bool(flagged(text, layout_is_visible=layout_is_visible))


def arguments_text(arguments) -> str:
    """The full arguments as indented JSON: the same text notifications carry, unescaped."""
    return json.dumps(arguments, ensure_ascii=False, indent=2, sort_keys=True)


def arguments_html(arguments) -> SafeString:
    """`arguments_text` as HTML: every key in a `fb-arg-key` span and every string highlighted
    on its own, so the layout's indentation is never marked and a key never passes for the
    page's own labels."""
    return mark_safe(json_layout(arguments, key=_key_html, string=_string_html, scalar=escape))


def _key_html(literal: str) -> str:
    return format_html('<span class="fb-arg-key">{}</span>', _string_html(literal))


def _string_html(literal: str) -> str:
    return str(highlighted(literal, layout_is_visible=False))


def arguments_summary(arguments, *, columns: int) -> dict:
    """How much the agent wrote: top-level keys, bytes and lines of the JSON shown, and the
    rows those lines take in a box `columns` characters wide (a long line wraps).

    The rows are counted in the text as `arguments_html` shows it, each hidden or look-alike
    character as its escape (`\\u200b` is 6 characters, `\\U000e0041` 10): counted in the raw
    text, 900 zero-width spaces were 18 rows and showed as 108, and the page said the
    arguments ended while the rest of them was below the box's fold."""
    lines = arguments_text(arguments).split("\n")
    shown = json_layout(arguments, key=_shown_literal, string=_shown_literal, scalar=str)
    return {
        "keys": len(arguments) if isinstance(arguments, dict) else 0,
        "bytes": len(json.dumps(arguments, ensure_ascii=False, sort_keys=True).encode()),
        "lines": len(lines),
        "rows": sum(1 + max(0, len(line) - 1) // columns for line in shown.split("\n")),
    }


def _shown_literal(literal: str) -> str:
    """A key's or string's JSON literal as `_string_html` shows it, without the markup."""
    return escape_invisible(literal, layout_is_visible=False)


def arguments_preview(arguments, limit: int = 120) -> str:
    """One line of compact JSON for lists; the approval page always shows the full text."""
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def url_shown(url: str) -> str:
    """`url` as a page may show it: a user and password in it are a credential, and are
    `***` (a URL stored before they were refused in it)."""
    return _USERINFO.sub(r"\1***@", url, count=1)
