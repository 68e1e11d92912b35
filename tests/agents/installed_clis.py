"""Where the pinned agent CLIs are installed (`.ci/run` puts them in the user's cache), or
where a variable says they are."""

import os
from pathlib import Path

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def installed(name: str, version: str, command: str, variable: str) -> Path:
    named = os.environ.get(variable)
    if named:
        return Path(named)
    return CACHE / "fluidbox" / f"{name}-{version}" / "node_modules" / ".bin" / command


CLAUDE_CODE_VERSION = "2.1.328"
CODEX_VERSION = "0.171.0"
GEMINI_CLI_VERSION = "0.61.0"
CLAUDE_CODE = installed("claude-code", CLAUDE_CODE_VERSION, "claude", "FLUIDBOX_CLAUDE_CODE")
CODEX = installed("codex", CODEX_VERSION, "codex", "FLUIDBOX_CODEX")
GEMINI_CLI = installed("gemini-cli", GEMINI_CLI_VERSION, "gemini", "FLUIDBOX_GEMINI_CLI")
