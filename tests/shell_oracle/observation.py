"""What one script really did, rebuilt from the trace of a sandbox batch.

Every process of a job has a role, inherited at fork and changed at execve:

- **shell**: the job's shell, its forks (subshells, pipeline members, command
  substitutions) and any shell it starts (`sh -c`, `bash script`): a shell reads the
  script's words and acts on them, so what such a process opens is a redirection
  (`> f`, `< f`, `$(< f)`, `source f`, a start-up file) and what it executes is a
  program the script ran;
- **wrapper**: a transparent wrapper the shell ran (`env`, `nice`, `timeout`, ...):
  what it executes counts as run by the shell, through it;
- **program**: anything else; what it executes is a *child* of that program (git's
  hook, find's `-exec`, xargs' command), what it opens is the program's business,
  except writes, which are always recorded.

A shell's own start-up opens (the dynamic loader, locale files, `/etc/zsh/zshenv`)
are the ones a script `:` makes in the same batch (`baselines`); they are dropped
from the front of each shell process's opens.
"""

import os
import posixpath
import shutil
from collections import defaultdict
from dataclasses import dataclass, field

from tests.shell_oracle.strace_log import Call, CString, Fd

STANDARD_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
SHELL_PROGRAMS = frozenset({"bash", "dash", "sh", "zsh", "rbash"})
WRAPPER_PROGRAMS = frozenset(
    {"env", "nice", "nohup", "timeout", "stdbuf", "setsid", "ionice", "time", "chrt"}
)
# Programs whose own children are part of how they work, not something they were told to run.
HELPERS = {
    "git": ("/usr/lib/git-core/",),
    "tar": ("/usr/bin/gzip", "/usr/bin/bzip2", "/usr/bin/xz", "/usr/bin/zstd", "/usr/bin/lzma"),
}
NOT_FILES = frozenset(
    {
        "/dev/null",
        "/dev/tty",
        "/dev/stdin",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/fd/0",
        "/dev/fd/1",
        "/dev/fd/2",
        "/proc/self/fd/0",
        "/proc/self/fd/1",
        "/proc/self/fd/2",
    }
)
# Locale data a shell loads when a script sets LANG/LC_*: the shell's own doing, not a redirection.
_SYSTEM_READS = ("/usr/lib/locale/", "/usr/share/locale/", "/usr/lib/x86_64-linux-gnu/gconv/")
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_TMPFILE")
# (syscall, index of the dirfd or None, index of the path) for calls that change a path.
_PATH_CHANGES = {
    "truncate": ((None, 0),),
    "unlink": ((None, 0),),
    "rmdir": ((None, 0),),
    "unlinkat": ((0, 1),),
    "mkdir": ((None, 0),),
    "mkdirat": ((0, 1),),
    "rename": ((None, 0), (None, 1)),
    "renameat": ((0, 1), (2, 3)),
    "renameat2": ((0, 1), (2, 3)),
    "link": ((None, 1),),
    "linkat": ((2, 3),),
    "symlink": ((None, 1),),
    "symlinkat": ((1, 2),),
    "chmod": ((None, 0),),
    "fchmodat": ((0, 1),),
    "chown": ((None, 0),),
    "lchown": ((None, 0),),
    "fchownat": ((0, 1),),
    "mknod": ((None, 0),),
    "mknodat": ((0, 1),),
}
TRACED_CALLS = (
    "execve,execveat,open,openat,openat2,creat,socket,connect,clone,clone3,fork,vfork,"
    + ",".join(_PATH_CHANGES)
)


@dataclass(frozen=True, slots=True)
class ProgramRun:
    """A program executed: its argv, the file, and who ran it."""

    argv: tuple[str, ...]
    path: str
    parent: tuple[str, ...] | None = None  # the program that ran it; None: the shell did
    via: tuple[tuple[str, ...], ...] = ()  # transparent wrappers between the shell and it
    seq: int = field(default=0, compare=False, repr=False)

    @property
    def command(self) -> str:
        """The words a rule sees: argv joined by spaces, argv[0] replaced by the file
        executed when a PATH lookup of argv[0] would not find that file."""
        words = list(self.argv) or [self.path]
        if "/" in words[0] or not _is_found_on_path(words[0], self.path):
            words[0] = words[0] if "/" in words[0] and words[0] == self.path else self.path
        return " ".join(words)


