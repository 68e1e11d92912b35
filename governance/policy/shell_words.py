"""Reading one shell word, best effort: quotes, escapes and every expansion that can hide a command.

The reader resolves quoting the way bash does (single and double quotes, `$'...'`
ANSI-C strings, `$"..."`, backslashes, line continuations) and descends into
`$(...)`, backticks, `<(...)`, `>(...)`, `${...}` operands and arithmetic, handing
each nested script to the parser (`parse_list`) so its commands are collected too.
Expansions keep their source text in the word (`$HOME`). Only NEVER rules see what
this reader finds (the exact reading is shell_subset's), so it reads on where bash
would and needs no notion of which words are safe.
"""

import re
from dataclasses import dataclass

MAX_NESTING = 32
# Steps (tokens, quoted pieces, characters of arithmetic and ${...}) one reading may take:
# a bound on its time whatever the script (bench/shell_engine_ceiling.py).
MAX_STEPS = 2_000


class ShellSyntaxError(ValueError):
    pass


@dataclass
class Word:
    """One shell word after quote removal; expansions keep their source text (`$HOME`)."""

    text: str
    source: str
    quoted: bool
    process_substitution: bool = False


_PLAIN = re.compile(r"[^ \t\n;&|()<>\\'\"$`]+")
_IN_DOUBLE_QUOTES = re.compile(r'[^\\$`"]+')
_IN_HEREDOC = re.compile(r"[^\\$`]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD_END = frozenset(" \t\n;&|()<>")
_ANSI_C = re.compile(
    # `\c` takes the next character but a quote (the shells' lexers pair `\c` and end the
    # string at that quote: `$'\c'` is closed) or a backslash pair (`\c\\`) (F140)
    r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})"
    r"|c([^'\\]|\\\\)?|(.))",
    re.DOTALL,
)
_ANSI_C_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


