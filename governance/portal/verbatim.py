"""Showing exactly what would run: every character visible, the invisible ones escaped and
highlighted so a reviewer cannot miss them."""

import json

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from governance.policy.invisible import (
    describe_invisible,
    escape_char,
    first_invisible,
    is_invisible,
)


def highlighted(text: str, *, layout_is_visible: bool = True) -> SafeString:
    """HTML of `text` with each invisible or bidi character as a marked `\\u…` escape.

    The escapes read exactly as `governance.policy.escape_invisible` writes them (the
    notifications' form), so the page and the webhook show the same text.
    """
    if first_invisible(text, layout_is_visible=layout_is_visible) is None:
        return escape(text)
    parts = []
    run: list[str] = []
    for char in text:
        if is_invisible(char, layout_is_visible=layout_is_visible):
            parts.append(escape("".join(run)))
            run = []
            parts.append(
                format_html(
                    '<mark class="fb-invisible" title="{}">{}</mark>',
                    describe_invisible(char),
                    escape_char(char),
                )
            )
        else:
            run.append(char)
    parts.append(escape("".join(run)))
    return mark_safe("".join(parts))


def has_invisible(text: str, *, layout_is_visible: bool = True) -> bool:
    return first_invisible(text, layout_is_visible=layout_is_visible) is not None


def arguments_text(arguments) -> str:
    """The full arguments as indented JSON: the same text notifications carry, unescaped."""
    return json.dumps(arguments, ensure_ascii=False, indent=2, sort_keys=True)


def arguments_preview(arguments, limit: int = 120) -> str:
    """One line of compact JSON for lists; the approval page always shows the full text."""
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"
