"""Reading one shell word: quotes, escapes and every expansion that can hide a command.

The reader resolves quoting the way bash does (single and double quotes, `$'...'`
ANSI-C strings, `$"..."`, backslashes, line continuations) and descends into
`$(...)`, backticks, `<(...)`, `>(...)`, `${...}` operands and arithmetic, handing
each nested script to the parser (`parse_list`) so its commands are collected too.
Expansions keep their source text in the word (`$HOME`), and a word records
whether it is literal, quoted, or open to glob and brace expansion.
"""

import re
from dataclasses import dataclass, field

MAX_NESTING = 32


class ShellSyntaxError(ValueError):
    pass


@dataclass
class Word:
    """One shell word after quote removal; expansions keep their source text (`$HOME`)."""

    text: str
    source: str
    literal: bool  # no expansion of any kind: the text is exactly what the program gets
    has_glob: bool  # an unquoted *, ?, [ or a brace expansion: the shell may rewrite it
    quoted: bool
    process_substitution: bool = False
    concerns: list[str] = field(default_factory=list)


@dataclass
class Expansion:
    source: str
    concerns: list[str] = field(default_factory=list)


_PLAIN = re.compile(r"[^ \t\n;&|()<>\\'\"$`]+")
_IN_DOUBLE_QUOTES = re.compile(r'[^\\$`"]+')
_IN_HEREDOC = re.compile(r"[^\\$`]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_WORD_END = frozenset(" \t\n;&|()<>")
_GLOB = re.compile(r"[*?\[]")
_ANSI_C = re.compile(
    r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)|(.))",
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
_ARITHMETIC_CONCERN = "arithmetic on variables can run commands hidden in their values"


