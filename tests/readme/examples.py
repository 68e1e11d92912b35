"""The README's fenced blocks, read as the examples they are (see tests/readme/README.md)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ANY = "…"
RUNNABLE = ("sh", "python")
PROVIDED = (
    "FLUIDBOX_DEVELOPMENT",
    "FLUIDBOX_URL",
    "FLUIDBOX_KEY",
    "APPROVER_KEY",
    "FLUIDBOX_METRICS_TOKEN",
    "TRACKER_URL",
)
_FENCE = re.compile(r"^( {0,3})(`{3,})(.*)$")  # indented inside list items, too


@dataclass
class Block:
    language: str
    attributes: dict[str, str]
    text: str
    line: int
    heading: str
    output: Block | None = field(default=None, repr=False)

    @property
    def where(self) -> str:
        return f"README.md line {self.line} (under “{self.heading}”)"

    def has(self, name: str) -> bool:
        return name in self.attributes

    @property
    def runnable(self) -> bool:
        return self.language in RUNNABLE and not (
            self.has("env") or self.has("no-run") or self.has("quote") or self.has("illustration")
        )

    @property
    def kind(self) -> str | None:
        """Which kind of tests/readme/README.md this block is; None if none."""
        for name in ("output", "file", "as", "env", "no-run", "quote", "illustration"):
            if self.has(name):
                return name
        return "run" if self.language in RUNNABLE else None


def read_blocks(path: Path) -> list[Block]:
    blocks: list[Block] = []
    heading = ""
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        fence = _FENCE.match(line)
        if fence:
            indent, ticks, info = fence.groups()
            words = info.split()
            start = index + 1
            body = []
            index += 1
            while index < len(lines) and lines[index].strip() != ticks:
                line = lines[index]
                body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
                index += 1
            blocks.append(
                Block(
                    language=words[0] if words else "",
                    attributes=dict(_attribute(word) for word in words[1:]),
                    text="\n".join(body) + "\n",
                    line=start,
                    heading=heading,
                )
            )
        index += 1
    last_runnable = None
    for block in blocks:
        if block.runnable:
            last_runnable = block
        elif block.has("output") and last_runnable is not None and last_runnable.output is None:
            last_runnable.output = block
    return blocks


def _attribute(word: str) -> tuple[str, str]:
    name, _, value = word.partition("=")
    return name, value


def captured(output: str, spec: str) -> dict[str, str]:
    """`sets=NAME:path,…`: the values at those dotted paths of the JSON the block printed."""
    data = json.loads(output)
    values = {}
    for item in spec.split(","):
        name, _, path = item.partition(":")
        value: Any = data
        for part in path.split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
        values[name] = str(value)
    return values


def json_mismatches(documented: Any, actual: Any, where: str = "$") -> list[str]:
    """How `actual` differs from the documented value (tests/readme/README.md, matching)."""
    if documented == ANY:
        return []
    if isinstance(documented, str) and ANY in documented:
        if isinstance(actual, str) and _pattern(documented).fullmatch(actual):
            return []
        return [f"{where}: {actual!r} does not match {documented!r}"]
    if isinstance(documented, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {actual!r}"]
        open_ended = documented.get(ANY) == ANY
        expected = {key for key in documented if key != ANY}
        problems = [f"{where}: missing key {key!r}" for key in sorted(expected - set(actual))]
        if not open_ended:
            extra = sorted(set(actual) - expected)
            problems += [f"{where}: undocumented key {key!r}" for key in extra]
        for key in sorted(expected & set(actual)):
            problems += json_mismatches(documented[key], actual[key], f"{where}.{key}")
        return problems
    if isinstance(documented, list):
        if not isinstance(actual, list):
            return [f"{where}: expected a list, got {actual!r}"]
        prefix = documented[:-1] if documented and documented[-1] == ANY else documented
        if len(actual) < len(prefix) or (prefix is documented and len(actual) != len(prefix)):
            return [f"{where}: {len(actual)} items, documented {len(documented)}"]
        problems = []
        for index, item in enumerate(prefix):
            problems += json_mismatches(item, actual[index], f"{where}[{index}]")
        return problems
    if documented != actual or type(documented) is not type(actual):
        return [f"{where}: {actual!r} is not the documented {documented!r}"]
    return []


def text_mismatches(documented: str, actual: str) -> list[str]:
    expected = [line.rstrip() for line in documented.rstrip("\n").splitlines()]
    got = [line.rstrip() for line in actual.rstrip("\n").splitlines()]
    if _lines_match(expected, got):
        return []
    return ["printed:\n" + "\n".join(got) + "\n\ndocumented:\n" + "\n".join(expected)]


def _lines_match(expected: list[str], got: list[str]) -> bool:
    if not expected:
        return not got
    head, rest = expected[0], expected[1:]
    if head == ANY:
        return any(_lines_match(rest, got[skip:]) for skip in range(len(got) + 1))
    if not got:
        return False
    line_matches = _pattern(head).fullmatch(got[0]) if ANY in head else head == got[0]
    return bool(line_matches) and _lines_match(rest, got[1:])


def _pattern(documented: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in documented.split(ANY)), re.DOTALL)
