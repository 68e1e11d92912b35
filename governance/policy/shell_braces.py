"""Brace expansion, as bash and zsh apply it to a word before anything else: `{rm,-rf,/x}`
is the three words `rm -rf /x`, `r{m,}` the two words `rm r`, `f{1..3}` three.

The strict reader refuses an unquoted brace, so a command with one is only ever ASK or
NEVER; this module lets the tolerant reading see the command the shell will really run,
for NEVER rules (`{rm,-rf,/}` is NEVER under `rm *` NEVER, not only ASK). Only words with
no quoting and no expansion are expanded: their source is their text. dash does not
expand braces; reading its words expanded is a NEVER too many, never an ALWAYS.
"""

import re

# More words than this from one command are not expanded: the view is for NEVER rules,
# whose programs show in the first words.
MAX_WORDS = 64
_LITERAL = re.compile(r"[^'\"\\$`]*")
_SEQUENCE = re.compile(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?")


def expanded_words(words: list[str], braced: dict[int, str]) -> list[str] | None:
    """`words` with each literal word that has a brace expansion replaced by its words;
    None when no word expands (or the result would pass MAX_WORDS)."""
    result: list[str] = []
    changed = False
    for index, word in enumerate(words):
        source = braced.get(index)
        expansion = expand(source) if source and _LITERAL.fullmatch(source) else [word]
        changed = changed or expansion != [word]
        # An expansion that yields an empty word, unquoted, leaves no word (`{,x}`).
        result += [part for part in expansion if part] if source else expansion
        if len(result) > MAX_WORDS:
            return None
    return result if changed and result else None


def expand(word: str) -> list[str]:
    """The words bash makes of one unquoted word by brace expansion."""
    for start, char in enumerate(word):
        if char != "{":
            continue
        end, commas = _closing(word, start)
        if end is None:
            continue
        inner = word[start + 1 : end]
        if commas:
            bounds = [start, *commas, end]
            parts = [word[a + 1 : b] for a, b in zip(bounds, bounds[1:], strict=False)]
        else:
            parts = _sequence(inner)
            if parts is None:
                continue  # `{a}`, `{}`: literal; a later brace may still expand
        head, tail = word[:start], word[end + 1 :]
        words: list[str] = []
        for part in parts:
            words += [head + rest for rest in expand(part + tail)]
            if len(words) > MAX_WORDS:
                return words[:MAX_WORDS]
        return words
    return [word]


def _closing(word: str, start: int) -> tuple[int | None, list[int]]:
    depth, commas = 0, []
    for index in range(start, len(word)):
        char = word[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index, commas
        elif char == "," and depth == 1:
            commas.append(index)
    return None, []


def _sequence(inner: str) -> list[str] | None:
    match = _SEQUENCE.fullmatch(inner)
    if not match:
        return None
    first, last, step = match.groups()
    size = abs(int(step)) if step else 1
    if first.isalpha() != last.isalpha():
        return None
    low, high = (ord(first), ord(last)) if first.isalpha() else (int(first), int(last))
    span = range(low, high + 1, size or 1) if low <= high else range(low, high - 1, -(size or 1))
    values = list(span[:MAX_WORDS])
    if first.isalpha():
        return [chr(value) for value in values]
    width = max(len(first), len(last)) if first.lstrip("-").startswith("0") else 0
    return [str(value).zfill(width) for value in values]
