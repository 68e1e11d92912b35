"""What a tool call is matched as: the keys `tool:subject` the rules see.

A tool may declare a `MatchArgument(name, kind)`:

- no match argument: the subject is the arguments as canonical JSON;
- `text` (the default kind): the argument's string value as is (any other JSON
  value as canonical JSON);
- `path`: the value normalised lexically (`/workspace/../etc/passwd` →
  `/etc/passwd`); a different NFKC form is matched too, an invisible or control
  character makes the call ASK, and a path that configures execution or holds
  credentials (config_paths) needs a rule that names it;
- `shell`: the script read in the tool's dialect (`shell`: bash, sh = dash, zsh;
  see shell_commands): every command, plus every file a redirection or a writing
  program writes, matched as `<write_tool>:<normalised path>`, and every file `<`
  reads, as `<read_tool>:<path>` (`write_file` and `read_file` by default;
  relative paths are matched as written, since the working directory is unknown;
  `/dev/null`, `/dev/stdout`, `/dev/stderr` and `/dev/stdin` are not files). The
  NFKC form of the script is read too, for NEVER rules, so a fullwidth `ｒｍ`
  meets the `rm` rules.

A *probe* is one key to look up; a *binding* probe that no rule matches counts as
ASK, a non-binding one only counts if a rule matches it, a *never-only* one only
if a NEVER rule matches it; a probe's *requirements* make an ALWAYS rule that does
not name them ASK. The call key (for approvals and grants) is `tool:` + the
canonical JSON, the text, the normalised path, or the shell script exactly as sent.
"""

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from fluidbox.canonical import canonical_json
from governance.policy.config_paths import config_folder_names, config_path_names
from governance.policy.disk_links import (
    LINKS_ARGUMENT,
    LinksOnDisk,
    UnreadableLinks,
    read_links_on_disk,
)
from governance.policy.invisible import (
    describe_invisible,
    first_hidden_in_values,
    first_invisible,
)
from governance.policy.paths import normalise_path
from governance.policy.shell_commands import (
    Requirement,
    ShellReading,
    read_best_effort,
    read_shell,
)

MAX_SUBJECT_BYTES = 64 * 1024
KINDS = ("shell", "path", "text")
DIALECTS = ("bash", "sh", "zsh")
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"})


class SubjectError(ValueError):
    """The call cannot be turned into a subject (missing argument, wrong type, too large)."""


@dataclass(frozen=True)
class MatchArgument:
    """The argument a tool is matched by, and how to read it (`shell`, `path`, `text`)."""

    name: str
    kind: str | None = "text"
    write_tool: str = "write_file"
    read_tool: str = "read_file"
    shell: str | None = "bash"
    cwd: str | None = None  # a shell tool's working directory: relative paths resolve in it

    def __post_init__(self) -> None:
        if self.kind is None:
            object.__setattr__(self, "kind", "text")
        if self.shell is None:
            object.__setattr__(self, "shell", "bash")
        if self.kind not in KINDS:
            raise ValueError(f"match argument kind must be one of {', '.join(KINDS)}")
        if self.shell not in DIALECTS:
            raise ValueError(f"match argument shell must be one of {', '.join(DIALECTS)}")
        if self.cwd is not None and not self.cwd.startswith("/"):
            raise ValueError("match argument cwd must be an absolute path")
        if self.cwd is not None:
            object.__setattr__(self, "cwd", normalise_path(self.cwd))


class Probe(NamedTuple):
    key: str
    binding: bool
    never_only: bool = False
    requires: tuple[Requirement, ...] = ()
    open_tail: bool = False  # the key is how the call starts: a rule must allow any rest


@dataclass(frozen=True)
class Concern:
    subject: str
    reason: str


@dataclass
class CallReading:
    whole_key: str
    probes: list[Probe] = field(default_factory=list)
    concerns: list[Concern] = field(default_factory=list)
    error: str | None = None

    def add(
        self,
        key: str,
        binding: bool,
        never_only: bool = False,
        requires: tuple[Requirement, ...] = (),
        open_tail: bool = False,
    ) -> None:
        self.probes.append(Probe(key, binding, never_only, requires, open_tail))


def call_key(tool: str, arguments: Any, match_argument: MatchArgument | None) -> str:
    """The exact key a call is known by (approvals and grants are bound to it)."""
    if match_argument is None:
        return f"{tool}:{canonical_json(arguments)}"
    value = argument_value(arguments, match_argument)
    if match_argument.kind == "path":
        return f"{tool}:{normalise_path(value)}"
    if not isinstance(value, str):
        return f"{tool}:{canonical_json(value)}"
    return f"{tool}:{value}"


def argument_value(arguments: Any, match_argument: MatchArgument) -> Any:
    if not isinstance(arguments, Mapping) or match_argument.name not in arguments:
        raise SubjectError(f"the call has no argument {match_argument.name!r} to match")
    value = arguments[match_argument.name]
    if match_argument.kind != "text" and not isinstance(value, str):
        raise SubjectError(f"argument {match_argument.name!r} must be a string")
    return value


def is_oversize(subject: str) -> bool:
    if len(subject) * 4 <= MAX_SUBJECT_BYTES:
        return False
    if len(subject) > MAX_SUBJECT_BYTES:
        return True
    return len(subject.encode("utf-8", "surrogatepass")) > MAX_SUBJECT_BYTES


def _checked(subject: str) -> str:
    if is_oversize(subject):
        raise SubjectError(f"the subject is larger than {MAX_SUBJECT_BYTES // 1024} KiB")
    return subject


