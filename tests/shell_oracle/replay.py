"""Replaying a batch's trace process by process into one Observation per job.

Every process has a role, inherited at fork and changed at execve:

- **shell**: the job's shell, its forks (subshells, pipeline members, command
  substitutions) and any shell it starts (`sh -c`, `bash script`): what such a process
  opens is a redirection (`> f`, `< f`, `$(< f)`, `source f`, a start-up file), what
  it executes is a program the script ran;
- **wrapper**: a transparent wrapper the shell ran (`env`, `nice`, `timeout`, ...):
  what it executes counts as run by the shell, through it;
- **program**: anything else. What it executes is a *child* (git's fsmonitor, find's
  `-exec`, xargs' command), unless it is one of the helpers the program the shell ran
  always uses (`HELPERS`: git's git-core, npm's node): a helper keeps that owner.

Each process also carries its working directory (from `chdir`/`fchdir`, and from the
`AT_FDCWD</dir>` that `-y` prints), so a relative path resolves as the kernel did.
A shell's own start-up opens (the dynamic loader, locale files, `/etc/zsh/zshenv`) are
those a script `:` makes (the batch's baseline jobs); they are dropped from the front
of the opens of each shell that an execve started.
"""

import os
import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace

from tests.shell_oracle.observation import FileEvent, Observation, ProgramRun, SocketEvent
from tests.shell_oracle.strace_log import Call, CString, Fd

SHELL_PROGRAMS = frozenset({"bash", "dash", "sh", "zsh", "rbash"})
WRAPPER_PROGRAMS = frozenset(
    {"env", "nice", "nohup", "timeout", "stdbuf", "setsid", "ionice", "time", "chrt"}
)
SYSTEM_DIRECTORIES = ("/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/")


def _git_helper(path: str, argv: tuple[str, ...]) -> bool:
    # git's own programs, also when git starts them through `sh -c` (a local upload-pack).
    if path.startswith("/usr/lib/git-core/"):
        return True
    shell = posixpath.basename(path) in SHELL_PROGRAMS
    return shell and len(argv) > 2 and argv[1] == "-c" and argv[2].startswith("git-")


def _named(*names: str):
    # Only the system's copy: a planted /workspace/bin/as is no compiler pass.
    return lambda path, argv: (
        path.startswith(("/usr/", "/bin/", "/sbin/")) and (posixpath.basename(path) in names)
    )


# Programs whose own children are how they work, not something they were told to run:
# git's git-core, a compiler driver's passes, a launcher script's plumbing. A helper keeps
# the owner, so what a helper runs must itself be a helper of the same owner.
_LAUNCHER = _named(
    "uname", "ls", "expr", "dirname", "basename", "readlink", "which", "sed", "grep", "cat",
    "tr", "cut", "getopt", "java", "node", "nodejs", "lsb_release", "mkdir", "pwd", "id",
)  # fmt: skip
_COMPILER_PASS = _named(
    "cc1", "cc1plus", "collect2", "as", "ld", "ld.bfd", "ld.gold", "lto-wrapper", "lto1",
    # `-gsplit-dwarf` (GCC 12): `objcopy --extract-dwo` and `--strip-dwo` on the object it wrote.
    "objcopy",
    # lto-wrapper runs the driver again (`gcc @FILE`) for the link-time passes.
    "gcc", "g++", "cc", "c++",
)  # fmt: skip
# `-flto=N`: lto-wrapper asks `make --version`, then runs `make -f TMPDIR/ccX.mk -jN all` on the
# makefile it wrote, whose recipes run the driver and, for each partition, this shell line.
_LTO_MAKEFILE = re.compile(r"/\S+/cc\w+\.mk")
_LTO_RECIPE = re.compile(r"touch -r (/\S+\.o) \1\.tem > /dev/null 2>&1 && mv \1\.tem \1")
_SYSTEM_PROGRAM = ("/usr/bin/", "/bin/")


def _compiler(path: str, argv: tuple[str, ...]) -> bool:
    if _COMPILER_PASS(path, argv):
        return True
    if not path.startswith(_SYSTEM_PROGRAM):
        return False
    name, args = posixpath.basename(path), argv[1:]
    if name == "make":
        return args == ("--version",) or (
            len(args) >= 2 and args[0] == "-f" and bool(_LTO_MAKEFILE.fullmatch(args[1]))
        )
    if name in SHELL_PROGRAMS:
        return len(args) == 2 and args[0] == "-c" and bool(_LTO_RECIPE.fullmatch(args[1]))
    if name == "touch":
        return len(args) == 3 and args[0] == "-r" and args[2] == args[1] + ".tem"
    if name == "mv":
        return len(args) == 2 and args[0] == args[1] + ".tem" and args[1].endswith(".o")
    return False


