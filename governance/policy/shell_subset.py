"""The closed shell subset: the only scripts the engine reads exactly, and so may allow.

`recognize(script)` accepts a script only when every character of it lies in the
grammar below, which bash, dash (`sh`) and zsh (default options) read identically;
it returns the simple commands as argv lists after quote removal, with their
assignments and redirections. Anything else raises `OutsideSubset` and the call is
at least ASK (a best-effort reading still looks for NEVER hits; see shell_commands).

    script     := linebreak [list (newline linebreak list)*] linebreak
    list       := pipeline (sep linebreak pipeline)* [";" | "&"]      sep: ; & && ||
    pipeline   := command ("|" linebreak command)*
    linebreak  := (blank | newline | comment)*        comment: "#" at a word start, to the line end
    command    := (assignment | redirect)* word (word | redirect)*
    assignment := NAME "=" value                      NAME unquoted, [A-Za-z_][A-Za-z0-9_]*
    redirect   := [fd] ("<" | ">" | ">>") target | [fd] ">&" ("1" | "2")    fd: 0, 1 or 2
                | ["0"] "<<" ("'" MARKER "'" | MARKER)      the body: the lines after this line
                                                      up to one that is exactly MARKER
    word       := piece+
    piece      := plain | '\\' char | "'" any-but-' "'" | '"' dq* '"'
    dq         := any but " \\ $ ` | '\\' ('"' | '\\') | '\\' other (kept as two characters)
                | "$(cat <<'" MARKER "'" newline line* MARKER newline ")"    as a whole "…" piece
    blank      := " " | tab | " \\<newline>" (a line continuation after a blank)

Unquoted, a word may not contain `$`, a backtick, `(`, `)`, `[`, `{`, `}` (the whole
words `[` and, as an argument, `{}` excepted), `!` (the whole word `!` as an argument
excepted), `~` at its start or after `=` or `:`, or `=`, `^`, `#` at its start. `*` and
`?` may stand unquoted in an argument only (a glob: the three shells expand it alike to
words the script does not show; `Command.glob_at` says where, for the caller to match
what follows as open). A command name may not be a reserved word of any of the three
shells, contain `=`, or start with `-` or `%`, with one exception: `time` before a
plain command (`time npm test`: bash's and zsh's keyword, and dash's /usr/bin/time,
both run that command). A redirection target may not name /dev/tcp, /dev/udp or
/dev/fd. Control characters (below U+0020 but tab and newline, and DEL) are refused
anywhere. A here-document's body is the command's standard input; unquoted (`<<EOF`), it
may hold no `$`, backtick or backslash, and it must end at a line that is exactly its
marker (one with blanks around the marker is refused); its line may hold one `<<`, not
continued, not ending in `&&`, `||` or `|`. The substituted shape is the commit message
agents write: its body holds no `$`, backtick or backslash and no line starting with the
marker; it reads as a `cat` command before the command it is an argument of (which no pipe
may feed, joined to it by `&&`), the argument being the body without its last newlines.
Other here-documents
(`<<-`, `<<"EOF"`), here-strings, `&>`, `>|`, `<>`, other descriptors, subshells, groups,
loops, functions, `[[`, arithmetic and every expansion are outside; so is an empty
command and an incomplete script (a trailing `&&`, `||`, `|`, an open quote).
Work is linear in the script, with a ceiling of `MAX_TOKENS` words, operators and
quoted pieces: a longer script is outside the subset.
"""

import re
from dataclasses import dataclass, field

MAX_TOKENS = 1_024