def read_call(tool: str, arguments: Any, match_argument: MatchArgument | None) -> CallReading:
    """Every probe and concern of one call; raises SubjectError."""
    if match_argument is None:
        key = f"{tool}:{_checked(canonical_json(arguments))}"
        return _read_values(key, arguments)
    value = argument_value(arguments, match_argument)
    if match_argument.kind == "path":
        reads_only = tool in READING_PATH_TOOLS or tool == match_argument.read_tool
        return _read_path(tool, _checked(value), reads_only=reads_only)
    if match_argument.kind == "shell":
        try:
            links = read_links_on_disk(arguments.get(LINKS_ARGUMENT))
            return _read_shell(tool, _checked(value), match_argument, links)
        except UnreadableLinks as error:
            raise SubjectError(str(error)) from None
    subject = value if isinstance(value, str) else canonical_json(value)
    key = f"{tool}:{_checked(subject)}"
    return _read_values(key, value)


def _read_values(key: str, values: Any) -> CallReading:
    """A call matched on its arguments' text (a brokered tool's, a `text` argument): one
    whose strings hide or reorder what a later reader sees (a bidi override, a zero-width
    space, a control character) is shown to a human, whatever the rules allow."""
    reading = CallReading(key, [Probe(key, True)])
    hidden = first_hidden_in_values(values)
    if hidden:
        reading.concerns.append(_invisible(key, hidden))
    return reading


def config_requirements(
    path: str, *, reading: bool = False, tree: bool = False
) -> tuple[Requirement, ...]:
    """A path that configures execution or holds credentials: the rule must name it. `tree`:
    a shell write that may put a whole folder's files at `path` (or, for `DIR/<files>`, in
    DIR): the configuration paths inside it too."""
    names = config_path_names(path, reading=reading)
    if tree:
        names += [name for name in config_folder_names(path) if name not in names]
    return tuple(
        Requirement(
            (name, name.split("/", 1)[0]),
            f"{name} configures what programs run or holds credentials",
        )
        for name in names
    )


# Path tools that only read (the agents' Read, LS, Glob and Grep map to them): any other path
# tool is taken to write.
READING_PATH_TOOLS = frozenset({"read_file", "list_dir", "find_files", "search_text"})


def _read_path(tool: str, path: str, *, reads_only: bool) -> CallReading:
    normal = normalise_path(path)
    reading = CallReading(f"{tool}:{normal}")
    requires = config_requirements(normal, reading=reads_only)
    reading.add(reading.whole_key, True, requires=requires)
    if normal != path:
        reading.add(f"{tool}:{path}", binding=False)
    folded = normalise_path(unicodedata.normalize("NFKC", path))
    if folded != normal:
        reading.add(
            f"{tool}:{folded}", True, requires=config_requirements(folded, reading=reads_only)
        )
    hidden = first_invisible(path, layout_is_visible=False)
    if hidden:
        reading.concerns.append(_invisible(reading.whole_key, hidden))
    return reading


def _read_shell(
    tool: str, script: str, match_argument: MatchArgument, links: LinksOnDisk | None = None
) -> CallReading:
    reading = CallReading(f"{tool}:{script}")
    reading.add(reading.whole_key, binding=False)
    hidden = first_invisible(script)
    if hidden:
        reading.concerns.append(_invisible(reading.whole_key, hidden))
    shell = read_shell(script, match_argument.shell or "bash", match_argument.cwd)
    _add_shell_reading(reading, tool, match_argument, shell, links)
    reading.error = shell.error
    folded = unicodedata.normalize("NFKC", script)
    if folded != script:
        folded_reading = read_best_effort(folded, shell.budget)
        _add_shell_reading(reading, tool, match_argument, folded_reading, links)
        reading.error = reading.error or folded_reading.error
    if not any(probe.binding for probe in reading.probes) and not reading.concerns:
        reading.probes[0] = Probe(reading.whole_key, binding=True)
    return reading


def _add_shell_reading(
    reading: CallReading,
    tool: str,
    match_argument: MatchArgument,
    shell: ShellReading,
    links: LinksOnDisk | None,
) -> None:
    for finding in shell.findings:
        if finding.kind == "command":
            reading.add(
                f"{tool}:{finding.text}",
                finding.binding,
                finding.never_only,
                finding.requires,
                finding.open_tail,
            )
            continue
        path = normalise_path(finding.text)
        if path in _NOT_FILES:
            continue
        file_tool = (
            match_argument.read_tool if finding.kind == "read" else match_argument.write_tool
        )
        # A write that puts content (not `mkdir`, `touch`) may put a folder's files there.
        tree = finding.kind == "write"
        requires = finding.requires + config_requirements(
            path, reading=finding.kind == "read", tree=tree
        )
        reading.add(f"{file_tool}:{path}", finding.binding, finding.never_only, requires)
        if path != finding.text:
            reading.add(f"{file_tool}:{finding.text}", False, finding.never_only, requires)
        through = links.through(finding.text) if links is not None else None
        if through is not None and through != path:
            # where the links on disk take the path: judged as well, never instead
            requires = finding.requires + config_requirements(
                through, reading=finding.kind == "read", tree=tree
            )
            reading.add(f"{file_tool}:{through}", finding.binding, finding.never_only, requires)
    for command, reason in shell.concerns:
        reading.concerns.append(Concern(f"{tool}:{command}", reason))


def _invisible(key: str, hidden: str) -> Concern:
    return Concern(key, f"invisible character {describe_invisible(hidden)}")
