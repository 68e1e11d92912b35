"""A shell script as the rules see it: every command, file written and file read.

Two readings, combined by the caller (most restrictive wins):

- **exact**: a script inside the closed subset (shell_subset) is read exactly, in
  its dialect. Each simple command yields *views*: the command as written
  (`sudo rm -rf /`), after each wrapper is unwrapped (`rm -rf /`, recursively
  through `sh -c` scripts, each in its own shell's dialect), and a program named
  by path also by its base name (`/bin/rm` → `rm`). A *binding* view counts as
  ASK when no rule matches it; a non-binding one counts only when a rule matches.
  Acting options (acting_options) attach a *requirement* to the views that
  contain them: their ALWAYS rule must name the option. Redirections and the
  operands of `tee`, `cp`, `dd of=`... are writes, `<` is a read. *Concerns*
  keep a command at ASK: assignments and builtins (shell_builtins), shells started
  with start-up files or fed a script by file or stdin, `xargs` feeding input words
  to a program with acting options, unknown wrapper options, nesting past the limits.
  With a declared working directory, relative paths resolve there and `cd` is
  followed.
- **best effort**: a script outside the subset is ASK whatever it contains; it
  is also read by shell_syntax's tolerant parser, and every command, write and
  read it finds is matched for NEVER rules only (`echo $(rm -rf /)` is NEVER,
  `$(< /etc/shadow)` is a read of /etc/shadow).
"""

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from governance.policy.acting_options import (
    ACTING,
    CONFIGURED_BY_PROJECT,
    CONFIGURED_WHERE_IT_RUNS,
    FORMATTERS,
    LANDS,
    OUTPUT_OPTIONS,
    RUNS_PROJECT_CODE,
    SPECIAL_FILE_FOLDERS,
    STARTS_A_JVM,
    WRITES,
    WRITES_NO_CONTENT,
    WRITES_WHERE_IT_RUNS,
    acting_uses,
    canonical_program,
    climbing_link_texts,
    cmake_source_folders,
    code_paths,
    commands_from_input,
    dotnet_projects,
    go_packages,
    handed_on_code_paths,
    interpreter_links,
    links_copied_from,
    may_configure,
    reads_commands_from_input,
    special_files_copied_from,
    symbolic_link_texts,
    written_operands,
)
from governance.policy.paths import normalise_path
from governance.policy.shell_braces import expanded_words
from governance.policy.shell_builtins import (
    DECLARATIONS,
    SPECIAL_BUILTINS,
    command_concerns,
    variable_concern,
)
from governance.policy.shell_subset import Command, OutsideSubset, recognize
from governance.policy.shell_syntax import parse_script
from governance.policy.shell_words import MAX_STEPS
from governance.policy.shell_wrappers import WRAPPERS, Unwrapped

MAX_SCRIPT_DEPTH = 4
MAX_WRAPPERS = 8
_SYSTEM_DIRECTORIES = frozenset(
    {"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"}
)
_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass(frozen=True)
class Requirement:
    """An acting option or configuration path: the ALWAYS rule must name one of `names`."""

    names: tuple[str, ...]
    reason: str
    # How many times the rule must hold the name as a word: as often as the command does, so
    # that the rule's own words for the program and subcommand do not count (`go fmt fmt`,
    # Go's own fmt package, is not named by `go fmt *`).
    times: int = 1


class Finding(NamedTuple):
    kind: str  # "command", "write", "read", or "modify" (a write that puts no content)
    text: str
    binding: bool
    never_only: bool = False  # from the best-effort reading: only a NEVER rule counts
    requires: tuple[Requirement, ...] = ()
    # `text` is only how the command starts: words the script does not show follow (a
    # glob's expansion, xargs' input), so a rule must allow whatever comes after it.
    open_tail: bool = False


# `mkdir a && touch d && cp -s /workspace/d a/l && mv d e && mkdir d`: a/l leads to the
# folder d, one level up from a, so `a/l/../..` is `/` to the kernel (F135).
_CLIMBS_PAST_A_LINK = (
    "after a symbolic link this script made, `..` climbs from the folder the link leads to, "
    "which the words do not show"
)


@dataclass
class ShellReading:
    findings: list[Finding] = field(default_factory=list)
    concerns: list[tuple[str, str]] = field(default_factory=list)  # (command, reason)
    error: str | None = None
    budget: list[int] = field(default_factory=lambda: [MAX_STEPS])  # steps left, shared
    runs_project_code: bool = False  # set by the command being read
    base: str | None = None  # the tool's working directory, when it declares one
    cwds: tuple[str | None, ...] = (None,)  # where the command being read may run
    climbing_link: bool = False  # the script made a link whose text has `..` in it
    made_link: bool = False  # the script made a symbolic link
    links_out: list[str] = field(default_factory=list)  # links it made to the system's files
    written: set[str] = field(default_factory=set)  # what the script's commands write, so far
    # programs whose project configuration (CONFIGURED_BY_PROJECT) a command may have written
    configured: set[str] = field(default_factory=set)
    folder_moves: int = 0  # `mv`s of a folder the shell may be in, read so far (any depth)
    # where the scripts enclosing this one (`sh -c` from a shell in a/b) may be
    enclosing_cwds: tuple[str | None, ...] = ()
    # commands read so far whose effect on the others depends on the order they run in: a
    # link made, a rename, links copied, a fetch (any depth)
    order_effects: int = 0
    backgrounds: int = 0  # commands sent to the background with `&`, read so far (any depth)
    inner_scripts: int = 0  # scripts a command hands a shell (`sh -c '…'`), read so far
    # commands read so far that put a commit's or a stash's files in the working tree
    # (`git stash pop`): writes whose paths and content no word of the script gives
    landings: int = 0
    # NAME -> the literal values the script assigns it (the tolerant reading's, F140)
    literal_values: dict[str, list[str]] = field(default_factory=dict)
    # the standard input a script's commands inherit from the shell running it (`sh -c 'psql
    # db' < x.sql`): where the enclosing script gave it from, and its text where it shows it
    enclosing_input: tuple[str | None, tuple[str, ...]] = (None, ())

    def paths(self, path: str) -> list[str]:
        """A path as the command being read opens it: relative ones from each possible cwd."""
        if self.made_link and ".." in path.split("/"):
            self.concern(path, _CLIMBS_PAST_A_LINK)
        if path.startswith("/"):
            return [path]
        resolved = []
        for cwd in self.cwds:
            resolved.append(path if cwd is None else normalise_path(f"{cwd}/{path}"))
            if cwd is not None and ".." in path.split("/"):
                # After `cd h`, the kernel climbs `..` from the folder the link `h` leads to,
                # not back to h's: kept as written for the links on disk to follow (F119).
                resolved.append(f"{cwd}/{path}")
        return list(dict.fromkeys(resolved))

    def guessed(self, path: str) -> str:
        """A path the best-effort reading found, from the tool's working directory: where the
        script starts, the likeliest place (only a NEVER rule counts for it, so a `cd` the
        reading did not follow can only turn a NEVER into ASK, never into ALWAYS)."""
        if self.base is None or path.startswith(("/", "~")):
            return path
        return normalise_path(f"{self.base}/{path}")

    def outside(self, path: str) -> bool:
        """Whether a path (as `paths` resolves it) leaves the tool's working directory; with
        none declared, whether it is absolute or climbs out through `..`."""
        path = normalise_path(path)
        if not path.startswith("/"):
            return path == ".." or path.startswith("../")
        if self.base is None:
            return True
        base = self.base.rstrip("/")
        return path != self.base and not path.startswith(base + "/")

    def concern(self, command: str, reason: str) -> None:
        self.concerns.append((command, reason))