_RESERVED_WORDS = (
    "if then else elif fi do done case esac while until for in function select time coproc "
    "repeat foreach end nocorrect noglob always ]]"
)
RESERVED = frozenset(_RESERVED_WORDS.split())

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_BLANKS = r"[ \t]+(?:\\\n[ \t]*)*"  # a line continuation only after a blank
_TOKEN = re.compile(  # blanks before a token are skipped in the same match
    rf"(?:{_BLANKS})?(?:(?P<newline>\n)"
    r"|(?P<comment>#[^\n]*)"
    r"|(?P<redirect>[0-9]*(?:>>|>&|<&|<<|<>|>\||&>|[<>]))"
    r"|(?P<operator>&&|\|\||;;|;&|\|&|&\||&!|[;&|])"
    r"|(?P<word>(?:[^ \t\n;&|<>()'\"\\]++|\\[^\n]|'[^']*+'|\"(?:[^\"\\]++|\\[^\n])*+\")++))"
    rf"|(?P<blank>{_BLANKS})"
)
_PIECE = re.compile(r"([^'\"\\]++)|\\(.)|'([^']*+)'|\"((?:[^\"\\]++|\\.)*+)\"", re.DOTALL)
_DOUBLE_QUOTED_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_QUOTING = re.compile(r"['\"\\]")
_UNQUOTED_FORBIDDEN = re.compile(r"[$`*?\[{}!]")
_UNQUOTED_FORBIDDEN_IN_ARGUMENT = re.compile(r"[$`\[{}!]")
_GLOB = re.compile(r"[*?]")
_DOUBLE_QUOTED_FORBIDDEN = re.compile(r"[$`]|\\[$`\n]")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_HEREDOC_MARKER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEREDOC_QUOTED_MARKER = re.compile(r"'([A-Za-z_][A-Za-z0-9_]*)'")
_SUBSTITUTED_HEREDOC = re.compile(
    r"\$\(cat <<'(?P<marker>[A-Za-z_][A-Za-z0-9_]*)'\n(?P<body>(?:[^\n]*\n)*?)(?P=marker)\n\)"
)
_UNQUOTED_HEREDOC_FORBIDDEN = re.compile(r"[$`\\]")
_SPECIAL_TARGET = re.compile(r"/dev/(?:tcp|udp|fd)(?:/|$)")
# An argument with no quoting, nothing the subset forbids, no glob and no `~`, `=` or `^`
# (which are forbidden only in some places): it is its own text, and most arguments are.
_PLAIN_ARGUMENT = re.compile(r"[^'\"\\$`*?\[{}!~=^]+")
# Such arguments one after another, each after blanks and ending where a word ends (a blank,
# a newline, `;`, `|`, a parenthesis, the end; not `<`, `>` or `&`, after which digits are a
# descriptor): a command's arguments are taken in one match, not one token at a time.
_PLAIN_ARGUMENTS = re.compile(
    r"(?:[ \t]++(?!#)[^ \t\n;&|<>()'\"\\$`*?\[{}!~=^]++(?=[ \t\n;|()]|\Z))++"
)
_WORDS = re.compile(r"[^ \t]++")


class OutsideSubset(ValueError):
    """The script uses something outside the subset; `reason` says what, for humans."""


@dataclass(frozen=True)
class Redirect:
    fd: int
    operator: str  # "<", ">", ">>" or ">&" (then `target` is "1" or "2")
    target: str


@dataclass
class Command:
    argv: list[str] = field(default_factory=list)
    assignments: list[tuple[str, str]] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    then: str = ""  # the operator after it: ; & && || | or "" (a newline, the end)
    # The first argument holding an unquoted `*` or `?`: (its index in argv, the text of
    # the word before the first of them). From there on, the words are the shell's to choose.
    glob_at: tuple[int, str] | None = None
    # The text of its here-document (`cat <<'EOF'`): its standard input; None without one.
    heredoc: str | None = None
    # The here-documents of `"$(cat <<'EOF' ...)"` arguments: each `cat` runs before it.
    substituted: list[str] = field(default_factory=list)