@dataclass(frozen=True, slots=True)
class FileEvent:
    path: str  # absolute and lexically normalised (`..` folded, no symlinks resolved)
    action: str  # open, read, delete, rename, mkdir, link, chmod, ...
    by: tuple[str, ...] | None  # argv of the program; None: the shell itself
    ok: bool
    seq: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class SocketEvent:
    family: str
    address: str
    by: tuple[str, ...] | None
    ok: bool
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
            parts.append(f"children {[(r.parent, r.command) for r in self.children]!r}")
        if self.writes:
            parts.append(f"wrote {[(w.path, w.action, w.ok) for w in self.writes]!r}")
        if self.shell_reads:
            parts.append(f"shell read {[r.path for r in self.shell_reads]!r}")
        if self.sockets:
            parts.append(f"sockets {[(s.family, s.address) for s in self.sockets]!r}")
        return "; ".join(parts)


def _is_found_on_path(name: str, path: str) -> bool:
    found = shutil.which(name, path=STANDARD_PATH)
    return found is not None and os.path.realpath(found) == os.path.realpath(path)


def _real_name(path: str) -> str:
    # The sandbox's /usr is the host's: `sh` is dash, `rbash` is bash, on both sides.
    return posixpath.basename(os.path.realpath(path))


@dataclass(frozen=True, slots=True)
class _Role:
    kind: str  # harness, driver, spawned, shell, wrapper, program
    job: int | None = None
    argv: tuple[str, ...] | None = None  # program or wrapper argv
    via: tuple[tuple[str, ...], ...] = ()
    parent: tuple[str, ...] | None = None  # for a program: who ran it (None: the shell)


def _text(value) -> str | None:
    return value.text if isinstance(value, CString) else None


def _absolute(base: str | None, path: str) -> str:
    if not path.startswith("/"):
        path = posixpath.join(base or "/?", path)
    normal = posixpath.normpath(path)
    return "/" + normal.lstrip("/")


def _dir_of(args: tuple, index: int | None) -> str | None:
    if index is None:
        return None
    value = args[index]
    return value.path if isinstance(value, Fd) else None


def _cwd_of(args: tuple) -> str | None:
    # `-y` prints AT_FDCWD with the process's working directory on every *at call.
    for value in args:
        if isinstance(value, Fd) and value.number == "AT_FDCWD":
            return value.path
    return None


@dataclass
class _Segment:
    """The opens of one shell process image (a fork, or a shell after its execve)."""

    job: int
    shell: str | None  # the shell program when this image began with an execve of it
    opens: list[tuple[str, str, bool, int]] = field(default_factory=list)  # path, flags, ok, seq