def read_shell(script: str, dialect: str, cwd: str | None = None) -> ShellReading:
    """Every finding and concern of `script` read as `dialect` (bash, sh or zsh), run in
    `cwd` when the tool declares its working directory (relative paths then resolve)."""
    reading = ShellReading(base=cwd, cwds=(cwd,))
    _read_script(script, dialect, 0, reading)
    return reading


def read_best_effort(script: str, budget: list[int] | None = None) -> ShellReading:
    """The tolerant reading alone: findings for NEVER rules (an NFKC-folded variant, say)."""
    reading = ShellReading() if budget is None else ShellReading(budget=budget)
    _read_tolerantly(script, 0, reading)
    return reading


def _read_script(script: str, dialect: str, depth: int, reading: ShellReading) -> None:
    try:
        commands = recognize(script)
    except OutsideSubset as outside:
        reading.concern(script, f"outside the shell subset the engine reads exactly: {outside}")
        _read_tolerantly(script, depth, reading)
        return
    runs_code: dict[tuple, bool] = {}
    effects: dict[tuple, _Effects] = {}
    effects_in_order: list[_Effects] = []
    runs_code_before = reading.runs_project_code
    wrote_content = False
    possible, chained = reading.cwds, None  # cwds after the last command; right after a `cd &&`
    previous = ""
    # An `||` earlier in this and-or list: `A || cd DIR && B` runs B where A ran when A
    # succeeds, the `cd` skipped (F131).
    may_skip = False
    previous_command: Command | None = None
    renamed = _names_given([command.argv for command in commands])
    for command in commands:
        _read_renamed(command.argv, renamed, dialect, depth, reading)
        reading.cwds = chained if chained is not None else possible
        stdin = _known_input(command, previous_command)
        fed = _input_source(command, previous_command)
        if fed is None and reading.enclosing_input[0] is not None:
            fed, stdin = reading.enclosing_input[0], list(reading.enclosing_input[1])
        # What the script did before decides what a command does (a `..` past a link it
        # made, a move of its folder): a command written again after that is read again.
        identity = (
            tuple(command.argv),
            tuple(command.assignments),
            tuple(command.redirects),
            tuple(stdin),
            fed,
            reading.cwds,
            reading.made_link,
            reading.climbing_link,
            len(reading.links_out),
            len(reading.written),
            reading.folder_moves,
        )
        moves = reading.folder_moves
        if identity not in runs_code:
            before = len(reading.findings)
            order_effects, backgrounds = reading.order_effects, reading.backgrounds
            inner_scripts, landings = reading.inner_scripts, reading.landings
            reading.runs_project_code = False
            _read_exact(command, dialect, depth, reading, stdin, fed)
            runs_code[identity] = reading.runs_project_code
            written = [f.text for f in reading.findings[before:] if f.kind == "write"]
            lands = reading.landings != landings
            writes = bool(written) or lands
            _writes_through_links_out(reading.findings[before:], command, reading)
            reading.written.update(written)
            _note_configuration_written(command.argv, written, lands, reading)
            effects[identity] = _Effects(
                runs_code[identity],
                lands or any(not _INERT_WRITE.search(text) for text in written),
                reading.order_effects != order_effects,
                reading.backgrounds != backgrounds,
                runs_code[identity] and reading.inner_scripts != inner_scripts,
            )
            if effects[identity].runs_a_script and _writes_content(command):
                # `sh -c "echo CODE; pytest -q" > conftest.py`: the redirection is open before
                # the inner script runs, and its other commands write into what it imports.
                reading.concern(
                    " ".join(command.argv),
                    "its script's other commands write into the file its output goes to, "
                    "which the project's code it runs may read",
                )
        else:
            writes = any(r.operator in (">", ">>") for r in command.redirects)
        effects_in_order.append(effects[identity])
        if command.then == "&":
            reading.backgrounds += 1
        if runs_code[identity] and wrote_content:
            reading.concern(
                " ".join(command.argv),
                "an earlier command of this script writes files and this one runs the "
                "project's code, which may include them",
            )
        wrote_content = wrote_content or writes
        moved = _directory_change(command, reading.cwds)
        if moved is not None and reading.made_link:
            for word in command.argv[1:]:
                if ".." in word.split("/"):
                    reading.concern(" ".join(command.argv), _CLIMBS_PAST_A_LINK)
        if reading.folder_moves != moves:
            # `cd a/b && mv /workspace/a/b /workspace/c`: the shell moved with its folder,
            # and `../..` is one level higher than the words say (F135).
            possible, chained, moved = (None,), None, None
        # zsh runs a pipeline's last command in the shell itself: `echo | cd /etc` moves it.
        piped = previous == "|" and dialect != "zsh"
        if moved is not None and not piped and command.then not in ("|", "&"):
            # A `cd` that fails leaves the shell where it was: both are possible afterwards.
            possible = _at_most(possible + moved)
            chained = moved if command.then == "&&" and not may_skip else None
        elif command.then not in ("&&", "|"):
            chained = None
        if command.then == "||":
            may_skip = True
        elif command.then not in ("&&", "|"):
            may_skip = False
        previous, previous_command = command.then, command
    _read_concurrently(commands, effects_in_order, reading)
    # The script as a whole runs the project's code if any of its commands does: `sh -c
    # 'pytest; echo done'` after a write is a write, then a run (not only its last command).
    reading.runs_project_code = runs_code_before or any(runs_code.values())


def _note_configuration_written(
    argv: list[str], written: list[str], lands: bool, reading: ShellReading
) -> None:
    """Which programs' project configuration this command may have written (a commit's files
    that git lands may hold it too). The formatters' own writes are sources (ruff's fixes); git's
    are not (`git show REV:config > config`)."""
    own = canonical_program(normalise_path(argv[0]).rsplit("/", 1)[-1]) if argv else ""
    counts = own not in CONFIGURED_BY_PROJECT or own in CONFIGURED_WHERE_IT_RUNS
    for program in CONFIGURED_BY_PROJECT:
        # A commit's files, git's own landing them too; but not for git itself: what lands
        # lands in a repository, whose `.git` git finds before it takes a folder for a bare
        # one (and running git in another folder is a concern of its own).
        landed = lands and program not in CONFIGURED_WHERE_IT_RUNS
        if landed or (counts and any(may_configure(program, w, reading.cwds) for w in written)):
            reading.configured.add(program)


