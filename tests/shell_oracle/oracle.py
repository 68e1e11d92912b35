"""The differential oracle: when the engine says ALWAYS, did the real shell do only
what the rules allow, applied literally?

The literal reading is the seed semantics in a dozen lines (`LiteralRules`): a key is
matched against the rules top to bottom with `fnmatchcase`, the first match decides,
no match is ASK. For a script the engine allowed, every effect observed in the
sandbox must itself be ALWAYS that way:

- each program the shell ran: `run_command:<argv joined by spaces>` (argv[0] is the
  file executed when PATH would not have found that file: `for PATH in …; do ls`
  runs `/workspace/bin/ls`, not `ls`), seen through transparent wrappers (`timeout
  5 ls` runs `ls`) and nested shells (`sh -c 'ls'` runs `ls`);
- each file written, by the shell or by any program: `write_file:<path>` (an attempt
  the sandbox refused counts; one that fails anywhere, EEXIST or EISDIR, does not);
- each file the shell itself read (a redirection, `$(< f)`, `source`, a start-up
  file): `read_file:<path>`;
- except the shell's own buffer for a here-document: zsh (and bash for a body over a
  pipe's size) writes the body to a file of a random name in /tmp (TMPDIR and TMPPREFIX
  left as they are: the engine asks when a script sets them), reads it back and removes
  it; a file the shell made so, read and removed in the same run is no effect;
- no socket opened by the shell (`/dev/tcp`, `/dev/udp`). A connection a program
  makes is what its rule admits (`git fetch`, `pip install`): listed, not counted;
- no child process of a program the shell ran, other than the program's own helpers
  (git's git-core, tar's compressor): an option that executes (`find -exec`, git's
  fsmonitor) is an admitted program executing something. The one exception is the
  command xargs runs, xargs' whole purpose: it is a program run like any other
  (`run_command:wc -l a.go b.go` must be allowed), and what it runs in turn is a child.

Anything else while the engine said ALWAYS is a `Disagreement`. The converse (the
engine did not allow a script whose effects were all allowed) is reported as
information: it is the cost in benign commands, not a hole.
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from fnmatch import fnmatchcase

from governance.policy import CompiledPolicy, Evaluation, MatchArgument, Verdict
from tests.shell_oracle.observation import Observation, ProgramRun
from tests.shell_oracle.sandbox import WORKING_DIRECTORY, Job, run_jobs

# A write that fails anywhere, not only in the sandbox: `mkdir -p` of a folder that exists.
_NO_EFFECT = frozenset({"EEXIST", "EISDIR"})
# zsh's TMPPREFIX (`/tmp/zsh`) and six random characters; bash's `sh-thd` files.
_HEREDOC_BUFFER = re.compile(r"/tmp/(?:zsh[A-Za-z0-9]{6}|sh-thd[.-][A-Za-z0-9]+)")


def _heredoc_buffers(observation: Observation) -> set[str]:
    """The shell's own here-document files: made, read and removed by the shell itself."""
    removed = {
        event.path
        for event in observation.writes
        if event.by is None and event.action == "unlink" and event.ok
    }
    return {path for path in removed if _HEREDOC_BUFFER.fullmatch(path)}


class Kind(StrEnum):
    PROGRAM_RUN = "program run"
    FILE_WRITTEN = "file written"
    FILE_READ = "file read"
    SOCKET = "socket"
    CHILD_PROCESS = "child process"


@dataclass(frozen=True)
class Disagreement:
    kind: Kind
    subject: str  # the key the literal rules were asked about, or what happened
    literal: str  # the literal rules' verdict for it (ALWAYS never appears here)

    def __str__(self) -> str:
        return f"{self.kind}: {self.subject} ({self.literal} by the rules)"


def shows(observation: Observation, kind: str, subject: str) -> bool:
    """Whether the observation holds an effect of `kind` on `subject` (a command prefix,
    a path or a folder the path is in; anything for a socket)."""
    if kind == Kind.PROGRAM_RUN:
        return any(run.command.startswith(subject) for run in observation.runs)
    if kind == Kind.CHILD_PROCESS:
        return any(run.command.startswith(subject) for run in observation.children)
    if kind == Kind.FILE_WRITTEN:
        folder = subject if subject.endswith("/") else subject + "/"
        return any(e.path == subject or e.path.startswith(folder) for e in observation.writes)
    if kind == Kind.FILE_READ:
        return any(event.path == subject for event in observation.shell_reads)
    if kind == Kind.SOCKET:
        return any(socket.by is None for socket in observation.sockets)
    raise ValueError(f"unknown effect kind {kind!r}")


def _run_by_xargs(child: ProgramRun, observation: Observation) -> bool:
    """Whether the shell ran xargs (a system one) and xargs ran `child` itself."""
    parent = child.parent or ()
    return bool(parent) and any(
        run.argv == parent and run.path in ("/usr/bin/xargs", "/bin/xargs")
        for run in observation.runs
    )


