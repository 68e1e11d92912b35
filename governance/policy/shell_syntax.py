"""A tolerant bash reader that finds every simple command a script can run, for NEVER rules.

Scripts outside the closed subset (shell_subset) are ASK whatever they contain; this
reader looks inside them for what a NEVER rule must still catch: `echo $(rm -rf /)`,
`f() { rm -rf /; }`, `bash <<< 'rm -rf /'`, `$(< /etc/shadow)`. It resolves quoting
the way bash does and descends into every place a command can hide (`$(...)`,
backticks, `<(...)`, `>(...)`, `${...}` operands, arithmetic, unquoted here-document
bodies, subshells, groups, `if`/`while`/`for` bodies, function bodies, `case` patterns and
bodies, `[[ ]]` operands, `(( ))` and `for ((...))` expressions, `coproc` commands). What
it cannot read (unbalanced quotes, a `case` without `esac`, a newline inside `[[ ]]`)
stops it with an error; the commands found before that point are still returned.

Why our own and not `bashlex` (0.18, measured, then dropped): on the old bypass
corpus bashlex kept `${x:-$(rm -rf /)}` and `${a[$(...)]}` as opaque text, read
`$'\\x72m'` as `$x72m` and raised NotImplementedError on `$((...))` and `time`,
so visible `rm -rf /` calls went unseen; this reader saw all of them.
"""

import re
from collections.abc import Callable, Iterator

from governance.policy.shell_words import MAX_NESTING, MAX_STEPS, ShellSyntaxError, Word, WordReader

__all__ = ["ShellSyntaxError", "SimpleCommand", "parse_script"]