def _reads_written_configuration(name: str, words: list[str], reading: ShellReading) -> None:
    if name in reading.configured:
        reading.concern(
            " ".join(words),
            f"an earlier command of this script may write the configuration {name} reads "
            "from the project, which decides where it writes (its cache-dir, its outDir) or "
            "what it runs (a bare repository's config)",
        )


class _Effects(NamedTuple):
    """What one command of a script does that another running beside it may change."""

    runs_code: bool  # it runs the project's code
    writes_content: bool  # it writes a file (but a log) that code may be read from
    order_effect: bool  # it makes a link, renames, copies links or fetches
    leaves_a_job: bool  # a script it runs sends a command to the background
    # It runs the code within a script of its own (`sh -c 'echo …; pytest'`): what it
    # prints is not only the runner's output.
    runs_a_script: bool = False


# What no program runs as code: a log written beside a build (`pytest | tee pytest.log`).
_INERT_WRITE = re.compile(r"\.log$|^/dev/(null|stdout|stderr)$")


def _read_concurrently(
    commands: list[Command], effects: list[_Effects], reading: ShellReading
) -> None:
    """The commands of a pipeline run at the same time, and so does a job sent to the
    background (`&`) with every command after it: the order the script is read in is not
    the order they act in. Where one of them runs the project's code while another writes a
    file, or one makes a link, renames or fetches beside others, what the engine read in
    order may not be what happens (`pytest & echo CODE > conftest.py`)."""
    groups: list[tuple[range, bool]] = []  # (the commands, whether they are one pipeline)
    start = 0  # of the current pipeline
    job_start = 0  # of the current and-or list
    for k, command in enumerate(commands):
        if command.then != "|":
            if k > start:
                groups.append((range(start, k + 1), True))
            start = k + 1
        # A job a nested script leaves (`sh -c 'make &' | cat`) outlives its pipeline too.
        backgrounded = command.then == "&" or effects[k].leaves_a_job
        if backgrounded and k + 1 < len(commands):
            groups.append((range(job_start, len(commands)), False))
        if command.then in (";", "&", ""):
            job_start = k + 1
    for group, pipeline in groups:
        together = [effects[k] for k in group]
        text = (" | " if pipeline else " ; ").join(" ".join(commands[k].argv) for k in group)
        if any(e.order_effect for e in together):
            reading.concern(
                text,
                "these commands run at the same time, and one makes a link, renames, copies "
                "links or fetches: what the others find depends on which acts first",
            )
        runners = [k for k in group if effects[k].runs_code]
        writers = [k for k in group if effects[k].writes_content]
        if any(
            r != w
            # `pytest 2>&1 | tee out.txt`, `cargo test | head -50 > summary.txt`: what is
            # written after the runner in its pipeline is the runner's own output, when each
            # command from the runner to the writer only passes the pipe on.
            and not (
                pipeline
                and w > r
                and not effects[r].runs_a_script
                and all(_passes_its_input_on(commands[k]) for k in range(r + 1, w + 1))
            )
            for r in runners
            for w in writers
        ):
            reading.concern(
                text,
                "these commands run at the same time: one runs the project's code while "
                "another writes a file it may read",
            )


# Programs whose output is (part of) their standard input, given no file to read, and the
# words each may be given: options that neither add text of the script's (`nl -s TEXT` puts
# it before every line) nor name a file to read (`sort --files0-from=F`), and their numbers.
_COUNTS = r"|[+-]?\d+|--(?:lines|bytes)=[+-]?\d+"
_PASS_THROUGH_WORDS = {
    "tee": re.compile(r"-[aip]+|--append|--ignore-interrupts|[^-].*"),  # operands: its copies
    "cat": re.compile(r"-[AbeEnstTuv]*"),  # `-` alone: the pipe
    "head": re.compile(r"-[qvnc]+" + _COUNTS),
    "tail": re.compile(r"-[qvnc]+" + _COUNTS),
    "sort": re.compile(r"-[bdfghiMnrsuVz]+"),
    "uniq": re.compile(r"-[cdDiuz]+"),
    "wc": re.compile(r"-[clmwL]+"),
}
_GREPS = frozenset({"grep", "egrep", "fgrep"})


def _writes_content(command: Command) -> bool:
    """Whether its own redirections write a file code may be read from (not a log)."""
    return any(
        r.operator in (">", ">>") and not _INERT_WRITE.search(r.target) for r in command.redirects
    )


def _passes_its_input_on(command: Command) -> bool:
    """Whether what this pipeline element writes can only be what came down the pipe: a
    `tee`, or a filter with no file operand (`head -n 50`), its standard input the pipe (no
    here-document, no `<`): `pytest | echo CODE | grep o > F` writes the echo's text, not
    pytest's, and `pytest | nl -s CODE > F` writes CODE on every line."""
    if command.heredoc is not None or any(
        r.fd == 0 and r.operator == "<" for r in command.redirects
    ):
        return False
    name, arguments = command.argv[0], command.argv[1:]
    if name in _GREPS:
        # one pattern, and no option that names a file or a folder to read (`-f`, `-r`,
        # `-e PATTERN` leaving the word after it a file operand)
        words = [w for w in arguments if not w.startswith("-")]
        options = "".join(w[1:] for w in arguments if w.startswith("-") and w[:2] != "--")
        longs = [w for w in arguments if w.startswith("--")]
        return len(words) <= 1 and not set(options) & set("efrRdD") and not longs
    allowed = _PASS_THROUGH_WORDS.get(name)
    return allowed is not None and all(allowed.fullmatch(word) for word in arguments)


_MAX_CWDS = 4


_GIT_FETCHING = frozenset({"fetch", "pull"})


def _fetches_what_it_wrote(name: str, arguments: list[str], text: str, reading: ShellReading):
    """`printf BUNDLE > upstream && git fetch upstream` (or `env git fetch up` with `up.git`
    written): with no remote of that name, git fetches the file or folder the script wrote,
    and a checkout of FETCH_HEAD makes the links it holds (F141)."""
    if name != "git" or not _GIT_FETCHING & set(arguments[:3]):
        return
    for word in arguments[1:]:
        if word.startswith("-"):
            continue
        for path in reading.paths(word):
            path = normalise_path(path)
            places = (path, f"{path}.git")
            if any(w == p or w.startswith(p + "/") for w in reading.written for p in places):
                reading.concern(text, f"git reads {word}, which this script wrote, as a repository")
                return