def recognize(script: str) -> list[Command]:
    """The simple commands of `script`, read exactly; raises OutsideSubset."""
    control = _CONTROL.search(script)
    if control:
        raise OutsideSubset(f"control character U+{ord(control.group()):04X}")
    commands: list[Command] = []
    command = Command()
    position, size, tokens = 0, len(script), 0
    pending: str | None = None  # an operator that still needs a command after it
    target_of: tuple[int, str] | None = None  # a redirection waiting for its target
    heredoc: _PendingHeredoc | None = None  # its body starts after this line's newline
    match = _TOKEN.match
    arguments = _PLAIN_ARGUMENTS.match
    while position < size:
        if command.argv and target_of is None and command.argv != ["time"]:
            run = arguments(script, position)
            if run is not None:
                words = _WORDS.findall(run.group())
                tokens += len(words)  # a word and the blanks before it are one token
                if tokens > MAX_TOKENS:
                    raise OutsideSubset(
                        f"more than {MAX_TOKENS} words, operators and quoted pieces"
                    )
                command.argv += words  # what _add_word would do, without its checks
                position = run.end()
                if position == size:
                    break
        token = match(script, position)
        if token is None:
            raise OutsideSubset(_what_stops(script, position))
        kind = token.lastgroup
        text = token.group(kind)
        position = token.end()
        tokens += 1
        if kind == "word":
            plain = _PLAIN_ARGUMENT.fullmatch(text) is not None
            if not plain and _QUOTING.search(text):
                tokens += len(_QUOTING.findall(text)) // 2  # its quoted pieces count too
        if tokens > MAX_TOKENS:
            raise OutsideSubset(f"more than {MAX_TOKENS} words, operators and quoted pieces")
        if kind == "blank" or kind == "comment":
            continue
        if target_of is not None and kind != "word":
            raise OutsideSubset(f"redirection {target_of[1]} without a target")
        if kind == "word":
            if target_of is not None and target_of[1] == "<<":
                if heredoc is not None:
                    raise OutsideSubset("two here-documents on one line")
                if commands and commands[-1].then == "|":
                    # zsh (MULTIOS) then reads the pipe and the body, one after the other
                    raise OutsideSubset("a here-document on a command a pipe feeds")
                heredoc = _PendingHeredoc(command, *_heredoc_marker(text), position)
                target_of = None
            elif target_of is not None:
                command.redirects.append(_redirect(*target_of, text))
                if target_of[1] == "<" and script.startswith(">", position):
                    raise OutsideSubset("`<...>`: a numeric glob in zsh")
                target_of = None
            elif plain and command.argv and command.argv != ["time"]:
                command.argv.append(text)  # what _add_word would do, without its checks
            elif plain and not command.argv and text not in RESERVED and text[0] not in "-%":
                command.argv.append(text)  # a command name needing none of _add_name's checks
            else:
                _add_word(command, text)
        elif kind == "redirect":
            target_of = _redirect_operator(text)
            if target_of[1] == ">&":
                command.redirects.append(_duplicate(script, position, target_of[0]))
                position, target_of = position + 1, None
        elif kind == "newline":
            if heredoc is not None:
                waiting = None if command.argv else pending  # `cat <<E |` at the line's end
                position = heredoc.read_body(script, token.start(kind), position, waiting)
                heredoc = None
            if command.argv:
                _append(commands, command)
                command, pending = Command(), None
            elif command.assignments or command.redirects or command.heredoc is not None:
                raise OutsideSubset("a command without a program")
        else:
            if text not in (";", "&", "&&", "||", "|"):
                raise OutsideSubset(f"the operator {text!r}")
            if not command.argv:
                raise OutsideSubset(f"{text!r} without a command before it")
            command.then = text
            _append(commands, command)
            command = Command()
            pending = text if text in ("&&", "||", "|") else None
    if target_of is not None:
        raise OutsideSubset(f"redirection {target_of[1]} without a target")
    if heredoc is not None:
        raise OutsideSubset("a here-document without its lines")
    if command.argv:
        _append(commands, command)
    elif command.assignments or command.redirects or command.heredoc is not None:
        raise OutsideSubset("a command without a program")
    elif pending:
        raise OutsideSubset(f"the script ends with {pending!r}: it is incomplete")
    return commands


def _what_stops(script: str, position: int) -> str:
    while script[position] in " \t" and position + 1 < len(script):
        position += 1
    char = script[position]
    if char in "'\"":
        return "an unterminated quote, or a backslash-newline inside double quotes"
    if char in "()":
        return "subshells, grouping and substitutions"
    if char == "\\":
        return "a line continuation that is not after a blank"
    return f"the character {char!r}"


def _append(commands: list[Command], command: Command) -> None:
    if command.argv == ["time"]:
        raise OutsideSubset("`time` without a command after it")
    if command.substituted:
        if commands and commands[-1].then == "|":
            raise OutsideSubset("a command substitution in a command a pipe feeds")
        for body in command.substituted:
            # Part of its command's and-or list, as the substitution is: `&&` (cat succeeds),
            # never a `;` that would end a background job's list before it.
            commands.append(Command(argv=["cat"], heredoc=body, then="&&"))
    commands.append(command)


