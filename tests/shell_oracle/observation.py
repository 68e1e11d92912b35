"""What one script really did: the programs, files and sockets a sandbox run shows.

Built from the trace by replay.py. `runs` are the programs the shell executed (seen
through transparent wrappers and nested shells), `children` what those programs
executed in turn, `writes` every path created, written, deleted, renamed or re-moded
by anyone, `shell_reads` the files the shell itself opened for reading (redirections,
`$(< f)`, `source`, start-up files), `program_reads` what programs read, `sockets`
every connection or listening socket. A refused attempt (EROFS outside /workspace)
counts: outside the sandbox it would have happened.
"""

import os
import shutil
from dataclasses import dataclass, field

STANDARD_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"


def _is_found_on_path(name: str, path: str) -> bool:
    found = shutil.which(name, path=STANDARD_PATH)
    return found is not None and os.path.realpath(found) == os.path.realpath(path)


@dataclass(frozen=True, slots=True)
class ProgramRun:
    """A program executed: its argv, the file, and who ran it."""

    argv: tuple[str, ...]
    path: str
    parent: tuple[str, ...] | None = None  # the program that ran it; None: the shell did
    via: tuple[tuple[str, ...], ...] = ()  # wrappers and shells between the job's shell and it
    seq: int = field(default=0, compare=False, repr=False)

    @property
    def command(self) -> str:
        """The words a rule sees: argv joined by spaces; argv[0] is replaced by the file
        executed when a PATH lookup of argv[0] would not have found that file."""
        words = list(self.argv) or [self.path]
        if "/" in words[0]:
            if words[0] != self.path:  # `exec -a /bin/ls ./evil`
                words[0] = self.path
        elif not _is_found_on_path(words[0], self.path):
            words[0] = self.path
        return " ".join(words)


@dataclass(frozen=True, slots=True)
class FileEvent:
    # absolute and lexically normalised (`..` folded); an open that succeeded is also an event
    # at the path it really reached (replay._opened)
    path: str
    action: str  # open, read, unlinkat, rename, mkdir, link, chmod, ...
    by: tuple[str, ...] | None  # argv of the program; None: the shell itself
    error: str | None = None  # the errno of a refused or failed attempt
    seq: int = field(default=0, compare=False, repr=False)
    # the path as the call joined it, `..` kept: walked through the links the script made
    raw: str = field(default="", compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class SocketEvent:
    call: str  # connect or listen
    family: str
    address: str
    by: tuple[str, ...] | None  # argv of the program; None: the shell itself
    error: str | None = None
    seq: int = field(default=0, compare=False, repr=False)


@dataclass
class Observation:
    script: str
    shell: str
    runs: list[ProgramRun] = field(default_factory=list)
    children: list[ProgramRun] = field(default_factory=list)
    writes: list[FileEvent] = field(default_factory=list)
    shell_reads: list[FileEvent] = field(default_factory=list)
    program_reads: list[FileEvent] = field(default_factory=list)
    sockets: list[SocketEvent] = field(default_factory=list)
    exit_status: int | None = None
    timed_out: bool = False
    seconds: float = 0.0  # how long the job's shell and what it left behind ran
    stdout: str = ""
    stderr: str = ""
    complete: bool = True  # False when the batch died before this job finished

    def commands(self) -> list[str]:
        return [run.command for run in self.runs]

    def written(self) -> list[str]:
        return [event.path for event in self.writes]

    def summary(self) -> str:
        parts = [f"{self.shell} ran {self.commands()!r}"]
        if self.children:
            parts.append(
                "children " + repr([(" ".join(r.parent or ()), r.command) for r in self.children])
            )
        if self.writes:
            parts.append(f"wrote {[(w.path, w.action, w.error) for w in self.writes]!r}")
        if self.shell_reads:
            parts.append(f"shell read {[r.path for r in self.shell_reads]!r}")
        if self.sockets:
            parts.append(
                "sockets " + repr([(s.call, s.address, " ".join(s.by or ())) for s in self.sockets])
            )
        if self.timed_out:
            parts.append("timed out")
        return "; ".join(parts)
