"""Characters a human reviewer cannot see, or would misread: found, and shown as escapes.

Counted as invisible: format characters (Cf: zero-width space/joiners, bidi
overrides and isolates, soft hyphen, tag characters...), control characters,
line/paragraph separators, every space other than U+0020, surrogates, private-use
and unassigned code points, and a few letters and marks that render as nothing
(Hangul fillers, the braille blank, variation selectors, the combining grapheme
joiner). Tab and newline are layout, not tricks, in a shell script; in a path they
are invisible too.

Flagged the same way, because they make text read as something it is not:

- a letter of a word that mixes scripts (`gіt` with a Cyrillic `і` reads as `git`); the
  combinations Unicode's "highly restrictive" profile allows (Latin with Han, Hiragana,
  Katakana, Bopomofo or Hangul) are not mixing;
- a combining mark in a run of more than three on one character: such a run draws over the
  lines around it.

`static/fluidbox/timeline.js` applies the same rules to live timeline rows.
"""

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache

import regex

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


LONG_COMBINING_RUN = 3

# A run of this many spaces or more is escaped or marked wherever a call is shown (the approval
# page, the notifications, the timeline): enough blank to push the rest of a line out of sight.
# Kept equal to LONG_SPACE_RUN in static/fluidbox/timeline.js.
LONG_SPACE_RUN = 4

# The scripts told apart; a letter of none of them counts as a script of its own. Kept in the
# same order as SCRIPTS in static/fluidbox/timeline.js.
SCRIPTS = [
    "Latin",
    "Greek",
    "Cyrillic",
    "Armenian",
    "Hebrew",
    "Arabic",
    "Syriac",
    "Thaana",
    "Nko",
    "Samaritan",
    "Devanagari",
    "Bengali",
    "Gurmukhi",
    "Gujarati",
    "Oriya",
    "Tamil",
    "Telugu",
    "Kannada",
    "Malayalam",
    "Sinhala",
    "Thai",
    "Lao",
    "Tibetan",
    "Myanmar",
    "Georgian",
    "Hangul",
    "Ethiopic",
    "Cherokee",
    "Canadian_Aboriginal",
    "Ogham",
    "Runic",
    "Khmer",
    "Mongolian",
    "Hiragana",
    "Katakana",
    "Bopomofo",
    "Han",
    "Yi",
    "Coptic",
    "Glagolitic",
    "Tifinagh",
    "Vai",
    "Lisu",
    "Osage",
    "Adlam",
    "Gothic",
    "Deseret",
    "Shavian",
]
_SCRIPT_OF = regex.compile("|".join(f"(?P<{name}>\\p{{Script={name}}})" for name in SCRIPTS))
_EAST_ASIAN = (
    frozenset({"Latin", "Han", "Hiragana", "Katakana"}),
    frozenset({"Latin", "Han", "Bopomofo"}),
    frozenset({"Latin", "Han", "Hangul"}),
)
_COMBINING = frozenset({"Mn", "Me"})
# In a text where every letter is replaced by a tag for its script, marks by \x01 and
# everything else by a space: a letter, maybe marks, then a letter of another script.
_SCRIPT_CHANGE = re.compile(r"([^ \x01])\x01*(?!\1)[^ \x01]")
INVISIBLE, MIXED_SCRIPT, COMBINING_RUN = "invisible", "mixed-script", "combining-run"
PUNCTUATION_LOOK_ALIKE = "punctuation-look-alike"
# Letters drawn like the ASCII punctuation a shell and a reader go by: quotes (U+A78C `ꞌ`,
# U+02BC `ʼ`, U+02B9 `ʹ`, U+02BA `ʺ`, …), a pipe (U+01C0 `ǀ`), a bang (U+01C3 `ǃ`). Letters
# of the word's own script (or of none), they change no script inside a word, so they are
# named here. Kept equal to PUNCTUATION_LOOK_ALIKES in static/fluidbox/timeline.js.
PUNCTUATION_LOOK_ALIKES = frozenset(
    "\ua78b\ua78c\u02b9\u02ba\u02bb\u02bc\u02bd\u02c8\u02ca\u02cb\u02ee\u01c0\u01c1\u01c3"
)


@lru_cache(maxsize=4096)
def script_of(char: str) -> str:
    found = _SCRIPT_OF.match(char)
    return found.lastgroup if found else f"U+{ord(char):04X}"


def _mixes_scripts(scripts: set[str]) -> bool:
    if len(scripts) < 2:
        return False
    return not any(scripts <= allowed for allowed in _EAST_ASIAN)