def _add_word(command: Command, raw: str) -> None:
    if command.argv == ["time"]:
        # After the keyword `time` comes a command, read as a command name.
        _add_name(command, raw)
        return
    if command.argv:
        text, head = _unquote_argument(raw, command.substituted)
        if head is not None and command.glob_at is None:
            command.glob_at = (len(command.argv), head)
        command.argv.append(text)
        return
    assignment = _ASSIGNMENT.match(raw)
    if assignment:
        if assignment.group(2):
            raise OutsideSubset("`+=` assignments")
        name = assignment.group(1)
        command.assignments.append((name, _unquote(raw[assignment.end() :], "value", name + "=")))
        return
    if raw == "time":
        command.argv.append(raw)
        return
    _add_name(command, raw)


def _add_name(command: Command, raw: str) -> None:
    if _ASSIGNMENT.match(raw):
        raise OutsideSubset(f"an assignment after `time`: {raw!r}")
    text = _unquote(raw, "name")
    if raw in RESERVED:
        raise OutsideSubset(f"the reserved word {raw!r}")
    if not text or "=" in text or text[0] in "-%":
        raise OutsideSubset(f"the command name {text!r}")
    command.argv.append(text)


def _unquote(raw: str, role: str, before: str = "") -> str:
    """Quote removal of one word; `role` is name, value (after `NAME=`) or target."""
    return _unquote_word(raw, role, before)[0]


def _unquote_argument(raw: str, substituted: list[str]) -> tuple[str, str | None]:
    """Quote removal of an argument, and the text before its first unquoted `*` or `?`
    (None when it holds none: the word is then exactly the text). The here-document of a
    `"$(cat <<'EOF' ...)"` piece is added to `substituted`: its text is the piece's."""
    return _unquote_word(raw, "argument", substituted=substituted)


def _unquote_word(
    raw: str, role: str, before: str = "", substituted: list[str] | None = None
) -> tuple[str, str | None]:
    """The word after quote removal, and for an argument the text before its first glob."""
    if (raw == "[" and role != "target") or (role == "argument" and raw in ("!", "{}")):
        return raw, None
    glob = role == "argument"
    if not _QUOTING.search(raw):  # the common case
        _check_unquoted(raw, raw, before[-1:], at_start=True, glob=glob)
        star = _GLOB.search(raw) if glob else None
        return raw, (raw[: star.start()] if star else None)
    out: list[str] = []
    head: str | None = None
    previous = before[-1:]  # the character before the next piece; "" at the start of a word
    for plain, escaped, single, double in _PIECE.findall(raw):
        if plain:
            # `''=ls` too: nothing before the `=` but empty quotes (a value counts from `=`).
            _check_unquoted(plain, raw, previous, at_start=not any(out), glob=glob)
            star = _GLOB.search(plain) if glob else None
            if star and head is None:
                head = "".join(out) + plain[: star.start()]
            piece = plain
        elif escaped:
            piece = escaped
        elif double and substituted is not None and double.startswith("$(cat <<'"):
            body = _substituted_heredoc(double)
            substituted.append(body)
            piece = body.rstrip("\n")  # a substitution drops the output's last newlines
        elif double:
            if _DOUBLE_QUOTED_FORBIDDEN.search(double):
                raise OutsideSubset(f"`$`, a backtick or a backslash-newline in {raw!r}")
            piece = _DOUBLE_QUOTED_ESCAPE.sub(_double_quoted_escape, double)
        else:
            piece = single
        out.append(piece)
        previous = piece[-1:] or previous
    return "".join(out), head


def _check_unquoted(
    plain: str, raw: str, previous: str, *, at_start: bool, glob: bool = False
) -> None:
    bad = (_UNQUOTED_FORBIDDEN_IN_ARGUMENT if glob else _UNQUOTED_FORBIDDEN).search(plain)
    if bad:
        raise OutsideSubset(f"the unquoted {bad.group()!r} in {raw!r}")
    if at_start and plain[:1] in ("=", "^"):
        raise OutsideSubset(f"{plain[0]!r} at the start of {raw!r}")
    for at in [i for i, c in enumerate(plain) if c == "~"] if "~" in plain else ():
        if (plain[at - 1] if at else previous) in ("", "=", ":"):
            raise OutsideSubset(f"the unquoted '~' in {raw!r}")


