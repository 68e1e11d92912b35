"""A bash tokenizer that finds every simple command a script can run.

Why our own and not `bashlex` (0.18, pinned): on the bypass corpus in
tests/governance/policy/bypass_corpus.yaml, bashlex lets dangerous calls through
as ALWAYS and silently misreads words, where a policy engine must either see a
command or refuse to guess. Concretely, bashlex does not descend into
`${x:-$(rm -rf /)}` (the substitution stays an opaque parameter value), nor into an
unquoted here-document body (`cat <<EOF` + `$(rm -rf /)`); it decodes `$'\\x72m'` as
`$x72m` and `$"x"` as `$x`, and leaves `'r''m'` as `r''m`, so NEVER rules miss; it
raises NotImplementedError on `$((...))` and `time`. It also costs 100-300 µs per
short command. This tokenizer is ~600 lines we control: it resolves quoting the way
bash does (single, double, `$'...'` ANSI-C, `$"..."`, backslashes, line
continuations), descends into every place a command can hide (`$(...)`, backticks,
`<(...)`, `>(...)`, `${...}` operands, arithmetic, unquoted here-document bodies,
subshells, groups, `if`/`while`/`for` bodies, function bodies), and raises
`ShellSyntaxError` on anything it does not model (`case`, `[[ ]]`, `(( ))`,
`coproc`, arrays, unbalanced quotes, unterminated here-documents) so the caller
fails closed. The flat list it returns is all the engine needs: every simple
command anywhere is matched on its own and the most restrictive verdict wins.
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
class Redirect:
    operator: str
    target: Word


@dataclass
class StdinText:
    """A here-document or here-string body, fed to the command's standard input."""

    text: str
    literal: bool


@dataclass
class SimpleCommand:
    start: int
    words: list[Word] = field(default_factory=list)
    assignments: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    stdin: list[StdinText] = field(default_factory=list)
    concerns: list[str] = field(default_factory=list)
    header: bool = False  # `for NAME in WORDS`: the words are data, not a command
    source: str = ""

    def is_empty(self) -> bool:
        return not (self.words or self.assignments or self.redirects)


@dataclass
class _Expansion:
    source: str
    concerns: list[str] = field(default_factory=list)


_PLAIN = re.compile(r"[^ \t\n;&|()<>\\'\"$`]+")
_IN_DOUBLE_QUOTES = re.compile(r'[^\\$`"]+')
_IN_HEREDOC = re.compile(r"[^\\$`]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_REDIRECT = re.compile(
    r"(?:\d+|\{[A-Za-z_][A-Za-z0-9_]*\})?(&>>|&>|<<<|<<-|<<|<>|<&|>&|>>|>\||<|>)"
)
_OPERATOR = re.compile(r";;&|;;|;&|&&|\|\||\|&|[;&|]")
_FUNCTION_PARENS = re.compile(r"\([ \t]*\)")
_FD_DUPLICATE = re.compile(r"\d*-?")
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
_SKIPPED_RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "esac"}
)
_UNSUPPORTED_RESERVED = {
    "case": "case statements",
    "coproc": "coproc",
    "[[": "[[ ]] conditional expressions",
    "]]": "[[ ]] conditional expressions",
}
_ARITHMETIC_CONCERN = "arithmetic on variables can run commands hidden in their values"


def parse_script(text: str) -> list[SimpleCommand]:
    """Every simple command of `text`, nested ones included; raises ShellSyntaxError."""
    parser = _Parser(text, nesting=0)
    parser.parse_list(closer=None)
    return parser.commands


