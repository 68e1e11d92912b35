"""Runs one program per call, without a shell, confined to the workspace (SPEC §9).

This is the second wall: the gate has already decided the call. The executor still refuses
programs off its allow-list, arguments that name paths outside the workspace, and anything
that would need a shell; it runs with a minimal environment, a timeout that kills the whole
process group, and bounded output in which every injected secret is masked.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from runner.command_line import CommandRefused, Word, split_command
from runner.confinement import Workspace, WorkspaceEscape
from runner.masking import SecretMasker
from runner.program_guards import (
    check_program_arguments,
    program_environment,
    program_leading_arguments,
)

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"

# Interpreters (python3, sh, node, perl…) and sed/awk are absent on purpose: each runs arbitrary
# code, which would make every argument check below meaningless. Add them knowingly.
DEFAULT_PROGRAMS = frozenset(
    [
        "cat",
        "cp",
        "diff",
        "echo",
        "find",
        "git",
        "grep",
        "head",
        "ls",
        "mkdir",
        "mv",
        "pwd",
        "rm",
        "sort",
        "stat",
        "tail",
        "touch",
        "uniq",
        "wc",
    ]
)

# These move data off the machine. They run only when the runner is configured with them
# (`exfiltration_programs=`) AND the policy allows the call with an explicit ALWAYS rule.
EXFILTRATION_PROGRAMS = frozenset(
    {
        "curl",
        "wget",
        "nc",
        "ncat",
        "netcat",
        "ssh",
        "scp",
        "sftp",
        "rsync",
        "ftp",
        "telnet",
        "socat",
    }
)

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESERVED_ENV_PREFIXES = ("LD_", "GIT_", "PYTHON", "BASH_", "DYLD_")
_MAX_GLOB_MATCHES = 10_000


@dataclass(frozen=True)
class CommandPlan:
    """What would run: `argv[0]` is the absolute path of an allowed system program."""

    argv: tuple[str, ...]
    program: str

    @property
    def exfiltration(self) -> bool:
        return self.program in EXFILTRATION_PROGRAMS


@dataclass(frozen=True)
class CommandResult:
    """The outcome of a command, with secrets already masked and output already bounded."""

    command: str
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    stdout_bytes: int
    stderr_bytes: int
    max_output: int
    duration: float

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def as_text(self) -> str:
        if self.timed_out:
            status = (
                f"killed: the command did not finish within the timeout ({self.duration:.0f} s)"
            )
        else:
            status = f"exit code {self.exit_code}"
        lines = [status]
        for label, text, total in (
            ("stdout", self.stdout, self.stdout_bytes),
            ("stderr", self.stderr, self.stderr_bytes),
        ):
            if not total:
                continue
            lines.append(f"--- {label} ---")
            lines.append(text.rstrip("\n"))
            if total > self.max_output:
                lines.append(f"[{label} truncated: {total} bytes, first {self.max_output} shown]")
        return "\n".join(lines)


class Executor:
    """Runs allowed programs in the workspace with no shell and no host environment."""

    def __init__(
        self,
        workspace: Workspace,
        allowed_programs: frozenset[str] = DEFAULT_PROGRAMS,
        *,
        exfiltration_programs: frozenset[str] = frozenset(),
        timeout: float = 30.0,
        max_output: int = 64 * 1024,
        search_path: str = SYSTEM_PATH,
    ) -> None:
        unknown = exfiltration_programs - EXFILTRATION_PROGRAMS
        if unknown:
            raise ValueError(f"not exfiltration programs: {sorted(unknown)}")
        self.workspace = workspace
        self.allowed_programs = (allowed_programs - EXFILTRATION_PROGRAMS) | exfiltration_programs
        self.timeout = timeout
        self.max_output = max_output
        self.search_path = search_path

    def plan(self, command: str) -> CommandPlan:
        """Parse and check a command without running it; raises `CommandRefused`."""
        words = split_command(command)
        program_path, program = self._program(words[0].text)
        expanded = [(argument, word) for word in words[1:] for argument in self._expanded(word)]
        arguments = [argument for argument, _ in expanded]
        check_program_arguments(program, arguments)
        checked = []
        for argument, word in expanded:
            try:
                checked.append(self._checked_argument(argument, program))
            except CommandRefused:
                if not word.glob:
                    raise
                # Naming the match would tell the model what is there, outside.
                raise CommandRefused(
                    f"`{word.text}` matches a path that leaves the workspace or is in a "
                    "protected directory"
                ) from None
        leading = program_leading_arguments(program)
        return CommandPlan(argv=(program_path, *leading, *checked), program=program)

    def run(
        self,
        command: str,
        *,
        secrets: Mapping[str, str] | None = None,
        masked: Iterable[str] = (),
    ) -> CommandResult:
        """Run one command; secrets go into the child's environment only, and are masked out.

        `masked`: other values to mask (secrets of earlier calls), before the output is cut."""
        plan = self.plan(command)
        environment = self._environment(plan, secrets or {})
        masker = SecretMasker([*(secrets or {}).values(), *masked])
        started = time.monotonic()
        process = subprocess.Popen(
            plan.argv,
            cwd=self.workspace.root,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
        )
        # Keep enough past the limit that a secret straddling it is still seen whole.
        keep = self.max_output + masker.longest
        try:
            (stdout, stdout_total), (stderr, stderr_total), timed_out = _collect(
                process, started + self.timeout, keep
            )
        finally:
            _kill_group(process)
        return CommandResult(
            command=command,
            exit_code=None if timed_out else process.returncode,
            stdout=_bounded_text(masker.mask_bytes(stdout), self.max_output),
            stderr=_bounded_text(masker.mask_bytes(stderr), self.max_output),
            timed_out=timed_out,
            stdout_bytes=stdout_total,
            stderr_bytes=stderr_total,
            max_output=self.max_output,
            duration=time.monotonic() - started,
        )

    def _program(self, name: str) -> tuple[str, str]:
        program = os.path.basename(name)
        if program in EXFILTRATION_PROGRAMS and program not in self.allowed_programs:
            raise CommandRefused(
                f"`{program}` can send data out of the sandbox; it runs only when the runner "
                "is configured with it and the policy allows it with an explicit ALWAYS rule"
            )
        if program not in self.allowed_programs:
            raise CommandRefused(
                f"`{program}` is not on the executor's allow-list "
                f"({', '.join(sorted(self.allowed_programs))})"
            )
        system_program = shutil.which(program, path=self.search_path)
        if system_program is None:
            raise CommandRefused(f"`{program}` is not installed in this sandbox")
        if "/" in name:
            named = os.path.realpath(os.path.join(self.workspace.root, name))
            if named != os.path.realpath(system_program):
                raise CommandRefused(
                    f"`{name}` is not the system's `{program}` ({system_program}); "
                    "only installed programs run"
                )
        return system_program, program

    def _expanded(self, word: Word) -> list[str]:
        if not word.glob:
            return [word.text]
        pattern = word.text
        if pattern.startswith("/"):
            pattern = str(self._real_path_text(pattern))
        # Matched outside, a pattern would list what is there: it must itself stay inside.
        try:
            self.workspace.resolve(pattern)
        except WorkspaceEscape as escape:
            raise CommandRefused(
                f"`{word.text}` leaves the workspace: {escape}. Every path must stay inside "
                f"{self.workspace.virtual_root}"
            ) from None
        except OSError:
            pass  # a pattern that names nothing yet is matched, or stays literal
        self._refuse_walks_out(os.path.dirname(pattern), word)
        matches = sorted(glob.glob(pattern, root_dir=self.workspace.root))
        if len(matches) > _MAX_GLOB_MATCHES:
            raise CommandRefused(f"`{word.text}` matches more than {_MAX_GLOB_MATCHES} paths")
        return matches or [word.text]  # like a shell: an unmatched pattern stays literal

    def _refuse_walks_out(self, directory: str, word: Word) -> None:
        # The folders a pattern lists must be inside, whatever they hold: a folder reached
        # through a link out, listed, would answer "does this name exist outside?" by whether
        # the pattern then matched (and was refused) or not. Checked from the shallowest level
        # down, so each level is listed only in folders already known to be inside.
        if not glob.has_magic(directory):
            return  # a literal folder was walked by `resolve` with the whole pattern
        self._refuse_walks_out(os.path.dirname(directory), word)
        for folder in glob.glob(directory, root_dir=self.workspace.root):
            if self._leaves_workspace(folder):
                raise CommandRefused(
                    f"`{word.text}` leaves the workspace: it goes through a symbolic link "
                    f"that leads out. Every path must stay inside {self.workspace.virtual_root}"
                )

    def _leaves_workspace(self, path: str) -> bool:
        try:
            self.workspace.resolve(path)
        except WorkspaceEscape:
            return True
        except OSError:
            pass
        return False

    def _checked_argument(self, argument: str, program: str) -> str:
        if argument.startswith("--") and "=" in argument:
            option, value = argument.split("=", 1)
            return f"{option}={self._checked_path(value, argument, program)}"
        if argument.startswith("-") and len(argument) > 2 and argument[1] != "-":
            return self._checked_cluster(argument, program)
        if argument.startswith("-"):
            return argument
        return self._checked_path(argument, argument, program)

    def _checked_cluster(self, argument: str, program: str) -> str:
        # Option letters are letters and digits, and the value of a short option may start
        # after any of them (`-at/dir` is `-a -t /dir`): every tail up to the first other
        # character is checked as the value it may be.
        end = 2
        while end < len(argument) and argument[end - 1].isalnum() and argument[end].isalnum():
            end += 1
        for start in range(2, end + 1):
            if start < len(argument) and argument[start] == "/":
                return argument[:start] + self._checked_path(argument[start:], argument, program)
            self._checked_path(argument[start:], argument, program)
        return argument

    def _checked_path(self, value: str, argument: str, program: str) -> str:
        looks_like_path = (
            "/" in value
            or value in (".", "..")
            or value in self.workspace.protected_names  # `mv repo .git` before `.git` exists
            or (value != "" and os.path.lexists(self.workspace.root / value))
        )
        if not looks_like_path:
            return value
        try:
            resolved = self.workspace.resolve(value)
        except WorkspaceEscape as escape:
            raise CommandRefused(
                f"argument `{argument}` leaves the workspace: {escape}. Every path must stay "
                f"inside {self.workspace.virtual_root}"
            ) from None
        except OSError as error:
            raise CommandRefused(f"argument `{argument}`: {error.strerror}") from None
        if program != "git" and self.workspace.is_protected(resolved):
            raise CommandRefused(
                f"argument `{argument}` is inside a protected directory "
                f"({', '.join(sorted(self.workspace.protected_names))}); use git for it"
            )
        if value.startswith("/"):
            return str(self._real_path_text(value))
        return value

    def _real_path_text(self, value: str) -> Path:
        # `/workspace/x` as the model sees it is `<root>/x` on this machine.
        virtual = self.workspace.virtual_root
        if value == virtual or value.startswith(virtual + "/"):
            return self.workspace.root / value[len(virtual) + 1 :]
        return Path(value)

    def _environment(self, plan: CommandPlan, secrets: Mapping[str, str]) -> dict[str, str]:
        root = str(self.workspace.root)
        environment = {
            "PATH": self.search_path,
            "HOME": root,
            "PWD": root,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TERM": "dumb",
        }
        environment |= program_environment(
            plan.program, self.workspace.root, ssh_allowed="ssh" in self.allowed_programs
        )
        for name, value in secrets.items():
            if (
                not _ENV_NAME.match(name)
                or name in environment
                or name.startswith(_RESERVED_ENV_PREFIXES)
            ):
                raise CommandRefused(
                    f"secret {name!r} cannot be injected: it would change how programs run"
                )
            if "\x00" in value:
                raise CommandRefused(f"secret {name!r} holds a NUL byte")
            environment[name] = value
        return environment


def _collect(
    process: subprocess.Popen[bytes], deadline: float, keep: int
) -> tuple[tuple[bytes, int], tuple[bytes, int], bool]:
    assert process.stdout is not None and process.stderr is not None
    kept = {process.stdout.fileno(): bytearray(), process.stderr.fileno(): bytearray()}
    totals = dict.fromkeys(kept, 0)
    timed_out = False
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        selector.register(process.stderr, selectors.EVENT_READ)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in selector.select(timeout=remaining):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                totals[key.fd] += len(chunk)
                room = keep - len(kept[key.fd])
                if room > 0:
                    kept[key.fd] += chunk[:room]
    if not timed_out:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    out, err = process.stdout.fileno(), process.stderr.fileno()
    return (bytes(kept[out]), totals[out]), (bytes(kept[err]), totals[err]), timed_out


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    # The whole group goes, so nothing the command started outlives the call.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def _bounded_text(data: bytes, limit: int) -> str:
    return data[:limit].decode("utf-8", "replace")
