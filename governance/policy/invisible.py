"""Characters a human reviewer cannot see: found, and shown as escapes.

Counted as invisible: format characters (Cf: zero-width space/joiners, bidi
overrides and isolates, soft hyphen, tag characters...), control characters,
line/paragraph separators, every space other than U+0020, surrogates, private-use
and unassigned code points, and a few letters and marks that render as nothing
(Hangul fillers, the braille blank, variation selectors, the combining grapheme
joiner). Tab and newline are layout, not tricks, in a shell script; in a path they
are invisible too.
"""

import re
import unicodedata

_HIDDEN_CATEGORIES = frozenset({"Cf", "Cc", "Zl", "Zp", "Zs", "Cs", "Co", "Cn"})
_BLANK_LOOKING = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x2800, 0x3164, 0xFFA0]
    + list(range(0xFE00, 0xFE10))
    + list(range(0xE0100, 0xE01F0))
)
_LAYOUT = frozenset("\t\n")
_ASCII_HIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ASCII_HIDDEN_WITH_LAYOUT = re.compile(r"[\x00-\x1f\x7f]")


def is_invisible(char: str, *, layout_is_visible: bool = True) -> bool:
    if char == " ":
        return False
    if layout_is_visible and char in _LAYOUT:
        return False
    return unicodedata.category(char) in _HIDDEN_CATEGORIES or ord(char) in _BLANK_LOOKING


def first_invisible(text: str, *, layout_is_visible: bool = True) -> str | None:
    """The first invisible character of `text` (by position), or None."""
    if text.isascii():
        pattern = _ASCII_HIDDEN if layout_is_visible else _ASCII_HIDDEN_WITH_LAYOUT
        found = pattern.search(text)
        return found.group() if found else None
    hidden = {c for c in set(text) if is_invisible(c, layout_is_visible=layout_is_visible)}
    if not hidden:
        return None
    return min(hidden, key=text.index)


def escape_char(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def escape_invisible(text: str, *, layout_is_visible: bool = True) -> str:
    """`text` with every invisible character written as `\\u200b` / `\\U000e0041`."""
    if first_invisible(text, layout_is_visible=layout_is_visible) is None:
        return text
    return "".join(
        escape_char(c) if is_invisible(c, layout_is_visible=layout_is_visible) else c for c in text
    )


def describe_invisible(char: str) -> str:
    name = unicodedata.name(char, "unnamed character")
    return f"{escape_char(char)} ({name})"