HELPERS = {
    "git": _git_helper,
    "egrep": _named("grep"),
    "fgrep": _named("grep"),
    "npm": _named("node", "nodejs"),
    "npx": _named("node", "nodejs"),
    "yq": _named("jq"),  # Debian's yq is a jq wrapper: every run starts jq
    "tar": _named("gzip", "bzip2", "xz", "zstd", "lzma"),
    "gcc": _compiler,
    "g++": _compiler,
    "cc": _compiler,
    "c++": _compiler,
    "pip": _LAUNCHER,
    "pip3": _LAUNCHER,
    "mvn": _LAUNCHER,
    "gradle": _LAUNCHER,
}
# A process's own settings under /proc (the JVM writes /proc/self/coredump_filter).
_OWN_PROCESS = ("/proc/self/", "/proc/thread-self/")
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
# Locale data a shell loads when a script sets LANG/LC_*, and time-zone data when it sets TZ
# (bash calls tzset at once) or formats a time (`printf '%(%F)T'`): the shell's own doing.
# Paths are normalised first: `TZ=../../etc/passwd` reads /etc/passwd, not zone data.
_SYSTEM_READS = (
    "/usr/lib/locale/",
    "/usr/share/locale/",
    "/usr/lib/x86_64-linux-gnu/gconv/",
    "/usr/share/zoneinfo/",
)
_SYSTEM_FILES = frozenset({"/etc/localtime"})
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_TMPFILE")
# For each call that changes paths: (index of its dirfd or None, index of the path).
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
_LINKS = frozenset({"link", "linkat", "symlink", "symlinkat"})
_FOLLOWS_LAST = frozenset({"open", "truncate", "chmod", "chown", "fchmodat", "fchownat"})
TRACED_CALLS = ",".join(
    (
        "execve,execveat,open,openat,openat2,creat,connect,listen,chdir,fchdir",
        "clone,clone3,fork,vfork",
        *_PATH_CHANGES,
    )
)


@dataclass(frozen=True, slots=True)
class _Role:
    kind: str  # harness, driver, spawned, shell, wrapper, program
    job: int | None = None
    argv: tuple[str, ...] | None = None  # the program's (or wrapper's) argv
    via: tuple[tuple[str, ...], ...] = ()
    owner: str | None = None  # the program the shell ran, whose helpers this process may run
    cwd: str = "/"


@dataclass
class _Segment:
    """The opens of one shell process image (a fork, or a shell after its execve)."""

    job: int
    shell: str | None  # the shell program when this image began with an execve of it
    opens: list[tuple[str, str, str | None, int, str]] = field(default_factory=list)


def _system_read(path: str) -> bool:
    return path.startswith(_SYSTEM_READS) or path in _SYSTEM_FILES


def _text(value) -> str | None:
    return value.text if isinstance(value, CString) else None


def _absolute(base: str, path: str) -> str:
    normal = posixpath.normpath(posixpath.join(base, path))
    return "/" + normal.lstrip("/")


def _real_name(path: str) -> str:
    # The sandbox's /usr is the host's: `sh` is dash, `rbash` is bash, on both sides.
    return posixpath.basename(os.path.realpath(path))


def _directory(args: tuple, index: int | None, cwd: str) -> str:
    value = args[index] if index is not None and index < len(args) else None
    return value.path if isinstance(value, Fd) and value.path else cwd