class WordReader:
    """Word-level reading over `text`; a subclass provides `parse_list` for nested scripts."""

    def __init__(self, text: str, nesting: int, budget: list[int] | None = None):
        self.s = text
        self.n = len(text)
        self.i = 0
        self.nesting = nesting
        self.commands: list = []
        self.budget = budget if budget is not None else [MAX_STEPS]  # shared with nested readers

    def spend(self, steps: int = 1) -> None:
        self.budget[0] -= steps
        if self.budget[0] < 0:
            raise ShellSyntaxError(f"the script is longer than the {MAX_STEPS} steps read")

    def parse_list(self, closer: str | None) -> None:
        raise NotImplementedError

    def read_word(self) -> Word:
        s = self.s
        start = self.i
        if s.startswith("=(", start):
            # zsh's `=(CMD)`: CMD runs, its output a temporary file (bash: a syntax error).
            self.i += 2
            self.parse_list(closer=")")
            return Word(
                s[start : self.i], s[start : self.i], quoted=False, process_substitution=True
            )
        plain = _PLAIN.match(s, start)
        if plain and (plain.end() == self.n or s[plain.end()] in _WORD_END):
            self.i = plain.end()  # the common case: no quoting or expansion at all
            return Word(plain.group(), plain.group(), quoted=False)
        text: list[str] = []
        quoted = substituted = False
        while self.i < self.n:
            c = s[self.i]
            self.spend()
            if c in " \t\n;&|()":
                break
            if c in "<>":
                if self.i != start or not s.startswith("(", self.i + 1):
                    break
                self.i += 2
                self.parse_list(closer=")")
                text.append(s[start : self.i])
                substituted = True
            elif c == "\\":
                escaped = s[self.i + 1 : self.i + 2]
                self.i += 2
                if escaped != "\n":
                    text.append(escaped or "\\")
                    quoted = True
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                text.append(s[self.i + 1 : end])
                quoted = True
                self.i = end + 1
            elif c == '"' or (c == "$" and s.startswith('"', self.i + 1)):
                self.i += 2 if c == "$" else 1
                text.append(self.read_quoted(end='"'))
                quoted = True
            elif c == "$" and s.startswith("'", self.i + 1):
                self.i += 2
                text.append(self._read_ansi_c())
                quoted = True
            elif c in "$`":
                expansion = self._read_dollar() if c == "$" else self._read_backticks(False)
                text.append(expansion if expansion is not None else "$")
                self.i += expansion is None
            else:
                plain = _PLAIN.match(s, self.i)
                text.append(plain.group())
                self.i = plain.end()
        return Word("".join(text), s[start : self.i], quoted, substituted and len(text) == 1)

    def read_quoted(self, end: str | None) -> str:
        """Double-quoted text (end='"') or an unquoted here-document body (end=None)."""
        s = self.s
        plain = _IN_DOUBLE_QUOTES if end else _IN_HEREDOC
        escapable = '$`"\\\n' if end else "$`\\\n"
        out: list[str] = []
        while True:
            self.spend()
            if self.i >= self.n:
                if end is None:
                    break
                raise ShellSyntaxError("unterminated double quote")
            c = s[self.i]
            if c == end:
                self.i += 1
                break
            if c == "\\":
                if self.i + 1 < self.n and s[self.i + 1] in escapable:
                    if s[self.i + 1] != "\n":
                        out.append(s[self.i + 1])
                    self.i += 2
                else:
                    out.append("\\")
                    self.i += 1
            elif c in "$`":
                expansion = self._read_dollar() if c == "$" else self._read_backticks(True)
                out.append(expansion if expansion is not None else "$")
                self.i += expansion is None
            else:
                chunk = plain.match(s, self.i)
                out.append(chunk.group())
                self.i = chunk.end()
        return "".join(out)

    def _read_ansi_c(self) -> str:
        s = self.s
        out: list[str] = []
        while True:
            self.spend()
            if self.i >= self.n:
                raise ShellSyntaxError("unterminated $'...' string")
            c = s[self.i]
            if c == "'":
                self.i += 1
                return "".join(out)
            if c != "\\" or self.i + 1 >= self.n:
                out.append(c)
                self.i += 1
                continue
            escape = _ANSI_C.match(s, self.i)
            self.i = escape.end()
            hex2, hex4, hex8, octal, control, simple = escape.groups()
            number = hex2 or hex4 or hex8
            if number is not None:
                out.append(chr(min(int(number, 16), 0x10FFFF)))
            elif octal is not None:
                out.append(chr(int(octal, 8) & 0xFF))
            elif escape.group(0)[:2] == "\\c":
                out.append(chr(ord(control[-1]) & 0x1F) if control else "")
            else:
                out.append(_ANSI_C_SIMPLE.get(simple, "\\" + simple))

    # -- expansions: their text stays as written; the commands inside are collected ----------

    def _read_dollar(self) -> str | None:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise ShellSyntaxError("expansions are nested too deeply")
        try:
            return self._read_expansion()
        finally:
            self.nesting -= 1

    def _read_expansion(self) -> str | None:
        s = self.s
        start = self.i
        following = s[start + 1 : start + 2]
        if following == "(":
            if s.startswith("((", start + 1):
                self.i = start + 3
                if self._scan_arithmetic(closing="))", quotes=True):
                    return s[start : self.i]
                # `$((cmd) ...)`: bash reads it again as a substitution, and so does this
                # reader; the step budget bounds the re-reading of nested ones.
            self.i = start + 2
            self.parse_list(closer=")")
            return s[start : self.i]
        if following == "[":
            self.i = start + 2
            if not self._scan_arithmetic(closing="]"):
                raise ShellSyntaxError("unbalanced $[...]")
            return s[start : self.i]
        if following == "{":
            return self._read_braced_parameter()
        name = _NAME.match(s, start + 1)
        if name:
            self.i = name.end()
            return s[start : self.i]
        if following and following in "0123456789@*#?-$!":
            self.i = start + 2
            return s[start : self.i]
        return None

    def _scan_arithmetic(self, closing: str, quotes: bool = False) -> bool:
        """Skip an arithmetic body; False when `$((` turns out to open a subshell. `quotes`:
        `$((...))` and `((...))`, where bash reads quoted text (double quotes expand)."""
        s = self.s
        depth = 0
        while True:
            self.spend()
            if self.i >= self.n:
                raise ShellSyntaxError("unterminated arithmetic expansion")
            c = s[self.i]
            if c == "(":
                depth += 1
                self.i += 1
            elif c == ")":
                if depth == 0:
                    if closing == "))" and s.startswith("))", self.i):
                        self.i += 2
                        return True
                    return False
                depth -= 1
                self.i += 1
            elif c == "]" and closing == "]" and depth == 0:
                self.i += 1
                return True
            elif c in "$`":
                expansion = self._read_dollar() if c == "$" else self._read_backticks(True)
                self.i += expansion is None
            elif c == '"' and quotes:
                self.i += 1
                self.read_quoted(end='"')
            elif c == "'" and quotes:
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                self.i = end + 1
            elif c in "'\"\\":
                raise ShellSyntaxError("quotes inside arithmetic are not supported")
            else:
                self.i += 1

    def _read_braced_parameter(self) -> str:
        s = self.s
        start = self.i
        self.i += 2
        depth = 1
        while True:
            self.spend()
            if self.i >= self.n:
                raise ShellSyntaxError("unterminated ${...}")
            c = s[self.i]
            if c == "}":
                depth -= 1
                self.i += 1
                if depth == 0:
                    return s[start : self.i]
            elif c == "{":
                depth += 1
                self.i += 1
            elif c == "\\":
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                self._read_literal_quotes(s[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                self.i += 1
                self.read_quoted(end='"')
            elif c in "$`":
                expansion = self._read_dollar() if c == "$" else self._read_backticks(False)
                self.i += expansion is None
            else:
                self.i += 1

    def _read_literal_quotes(self, text: str) -> None:
        """`"${x:-'$(cmd)'}"`: inside double quotes the single quotes in `${…}` are plain
        characters to the shells, and `$(cmd)` runs (F140). Read for its commands, wherever
        the `${…}` is (outside double quotes that is a NEVER too many, never an ALWAYS)."""
        if "$" not in text and "`" not in text:
            return
        inner = type(self)(text, self.nesting, self.budget)
        try:
            inner.read_quoted(end=None)
        except ShellSyntaxError:
            pass
        finally:
            self.commands.extend(getattr(inner, "commands", []))

    def _read_backticks(self, in_double_quotes: bool) -> str:
        s = self.s
        start = self.i
        self.i += 1
        out: list[str] = []
        escapable = '$`\\"' if in_double_quotes else "$`\\"
        while True:
            self.spend()
            if self.i >= self.n:
                raise ShellSyntaxError("unterminated backquote")
            c = s[self.i]
            if c == "`":
                self.i += 1
                break
            if c == "\\" and self.i + 1 < self.n and s[self.i + 1] in escapable:
                out.append(s[self.i + 1])
                self.i += 2
            else:
                out.append(c)
                self.i += 1
        inner = type(self)("".join(out), self.nesting, self.budget)
        try:
            inner.parse_list(closer=None)
        finally:
            self.commands.extend(inner.commands)
        return s[start : self.i]