class _Builder:
    def __init__(self, calls: list[Call], observations: list[Observation], marker: str):
        self.observations = observations
        self.marker = marker
        self.by_pid: dict[int, list[Call]] = defaultdict(list)
        for call in calls:
            self.by_pid[call.pid].append(call)
        self.segments: list[_Segment] = []
        self.roots: dict[int, _Segment] = {}  # job -> the segment of its own shell

    def build(self, root_pid: int, baseline_jobs: dict[str, int]) -> None:
        stack = [(root_pid, _Role("harness"))]
        while stack:
            pid, role = stack.pop()
            stack.extend(self._run(pid, role))
        preambles = {
            shell: [(path, flags) for path, flags, _, _ in self.roots[job].opens]
            for shell, job in baseline_jobs.items()
            if job in self.roots
        }
        for segment in self.segments:
            opens = segment.opens
            if segment.shell is not None:
                preamble = preambles.get(segment.shell, [])
                skip = 0
                while skip < min(len(opens), len(preamble)) and opens[skip][:2] == preamble[skip]:
                    skip += 1
                opens = opens[skip:]
            observation = self.observations[segment.job]
            for path, flags, ok, seq in opens:
                if any(flag in flags for flag in _WRITE_FLAGS):
                    observation.writes.append(FileEvent(path, "open", None, ok, seq))
                elif "O_DIRECTORY" not in flags and not path.startswith(_SYSTEM_READS):
                    observation.shell_reads.append(FileEvent(path, "read", None, ok, seq))
        for observation in self.observations:
            for events in (observation.runs, observation.children, observation.writes,
                           observation.shell_reads, observation.program_reads,
                           observation.sockets):  # fmt: skip
                events.sort(key=lambda event: event.seq)

    def _run(self, pid: int, role: _Role) -> list[tuple[int, _Role]]:
        """Replay one process; returns the (pid, role) of each child it started."""
        started = []
        segment = self._segment(role, None)
        for call in self.by_pid.get(pid, ()):
            name = call.name
            if call.child_pid is not None:
                child_role = role if role.kind != "driver" else _Role("spawned", role.job)
                started.append((call.child_pid, child_role))
            elif name in ("execve", "execveat"):
                role, shell = self._exec(role, call)
                if call.ok:
                    segment = self._segment(role, shell)
            elif role.kind == "driver" and name in ("openat", "open"):
                path = _text(call.args[1 if name == "openat" else 0]) or ""
                if path.startswith(self.marker):
                    role = _Role("driver", int(path[len(self.marker) :]))
            elif role.job is not None and role.kind in ("shell", "wrapper", "program"):
                self._effect(role, call, segment)
        return started

    def _segment(self, role: _Role, shell: str | None) -> _Segment | None:
        if role.kind != "shell" or role.job is None:
            return None
        segment = _Segment(role.job, shell)
        self.segments.append(segment)
        if shell is not None and role.job not in self.roots:
            self.roots[role.job] = segment
        return segment

    def _exec(self, role: _Role, call: Call) -> tuple[_Role, str | None]:
        """The role after an execve, and the shell it started (if it started one)."""
        argv_at = 1 if call.name == "execve" else 2
        raw = call.args[argv_at] if len(call.args) > argv_at else None
        argv = tuple(_text(v) or "" for v in raw) if isinstance(raw, list) else ()
        path = _text(call.args[argv_at - 1]) or ""
        if call.name == "execveat" and not path.startswith("/"):
            path = _absolute(_dir_of(call.args, 0), path)
        if not call.ok:
            return role, None
        if role.kind == "harness":
            # bwrap's own argv names the driver too: only python running it is the driver.
            driver = path.startswith("/usr/bin/python") and "/oracle/driver.py" in argv
            return (_Role("driver") if driver else role), None
        program = posixpath.basename(path)
        if role.kind == "spawned":
            return _Role("shell", role.job), _real_name(path)
        if role.job is None or role.kind == "driver":
            return role, None
        observation = self.observations[role.job]
        system = path.startswith(("/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/"))
        if role.kind in ("shell", "wrapper"):
            if system and program in SHELL_PROGRAMS:
                return _Role("shell", role.job, via=role.via + (argv,)), _real_name(path)
            if system and program in WRAPPER_PROGRAMS:
                return _Role("wrapper", role.job, argv, role.via + (argv,)), None
            observation.runs.append(ProgramRun(argv, path, None, role.via, call.seq))
            return _Role("program", role.job, argv, role.via), None
        helpers = HELPERS.get(posixpath.basename(role.argv[0]) if role.argv else "", ())
        if not helpers or not path.startswith(helpers):
            observation.children.append(ProgramRun(argv, path, role.argv, role.via, call.seq))
        return _Role("program", role.job, argv, role.via, role.argv), None

    def _effect(self, role: _Role, call: Call, segment: _Segment | None) -> None:
        observation = self.observations[role.job]
        by = None if role.kind == "shell" else role.argv
        name, args = call.name, call.args
        if name in ("open", "openat", "openat2", "creat"):
            index = 0 if name in ("open", "creat") else 1
            requested = _text(args[index]) if len(args) > index else None
            if requested is None:
                return
            base = _dir_of(args, 0) if index == 1 else _cwd_of(args)
            path = _absolute(base, requested)
            flags = "O_CREAT|O_WRONLY|O_TRUNC" if name == "creat" else str(args[index + 1])
            if "O_PATH" in flags or path in NOT_FILES:
                return
            if segment is not None:
                segment.opens.append((path, flags, call.ok, call.seq))
            elif any(flag in flags for flag in _WRITE_FLAGS):
                observation.writes.append(FileEvent(path, "open", by, call.ok, call.seq))
            elif "O_DIRECTORY" not in flags:
                observation.program_reads.append(FileEvent(path, "read", by, call.ok, call.seq))
        elif name in _PATH_CHANGES:
            for dir_index, path_index in _PATH_CHANGES[name]:
                requested = _text(args[path_index]) if len(args) > path_index else None
                if requested is None:
                    continue
                base = _dir_of(args, dir_index) if dir_index is not None else None
                path = _absolute(base or _cwd_of(args), requested)
                if path not in NOT_FILES:
                    observation.writes.append(FileEvent(path, name, by, call.ok, call.seq))
        elif name == "socket":
            family = str(args[0]) if args else "?"
            if family not in ("AF_UNIX", "AF_LOCAL", "AF_NETLINK"):
                observation.sockets.append(SocketEvent(family, "", by, call.ok, call.seq))
        elif name == "connect" and len(args) > 1:
            address = str(args[1])
            if "sa_family=AF_UNIX" in address and "nscd" in address:
                return
            family = address.split("sa_family=", 1)[-1].split(",", 1)[0].strip("{}")
            observation.sockets.append(SocketEvent(family, address, by, call.ok, call.seq))


def observe(
    calls: list[Call], observations: list[Observation], marker: str, baseline_jobs: dict[str, int]
) -> None:
    """Fill `observations` (one per job, in batch order) from a batch's calls."""
    if not calls:
        return
    _Builder(calls, observations, marker).build(calls[0].pid, baseline_jobs)
