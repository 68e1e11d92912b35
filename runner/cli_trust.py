"""The trust step each agent CLI asks of its user before it reads a project's configuration,
taken by `agent_setup --trust` for the user who asks for it: what the CLI's own prompt
would write, and nothing more.

- Codex CLI reads a project's `.codex/` only in a trusted project, and runs a hook only once
  that hook is trusted; otherwise every call runs unchecked. Codex itself is asked to write
  both (`codex app-server`: `config/batchWrite`, the call its `/hooks` screen makes), for
  this project and fluidbox's hook only (other hooks of the project stay as they were), and
  then to list the hook again: it counts as trusted only when Codex says so.
- Gemini CLI reads a project's `.gemini/settings.json` only in a trusted folder: the folder
  goes into its `trustedFolders.json` as `TRUST_FOLDER`, as its trust dialog writes it.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any


class TrustNotTaken(Exception):
    """The CLI's trust step could not be taken; the message says why and what to do."""


# --- Codex CLI ----------------------------------------------------------------------------

APP_SERVER_TIMEOUT_SECONDS = 30


class CodexAppServer:
    """`codex app-server`: JSON-RPC over its stdin and stdout, one JSON message a line."""

    def __init__(self, codex: str, env: dict[str, str] | None = None) -> None:
        try:
            self.process = subprocess.Popen(
                [codex, "app-server"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
        except OSError as error:
            raise TrustNotTaken(f"cannot start {codex} app-server: {error}") from None
        self.messages: queue.Queue[dict | None] = queue.Queue()
        self.last_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict):
                self.messages.put(message)
        self.messages.put(None)

    def _send(self, message: dict) -> None:
        try:
            self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            self.process.stdin.flush()
        except OSError as error:
            raise TrustNotTaken(f"codex app-server stopped reading ({error})") from None

    def request(self, method: str, params: dict) -> dict:
        self.last_id += 1
        self._send({"id": self.last_id, "method": method, "params": params})
        deadline = time.monotonic() + APP_SERVER_TIMEOUT_SECONDS
        while True:
            try:
                message = self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TrustNotTaken(f"codex app-server did not answer {method}") from None
            if message is None:
                stderr = self.process.stderr.read()[-400:].strip()
                raise TrustNotTaken(f"codex app-server exited during {method}: {stderr}")
            if message.get("id") != self.last_id:
                continue  # a notification
            if "error" in message:
                raise TrustNotTaken(f"codex app-server refused {method}: {message['error']}")
            return message.get("result") or {}

    def notify(self, method: str, params: dict) -> None:
        self._send({"method": method, "params": params})

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            stream.close()

    def __enter__(self) -> CodexAppServer:
        try:
            self.request(
                "initialize", {"clientInfo": {"name": "fluidbox-agent-setup", "version": "1"}}
            )
            self.notify("initialized", {})
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def write_user_config(self, key_path: str, value: dict) -> str:
        """Merge `value` under `key_path` in the user's config.toml; the file's path."""
        result = self.request(
            "config/batchWrite",
            {
                "edits": [{"keyPath": key_path, "value": value, "mergeStrategy": "upsert"}],
                "filePath": None,
                "expectedVersion": None,
                "reloadUserConfig": True,
            },
        )
        if result.get("status") != "ok":
            raise TrustNotTaken(f"codex did not write {key_path}: {result}")
        return str(result.get("filePath"))

    def project_hooks(self, project: Path) -> list[dict[str, Any]]:
        listed = self.request("hooks/list", {"cwds": [str(project)]})
        hooks: list[dict[str, Any]] = []
        for entry in listed.get("data") or ():
            hooks.extend(entry.get("hooks") or ())
        return hooks


def codex_executable(given: str | None) -> str:
    found = shutil.which(given or "codex")
    if found is None:
        raise TrustNotTaken(
            f"no Codex CLI at {given!r}" if given else "no `codex` on PATH (name it with --codex)"
        )
    return found


def _fluidbox_hook(hooks: list[dict], hooks_file: Path, command: str) -> dict:
    ours = [
        hook
        for hook in hooks
        if hook.get("sourcePath") == str(hooks_file) and hook.get("command") == command
    ]
    if len(ours) != 1:
        raise TrustNotTaken(
            f"Codex lists {len(ours)} hooks with fluidbox's command in {hooks_file}, not one"
        )
    return ours[0]


def trust_codex(project: Path, command: str, codex: str | None = None) -> list[str]:
    """Trust `project` and fluidbox's `PreToolUse` hook in it (whose command is `command`) in
    the user's Codex configuration; what was trusted, a line each."""
    hooks_file = project / ".codex" / "hooks.json"
    with CodexAppServer(codex_executable(codex)) as server:
        config = server.write_user_config("projects", {str(project): {"trust_level": "trusted"}})
        hook = _fluidbox_hook(server.project_hooks(project), hooks_file, command)
        trusted = {hook["key"]: {"trusted_hash": hook["currentHash"]}}
        server.write_user_config("hooks.state", trusted)
        hook = _fluidbox_hook(server.project_hooks(project), hooks_file, command)
    if hook.get("trustStatus") != "trusted" or not hook.get("enabled", True):
        state = hook.get("trustStatus") if hook.get("enabled", True) else "disabled"
        raise TrustNotTaken(f"Codex still lists fluidbox's hook as {state} after trusting it")
    return [
        f"trusted in {config} (Codex wrote it):",
        f'  the project {project} (trust_level = "trusted")',
        f"  fluidbox's hook {hook['key']} ({hook['currentHash']})",
    ]


# --- Gemini CLI ---------------------------------------------------------------------------


def gemini_home() -> Path:
    """Gemini CLI's user folder: `.gemini` in its home (`$GEMINI_CLI_HOME`, else the user's)."""
    return Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini"


def gemini_trusted_folders_file() -> Path:
    """Where Gemini CLI keeps its folder trust (its own rule: a variable naming the file,
    else `trustedFolders.json` in its user folder)."""
    named = os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
    if named:
        return Path(named)
    return gemini_home() / "trustedFolders.json"


def trust_gemini(project: Path) -> list[str]:
    """Trust `project` in Gemini CLI's folder trust; what was trusted, a line."""
    path = gemini_trusted_folders_file()
    folders: dict[str, Any] = {}
    if path.exists():
        try:
            folders = json.loads(path.read_text())
        except ValueError:
            raise TrustNotTaken(
                f"{path} is not plain JSON (comments?); not touching it: add "
                f'"{project}": "TRUST_FOLDER" yourself'
            ) from None
        if not isinstance(folders, dict):
            raise TrustNotTaken(f"{path} is not a JSON object; not touching it")
    before = folders.get(str(project))
    folders[str(project)] = "TRUST_FOLDER"
    path.parent.mkdir(parents=True, exist_ok=True)
    written = path.with_name(path.name + ".fluidbox-new")
    written.write_text(json.dumps(folders, indent=2) + "\n")
    written.replace(path)
    was = f" (was {before})" if before not in (None, "TRUST_FOLDER") else ""
    return [f"trusted in {path}:", f"  the folder {project} (TRUST_FOLDER){was}"]
