"""MCP tool names for frozen brokered tools: `<connection>__<tool>`, valid for model APIs.

A frozen brokered tool is named `<slug>.<tool>` (SPEC §1); model APIs accept only
`^[a-zA-Z0-9_-]{1,64}$`. The connection separator `.` becomes `__`, any other character
outside `[A-Za-z0-9_-]` becomes `_x<hex>_` (a `.` inside the tool's own name is `_x2e_`).
A name longer than 64 characters, or one that two tools of the run would share, is cut to
55 characters and ends `_<8 hex of sha256(frozen name)>`. An upstream may name a tool exactly
like another tool's cut name (`…_<8 hex>`), and two cut names may meet: a cut name that
would equal any other name of the run is cut again with the hash of `<frozen name>#<n>`
(n = 1, 2, …) until it is the only one, the run's tools taken in the order of their frozen
names. Readable names are never moved aside, so no readable name ever equals another tool's
cut one, and the same frozen names give the same MCP names every time. Decoding never
guesses: it looks the name up in the run's own listing.
"""

import hashlib
import re

MODEL_API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_LENGTH = 64
_KEEP = re.compile(r"[A-Za-z0-9_-]")
_HASHED_PREFIX = MAX_LENGTH - 9


def _escape(text: str) -> str:
    return "".join(char if _KEEP.fullmatch(char) else f"_x{ord(char):x}_" for char in text)


def readable_name(frozen_name: str) -> str:
    """The name before length and collision handling: `tracker.create_issue` →
    `tracker__create_issue`."""
    slug, dot, tool = frozen_name.partition(".")
    if not dot:
        return _escape(frozen_name)
    return f"{_escape(slug)}__{_escape(tool)}"


# An escaped character, the separator, or any other character, read left to right.
_READABLE_TOKEN = re.compile(r"_x([0-9a-f]{1,6})_|(__)|(.)", re.DOTALL)


def readable_guess(mcp_name: str) -> str | None:
    """The frozen name `mcp_name` would be if it is a readable one (`readable_name`
    undone), or None. A guess, for reading the tool ahead: only the run's own listing says
    which tool a name stands for (`catalog.frozen_name_for`)."""
    if not MODEL_API_NAME.match(mcp_name):  # no name the run lists
        return None
    slug: str | None = None
    read: list[str] = []
    for token in _READABLE_TOKEN.finditer(mcp_name):
        escaped, separator, other = token.groups()
        if escaped is not None:
            code = int(escaped, 16)
            # No frozen name holds these, and a database would refuse them as text.
            if code == 0 or 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                return None
            read.append(chr(code))
        elif separator is not None and slug is None:
            slug, read = "".join(read), []
        else:
            read.append(separator or other)
    return None if slug is None else f"{slug}.{''.join(read)}"


def hashed_name(frozen_name: str, attempt: int = 0) -> str:
    """The cut name; `attempt` n > 0 hashes `<frozen name>#<n>` instead (see above)."""
    hashed = frozen_name if attempt == 0 else f"{frozen_name}#{attempt}"
    digest = hashlib.sha256(hashed.encode("utf-8")).hexdigest()[:8]
    return f"{readable_name(frozen_name)[:_HASHED_PREFIX]}_{digest}"


def mcp_names(frozen_names: list[str]) -> dict[str, str]:
    """frozen name → MCP name for one run's tools; distinct and model-API-valid."""
    readable = {name: readable_name(name) for name in sorted(set(frozen_names))}
    counts: dict[str, int] = {}
    for name in readable.values():
        counts[name] = counts.get(name, 0) + 1
    cut = [f for f, name in readable.items() if len(name) > MAX_LENGTH or counts[name] > 1]
    names = {f: name for f, name in readable.items() if f not in cut}
    # A cut name may copy neither a readable name nor another cut one.
    taken = set(readable.values())
    for frozen in cut:
        attempt = 0
        while (name := hashed_name(frozen, attempt)) in taken:
            attempt += 1
        taken.add(name)
        names[frozen] = name
    return names