class SimpleCommand:
    """One simple command: its words, redirections (operator, target) and stdin texts."""

    __slots__ = ("words", "redirects", "stdin", "assigned", "assignments", "header", "braced")

    def __init__(self) -> None:
        self.words: list[str] = []
        self.braced: dict[int, str] = {}  # a word's index -> its source, when it has a `{`
        self.redirects: list[tuple[str, str]] = []
        self.stdin: list[str] = []  # here-documents and here-strings
        self.assigned = False
        self.assignments: list[str] = []  # `NAME=value` words before the command, as read
        self.header = False  # `for NAME in WORDS`: the words are data, not a command

    def is_empty(self) -> bool:
        return not (self.words or self.assigned or self.redirects)


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_REDIRECT = re.compile(
    r"(?:\d+|\{[A-Za-z_][A-Za-z0-9_]*\})?(&>>|&>|<<<|<<-|<<|<>|<&|>&|>>|>\||<|>)"
)
_REDIRECT_STARTS = frozenset("0123456789{<>&")
_OPERATOR = re.compile(r";;&|;;|;&|&&|\|\||\|&|[;&|]")
_FUNCTION_PARENS = re.compile(r"\([ \t]*\)")
_FD_DUPLICATE = re.compile(r"\d*-?")
_BLANKS = re.compile(r"(?:[ \t]|\\\n)+")
_SKIPPED_RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}"}
    # zsh's: `{ … } always { … }`, `foreach … end`, and the precommand modifiers
    | {"always", "end", "noglob", "nocorrect", "-"}
)
# zsh closes a group, and opens a short-form body (`if true { … }`), with a brace that is
# a word of its own anywhere: read so for every dialect (bash would take it as an argument:
# reading a command there is more than bash runs, never less).
_BRACES = frozenset({"{", "}"})
_CASE_SEPARATORS = frozenset({";;", ";&", ";;&"})
# A reserved word ends where a word does: at a blank, a newline or an operator character.
_ESAC = re.compile(r"esac(?=[ \t\n;&|()<>]|$)")
_CONDITIONAL_END = re.compile(r"\]\](?=[ \t\n;&|()<>]|$)")
_CONDITIONAL_OPERATOR = re.compile(r"&&|\|\||[()<>!|]")
_COPROC_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[ \t]*(?=[{(])")


# zsh's glob qualifiers: `+CMD`, the characters that end a qualifier list's scan, and the
# pairs an `e` qualifier's code may be bracketed by.
_QUALIFIER_COMMAND = re.compile(r"\+([A-Za-z_][A-Za-z0-9_:.-]*)")
_QUALIFIER_STOPS = re.compile(r"[\\'\"()]")
_CLOSERS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _closing_parenthesis(s: str, i: int, spend: Callable[[], None]) -> int | None:
    """Where the `(…)` opened just before `i` closes, quotes and escapes skipped; `spend`
    takes a step of the reading's budget at each of them."""
    depth = 0
    while stop := _QUALIFIER_STOPS.search(s, i):
        spend()
        i, c = stop.start(), stop.group()
        if c == "\\":
            i += 2
        elif c in "'\"":
            close = s.find(c, i + 1)
            if close < 0:
                return None
            i = close + 1
        elif c == "(":
            depth, i = depth + 1, i + 1
        elif depth == 0:
            return i
        else:
            depth, i = depth - 1, i + 1
    return None


def _qualifier_codes(body: str) -> Iterator[str]:
    """The CODE of every `e` qualifier: `e:CODE:`, `e'CODE'`, `e{CODE}` (any delimiter;
    a bracket closes with its pair). Quotes inside CODE are kept for the word reader."""
    i = 0
    while i < len(body):
        if body[i] == "e" and i + 1 < len(body):
            opener = body[i + 1]
            closer = _CLOSERS.get(opener, opener)
            j = i + 2
            while j < len(body) and body[j] != closer:
                if body[j] in "'\"" and opener not in "'\"":
                    close = body.find(body[j], j + 1)
                    j = len(body) if close < 0 else close
                j += 1
            yield body[i + 2 : j] if opener not in "'\"" else body[i + 1 : j + 1]
            i = j + 1
        else:
            i += 1


def _pipe_literal_output(writer: SimpleCommand, reader: SimpleCommand) -> None:
    """`echo 'CMD' | bash`, `printf 'CMD' | sh`, `cat <<E | bash`: what the left side writes
    is known, and is the right side's standard input (a shell there runs it) (F140)."""
    if writer.words[:1] in (["echo"], ["printf"]) and len(writer.words) > 1:
        text = " ".join(writer.words[1:])
        reader.stdin.append(text.replace("\\n", "\n") if writer.words[0] == "printf" else text)
    elif writer.words == ["cat"]:
        reader.stdin = writer.stdin  # its here-document is read after this line: shared


def parse_script(
    text: str, budget: list[int] | None = None, *, resume: bool = False
) -> tuple[list[SimpleCommand], str | None]:
    """Every simple command of `text`, nested ones included, and the error that stopped it.

    `budget` ([steps left]) is shared by every reading of one call; MAX_STEPS by default.
    With `resume`, reading goes on after an error from the next `;` or newline, as often as
    the budget allows: a construct the reader does not know (`a=(1 2)`, `time (…)`) hides
    nothing after it (F140); the first error is the one returned.
    """
    commands: list[SimpleCommand] = []
    first_error: str | None = None
    budget = budget if budget is not None else [MAX_STEPS]
    while True:
        parser = _Parser(text, nesting=0, budget=budget)
        try:
            parser.parse_list(closer=None)
            error = None
        except ShellSyntaxError as raised:
            error = str(raised)
        except RecursionError:
            error = "commands are nested too deeply"
        commands += parser.commands
        first_error = first_error or error
        if error is None or not resume or parser.budget[0] <= 0:
            return commands, first_error
        stops = [at for at in (text.find("\n", parser.i), text.find(";", parser.i)) if at >= 0]
        if not stops:
            return commands, first_error
        text = text[min(stops) + 1 :]


class _Parser(WordReader):
    def __init__(self, text: str, nesting: int, budget: list[int] | None = None):
        super().__init__(text, nesting, budget)
        self.pending_heredocs: list[tuple[SimpleCommand, str, bool, bool]] = []
        self.open_cases = 0  # `case` statements of the list being read that await `esac`

    def parse_list(self, closer: str | None) -> None:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise ShellSyntaxError("commands are nested too deeply")
        # A `;;` inside `$(...)` or `( )` is not the enclosing case's: each list counts its own.
        enclosing_cases, self.open_cases = self.open_cases, 0
        self._parse_commands(closer)
        self.open_cases = enclosing_cases
        self.nesting -= 1

    def _parse_commands(self, closer: str | None) -> None:
        command = SimpleCommand()
        s = self.s
        while True:
            self.spend()
            blanks = _BLANKS.match(s, self.i)
            if blanks:
                self.i = blanks.end()
            if self.i >= self.n:
                if closer is not None:
                    raise ShellSyntaxError(f"missing {closer!r}")
                self._finish(command)
                if self.pending_heredocs:
                    raise ShellSyntaxError("here-document without a body")
                if self.open_cases:
                    raise ShellSyntaxError("case without esac")
                break
            c = s[self.i]
            if c == "#":
                newline = s.find("\n", self.i)
                self.i = self.n if newline < 0 else newline
            elif c == "\n":
                self._finish(command)
                command = SimpleCommand()
                self.i += 1
                if self.pending_heredocs:
                    self._read_heredoc_bodies()
            elif c == ")" and closer == ")":
                self._finish(command)
                self.i += 1
                break
            elif c in "<>" and s.startswith("(", self.i + 1):
                command.words.append(self.read_word().text)
            elif c in _REDIRECT_STARTS and (redirect := _REDIRECT.match(s, self.i)):
                self._read_redirect(command, redirect)
            elif c in ";&|" and (operator := _OPERATOR.match(s, self.i)):
                self._finish(command)
                self.i = operator.end()
                piped, command = command, SimpleCommand()
                if operator.group() in ("|", "|&"):
                    _pipe_literal_output(piped, command)
                if operator.group() in _CASE_SEPARATORS and self.open_cases:
                    self._read_case_patterns()
            elif c == "(":
                command = self._open_parenthesis(command)
            elif c == ")":
                raise ShellSyntaxError("unexpected `)`")
            else:
                command = self._read_command_word(command)

    def _open_parenthesis(self, command: SimpleCommand) -> SimpleCommand:
        if command.is_empty() and self.s.startswith("((", self.i):
            # `((expression))`, or `for ((init; test; step))`: commands hide only in its
            # expansions. One that does not close with `))` is a subshell in a subshell to
            # bash, read again as such (the step budget bounds the re-reading).
            start = self.i
            self.i += 2
            if self._scan_arithmetic(closing="))", quotes=True):
                command.header = False
                return command
            if command.header:
                raise ShellSyntaxError("`for ((` that is not arithmetic")
            self.i = start
        if (command.is_empty() and not command.header) or command.words in (
            ["time"],
            ["time", "-p"],
        ):
            self.i += 1  # a subshell (`time (…)` too)
            self.parse_list(closer=")")
            return command
        if self.i and self.s[self.i - 1] == "=" and (command.assigned or command.words):
            # `a=(WORDS)`, `declare -a a=(WORDS)`: an array's words, whose expansions run
            self.i += 1
            while True:
                self._skip_blanks_and_newlines()
                if self.s.startswith(")", self.i):
                    self.i += 1
                    return command
                if self.i >= self.n or self.s[self.i] in ";&|(<>":
                    raise ShellSyntaxError("unexpected `(`")
                self.read_word()
        if command.header:
            # zsh's `for NAME (WORDS) BODY`, `foreach NAME (WORDS) … end`: the words are data
            # (their expansions run), then the body is a command.
            self.i += 1
            while True:
                self._skip_blanks_and_newlines()
                if self.s.startswith(")", self.i):
                    self.i += 1
                    return SimpleCommand()
                if self.i >= self.n or self.s[self.i] in ";&|(<>":
                    raise ShellSyntaxError("unexpected `(`")
                self.read_word()
        parens = _FUNCTION_PARENS.match(self.s, self.i)
        if parens and len(command.words) == 1:
            # `name() body`: the name is a definition, not a command; the body is parsed next.
            self.i = parens.end()
            return SimpleCommand()
        if command.words and self.i and self.s[self.i - 1] not in " \t":
            self._read_glob_qualifiers()
            return command
        raise ShellSyntaxError("unexpected `(`")

    def _read_glob_qualifiers(self) -> None:
        """zsh's glob qualifiers, `(…)` glued to a word (`*(e:'CODE':)`, `*(+CMD)`): `e`
        runs CODE and `+` runs CMD for each file the glob finds (bash: a syntax error)."""
        s, start = self.s, self.i + 1
        end = _closing_parenthesis(s, start, self.spend)
        if end is None:
            raise ShellSyntaxError("unterminated glob qualifier")
        body, self.i = s[start:end], end + 1
        for code in _qualifier_codes(body):
            inner = _Parser(self._unquoted(code), self.nesting, self.budget)
            try:
                inner.parse_list(closer=None)
            finally:
                self.commands.extend(inner.commands)
        for name in _QUALIFIER_COMMAND.findall(body):
            called = SimpleCommand()
            called.words.append(name)
            self.commands.append(called)

    def _unquoted(self, code: str) -> str:
        """`code` with its quotes removed, as zsh runs an `e` qualifier's: `'a; b'` is the
        script `a; b`. Operator characters outside quotes are kept where they stand."""
        reader = _Parser(code, self.nesting, self.budget)
        pieces = []
        while True:
            reader._skip_blanks()
            if reader.i >= reader.n:
                return " ".join(pieces)
            if code[reader.i] in "\n;&|()<>":
                pieces.append(code[reader.i])
                reader.i += 1
            else:
                pieces.append(reader.read_word().text)

    def _read_command_word(self, command: SimpleCommand) -> SimpleCommand:
        word = self.read_word()
        if not command.words and not command.header and not word.quoted and command.is_empty():
            if word.text in _SKIPPED_RESERVED:
                return command
            if word.text == "esac":
                self.open_cases = max(self.open_cases - 1, 0)
                return command
            if word.text == "case":
                self._read_case_head()
                return command
            if word.text == "[[":
                self._read_conditional()
                return command
            if word.text == "]]":
                raise ShellSyntaxError("`]]` without `[[`")
            if word.text == "coproc":
                # `coproc NAME { ...; }` names the coprocess; `coproc cmd args` runs cmd.
                self._skip_blanks()
                if name := _COPROC_NAME.match(self.s, self.i):
                    self.i = name.end()
                return command
            if word.text in ("for", "select", "foreach"):
                command.header = True
                return command
            if word.text == "repeat":
                # zsh's `repeat COUNT CMD`: the count is a word, CMD a command.
                self._skip_blanks()
                if self.i < self.n and self.s[self.i] not in "\n;&|()<>":
                    self.read_word()
                return command
            if word.text == "function":
                self._skip_blanks()
                self.read_word()
                self._skip_blanks()
                parens = _FUNCTION_PARENS.match(self.s, self.i)
                if parens:
                    self.i = parens.end()
                return SimpleCommand()
        if word.source in _BRACES and (command.words or command.header):
            self._finish(command)
            return SimpleCommand()
        if command.header and word.source == "do":
            # `for x do CMD; done` on one line: the header ends at `do` (F140)
            self._finish(command)
            return SimpleCommand()
        if not command.words and not command.header and _ASSIGNMENT.match(word.source):
            command.assigned = True
            command.assignments.append(word.text)
        else:
            if "{" in word.source:
                command.braced[len(command.words)] = word.source
            command.words.append(word.text)
        return command

    # -- case, [[ ]] ---------------------------------------------------------------------

    def _read_case_head(self) -> None:
        """`case WORD in`, then the first patterns; the body is read as any list."""
        self._skip_blanks()
        if self.i >= self.n or self.s[self.i] in "\n;&|()<>":
            raise ShellSyntaxError("case without a word")
        self.read_word()
        self._skip_blanks_and_newlines()
        if self.read_word().source != "in":
            raise ShellSyntaxError("case without `in`")
        self.open_cases += 1
        self._read_case_patterns()

    def _read_case_patterns(self) -> None:
        """`esac`, or the patterns `(a|b)` of the next clause up to its `)`. Patterns are
        data, but their expansions run when bash compares them: read as words."""
        self._skip_blanks_and_newlines()
        if _ESAC.match(self.s, self.i):
            self.i += len("esac")
            self.open_cases -= 1
            return
        if self.s.startswith("(", self.i):
            self.i += 1
        while True:
            self._skip_blanks()
            if self.i >= self.n or self.s[self.i] in "\n;&|()<>":
                raise ShellSyntaxError("case clause without a pattern")
            self.read_word()
            self._skip_blanks()
            if self.s.startswith("|", self.i):
                self.i += 1
            elif self.s.startswith(")", self.i):
                self.i += 1
                return
            else:
                raise ShellSyntaxError("case pattern without `)`")

    def _read_conditional(self) -> None:
        """`[[ ... ]]`: its words are data (`<`, `>`, `(`, `)`, `!`, `&&`, `||` operators of
        the test; `(` and `|` of a `=~` regular expression), but their expansions run."""
        s = self.s
        while True:
            self.spend()
            self._skip_blanks()
            if self.i >= self.n or s[self.i] == "\n":
                raise ShellSyntaxError("[[ without ]] on its line")
            if end := _CONDITIONAL_END.match(s, self.i):
                self.i = end.end()
                return
            if s[self.i] in "<>" and s.startswith("(", self.i + 1):
                self.read_word()  # a process substitution: its commands run
            elif operator := _CONDITIONAL_OPERATOR.match(s, self.i):
                self.i = operator.end()
            elif s[self.i] in ";&":
                raise ShellSyntaxError(f"unexpected {s[self.i]!r} inside [[ ]]")
            else:
                self.read_word()

    def _skip_blanks_and_newlines(self) -> None:
        """Blanks, newlines and comments between words, reading any here-document bodies
        a newline starts."""
        while True:
            self._skip_blanks()
            if self.s.startswith("#", self.i):
                newline = self.s.find("\n", self.i)
                self.i = self.n if newline < 0 else newline
            elif self.s.startswith("\n", self.i):
                self.i += 1
                if self.pending_heredocs:
                    self._read_heredoc_bodies()
            else:
                return

    def _finish(self, command: SimpleCommand) -> None:
        if command.header:
            command.words, command.braced = [], {}
        if not command.is_empty():
            self.commands.append(command)

    def _skip_blanks(self) -> None:
        blanks = _BLANKS.match(self.s, self.i)
        if blanks:
            self.i = blanks.end()

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
        target: Word = self.read_word()
        if operator in ("<<", "<<-"):
            self.pending_heredocs.append((command, target.text, operator == "<<-", target.quoted))
        elif operator == "<<<":
            command.stdin.append(target.text)
        elif operator in (">&", "<&") and _FD_DUPLICATE.fullmatch(target.text):
            return
        elif not target.process_substitution:
            command.redirects.append((operator, target.text))

    def _read_heredoc_bodies(self) -> None:
        pending, self.pending_heredocs = self.pending_heredocs, []
        s = self.s
        unterminated = None
        for command, delimiter, strip_tabs, quoted in pending:
            lines = []
            while True:
                self.spend()
                if self.i >= self.n:
                    # The shells take the rest of the input as the body (with a warning) and
                    # run the command: it is read so, and the script stays unparseable (F140).
                    unterminated = delimiter
                    break
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
                command.stdin.append(body)
                continue
            inner = _Parser(body, self.nesting, self.budget)
            try:
                command.stdin.append(inner.read_quoted(end=None))
            finally:
                self.commands.extend(inner.commands)
        if unterminated is not None:
            raise ShellSyntaxError(f"here-document {unterminated!r} is not terminated")
