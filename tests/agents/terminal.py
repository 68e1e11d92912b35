"""An interactive program on a pseudo-terminal, read as a person reads it: what it has drawn
(escape sequences dropped, and blanks, since a full-screen program moves the cursor
instead of printing spaces), waited on until a text appears, and typed into."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import threading
import time
from collections.abc import Callable

from tests.support.waiting import wait_until

_ESCAPES = re.compile(
    r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]"  # CSI: cursor, colours, modes
    r"|\x1b\][^\x07\x1b]*(\x07|\x1b\\)"  # OSC: titles, links
    r"|\x1b[()][0-9A-Za-z]|\x1b[=>78]"
)
_BLANKS = re.compile(r"\s+")


def _plain(text: str) -> str:
    return _BLANKS.sub("", _ESCAPES.sub("", text))


class Terminal:
    def __init__(
        self, argv: list[str], *, cwd, env: dict[str, str], columns: int = 160, rows: int = 60
    ) -> None:
        env = dict(env, TERM="xterm-256color", COLUMNS=str(columns), LINES=str(rows))
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the program, on the terminal's other side
            try:
                os.chdir(cwd)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        # The terminal's size, as a window would set it: a program too tall for it may
        # redraw forever without showing its input line.
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.exit_status: int | None = None
        self._raw: list[str] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.5)
                if not ready:
                    continue
                data = os.read(self.fd, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self._raw.append(data.decode(errors="replace"))

    def screen(self) -> str:
        """Everything drawn so far, without escapes or blanks."""
        with self._lock:
            return _plain("".join(self._raw))

    def mark(self) -> int:
        """A place in what was drawn: `wait_for(…, after=mark)` looks only past it."""
        return len(self.screen())

    def wait_for(self, text: str, *, after: int = 0, timeout: float = 120) -> None:
        wanted = _plain(text)
        deadline = time.monotonic() + timeout
        while wanted not in self.screen()[after:]:
            if time.monotonic() > deadline:
                drawn = self.screen()[-1500:]
                raise AssertionError(f"{text!r} never appeared; last drawn: {drawn}")
            time.sleep(0.1)

    def wait_for_echo(self, keys: str, *, after: int, timeout: float = 120) -> None:
        """Wait until the keys typed are drawn, in order: a full-screen program may redraw
        its status line between two of them (`li`, the status line, `st`)."""
        wanted = _plain(keys)
        deadline = time.monotonic() + timeout
        while not _in_order(wanted, self.screen()[after:]):
            if time.monotonic() > deadline:
                drawn = self.screen()[-1500:]
                raise AssertionError(f"{keys!r} never drawn; last drawn: {drawn}")
            time.sleep(0.1)

    def settle(self, quiet: float = 1.0, timeout: float = 60) -> None:
        """Wait until nothing has been drawn for `quiet` seconds: a screen still being
        redrawn can reset a choice made on it, or drop a key."""
        deadline = time.monotonic() + timeout
        drawn, since = self.screen(), time.monotonic()
        while time.monotonic() - since < quiet:
            if time.monotonic() > deadline:
                raise AssertionError(f"never stopped drawing: {self.screen()[-1500:]}")
            time.sleep(0.1)
            now = self.screen()
            if now != drawn:
                drawn, since = now, time.monotonic()

    def selected(self, option: str, pointer: str = "❯") -> bool:
        """Whether the menu as last drawn points at `option`."""
        screen = self.screen()
        return screen[screen.rfind(_plain(pointer)) :].startswith(_plain(pointer + option))

    def choose(self, option: str, *, then: str, pointer: str = "❯", attempts: int = 3) -> None:
        """Move a menu's pointer down to `option`, press Enter, and wait for `then`. Tried
        again if `then` does not come: a menu still being redrawn can reset the pointer or
        drop a key."""
        for _ in range(attempts):
            self.settle()
            for _ in range(5):
                if self.selected(option, pointer):
                    break
                self.type(DOWN)
                self.settle()
            mark = self.mark()
            self.type(ENTER)
            try:
                self.wait_for(then, after=mark, timeout=30)
                return
            except AssertionError:
                continue
        raise AssertionError(f"choosing {option!r} never led to {then!r}: {self.screen()[-1500:]}")

    def submit(self, line: str, *, received: Callable[[], bool], attempts: int = 3) -> None:
        """Type `line` and Enter, until `received()` says it arrived (an Enter typed while
        the screen is being redrawn can be dropped)."""
        self.settle()  # the last turn's end is drawn before the keys are typed
        mark = self.mark()
        self.type(line)
        self.wait_for_echo(line, after=mark)
        for attempt in range(attempts):
            self.settle()
            self.type(ENTER)
            try:
                wait_until(received, f"{line!r} received", timeout=30)
                return
            except AssertionError:
                if attempt == attempts - 1:
                    raise

    def converse(self, line: str, *, requests: list, answered: Callable[[], bool]) -> None:
        """Submit `line` to an agent whose model server keeps `requests`, and wait until
        `answered()`: the turn's tool call has its result (the hook may wait on fluidbox, an
        ASK, for a while). The screen cannot tell this turn's end from the last one's: a
        full-screen program redraws them all."""
        asked = len(requests)
        self.submit(line, received=lambda: len(requests) > asked)
        wait_until(answered, f"the answer to {line!r}", timeout=300)

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def wait_exit(self, timeout: float = 60) -> int:
        """The program's exit code, once it has ended by itself."""
        deadline = time.monotonic() + timeout
        while self.exit_status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.exit_status = os.waitstatus_to_exitcode(status)
            elif time.monotonic() > deadline:
                raise AssertionError(f"still running; last drawn: {self.screen()[-1500:]}")
            else:
                time.sleep(0.1)
        return self.exit_status

    def close(self) -> None:
        if self.exit_status is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)
        self._reader.join(5)


DOWN = "\x1b[B"
ENTER = "\r"


def _in_order(wanted: str, drawn: str) -> bool:
    """Whether each character of `wanted` is in `drawn`, in order, other text between."""
    rest = iter(drawn)
    return all(character in rest for character in wanted)