class _Parser:
    def __init__(self, text: str, nesting: int):
        self.s = text
        self.n = len(text)
        self.i = 0
        self.nesting = nesting
        self.commands: list[SimpleCommand] = []
        self.pending_heredocs: list[tuple[SimpleCommand, str, bool, bool]] = []

    # -- lists of commands --------------------------------------------------

    def parse_list(self, closer: str | None) -> None:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise ShellSyntaxError("commands are nested too deeply")
        command = SimpleCommand(self.i)
        s = self.s
        while True:
            self._skip_blanks()
            if self.i >= self.n:
                if closer is not None:
                    raise ShellSyntaxError(f"missing {closer!r}")
                self._finish(command)
                if self.pending_heredocs:
                    raise ShellSyntaxError("here-document without a body")
                break
            c = s[self.i]
            if c == "#":
                newline = s.find("\n", self.i)
                self.i = self.n if newline < 0 else newline
            elif c == "\n":
                self._finish(command)
                command = SimpleCommand(self.i + 1)
                self.i += 1
                self._read_heredoc_bodies()
            elif c == ")" and closer == ")":
                self._finish(command)
                self.i += 1
                break
            elif c in "<>" and s.startswith("(", self.i + 1):
                command.words.append(self._read_word())
            elif redirect := _REDIRECT.match(s, self.i):
                self._read_redirect(command, redirect)
            elif operator := _OPERATOR.match(s, self.i):
                if operator.group().startswith(";;") or operator.group() == ";&":
                    raise ShellSyntaxError("`;;` outside a case statement")
                self._finish(command)
                self.i = operator.end()
                command = SimpleCommand(self.i)
            elif c == "(":
                command = self._open_parenthesis(command)
            elif c == ")":
                raise ShellSyntaxError("unexpected `)`")
            else:
                command = self._read_command_word(command)
        self.nesting -= 1

    def _open_parenthesis(self, command: SimpleCommand) -> SimpleCommand:
        if command.is_empty() and not command.header:
            if self.s.startswith("((", self.i):
                raise ShellSyntaxError("arithmetic commands `((...))` are not supported")
            self.i += 1
            self.parse_list(closer=")")
            return command
        parens = _FUNCTION_PARENS.match(self.s, self.i)
        if parens and len(command.words) == 1 and not command.assignments:
            # `name() body`: the name is a definition, not a command; the body is parsed next.
            self.i = parens.end()
            return SimpleCommand(self.i)
        raise ShellSyntaxError("unexpected `(`")

    def _read_command_word(self, command: SimpleCommand) -> SimpleCommand:
        word = self._read_word()
        if command.is_empty() and not command.header and word.literal and not word.quoted:
            if word.text in _SKIPPED_RESERVED:
                return command
            if word.text in _UNSUPPORTED_RESERVED:
                raise ShellSyntaxError(f"{_UNSUPPORTED_RESERVED[word.text]} are not supported")
            if word.text in ("for", "select"):
                command.header = True
                return command
            if word.text == "function":
                self._skip_blanks()
                if self.i >= self.n:
                    raise ShellSyntaxError("function without a name")
                self._read_word()
                self._skip_blanks()
                parens = _FUNCTION_PARENS.match(self.s, self.i)
                if parens:
                    self.i = parens.end()
                return SimpleCommand(self.i)
        if not command.words and not command.header and _ASSIGNMENT.match(word.source):
            command.assignments.append(word)
        else:
            command.words.append(word)
        return command

    def _finish(self, command: SimpleCommand) -> None:
        for word in [*command.words, *command.assignments]:
            command.concerns.extend(word.concerns)
        if command.header:
            command.words = []
        command.source = self.s[command.start : self.i].strip()
        if not command.is_empty() or command.concerns:
            self.commands.append(command)

    def _skip_blanks(self) -> None:
        s = self.s
        while self.i < self.n:
            if s[self.i] in " \t":
                self.i += 1
            elif s.startswith("\\\n", self.i):
                self.i += 2
            else:
                break

    # -- redirections and here-documents ------------------------------------

    def _read_redirect(self, command: SimpleCommand, match: re.Match) -> None:
        operator = match.group(1)
        self.i = match.end()
        self._skip_blanks()
        if (
            self.i >= self.n
            or self.s[self.i] in "\n;&|()"
            or (self.s[self.i] in "<>" and not self.s.startswith("(", self.i + 1))
        ):
            raise ShellSyntaxError(f"redirection {operator} without a target")
        target = self._read_word()
        command.concerns.extend(target.concerns)
        if operator in ("<<", "<<-"):
            self.pending_heredocs.append((command, target.text, operator == "<<-", target.quoted))
        elif operator == "<<<":
            command.stdin.append(StdinText(target.text, target.literal))
        elif operator in (">&", "<&") and _FD_DUPLICATE.fullmatch(target.text):
            return
        elif operator not in ("<", "<&"):
            command.redirects.append(Redirect(operator, target))

    def _read_heredoc_bodies(self) -> None:
        pending, self.pending_heredocs = self.pending_heredocs, []
        s = self.s
        for command, delimiter, strip_tabs, quoted in pending:
            lines = []
            while True:
                if self.i >= self.n:
                    raise ShellSyntaxError(f"here-document {delimiter!r} is not terminated")
                newline = s.find("\n", self.i)
                end = self.n if newline < 0 else newline
                line = s[self.i : end]
                self.i = end + 1 if newline >= 0 else self.n
                if strip_tabs:
                    line = line.lstrip("\t")
                if line == delimiter:
                    break
                lines.append(line + "\n")
            body = "".join(lines)
            if quoted:
                command.stdin.append(StdinText(body, literal=True))
                continue
            inner = _Parser(body, self.nesting)
            text, literal, concerns = inner.read_quoted(end=None)
            self.commands.extend(inner.commands)
            command.concerns.extend(concerns)
            command.stdin.append(StdinText(text, literal))

    # -- words ----------------------------------------------------------------

    def _read_word(self) -> Word:
        s = self.s
        start = self.i
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

    def _read_dollar(self) -> _Expansion | None:
        s = self.s
        start = self.i
        following = s[start + 1 : start + 2]
        if following == "(":
            if s.startswith("((", start + 1):
                self.i = start + 3
                concerns = self._scan_arithmetic(closing="))")
                if concerns is not None:
                    return _Expansion(s[start : self.i], concerns)
            self.i = start + 2
            self.parse_list(closer=")")
            return _Expansion(s[start : self.i])
        if following == "[":
            self.i = start + 2
            concerns = self._scan_arithmetic(closing="]")
            if concerns is None:
                raise ShellSyntaxError("unbalanced $[...]")
            return _Expansion(s[start : self.i], concerns)
        if following == "{":
            return self._read_braced_parameter()
        name = _NAME.match(s, start + 1)
        if name:
            self.i = name.end()
            return _Expansion(s[start : self.i])
        if following and following in "0123456789@*#?-$!":
            self.i = start + 2
            return _Expansion(s[start : self.i])
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

    def _read_braced_parameter(self) -> _Expansion:
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
        return _Expansion(s[start : self.i], concerns)

    def _read_backticks(self, in_double_quotes: bool) -> _Expansion:
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
        inner = _Parser("".join(out), self.nesting)
        inner.parse_list(closer=None)
        self.commands.extend(inner.commands)
        return _Expansion(s[start : self.i])