class LiteralRules:
    """The rules applied literally: first `fnmatchcase` match wins, none is ASK."""

    def __init__(self, rules: Iterable[tuple[str, str]]):
        self.rules = [(pattern, str(action)) for pattern, action in rules]

    @classmethod
    def of(cls, policy: CompiledPolicy) -> "LiteralRules":
        return cls((rule.pattern, rule.action.value) for rule in policy.rules)

    def verdict(self, key: str) -> str:
        for pattern, action in self.rules:
            if fnmatchcase(key, pattern):
                return action
        return Verdict.ASK.value


@dataclass
class Judgement:
    script: str
    shell: str
    evaluation: Evaluation
    observation: Observation | None = None
    disagreements: list[Disagreement] = field(default_factory=list)
    # The effects a literal reading would not allow (computed for every observed script):
    # empty means everything the shell did was allowed.
    unallowed: list[Disagreement] = field(default_factory=list)

    @property
    def allowed(self) -> bool:
        return self.evaluation.verdict is Verdict.ALWAYS

    @property
    def refused_harmless(self) -> bool:
        """The engine did not allow it, yet everything it did was allowed (information)."""
        return not self.allowed and self.observation is not None and not self.unallowed

    def report(self) -> str:
        lines = [f"script ({self.shell}): {self.script!r}", f"engine: {self.evaluation.verdict}"]
        if self.observation is not None:
            lines.append(f"observed: {self.observation.summary()}")
        lines += [f"  disagreement: {d}" for d in self.disagreements]
        return "\n".join(lines)


class Oracle:
    """Holds one compiled policy to the real shells."""

    def __init__(
        self,
        policy: CompiledPolicy,
        tool: str = "run_command",
        argument: str = "command",
        write_tool: str = "write_file",
        read_tool: str = "read_file",
    ):
        self.policy = policy
        self.literal = LiteralRules.of(policy)
        self.tool, self.argument = tool, argument
        self.write_tool, self.read_tool = write_tool, read_tool

    def match_argument(self, shell: str) -> MatchArgument:
        """The shell tool as the sandbox runs it: in `shell`'s dialect, in /workspace."""
        options = {"read_tool": self.read_tool, "shell": "sh" if shell in ("sh", "dash") else shell}
        if "cwd" in {f.name for f in fields(MatchArgument)}:
            options["cwd"] = WORKING_DIRECTORY
        return MatchArgument(self.argument, "shell", self.write_tool, **options)

    def evaluate(self, script: str, shell: str = "bash") -> Evaluation:
        arguments = {self.argument: script}
        return self.policy.evaluate(self.tool, arguments, self.match_argument(shell))

    def unallowed(self, observation: Observation) -> list[Disagreement]:
        """Every effect of the observation the literal rules do not allow."""
        found: list[Disagreement] = []

        def check(kind: Kind, key: str) -> None:
            verdict = self.literal.verdict(key)
            if verdict != Verdict.ALWAYS.value:
                found.append(Disagreement(kind, key, verdict))

        for run in observation.runs:
            check(Kind.PROGRAM_RUN, f"{self.tool}:{run.command}")
        buffers = _heredoc_buffers(observation)
        for event in observation.writes:
            if event.error not in _NO_EFFECT and not (event.by is None and event.path in buffers):
                check(Kind.FILE_WRITTEN, f"{self.write_tool}:{event.path}")
        for event in observation.shell_reads:
            if event.path not in buffers:
                check(Kind.FILE_READ, f"{self.read_tool}:{event.path}")
        for socket in observation.sockets:
            if socket.by is None:
                found.append(Disagreement(Kind.SOCKET, f"{socket.call} {socket.address}", "-"))
        for child in observation.children:
            if _run_by_xargs(child, observation):
                check(Kind.PROGRAM_RUN, f"{self.tool}:{child.command}")
                continue
            parent = " ".join(child.parent or ())
            found.append(Disagreement(Kind.CHILD_PROCESS, f"{parent} → {child.command}", "-"))
        return list(dict.fromkeys(found))

    def judge(
        self, scripts: Sequence[tuple[str, str]], *, run_all: bool = False, timeout: float = 10.0
    ) -> list[Judgement]:
        """Evaluate each (script, shell); run in the sandbox those the engine allowed
        (every one with `run_all`) and compare."""
        judgements = [Judgement(s, shell, self.evaluate(s, shell)) for s, shell in scripts]
        to_run = [j for j in judgements if run_all or j.allowed]
        jobs = [Job(j.script, j.shell, timeout, stdin="\0" in j.script) for j in to_run]
        for judgement, observation in zip(to_run, run_jobs(jobs), strict=True):
            judgement.observation = observation
            judgement.unallowed = self.unallowed(observation)
            if judgement.allowed:
                judgement.disagreements = list(judgement.unallowed)
        return judgements