class WordReader:
    """Word-level reading over `text`; a subclass provides `parse_list` for nested scripts."""

    def __init__(self, text: str, nesting: int):
        self.s = text
        self.n = len(text)
        self.i = 0
        self.nesting = nesting
        self.commands: list = []

    def parse_list(self, closer: str | None) -> None:
        raise NotImplementedError

    def read_word(self) -> Word:
        s = self.s
        start = self.i
        plain = _PLAIN.match(s, start)
        if plain and (plain.end() == self.n or s[plain.end()] in _WORD_END):
            # The common case: a word with no quoting or expansion at all.
            self.i = plain.end()
            text = plain.group()
            has_glob = bool(_GLOB.search(text)) or bool(_BRACE.search(text))
            return Word(text, text, literal=True, has_glob=has_glob, quoted=False)
        text: list[str] = []
        view: list[str] = []  # unquoted characters as they are; "\0" quoted, "\1" expanded
        literal, quoted, substituted = True, False, False
        concerns: list[str] = []
        while self.i < self.n:
            c = s[self.i]
            if c in " \t\n;&|()":
                break
            if c in "<>":
                if self.i != start or not s.startswith("(", self.i + 1):
                    break
                self.i += 2
                self.parse_list(closer=")")
                text.append(s[start : self.i])
                view.append("\1")
                literal, substituted = False, True
            elif c == "\\":
                if self.i + 1 >= self.n:
                    text.append("\\")
                    view.append("\\")
                    self.i += 1
                    continue
                escaped = s[self.i + 1]
                self.i += 2
                if escaped != "\n":
                    text.append(escaped)
                    view.append("\0")
                    quoted = True
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                text.append(s[self.i + 1 : end])
                view.append("\0")
                quoted = True
                self.i = end + 1
            elif c == '"' or (c == "$" and s.startswith('"', self.i + 1)):
                self.i += 2 if c == "$" else 1
                part, part_literal, part_concerns = self.read_quoted(end='"')
                text.append(part)
                view.append("\0" if part_literal else "\1")
                literal = literal and part_literal
                concerns.extend(part_concerns)
                quoted = True
            elif c == "$" and s.startswith("'", self.i + 1):
                self.i += 2
                text.append(self._read_ansi_c())
                view.append("\0")
                quoted = True
            elif c in "$`":
                expansion = self._read_dollar() if c == "$" else self._read_backticks(False)
                if expansion is None:
                    text.append("$")
                    view.append("$")
                    self.i += 1
                    continue
                text.append(expansion.source)
                view.append("\1")
                concerns.extend(expansion.concerns)
                literal = False
            else:
                plain = _PLAIN.match(s, self.i)
                text.append(plain.group())
                view.append(plain.group())
                self.i = plain.end()
        unquoted = "".join(view)
        return Word(
            text="".join(text),
            source=s[start : self.i],
            literal=literal,
            has_glob=any(c in unquoted for c in "*?[") or bool(_BRACE.search(unquoted)),
            quoted=quoted,
            process_substitution=substituted and len(view) == 1,
            concerns=concerns,
        )

    def read_quoted(self, end: str | None) -> tuple[str, bool, list[str]]:
        """Double-quoted text (end='"') or an unquoted here-document body (end=None)."""
        s = self.s
        plain = _IN_DOUBLE_QUOTES if end else _IN_HEREDOC
        escapable = '$`"\\\n' if end else "$`\\\n"
        out: list[str] = []
        literal = True
        concerns: list[str] = []
        while True:
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
                if expansion is None:
                    out.append("$")
                    self.i += 1
                    continue
                out.append(expansion.source)
                concerns.extend(expansion.concerns)
                literal = False
            else:
                chunk = plain.match(s, self.i)
                out.append(chunk.group())
                self.i = chunk.end()
        return "".join(out), literal, concerns

    def _read_ansi_c(self) -> str:
        s = self.s
        out: list[str] = []
        while True:
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
                code = int(number, 16)
                if code > 0x10FFFF:
                    raise ShellSyntaxError("invalid \\U escape")
                out.append(chr(code))
            elif octal is not None:
                out.append(chr(int(octal, 8) & 0xFF))
            elif control is not None:
                out.append(chr(ord(control) & 0x1F))
            else:
                out.append(_ANSI_C_SIMPLE.get(simple, "\\" + simple))

    # -- expansions -------------------------------------------------------------

    def _read_dollar(self) -> Expansion | None:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise ShellSyntaxError("expansions are nested too deeply")
        try:
            return self._read_expansion()
        finally:
            self.nesting -= 1

    def _read_expansion(self) -> Expansion | None:
        s = self.s
        start = self.i
        following = s[start + 1 : start + 2]
        if following == "(":
            if s.startswith("((", start + 1):
                self.i = start + 3
                concerns = self._scan_arithmetic(closing="))")
                if concerns is None:
                    # `$((cmd) ...)`: bash would retry it as a substitution; re-reading
                    # could cost exponential time on nested input, so refuse instead.
                    raise ShellSyntaxError("`$((` that is not arithmetic is not supported")
                return Expansion(s[start : self.i], concerns)
            self.i = start + 2
            self.parse_list(closer=")")
            return Expansion(s[start : self.i])
        if following == "[":
            self.i = start + 2
            concerns = self._scan_arithmetic(closing="]")
            if concerns is None:
                raise ShellSyntaxError("unbalanced $[...]")
            return Expansion(s[start : self.i], concerns)
        if following == "{":
            return self._read_braced_parameter()
        name = _NAME.match(s, start + 1)
        if name:
            self.i = name.end()
            return Expansion(s[start : self.i])
        if following and following in "0123456789@*#?-$!":
            self.i = start + 2
            return Expansion(s[start : self.i])
        return None

    def _scan_arithmetic(self, closing: str) -> list[str] | None:
        """Skip an arithmetic body; None when `$((` turns out to open a subshell."""
        s = self.s
        depth = 0
        uses_variables = False
        concerns: list[str] = []
        while True:
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
                        break
                    return None
                depth -= 1
                self.i += 1
            elif c == "]" and closing == "]" and depth == 0:
                self.i += 1
                break
            elif c in "$`":
                expansion = self._read_dollar() if c == "$" else self._read_backticks(True)
                if expansion is None:
                    self.i += 1
                else:
                    concerns.extend(expansion.concerns)
                    uses_variables = True
            elif c in "'\"\\":
                raise ShellSyntaxError("quotes inside arithmetic are not supported")
            else:
                uses_variables = uses_variables or c.isalpha() or c == "_"
                self.i += 1
        if uses_variables:
            concerns.append(_ARITHMETIC_CONCERN)
        return concerns

    def _read_braced_parameter(self) -> Expansion:
        s = self.s
        start = self.i
        self.i += 2
        depth = 1
        concerns: list[str] = []
        while True:
            if self.i >= self.n:
                raise ShellSyntaxError("unterminated ${...}")
            c = s[self.i]
            if c == "}":
                depth -= 1
                self.i += 1
                if depth == 0:
                    break
            elif c == "{":
                depth += 1
                self.i += 1
            elif c == "\\":
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                self.i = end + 1
            elif c == '"':
                self.i += 1
                concerns.extend(self.read_quoted(end='"')[2])
            elif c in "$`":
                expansion = self._read_dollar() if c == "$" else self._read_backticks(False)
                if expansion is None:
                    self.i += 1
                else:
                    concerns.extend(expansion.concerns)
            else:
                self.i += 1
        body = s[start + 2 : self.i - 1]
        if len(body) > 1 and body.startswith("!"):
            concerns.append("indirect expansion ${!...} can run commands hidden in a value")
        if "[" in body:
            concerns.append("array subscripts are evaluated arithmetically and can run commands")
        if re.search(r"@[A-Za-z]", body):
            concerns.append("${...@op} transformations can run commands hidden in a value")
        return Expansion(s[start : self.i], concerns)

    def _read_backticks(self, in_double_quotes: bool) -> Expansion:
        s = self.s
        start = self.i
        self.i += 1
        out: list[str] = []
        escapable = '$`\\"' if in_double_quotes else "$`\\"
        while True:
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
        inner = type(self)("".join(out), self.nesting)
        inner.parse_list(closer=None)
        self.commands.extend(inner.commands)
        return Expansion(s[start : self.i])