class _Replay:
    def __init__(self, calls: list[Call], observations: list[Observation], marker: str):
        self.observations = observations
        self.marker = marker
        self.by_pid: dict[int, list[Call]] = defaultdict(list)
        for call in calls:
            self.by_pid[call.pid].append(call)
        self.segments: list[_Segment] = []
        self.roots: dict[int, _Segment] = {}  # job -> the segment of its own shell
        # job -> (link, what it points at, seq) for each link made: a later write through
        # the link writes what it points at (`cp -s /etc/passwd y && echo x >> y`).
        self.links: dict[int, list[tuple[str, str, int]]] = defaultdict(list)

    def run(self, root_pid: int, baseline_jobs: dict[str, int]) -> None:
        stack = [(root_pid, _Role("harness"))]
        while stack:
            stack.extend(self._process(*stack.pop()))
        preambles = {
            shell: [(path, flags) for path, flags, *_ in self.roots[job].opens]
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
            for path, flags, error, seq, raw in opens:
                if any(flag in flags for flag in _WRITE_FLAGS):
                    observation.writes.append(FileEvent(path, "open", None, error, seq, raw))
                elif "O_DIRECTORY" not in flags and not _system_read(path):
                    observation.shell_reads.append(FileEvent(path, "read", None, error, seq))
        for job, links in self.links.items():
            writes = self.observations[job].writes
            seen = {(event.path, event.seq) for event in writes}  # an open's real path is in
            throughs = [through for event in writes if (through := _through_links(event, links))]
            writes += [event for event in throughs if (event.path, event.seq) not in seen]
        for o in self.observations:
            for events in (o.runs, o.children, o.writes, o.shell_reads, o.program_reads, o.sockets):
                events.sort(key=lambda event: event.seq)

    def _process(self, pid: int, role: _Role) -> list[tuple[int, _Role]]:
        """Replay one process; returns the (pid, role) of each child it started."""
        started = []
        segment = self._segment(role, None)
        for call in self.by_pid.get(pid, ()):
            name = call.name
            cwd = next((a.path for a in call.args if isinstance(a, Fd) and a.number == "AT_FDCWD"
                        and a.path), None)  # fmt: skip
            if cwd is not None and cwd != role.cwd:
                role = replace(role, cwd=cwd)
            if call.child_pid is not None:
                child = role if role.kind != "driver" else _Role("spawned", role.job, cwd=role.cwd)
                started.append((call.child_pid, child))
            elif name in ("chdir", "fchdir") and call.ok and call.args:
                target = call.args[0]
                path = target.path if isinstance(target, Fd) else _text(target)
                if path:
                    # kept as joined, `..` and all: `cd l/..` climbs from where a link the
                    # script made leads (walked once every link is known, _through_links)
                    role = replace(role, cwd=posixpath.join(role.cwd, path))
            elif name in ("execve", "execveat"):
                role, shell = self._exec(role, call)
                if call.ok:
                    segment = self._segment(role, shell)
            elif role.kind == "driver" and name in ("openat", "open"):
                path = _text(call.args[1 if name == "openat" else 0]) or ""
                if path.startswith(self.marker):
                    role = replace(role, job=int(path[len(self.marker) :]))
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
            path = _absolute(_directory(call.args, 0, role.cwd), path)
        if not call.ok:
            return role, None
        if role.kind == "harness":
            # bwrap's own argv names the driver too: only python running it is the driver.
            driver = path.startswith("/usr/bin/python") and "/oracle/driver.py" in argv
            return (replace(role, kind="driver") if driver else role), None
        if role.kind == "spawned":
            return replace(role, kind="shell"), _real_name(path)
        if role.job is None or role.kind == "driver":
            return role, None
        observation = self.observations[role.job]
        program = posixpath.basename(path)
        system = path.startswith(SYSTEM_DIRECTORIES)
        if role.kind in ("shell", "wrapper"):
            if system and program in SHELL_PROGRAMS:
                return _Role("shell", role.job, via=role.via + (argv,), cwd=role.cwd), _real_name(
                    path
                )
            if system and program in WRAPPER_PROGRAMS:
                return _Role("wrapper", role.job, argv, role.via + (argv,), cwd=role.cwd), None
            observation.runs.append(ProgramRun(argv, path, None, role.via, call.seq))
            return _Role("program", role.job, argv, role.via, program, role.cwd), None
        helper = HELPERS.get(role.owner or "")
        if helper is not None and helper(path, argv):
            return replace(role, argv=argv), None
        observation.children.append(ProgramRun(argv, path, role.argv, role.via, call.seq))
        return _Role("program", role.job, argv, role.via, program, role.cwd), None

    def _effect(self, role: _Role, call: Call, segment: _Segment | None) -> None:
        observation = self.observations[role.job]
        by = None if role.kind == "shell" else role.argv
        name, args = call.name, call.args
        if name in ("open", "openat", "openat2", "creat"):
            index = 0 if name in ("open", "creat") else 1
            requested = _text(args[index]) if len(args) > index else None
            if requested is None:
                return
            raw = posixpath.join(_directory(args, 0 if index else None, role.cwd), requested)
            asked = _absolute("/", raw)
            flags = "O_CREAT|O_WRONLY|O_TRUNC" if name == "creat" else str(args[index + 1])
            if "O_PATH" in flags:
                return
            for path in _opened(call, asked):
                if path in NOT_FILES or path.startswith(_OWN_PROCESS):
                    continue
                raw_path = raw if path == asked else path
                if segment is not None:
                    segment.opens.append((path, flags, call.errno, call.seq, raw_path))
                elif any(flag in flags for flag in _WRITE_FLAGS):
                    event = FileEvent(path, "open", by, call.errno, call.seq, raw_path)
                    observation.writes.append(event)
                elif "O_DIRECTORY" not in flags:
                    event = FileEvent(path, "read", by, call.errno, call.seq)
                    observation.program_reads.append(event)
        elif name in _PATH_CHANGES:
            for dir_index, path_index in _PATH_CHANGES[name]:
                requested = _text(args[path_index]) if len(args) > path_index else None
                if requested is None:
                    continue
                raw = posixpath.join(_directory(args, dir_index, role.cwd), requested)
                path = _absolute("/", raw)
                if path not in NOT_FILES:
                    event = FileEvent(path, name, by, call.errno, call.seq, raw)
                    observation.writes.append(event)
            if name in _LINKS and call.ok:
                self.links[role.job].append(_link_made(name, args, role.cwd, call.seq))
        elif name in ("connect", "listen") and args:
            address = str(args[1]) if len(args) > 1 else ""
            socket = args[0].path if isinstance(args[0], Fd) else str(args[0])
            if "sa_family=AF_UNIX" in address and "nscd" in address:
                return  # glibc asking the name service cache: every `ls -l` does
            family = address.split("sa_family=", 1)[-1].split(",", 1)[0].strip("{}")
            event = SocketEvent(name, family or "?", address or socket or "", by, call.errno,
                                call.seq)  # fmt: skip
            observation.sockets.append(event)


def _opened(call: Call, asked: str) -> list[str]:
    """The path an open asked for and, when it succeeded somewhere else, where it really
    landed, as `-y` printed its descriptor: through a link, a `..` after a link (`src/l/../x`
    with `src/l` a link to /tmp/a is /tmp/x, not src/x), a /dev/fd/N or /dev/stdout naming a
    file the script opened before. A pipe, a device, a process's own /proc file, or a system
    file reached by its own link (locale.alias) adds nothing."""
    real = call.result_path
    if not call.ok or not real or not real.startswith("/") or real.endswith(" (deleted)"):
        return [asked]
    if real == asked or real.startswith(("/dev/", "/proc/")) or _system_read(asked):
        return [asked]
    return [asked, real]


def _link_made(name: str, args: tuple, cwd: str, seq: int) -> tuple[str, str, int]:
    """(the link, the file it points at, seq): a symbolic link's relative target is read
    from the link's folder, a hard link's source from the caller's directory."""
    if name in ("symlink", "symlinkat"):
        target = _text(args[0]) or ""
        link = _absolute(_directory(args, 1 if name == "symlinkat" else None, cwd),
                         _text(args[-1]) or "")  # fmt: skip
        return link, _absolute(posixpath.dirname(link), target), seq
    old, new = ((None, 0), (None, 1)) if name == "link" else ((0, 1), (2, 3))
    source = _absolute(_directory(args, old[0], cwd), _text(args[old[1]]) or "")
    return _absolute(_directory(args, new[0], cwd), _text(args[new[1]]) or ""), source, seq


def _through_links(event: FileEvent, links: list[tuple[str, str, int]]) -> FileEvent | None:
    """The write `event` made through links made before it, at the path it really reached.
    The path is walked a name at a time as the kernel walks it, so a `..` after a link
    climbs from where the link leads (`a/l/../../etc/x` with `a/l` leading to /workspace/d
    is /etc/x). Only opening and re-moding follow a link in the last component; creating,
    removing or renaming a name does not (`ln -sf` replaces a link)."""
    made = {link: target for link, target, seq in links if seq < event.seq}
    path = _walk(event.raw or event.path, made, event.action in _FOLLOWS_LAST)
    if path == event.path:
        return None
    return FileEvent(path, event.action, event.by, event.error, event.seq)


def _walk(raw: str, made: dict[str, str], follow_last: bool) -> str:
    names = [name for name in raw.split("/") if name and name != "."]
    path, hops = "/", 0
    for index, name in enumerate(names):
        if name == "..":
            path = posixpath.dirname(path)
            continue
        path = posixpath.join(path, name)
        last = index == len(names) - 1
        while path in made and hops < 40 and (follow_last or not last):  # the kernel's bound
            path, hops = made[path], hops + 1
    return path


def observe(
    calls: list[Call], observations: list[Observation], marker: str, baseline_jobs: dict[str, int]
) -> None:
    """Fill `observations` (one per job, in batch order) from a batch's calls."""
    if calls:
        _Replay(calls, observations, marker).run(calls[0].pid, baseline_jobs)