def _substituted_heredoc(double: str) -> str:
    """The here-document of `"$(cat <<'EOF'<newline>...<newline>EOF<newline>)"`, the shape
    agents write commit messages in; only its plainest spelling is read (no `$`, backtick or
    backslash in the body, no body line that starts with the end marker)."""
    shape = _SUBSTITUTED_HEREDOC.fullmatch(double)
    if shape is None:
        raise OutsideSubset("a command substitution other than `\"$(cat <<'EOF' ...)\"`")
    marker, body = shape.group("marker", "body")
    if _UNQUOTED_HEREDOC_FORBIDDEN.search(body):
        raise OutsideSubset("`$`, a backtick or a backslash in a substituted here-document")
    if any(line.lstrip(" \t").startswith(marker) for line in body.split("\n")):
        raise OutsideSubset(f"a line starting with the end marker {marker!r}")
    return body


def _double_quoted_escape(match: re.Match) -> str:
    char = match.group(1)
    return char if char in '"\\' else "\\" + char


@dataclass
class _PendingHeredoc:
    """`cat <<'EOF'`, its line not yet ended: the body is the lines after it."""

    command: Command
    marker: str
    quoted: bool  # `<<'EOF'`: the body is read as written; `<<EOF`: it is expanded
    operator_end: int  # where the script's text after the marker starts

    def read_body(self, script: str, newline: int, body_start: int, pending: str | None) -> int:
        """Store the lines up to the end marker's line as the command's here-document; the
        position after that line. The three shells agree on where a body starts and ends
        in the plain case, so everything else is outside the subset."""
        if "\n" in script[self.operator_end : newline]:
            raise OutsideSubset("a line continuation or a quoted newline after `<<`")
        if pending:
            raise OutsideSubset(f"a here-document on a line that ends with {pending!r}")
        if any(r.fd == 0 and r.operator == "<" for r in self.command.redirects):
            raise OutsideSubset("a here-document and `<` on one command")
        lines, position = [], body_start
        while True:
            end = script.find("\n", position)
            line = script[position:] if end < 0 else script[position:end]
            if line == self.marker:
                break
            if line.strip(" \t") == self.marker:
                raise OutsideSubset(f"the end marker {self.marker!r} with blanks around it")
            if end < 0:
                raise OutsideSubset(f"a here-document without its end line {self.marker!r}")
            lines.append(line)
            position = end + 1
        body = "".join(line + "\n" for line in lines)
        if not self.quoted and _UNQUOTED_HEREDOC_FORBIDDEN.search(body):
            # Without quotes the body is expanded: with none of these it reads as written.
            raise OutsideSubset("`$`, a backtick or a backslash in an unquoted here-document")
        self.command.heredoc = body
        return len(script) if end < 0 else end + 1


def _heredoc_marker(raw: str) -> tuple[str, bool]:
    """The end marker of `<<'EOF'` or `<<EOF`, and whether it is quoted; any other spelling
    (`<<-`, `<<"EOF"`, `<<E\\OF`) is outside the subset."""
    quoted = _HEREDOC_QUOTED_MARKER.fullmatch(raw)
    if quoted:
        return quoted.group(1), True
    if _HEREDOC_MARKER.fullmatch(raw):
        return raw, False
    raise OutsideSubset(f"the here-document marker {raw!r}")


def _redirect_operator(text: str) -> tuple[int, str]:
    digits = text.rstrip("<>&|")
    operator = text[len(digits) :]
    if operator == "<<" and digits in ("", "0"):
        return 0, operator
    if operator not in ("<", ">", ">>", ">&"):
        raise OutsideSubset(f"the redirection {text!r}")
    fd = int(digits) if digits else (0 if operator == "<" else 1)
    if fd > 2 or len(digits) > 1:
        raise OutsideSubset(f"the redirection of descriptor {digits}")
    return fd, operator


def _duplicate(script: str, position: int, fd: int) -> Redirect:
    target = script[position : position + 1]
    after = script[position + 1 : position + 2]
    if target not in ("1", "2") or (after and after not in " \t\n;&|"):
        raise OutsideSubset("`>&` to anything but descriptor 1 or 2")
    return Redirect(fd, ">&", target)


def _redirect(fd: int, operator: str, raw: str) -> Redirect:
    target = _unquote(raw, "target")
    if not target:
        raise OutsideSubset("an empty redirection target")
    if _SPECIAL_TARGET.match("/" + "/".join(p for p in target.split("/") if p not in ("", "."))):
        raise OutsideSubset(f"the special file {target!r}")
    return Redirect(fd, operator, target)