def flagged(text: str, *, layout_is_visible: bool = True) -> dict[int, str]:
    """Position → why, for every character a reviewer could miss or misread: `invisible`,
    `punctuation-look-alike` (a letter drawn like punctuation), `mixed-script` (a letter of
    another script inside a word) or `combining-run`."""
    if text.isascii():
        pattern = _ASCII_HIDDEN if layout_is_visible else _ASCII_HIDDEN_WITH_LAYOUT
        return {m.start(): INVISIBLE for m in pattern.finditer(text)}
    found: dict[int, str] = {}
    distinct = set(text)
    # Flagged wherever they stand (a letter drawn like punctuation is never invisible).
    anywhere = {c: PUNCTUATION_LOOK_ALIKE for c in distinct & PUNCTUATION_LOOK_ALIKES}
    for char in distinct:
        if is_invisible(char, layout_is_visible=layout_is_visible):
            anywhere[char] = INVISIBLE
    for char, why in anywhere.items():
        index = text.find(char)
        while index != -1:
            found[index] = why
            index = text.find(char, index + 1)
    for start, end in _combining_runs(text, distinct):
        for index in range(start, end):
            found.setdefault(index, COMBINING_RUN)
    for start, end in _words_changing_script(text, distinct):
        odd = _look_alikes(text[start:end])
        for index in range(start, end):
            if text[index] in odd:
                found.setdefault(index, MIXED_SCRIPT)
    return dict(sorted(found.items()))


def _combining_runs(text: str, distinct: set[str]) -> Iterator[tuple[int, int]]:
    marks = [c for c in distinct if unicodedata.category(c) in _COMBINING]
    if not marks:
        return
    runs = re.compile(f"[{re.escape(''.join(marks))}]{{{LONG_COMBINING_RUN + 1},}}")
    yield from (m.span() for m in runs.finditer(text))


def _words_changing_script(text: str, distinct: set[str]) -> Iterator[tuple[int, int]]:
    """(start, end) of each word whose letters change script somewhere, found by one regex
    scan over the text with each character replaced by its script's tag (no Python loop
    over the characters: this runs on every non-ASCII shell command and path)."""
    letters = {c for c in distinct if unicodedata.category(c)[0] == "L"}
    if all(c.isascii() for c in letters):
        return
    if not _mixes_scripts({script_of(c) for c in letters}):
        return
    tags: dict[str, str] = {}
    table: dict[int, str] = {}
    for char in distinct:
        category = unicodedata.category(char)[0]
        if category == "L":
            table[ord(char)] = tags.setdefault(script_of(char), chr(0x100 + len(tags)))
        else:
            table[ord(char)] = "\x01" if category == "M" else " "
    # Cheap test first: two letters of different scripts side by side (marks dropped). Most
    # texts that use two scripts keep them in separate words and stop here.
    bare = text.translate({**table, **{k: None for k, v in table.items() if v == "\x01"}})
    codes = list(tags.values())
    if not any(bare.find(a + b) != -1 for a in codes for b in codes if a != b):
        return
    tagged = text.translate(table)
    word_end = 0
    for change in _SCRIPT_CHANGE.finditer(tagged):
        if change.start() < word_end:
            continue
        start = tagged.rfind(" ", 0, change.start()) + 1
        end = tagged.find(" ", change.end())
        word_end = len(tagged) if end == -1 else end
        yield start, word_end


def _look_alikes(word: str) -> set[str]:
    """The letters of a word that mixes scripts that are not in the script it seems to be
    written in: Latin when it has Latin letters (commands and paths are), else its first
    letter's."""
    letters = [c for c in dict.fromkeys(word) if unicodedata.category(c)[0] == "L"]
    scripts = {script_of(c) for c in letters}
    if not _mixes_scripts(scripts):
        return set()
    main = "Latin" if "Latin" in scripts else script_of(letters[0])
    return {c for c in letters if script_of(c) != main}


def first_invisible(text: str, *, layout_is_visible: bool = True) -> str | None:
    """The first flagged character of `text` (by position), or None: an invisible one, a
    letter mixing scripts within a word, a letter drawn like punctuation, or a mark of a long
    combining run."""
    if text.isascii():
        pattern = _ASCII_HIDDEN if layout_is_visible else _ASCII_HIDDEN_WITH_LAYOUT
        found = pattern.search(text)
        return found.group() if found else None
    distinct = set(text)
    candidates = [
        text.find(c) for c in distinct if is_invisible(c, layout_is_visible=layout_is_visible)
    ]
    candidates += [text.find(c) for c in distinct & PUNCTUATION_LOOK_ALIKES]
    first_run = next(_combining_runs(text, distinct), None)
    if first_run is not None:
        candidates.append(first_run[0])
    for start, end in _words_changing_script(text, distinct):
        odd = _look_alikes(text[start:end])
        if odd:
            candidates.append(min(text.find(c, start) for c in odd))
            break
    return text[min(candidates)] if candidates else None


