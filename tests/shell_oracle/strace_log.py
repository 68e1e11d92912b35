"""Reading `strace -f -y -x --pidns-translation` output into system calls.

One `Call` per completed system call: the pid (in strace's namespace), the name,
the arguments as values (`bytes` for C strings, lists for arrays, `Fd` for a file
descriptor annotated with its path by `-y`, plain text for anything else) and the
result. Lines split by `-f` (`<unfinished ...>` / `<... x resumed>`) are joined
first. Paths are bytes decoded with `surrogateescape`, so a byte that is not
UTF-8 survives to the report.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_LINE = re.compile(r"^(\d+) +(.*)$", re.DOTALL)
_UNFINISHED = " <unfinished ...>"
_RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$", re.DOTALL)
_RESULT = re.compile(
    r"\) += (?P<value>-?\d+|\?|0x[0-9a-f]+)(?P<fd><(?:[^>\\]|\\.)*>)?"
    r"(?: (?P<errno>E[A-Z0-9]+)(?: \([^)]*\))?)?"
    r"(?: /\* (?P<host>\d+) in strace's PID NS \*/)?(?: \(.*\))?\s*$"
)
_RESULT_START = re.compile(r"\) += ")
_SIMPLE_ESCAPES = {
    "n": 0x0A,
    "t": 0x09,
    "r": 0x0D,
    "v": 0x0B,
    "f": 0x0C,
    "a": 0x07,
    "b": 0x08,
    '"': 0x22,
    "\\": 0x5C,
    "'": 0x27,
}


@dataclass(frozen=True, slots=True)
class Fd:
    """A file descriptor argument; `path` is what `-y` printed (None for a bare number)."""

    number: str
    path: str | None


@dataclass(frozen=True, slots=True)
class CString:
    text: str
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class Call:
    pid: int
    name: str
    args: tuple
    result: int | None
    errno: str | None
    result_path: str | None
    child_pid: int | None  # a clone's child, translated to strace's pid namespace
    seq: int = 0  # position in the trace: the order calls ended in

    @property
    def ok(self) -> bool:
        return self.errno is None and self.result is not None and self.result >= 0


def unescape(text: str) -> str:
    """Decode strace's C escapes (`\\x41`, `\\101`, `\\n`, ...) into a str of the raw bytes."""
    out = bytearray()
    i, size = 0, len(text)
    while i < size:
        char = text[i]
        if char != "\\" or i + 1 >= size:
            out += char.encode("utf-8", "surrogateescape")
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "x":
            out.append(int(text[i + 2 : i + 4], 16))
            i += 4
        elif nxt in "01234567":
            j = i + 1
            while j < size and j < i + 4 and text[j] in "01234567":
                j += 1
            out.append(int(text[i + 1 : j], 8) & 0xFF)
            i = j
        else:
            out.append(_SIMPLE_ESCAPES.get(nxt, ord(nxt)))
            i += 2
    return out.decode("utf-8", "surrogateescape")


class _Reader:
    """A tiny recursive-descent reader of strace's argument syntax."""

    def __init__(self, text: str):
        self.text = text
        self.i = 0

    def values(self, closer: str) -> list:
        items = []
        self.skip()
        while self.i < len(self.text) and self.text[self.i] != closer:
            items.append(self.value(closer))
            self.skip()
            if self.text.startswith(",", self.i):
                self.i += 1
                self.skip()
        self.i += 1
        return items

    def skip(self) -> None:
        text = self.text
        while True:
            while self.i < len(text) and text[self.i] == " ":
                self.i += 1
            if text.startswith("/*", self.i):
                end = text.find("*/", self.i)
                self.i = len(text) if end < 0 else end + 2
                continue
            return

    def value(self, closer: str):
        char = self.text[self.i]
        if char == '"':
            return self.string()
        if char == "[":
            self.i += 1
            return self.values("]")
        if char == "{":
            start = self.i
            self.i += 1
            self.values("}")
            return self.text[start : self.i]
        return self.atom(closer)

    def string(self) -> CString:
        text, start = self.text, self.i + 1
        i = start
        while text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        raw = text[start:i]
        i += 1
        truncated = text.startswith("...", i)
        if truncated:
            i += 3
        self.i = i
        return CString(unescape(raw), truncated)

    def atom(self, closer: str):
        text, start, depth = self.text, self.i, 0
        i = start
        while i < len(text):
            char = text[i]
            if char == '"':
                i += 1
                while text[i] != '"':
                    i += 2 if text[i] == "\\" else 1
            elif char == "<":
                i += 1
                while text[i] != ">":
                    i += 2 if text[i] == "\\" else 1
            elif char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif char == "," and depth == 0:
                break
            i += 1
        self.i = i
        word = text[start:i].strip()
        fd = re.fullmatch(r"(AT_FDCWD|-?\d+)<((?:[^>\\]|\\.)*)>", word, re.DOTALL)
        if fd:
            return Fd(fd.group(1), unescape(fd.group(2)))
        return word


def _last_result(body: str) -> re.Match | None:
    # A string argument may itself contain ") = 0": the result is the last one that fits.
    for at in reversed([m.start() for m in _RESULT_START.finditer(body)]):
        match = _RESULT.match(body, at)
        if match:
            return match
    return None


def _parse(pid: int, body: str, seq: int) -> Call | None:
    paren = body.find("(")
    if paren <= 0 or not re.fullmatch(r"\w+", body[:paren]):
        return None
    name = body[:paren]
    result = _last_result(body)
    if result is None:
        return None
    reader = _Reader(body[paren + 1 : result.start() + 1])
    try:
        args = tuple(reader.values(")"))
    except (IndexError, ValueError):
        return None
    value = result.group("value")
    number = None if value == "?" else int(value, 0)
    fd_path = result.group("fd")
    host = result.group("host")
    child = None
    if name in ("clone", "clone3", "fork", "vfork") and number is not None and number > 0:
        child = int(host) if host else number
    return Call(
        pid=pid,
        name=name,
        args=args,
        result=number,
        errno=result.group("errno"),
        result_path=unescape(fd_path[1:-1]) if fd_path else None,
        child_pid=child,
        seq=seq,
    )


def read_calls(lines: Iterable[str]) -> Iterator[Call]:
    """Every completed call of a trace, in the order strace printed its end."""
    pending: dict[int, str] = {}
    seq = 0
    for line in lines:
        line = line.rstrip("\n")
        match = _LINE.match(line)
        if not match:
            continue
        pid, body = int(match.group(1)), match.group(2)
        if body.endswith(_UNFINISHED):
            pending[pid] = body[: -len(_UNFINISHED)]
            continue
        resumed = _RESUMED.match(body)
        if resumed:
            start = pending.pop(pid, None)
            if start is None:
                continue
            body = start + resumed.group(2)
        call = _parse(pid, body, seq)
        seq += 1
        if call is not None:
            yield call