def _known_input(command: Command, previous: Command | None) -> list[str]:
    """The text a command reads on its standard input, where the script shows it: its
    here-document, or what the command before it writes into the pipe."""
    if command.heredoc is not None:
        return [command.heredoc]
    return _piped_text(previous)


def _input_source(command: Command, previous: Command | None) -> str | None:
    """Where a command's standard input comes from, when the script gives it one ("": from
    /dev/null, which holds nothing)."""
    if command.heredoc is not None:
        return "a here-document"
    files = [r.target for r in command.redirects if r.fd == 0 and r.operator == "<"]
    if files:
        return "" if files[-1] == "/dev/null" else "a file"
    if previous is not None and previous.then in ("|", "|&"):
        return "the pipe"
    return None


def _read_commands_from_input(
    base: str,
    name: str,
    arguments: list[str],
    text: str,
    stdin: list[str],
    fed: str,
    reading: ShellReading,
) -> None:
    """`psql db < x.sql`, `cat x.sql | sqlite3 db`: a database client runs the commands of the
    script's file or pipe as it runs `-f`'s, which may run programs and write files; those of a
    here-document or an echo are read as `-c`'s are (F179)."""
    if not stdin:
        reading.concern(
            text,
            f"{base} reads its commands from {fed}, and they may run programs or write "
            "files, as a script file's do",
        )
        return
    for known in stdin:
        for acting in commands_from_input(name, arguments, known):
            reading.concern(text, f"{base} reads from {fed} {acting.names[0]}, which {acting.what}")


def _piped_text(writer: Command | None) -> list[str]:
    """`echo 'CMD' | bash`: what a literal echo or printf writes into the pipe is the next
    command's standard input (a shell there runs it) (F140); so is `cat <<'EOF'`'s
    here-document."""
    if writer is None or writer.then not in ("|", "|&") or writer.glob_at is not None:
        return []
    if writer.argv in (["cat"], ["cat", "-"]) and writer.heredoc is not None:
        return [writer.heredoc]
    if writer.argv[:1] not in (["echo"], ["printf"]) or len(writer.argv) < 2:
        return []
    text = " ".join(writer.argv[1:])
    # dash's and zsh's echo, bash's `echo -e` and printf decode escapes, each its own way:
    # every way is read (`echo 'ls\nrm -rf x' | sh` runs rm in dash).
    return list(dict.fromkeys([text, *(_ESCAPE.sub(way, text) for way in _ESCAPE_WAYS)]))


_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|0[0-7]{0,3}|[0-7]{1,3}|.)", re.DOTALL)
_NAMED_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def _escape_decoded(match: re.Match, *, octal_after_zero: bool) -> str:
    code = match.group(1)
    if code[0] == "x":
        return chr(int(code[1:], 16))
    if code[0] in "01234567":
        digits = code[1:] if octal_after_zero and code[0] == "0" else code
        return chr(int(digits or "0", 8) & 0xFF)
    return _NAMED_ESCAPES.get(code, "\\" + code if code != "\\" else "\\")


_ESCAPE_WAYS = (
    lambda match: _escape_decoded(match, octal_after_zero=True),  # echo's `\0NNN`
    lambda match: _escape_decoded(match, octal_after_zero=False),  # printf's `\NNN`
)


def _writes_through_links_out(
    findings: list[Finding], command: Command, reading: ShellReading
) -> None:
    """`uv venv v && echo x > v/bin/python`: the write lands on the system's interpreter."""
    for finding in findings:
        if finding.kind in ("write", "modify") and any(
            finding.text.startswith(link) for link in reading.links_out
        ):
            reading.concern(
                " ".join(command.argv),
                f"{finding.text} is a link this script made to the system's interpreter",
            )


def _moves_a_working_directory(name: str, arguments: list[str], reading: ShellReading) -> bool:
    """Whether `mv` (or `git mv`), wrapped or not, renames a folder the shell may be in, or one
    above it."""
    argv = [name, *arguments]
    if name == "git" and "mv" in arguments[:2]:
        argv = argv[argv.index("mv") :]
    if argv[0] != "mv":
        return False
    for word in argv[1:]:
        if word.startswith("-") and word != "-":
            continue
        for path in reading.paths(word):
            folder = normalise_path(path).rstrip("/") + "/"
            folders = reading.cwds + reading.enclosing_cwds
            if any(f"{c.rstrip('/')}/".startswith(folder) for c in folders if c is not None):
                return True
    return False


def _directory_change(command: Command, cwds: tuple[str | None, ...]) -> tuple | None:
    """Where `cd DIR` (or `pushd DIR`) moves the shell; None for any other command, and an
    unknown cwd (None) for a `cd` the engine cannot follow (`cd`, `cd -`, options, `+N`,
    `popd`, one behind `builtin` or `command`)."""
    argv = command.argv
    if argv[0] == "time":
        argv = argv[1:]  # bash's and zsh's keyword: `time cd /etc` moves the shell
    wrapped = False
    while argv and argv[0] in ("builtin", "command"):
        # `builtin popd`, `command -p cd /etc`: the builtin itself runs.
        argv, wrapped = argv[1:], True
        while argv[:1] and argv[0].startswith("-") and argv[0] not in ("-v", "-V"):
            argv = argv[1:]
    if not argv or argv[0] not in ("cd", "pushd", "popd"):
        return None
    if (
        wrapped
        or argv[0] == "popd"
        or command.glob_at is not None
        or len(argv) != 2
        # `pushd +N` (and zsh's `cd +N`) rotates the directory stack: it moves to a folder
        # pushed earlier.
        or argv[1].startswith(("-", "+"))
        or not argv[1]
    ):
        return (None,)
    target = argv[1]
    if target.startswith("/"):
        return (normalise_path(target),)
    return tuple(dict.fromkeys(_relative_cd(c, target) for c in cwds))


def _relative_cd(cwd: str | None, target: str) -> str:
    # From an undeclared working directory the result is relative to it: `cd .git && echo
    # x > config` writes `.git/config`, wherever that is (dropping to "unknown" here read the
    # write as a plain `config`, hiding the configuration path from its rules).
    return normalise_path(target if cwd is None else f"{cwd}/{target}")


def _at_most(cwds: tuple[str | None, ...]) -> tuple[str | None, ...]:
    cwds = tuple(dict.fromkeys(cwds))
    return cwds if len(cwds) <= _MAX_CWDS else (None,)