# In the text a tool is given (a ticket, a mail, a message), what hides or reorders what its
# later reader sees: bidi overrides and embeddings, zero-width spaces, tag characters, blank
# letters (Hangul fillers), a run of variation selectors (text smuggled behind an emoji), a
# long run of combining marks, a mark between digits (`12<RLM>34` reads 3412), other format
# and control characters. Narrower than `first_invisible` where such text needs it: the
# joiners of emoji and scripts, a flag's tag sequence, a leading byte-order mark, page and line
# breaks, one variation selector, marks and isolates in right-to-left text, a zero-width space
# in scripts written without spaces.
_NEEDED_FORMAT = frozenset(
    "\u00ad\u061c\u200c\u200d\u200e\u200f\u2060\u180e\u06dd\u070f"
    "\u0600\u0601\u0602\u0603\u0604\u0605"
)
_TEXT_LAYOUT = frozenset("\t\n\r\x0b\x0c")
_ASCII_HIDDEN_IN_TEXT = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_FLAG_TAG_SEQUENCE = re.compile("\U0001f3f4[\U000e0020-\U000e007e]{1,32}\U000e007f")
_VARIATION_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_SELECTOR_RUN = re.compile(f"[{_VARIATION_SELECTORS}]{{2,}}")
_MARK_BETWEEN_DIGITS = re.compile("[0-9][\u200e\u200f\u061c]+[0-9]")
_ISOLATES = frozenset("\u2066\u2067\u2068\u2069")
_RIGHT_TO_LEFT = regex.compile(
    r"[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}]"
)
_WITHOUT_SPACES = regex.compile(
    r"[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]"
)
_MONGOLIAN = regex.compile(r"\p{Script=Mongolian}")


def first_hidden_in_values(value: object) -> str | None:
    """The first character that hides or reorders text in any string of `value` (parsed
    JSON, object keys included), or None."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str) and (hidden := _first_hidden_in_text(item)):
            return hidden
    return None


def _first_hidden_in_text(text: str) -> str | None:
    if text.isascii():
        found = _ASCII_HIDDEN_IN_TEXT.search(text)
        return found.group() if found else None
    text = _FLAG_TAG_SEQUENCE.sub("", text.removeprefix("\ufeff"))
    distinct = set(text)
    allowed = set(_NEEDED_FORMAT)
    if _RIGHT_TO_LEFT.search(text) and _balanced_isolates(text):
        allowed |= _ISOLATES
    if "\u200b" in distinct and _WITHOUT_SPACES.search(text):
        allowed.add("\u200b")
    mongolian = bool(_MONGOLIAN.search(text))
    hidden = [c for c in distinct if c not in allowed and _hides_in_text(c, mongolian)]
    found = [text.find(c) for c in hidden]
    for pattern in (_SELECTOR_RUN, _MARK_BETWEEN_DIGITS):
        match = pattern.search(text)
        if match:
            found.append(match.start() + (1 if pattern is _MARK_BETWEEN_DIGITS else 0))
    run = next(_combining_runs(text, distinct), None)
    if run is not None:
        found.append(run[0])
    return text[min(found)] if found else None


def _hides_in_text(char: str, mongolian: bool) -> bool:
    category = unicodedata.category(char)
    if category == "Cf":
        return True
    if category == "Cc":
        return char not in _TEXT_LAYOUT
    if category == "Cn":
        return 0xE0000 <= ord(char) <= 0xE0FFF  # the tag block's unassigned: ignored by all
    code = ord(char)
    if code in _BLANK_LOOKING:
        if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
            return False  # one selector is ordinary (an emoji's, a CJK variant); runs are not
        return not (mongolian and 0x180B <= code <= 0x180F)
    return False


def _balanced_isolates(text: str) -> bool:
    opened = 0
    for char in text:
        if char in "\u2066\u2067\u2068":
            opened += 1
        elif char == "\u2069":
            opened -= 1
            if opened < 0:
                return False
    return opened == 0


def escape_char(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def escape_invisible(text: str, *, layout_is_visible: bool = True) -> str:
    """`text` with every flagged character written as `\\u200b` / `\\U000e0041`."""
    positions = flagged(text, layout_is_visible=layout_is_visible)
    if not positions:
        return text
    return "".join(escape_char(c) if i in positions else c for i, c in enumerate(text))


_WHY = {
    MIXED_SCRIPT: "a letter of another script inside a word: a look-alike",
    PUNCTUATION_LOOK_ALIKE: "a letter drawn like punctuation: a look-alike",
    COMBINING_RUN: f"in a run of more than {LONG_COMBINING_RUN} combining marks",
}


_CONTROL_NAMES = {
    "\t": "CHARACTER TABULATION",
    "\n": "LINE FEED",
    "\r": "CARRIAGE RETURN",
    "\x1b": "ESCAPE",
    "\x7f": "DELETE",
}


def describe_invisible(char: str, why: str | None = None) -> str:
    fallback = "control character" if unicodedata.category(char) == "Cc" else "unnamed character"
    name = unicodedata.name(char, _CONTROL_NAMES.get(char, fallback))
    if why is None and char in PUNCTUATION_LOOK_ALIKES:
        why = PUNCTUATION_LOOK_ALIKE
    elif why is None and not is_invisible(char, layout_is_visible=False):
        why = COMBINING_RUN if unicodedata.category(char) in _COMBINING else MIXED_SCRIPT
    if why in _WHY:
        return f"{escape_char(char)} ({name}; {_WHY[why]})"
    return f"{escape_char(char)} ({name})"