def _read_exact(
    command: Command,
    dialect: str,
    depth: int,
    reading: ShellReading,
    stdin: list[str],
    fed: str | None,
) -> None:
    source = " ".join(command.argv)
    before = len(reading.findings)
    for name, value in command.assignments:
        _check_variable(name, value, source, reading)
    for redirect in command.redirects:
        if redirect.operator != ">&":
            kind = "read" if redirect.operator == "<" else "write"
            for path in reading.paths(redirect.target):
                reading.findings.append(Finding(kind, path, binding=True))
    if command.glob_at is not None:
        _read_globbed(command, reading)
    else:
        _read_chain(command.argv, dialect, depth, reading, exact=True, stdin=stdin, fed=fed)
    reopened = _read_only_descriptors(command)
    if reopened and any(
        _descriptor_named(finding.text) in reopened
        for finding in reading.findings[before:]
        if finding.kind in ("write", "modify")
    ):
        reading.concern(
            source,
            "a write to /dev/stdin, /dev/stdout or /dev/stderr reopens, for writing, the file "
            "this command opened for reading on that descriptor",
        )


def _read_only_descriptors(command: Command) -> set[int]:
    """The descriptors this command opens on a file for reading at some point (`0< F`, `2< F`,
    `N>&M` copies of one): `1< F >> /dev/stdout` opens /dev/stdout while 1 is still F."""
    reading_fds: set[int] = set()
    for redirect in command.redirects:
        copied = redirect.operator == ">&" and redirect.target in {str(n) for n in reading_fds}
        if redirect.operator == "<" or copied:
            reading_fds.add(redirect.fd)
    return reading_fds


_STANDARD_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def _descriptor_named(path: str) -> int | None:
    """The descriptor `/dev/stdin`, `/dev/fd/N` or `/proc/self/fd/N` reopens (F131)."""
    path = normalise_path(path)
    if path in _STANDARD_STREAMS:
        return _STANDARD_STREAMS[path]
    for prefix in ("/dev/fd/", "/proc/self/fd/"):
        if path.startswith(prefix) and path[len(prefix) :].isdigit():
            return int(path[len(prefix) :])
    return None


# Builtins whose arguments are directories, signals or limits the engine follows or
# must see exactly: a glob among them is not matched as open words.
_NO_OPEN_WORDS = frozenset(
    {"cd", "pushd", "popd", "dirs", "umask", "ulimit", "kill", "trap", "exit", "return"}
    | {"shift", "break", "continue", "logout", "suspend", "disown", "fg", "bg"}
)


def takes_open_words(program: str) -> bool:
    """Whether `program` may get words the script does not show (a glob's expansion,
    xargs' input) and still be allowed by a rule that admits any words: it runs nothing
    else, and no option of it acts (a file named `-exec` or `--output=x` then adds
    nothing a rule ending in `*` did not already admit)."""
    return _is_plain(program) and program not in _NO_OPEN_WORDS


def _read_globbed(command: Command, reading: ShellReading) -> None:
    """`wc -l src/*.py`: the words from the glob on are the shell's to choose, so the
    command is matched by how it starts, as open (and as written, for NEVER rules)."""
    index, head = command.glob_at
    program, source = command.argv[0], " ".join(command.argv)
    reading.findings.append(Finding("command", source, False, never_only=True))
    if not takes_open_words(program):
        reading.concern(
            source,
            f"the glob {command.argv[index]!r} expands to words the script does not show, "
            f"and {program} runs other programs, has options that act or is a builtin "
            "the engine follows",
        )
        return
    start = " ".join([*command.argv[:index], head])
    reading.findings.append(Finding("command", start, True, open_tail=True))
    reading.runs_project_code = reading.runs_project_code or program in RUNS_PROJECT_CODE


def _read_tolerantly(script: str, depth: int, reading: ShellReading) -> None:
    commands, error = parse_script(script, reading.budget, resume=True)
    if error:
        reading.error = reading.error or f"the command cannot be parsed: {error}"
    if "\\\n" in script:
        # The shells join a line continuation before they read anything else, `$\⏎(cmd)`
        # and `<\⏎(cmd)` included (a reading of the joined text, for NEVER rules).
        joined = _continuations_joined(script)
        if joined != script:
            commands += parse_script(joined, reading.budget, resume=True)[0]
    _note_literal_values(commands, reading)
    renamed = _names_given([command.words for command in commands])
    seen: set[tuple] = set()
    for command in commands:
        identity = (tuple(command.words), tuple(command.redirects), tuple(command.stdin))
        if identity in seen:
            continue
        seen.add(identity)
        for operator, target in command.redirects:
            kind = "read" if operator in ("<", "<&") else "write"
            reading.findings.append(
                Finding(kind, reading.guessed(target), binding=False, never_only=True)
            )
        for assignment in command.assignments:
            _read_deferred_code(assignment.partition("=")[2], reading)
        if command.words:
            _read_declared_code(command.words[0], command.words[1:], reading)
            _read_chain(command.words, "bash", depth, reading, exact=False, stdin=command.stdin)
            expanded = expanded_words(command.words, command.braced)
            if expanded:
                _read_chain(expanded, "bash", depth, reading, exact=False, stdin=command.stdin)
            for words in _with_literal_values(command.words, reading):
                _read_chain(words, "bash", depth, reading, exact=False, stdin=command.stdin)
            named = _program_named(command.words[0])
            if named != command.words[0]:
                words = [named, *command.words[1:]]
                _read_chain(words, "bash", depth, reading, exact=False, stdin=command.stdin)
            _read_renamed(command.words, renamed, "bash", depth, reading)


_MAX_VALUES = 4
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PARAMETER = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_LITERAL_VALUE = re.compile(r"[^$`]*")


def _note_literal_values(commands: list, reading: ShellReading) -> None:
    """`x=rm`, `declare x='rm -rf'`: each literal value a name is given, anywhere."""
    for command in commands:
        words = command.words[1:] if command.words[:1] and command.words[0] in DECLARATIONS else []
        for assignment in [*command.assignments, *words]:
            name, equals, value = assignment.partition("=")
            name = name.removesuffix("+")
            if equals and _IDENTIFIER.fullmatch(name) and _LITERAL_VALUE.fullmatch(value):
                values = reading.literal_values.setdefault(name, [])
                if value not in values and len(values) < _MAX_VALUES:
                    values.append(value)


def _with_literal_values(words: list[str], reading: ShellReading) -> list[list[str]]:
    """`x=rm; $x -rf /` runs rm: the command with each `$NAME` the script gave a literal
    value replaced by it, and split on blanks (for NEVER rules)."""
    if not reading.literal_values or not any("$" in word for word in words):
        return []
    readings = []
    for choice in range(_MAX_VALUES):

        def value(match: re.Match, choice: int = choice) -> str:
            values = reading.literal_values.get(match.group(1))
            return values[min(choice, len(values) - 1)] if values else match.group(0)

        replaced = [part for word in words for part in _PARAMETER.sub(value, word).split()]
        if replaced and replaced != words and replaced not in readings:
            readings.append(replaced)
    return readings


# A word naming an array element whose subscript runs a command (`a[$(cmd)]`): test -v,
# printf -v, read, let and `${x:off}` evaluate it.
_SUBSCRIPTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[.*(?:\$\(|`)")


def _read_renamed(
    argv: list[str], renamed: dict[str, list[str]], dialect: str, depth: int, reading: ShellReading
) -> None:
    """NEVER views of a command an alias or `hash -p` renamed, and of the code in an array
    element's subscript a builtin evaluates (`test -v 'a[$(cmd)]'`)."""
    for program in renamed.get(argv[0], ()):
        _read_chain([*program.split(), *argv[1:]], dialect, depth, reading, exact=False)
    for word in argv[1:]:
        if _SUBSCRIPTED.match(word):
            _read_deferred_code(word, reading)


def _names_given(commands: list[list[str]]) -> dict[str, list[str]]:
    """`alias r=rm`, `hash -p /usr/bin/rm ls`: a command word the script made name another
    program (for NEVER rules: `r -rf /` is `rm -rf /`) (F140)."""
    renamed: dict[str, list[str]] = {}
    for words in commands:
        if words[:1] == ["alias"]:
            for definition in words[1:]:
                name, equals, value = definition.partition("=")
                if equals and value.strip():
                    renamed.setdefault(name, []).append(value)
        elif words[:2] == ["hash", "-p"] and len(words) > 3:
            for name in words[3:]:
                renamed.setdefault(name, []).append(words[2])
    return renamed


# `r[m]`: a bracket expression of one character matches only that character.
_ONE_CHARACTER_BRACKET = re.compile(r"\[([^\]\[!^\\])\]")


def _program_named(word: str) -> str:
    """The program a command word names where the shell finds it by a pattern or by zsh's
    `=NAME` (the path of NAME): `/usr/bin/r[m]` and `=rm` run rm (F140)."""
    if word.startswith("=") and len(word) > 1:
        word = word[1:]
    return _ONE_CHARACTER_BRACKET.sub(r"\1", word)


def _continuations_joined(script: str) -> str:
    """`script` with each backslash-newline outside single quotes removed."""
    out, k, single, double = [], 0, False, False
    while k < len(script):
        char = script[k]
        if single:
            single = char != "'"
        elif char == "\\" and k + 1 < len(script):
            if script[k + 1] != "\n":
                out.append(script[k : k + 2])
            k += 2
            continue
        elif char == "'" and not double:
            single = True
        elif char == '"':
            double = not double
        out.append(char)
        k += 1
    return "".join(out)


@dataclass
class _Level:
    text: str
    binding: bool
    aliases: list[str]
    requires: list[Requirement]
    never_views: list[str] = field(default_factory=list)


def _without_leading_options(words: list[str]) -> list[str]:
    """The command with the options before its first operand set aside (each option may
    take the next word): `git --no-pager push` is `git push` to a NEVER rule for `git push*`,
    as `cargo --quiet publish` and rustup's `cargo +nightly publish` are `cargo publish`
    (F130). Only a NEVER rule counts for these views: they say what the command is, not
    what a rule allowed."""
    views, k = [], 1
    while k < min(len(words), 9):
        word = words[k]
        if word == "--":
            if k + 1 < len(words):
                views.append(k + 1)
            break
        if not word.startswith(("-", "+")) or word == "-":
            if k == 1:
                break
            views.append(k)
            if not words[k - 1].startswith(("-", "+")):
                break  # the word before was an option's value: this one is the operand
        k += 1
    return [" ".join([words[0], *words[at:]]) for at in views]


def _read_chain(
    words: list[str],
    dialect: str,
    depth: int,
    reading: ShellReading,
    *,
    exact: bool,
    stdin: list[str] | None = None,
    fed: str | None = None,
) -> None:
    """One command and every command its wrappers run, innermost last. `stdin`: the text
    its standard input holds, where the script shows it; `fed`: where that input comes from."""
    if _is_plain(words[0]):
        # Most commands: no wrapper, no acting option, no path, no builtin: one view.
        reading.findings.append(Finding("command", " ".join(words), exact, not exact))
        if len(words) > 2 and words[1][:1] in ("-", "+"):
            for view in _without_leading_options(words):
                reading.findings.append(Finding("command", view, False, True))
        reading.runs_project_code = reading.runs_project_code or words[0] in RUNS_PROJECT_CODE
        _reads_written_configuration(words[0], words, reading)
        return
    levels: list[_Level] = []
    writes: list[Finding] = []
    open_views: list[Finding] = []
    appends_input = False
    input_words_follow = False  # xargs appends its input's words to this command
    stdin = stdin or []
    while words:
        if len(levels) > MAX_WRAPPERS:
            reading.concern(" ".join(words), f"more than {MAX_WRAPPERS} wrappers are not read")
            break
        text = " ".join(words)
        program, arguments = words[0], words[1:]
        base = normalise_path(program).rsplit("/", 1)[-1] if "/" in program else program
        trusted = "/" not in program or normalise_path(program).rsplit("/", 1)[0] in (
            _SYSTEM_DIRECTORIES
        )
        unwrapper = WRAPPERS.get(base)
        step = unwrapper(base, arguments, stdin) if unwrapper else None
        transparent = trusted and step is not None and step.transparent and step.concern is None
        level = _Level(text, not transparent, [], [])
        if "/" in program:
            rest = text[len(program) :]
            level.aliases = [a + rest for a in dict.fromkeys([normalise_path(program), base])]
        if len(words) > 2 and words[1][:1] in ("-", "+"):
            level.never_views = _without_leading_options([base, *arguments])
        levels.append(level)
        if input_words_follow:
            open_views.append(Finding("command", text + " ", True, open_tail=True))
            input_words_follow = False
        written = written_operands(base, arguments)
        name = canonical_program(base)
        kind = "modify" if name in WRITES_NO_CONTENT else "write"
        paths = [p for w in written for p in (reading.paths(w) if exact else [reading.guessed(w)])]
        writes += [Finding(kind, path, exact, not exact) for path in paths]
        if _follow_climbing_links(name, arguments, text, reading):
            reading.order_effects += 1
        if step is not None and step.detaches:
            reading.backgrounds += 1  # the commands after it may run beside what it wraps
        if exact:
            for link in interpreter_links(name, arguments):
                reading.links_out += reading.paths(link)
            # wrapped (`env mv`, `timeout 9 git fetch`) or in `sh -c` as much as bare (F148)
            if _moves_a_working_directory(name, arguments, reading):
                reading.folder_moves += 1
            _fetches_what_it_wrote(name, arguments, text, reading)
        if name in RUNS_PROJECT_CODE or program in RUNS_PROJECT_CODE:
            reading.runs_project_code = True
        _reads_written_configuration(name, words, reading)
        if exact and (name in WRITES_WHERE_IT_RUNS or program in WRITES_WHERE_IT_RUNS):
            # It may write where it runs (caches, build output, downloads): after a `cd`,
            # that directory must be writable too; the tool's own working directory is.
            moved = [c for c in reading.cwds if c != reading.base]
            writes += [Finding("write", c or ".", True) for c in moved]
        if exact and name == "git" and any(c != reading.base for c in reading.cwds):
            reading.concern(
                text,
                "git after a `cd` uses the repository it finds there: a bare one laid out as "
                "plain files (HEAD, objects/, refs/, config) has a config no rule guards",
            )
        if base == "find":
            _read_find_actions(arguments, dialect, depth, reading, exact)
        if exact:
            uses = _acting_uses(base, arguments)
            level.requires = [
                Requirement(
                    use.names,
                    f"{base} {use.names[0]} {use.what}",
                    max(1, *(_times_written(name, base, arguments) for name in use.names)),
                )
                for use in uses
            ]
            if any(use.what == LANDS for use in uses):
                reading.landings += 1
            level.requires += _folders_elsewhere(name, arguments, reading)
            if not program or any(c in program for c in " \t\n"):
                reading.concern(text, "the program name is empty or contains blanks")
            _check_command(base, arguments, text, appends_input, reading, dialect)
            if fed and reads_commands_from_input(name, arguments):
                _read_commands_from_input(base, name, arguments, text, stdin, fed, reading)
        if step is None:
            break
        if exact:
            _check_step(step, text, reading)
        step_paths = [
            p for w in step.writes for p in (reading.paths(w) if exact else [reading.guessed(w)])
        ]
        writes += [Finding("write", path, exact, not exact) for path in step_paths]
        appends_input = appends_input or step.appends_input
        if exact and step.appends_input and step.words:
            inner = step.words[0]
            if not step.input_does_more and "/" not in inner and takes_open_words(inner):
                # `xargs wc -l`: `wc -l`, and `wc -l` followed by any words read from input.
                input_words_follow = True
            elif inner.rsplit("/", 1)[-1] == base:
                # `echo rm -rf x | xargs xargs`: the input's words are the inner xargs' own,
                # its program among them, and a rule for `xargs *` names xargs (F153).
                reading.concern(
                    text,
                    f"{base} runs {base} with words read from its input, which name "
                    "the program it runs",
                )
            else:
                # Input words spliced into an argument, or given to a program that runs
                # others or whose options act: the rule must name the program.
                inner = inner.rsplit("/", 1)[-1]
                level.requires.append(
                    Requirement((inner,), f"xargs runs {inner} with arguments read from its input")
                )
        if step.script is not None:
            enclosing_input = reading.enclosing_input
            reading.enclosing_input = (fed, tuple(stdin))
            try:
                _read_inner(step.script, step.dialect or dialect, depth, reading, exact)
            finally:
                reading.enclosing_input = enclosing_input
            break
        # A wrapper hands its standard input on (`env bash <<< 'CMD'`); xargs reads it.
        words, stdin = step.words, ([] if step.appends_input else stdin)
        fed = None if step.appends_input else fed
    required: list[Requirement] = []
    for level in reversed(levels):
        required = level.requires + required
        requires = tuple(required)
        reading.findings.append(Finding("command", level.text, level.binding, not exact, requires))
        for alias in level.aliases:
            if alias != level.text:
                reading.findings.append(Finding("command", alias, False, not exact, requires))
        for view in level.never_views:
            reading.findings.append(Finding("command", view, False, True, requires))
    reading.findings += open_views
    reading.findings += writes


@lru_cache(maxsize=4096)
def _is_plain(program: str) -> bool:
    name = canonical_program(program)
    return not (
        not program
        or "/" in program
        or program in WRAPPERS
        or program == "find"
        or program in SPECIAL_BUILTINS
        or name in WRITES
        or name in FORMATTERS
        or name == "dd"
        or any(c in program for c in " \t\n")
        or name in _ACTING_PROGRAMS
        or name in OUTPUT_OPTIONS
        or name in WRITES_WHERE_IT_RUNS
        or name in STARTS_A_JVM
    )


_ACTING_PROGRAMS = frozenset(key.split()[0] for key in ACTING)


def _times_written(name: str, base: str, arguments: list[str]) -> int:
    """How many of the command's words are `name`, an operand or a subcommand (an option is
    named in its own spellings, clusters among them)."""
    if name[:1] in ("-", "+"):
        return 1
    return sum(word == name for word in (base, *arguments))


@lru_cache(maxsize=4096)
def _acting_uses_of(base: str, arguments: tuple[str, ...]) -> tuple:
    return tuple(acting_uses(base, list(arguments)))


def _acting_uses(base: str, arguments: list[str]) -> tuple:
    """acting_uses, remembered for short commands (`git log --oneline -n 3` comes back call
    after call); it depends on the words alone and its Acting values are frozen."""
    if len(arguments) > 32 or sum(map(len, arguments)) > 256:
        return tuple(acting_uses(base, arguments))
    return _acting_uses_of(base, tuple(arguments))


def _folders_elsewhere(program: str, arguments: list[str], reading: ShellReading) -> list:
    """`cmake -S /opt/x`, `cmake ..`, `dotnet build /opt/x/x.csproj`, `go run /tmp/x.go`,
    `jest --rootDir /tmp/x` run the code there (every `execute_process`, every MSBuild
    target): a folder or file outside the tool's working directory, wherever the command
    runs, is code the rules never saw, so the rule must name it. `cd build && cmake ..`
    stays inside."""
    if program == "cmake":
        folders = cmake_source_folders(arguments)
    elif program == "dotnet":
        folders = dotnet_projects(arguments)
    elif program == "go":
        # Import paths (`example.com/x`) are modules'; a file or folder path is code from there.
        folders = [p for p in go_packages(arguments) if p.startswith((".", "/")) or ".go" in p]
    else:
        folders = code_paths(program, arguments) + handed_on_code_paths(program, arguments)
    return (
        [
            Requirement((folder,), f"{program} runs the code of {folder}, outside the workspace")
            for folder in folders
            if any(map(reading.outside, reading.paths(folder)))
        ]
        + [
            Requirement((source,), f"{program} copies {source} as a link if it is one: to anywhere")
            for source in links_copied_from(program, arguments)
            if any(map(reading.outside, reading.paths(source)))
        ]
        + [
            Requirement((source,), f"{program} makes the device nodes under {source} again")
            for source in special_files_copied_from(program, arguments)
            if any(map(_holds_special_files, reading.paths(source)))
        ]
    )


def _holds_special_files(path: str) -> bool:
    # `/` holds them all (`cp -rL / r` makes r/dev/sda again)
    path = normalise_path(path)
    return path == "/" or any(path == f or path.startswith(f + "/") for f in SPECIAL_FILE_FOLDERS)


def _follow_climbing_links(
    name: str, arguments: list[str], text: str, reading: ShellReading
) -> bool:
    """A link this script made whose text climbs, then a move or a copy that keeps links: at
    its new place the link may lead out of the workspace (F133). Returns whether the command
    changes what a path means to the others (a link made, a rename, links copied as links,
    a fetch): commands running beside it find paths that depend on which acts first."""
    if name == "git":
        return bool({"mv", *_GIT_FETCHING} & set(arguments[:3]))
    climbing = climbing_link_texts(name, arguments)
    if climbing and reading.made_link:
        # `ln -s ../../etc/x a/l/h` with `a/l` a link: the text is read from where `a/l`
        # leads (F141)
        reading.concern(text, _CLIMBS_PAST_A_LINK)
    makes_a_link = bool(symbolic_link_texts(name, arguments))
    reading.made_link = reading.made_link or makes_a_link
    copies_links = bool(links_copied_from(name, arguments))
    if climbing:
        reading.climbing_link = True
    elif reading.climbing_link and (
        name == "mv"
        or copies_links
        # a hard link of a symbolic link is the link itself, in another folder (F141)
        or (name == "ln" and not makes_a_link)
    ):
        reading.concern(
            text,
            "a link this script made climbs (`../`): moved or copied as a link, it leads "
            "elsewhere from its new place",
        )
    return (
        name in ("mv", "ln")
        or makes_a_link
        or copies_links
        or bool(interpreter_links(name, arguments))
    )


def _check_command(
    base: str,
    arguments: list[str],
    text: str,
    appends_input: bool,
    reading: ShellReading,
    dialect: str,
) -> None:
    for reason in command_concerns(base, arguments, dialect):
        reading.concern(text, reason)
    _read_declared_code(base, arguments, reading)
    program = canonical_program(base)
    if appends_input and (program in WRITES or program in _ACTING_PROGRAMS):
        reading.concern(
            text, f"xargs adds words read from its input to {base}, whose options can act"
        )


def _check_step(step: Unwrapped, text: str, reading: ShellReading) -> None:
    if step.concern:
        reading.concern(text, step.concern)
    for assignment in step.assignments:
        name, _, value = assignment.partition("=")
        _check_variable(name, value, text, reading)


def _check_variable(name: str, value: str, text: str, reading: ShellReading) -> None:
    reason = variable_concern(name, value)
    if reason:
        reading.concern(text, reason)
    _read_deferred_code(value, reading)


def _read_declared_code(base: str, arguments: list[str], reading: ShellReading) -> None:
    # `export PS4='$(cmd)'`, `declare x='$(cmd)'`: assignments too.
    if base in DECLARATIONS:
        for argument in arguments:
            _read_deferred_code(argument.partition("=")[2], reading)


def _read_deferred_code(value: str, reading: ShellReading) -> None:
    """A value holding a command substitution the assignment did not run (`x='$(cmd)'`) is
    code kept for later: `${x@P}`, `PS4` under `set -x`, `eval`, a prompt. Its commands are
    read for NEVER rules (the assignment itself is a concern, ASK, whatever they are)."""
    if "$(" in value or "`" in value:
        _read_tolerantly(value, MAX_SCRIPT_DEPTH - 1, reading)


def _read_inner(script: str, dialect: str, depth: int, reading: ShellReading, exact: bool) -> None:
    if depth + 1 > MAX_SCRIPT_DEPTH:
        reading.concern(script, f"scripts nested more than {MAX_SCRIPT_DEPTH} deep are not read")
        reading.findings.append(Finding("command", script, False, never_only=True))
    elif exact:
        reading.inner_scripts += 1
        # `cd a/b && sh -c 'cd /workspace && mv a/b c'` moves the outer shell's folder (F149)
        enclosing = reading.enclosing_cwds
        reading.enclosing_cwds = enclosing + reading.cwds
        # The inner shell's `cd` is its own: what comes after it in this command (find's next
        # action) runs where this command does.
        cwds = reading.cwds
        try:
            _read_script(script, dialect, depth + 1, reading)
        finally:
            reading.enclosing_cwds, reading.cwds = enclosing, cwds
    else:
        _read_tolerantly(script, depth + 1, reading)


def _read_find_actions(
    arguments: list[str], dialect: str, depth: int, reading: ShellReading, exact: bool
) -> None:
    """`find ... -exec CMD {} ;` runs CMD, once per path found or with many of them: each
    action is read as a command of its own, where it runs (`-execdir`: in each found path's
    folder, which the words do not show), with `{}` as the paths find puts there (F151)."""
    runs_code_before, writers, runners = reading.runs_project_code, 0, 0
    k = 0
    while k < len(arguments):
        if arguments[k] not in _FIND_ACTIONS:
            k += 1
            continue
        end = k + 1
        # find ends an action at `;`, and at `+` only right after a `{}`
        while end < len(arguments) and not (
            arguments[end] == ";" or (arguments[end] == "+" and arguments[end - 1] == "{}")
        ):
            end += 1
        words, cwds = arguments[k + 1 : end], reading.cwds
        if words:
            if arguments[k] in ("-execdir", "-okdir"):
                reading.cwds = (None,)
            before = len(reading.findings)
            reading.runs_project_code = False
            try:
                _read_find_action(words, dialect, depth, reading, exact)
            finally:
                reading.cwds = cwds
            writers += any(
                f.kind == "write" and not _INERT_WRITE.search(f.text)
                for f in reading.findings[before:]
            )
            runners += reading.runs_project_code
        k = end + 1
    reading.runs_project_code = runs_code_before or runners > 0
    if exact and writers and runners:
        # Every action runs for each path found, in turn: a write of one, then another's run.
        reading.concern(
            " ".join(["find", *arguments]),
            "its actions write files and run the project's code, which may include them",
        )


def _read_find_action(
    words: list[str], dialect: str, depth: int, reading: ShellReading, exact: bool
) -> None:
    """An action's words as find runs them: `{}` (in any word) is the paths it finds, which
    the script does not show, so the action is matched as a glob's command is (by how it
    starts, open after `{}`), and one that writes or runs what it is given is a concern."""
    at = next((i for i, word in enumerate(words) if "{}" in word), None)
    if at is None:
        _read_chain(words, dialect, depth, reading, exact=exact)
        return
    _read_chain(words, dialect, depth, reading, exact=False)  # for NEVER rules
    if not exact:
        return
    text = " ".join(words)
    if at == 0 or not takes_open_words(words[0]):
        reading.concern(
            text,
            f"find puts the paths it finds where {words[at]!r} stands, which the script "
            f"does not show, and {words[0]} runs, writes or acts on what it is given",
        )
        return
    start = " ".join([*words[:at], words[at].split("{}", 1)[0]])
    reading.findings.append(Finding("command", start, True, open_tail=True))
