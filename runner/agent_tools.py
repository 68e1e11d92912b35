"""What an agent CLI's built-in tool call is at the gate: tools of the `claude-code` bundle
(runner/bundles/claude-code.yaml) and the arguments an approver reads.

Three CLIs, three vocabularies, one set of gate tools. A tool not mapped here goes to the
gate under its own name, where the frozen-set stage denies it (fail closed). So does a tool of
an MCP server the CLI itself runs (`mcp__tracker__list_issues`): never as a connection's
brokered tool (`tracker.list_issues`), whose rules are for calls fluidbox's broker makes with
the sealed credential, not for another server that happens to share the name.

Path arguments are the real places they lead to (`runner.cli_paths`). One CLI call can be
several gate calls: a patch, one per file it changes; a Glob or Grep pattern that leaves its
directory, one more for the directory it reaches. The CLI call runs only if all are allowed.

A shell command is asked as the CLI runs it: in the project's folder as it is, elsewhere with
a `cd` to where it runs in front (`cd /proj/vendor/x && git status`). The CLIs run a command
in another folder without the command saying so (Claude Code keeps a `cd` from one call to
the next, Codex's `workdir`, Gemini's `dir_path`), and a command is not the same command
everywhere: `git status` inside a folder a repository shaped as a git directory runs that
folder's `core.fsmonitor`.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from runner.cli_paths import links_on_the_way, pattern_reaches, real_path
from runner.codex_patch import patch_targets, shell_patch


@dataclass(frozen=True)
class GateCall:
    tool: str
    arguments: dict[str, Any]


def _path(value: Any, cwd: str, *, home: bool = True) -> Any:
    # Not a path to resolve: the gate's schema or its rules refuse it as it came.
    if not isinstance(value, str) or not value:
        return value
    return real_path(value, cwd, home=home)


def _gemini_path(value: Any, cwd: str) -> Any:
    """Gemini CLI's tools resolve a path against the project as it is: no `~` expanded."""
    return _path(value, cwd, home=False)


def _searched(
    tool: str, base: Any, cwd: str, arguments: dict, pattern: Any, *, home: bool = True
) -> list[GateCall]:
    calls = [GateCall(tool, {"path": _path(base, cwd, home=home), **arguments})]
    if isinstance(pattern, str) and isinstance(calls[0].arguments["path"], str):
        for reach in pattern_reaches(pattern, calls[0].arguments["path"], cwd):
            calls.append(GateCall(tool, {"path": reach, **arguments}))
    return calls


def _shell(
    command: Any, cwd: str, root: str, directory: Any = None, *, home: bool = True
) -> GateCall:
    """`run_command` for a command the CLI runs in `cwd` (or `directory`, relative to it),
    with the links on disk its words lead through (`links_on_disk`), when there are any."""
    where = (
        real_path(directory, cwd, home=home) if isinstance(directory, str) and directory else cwd
    )
    where = real_path(where, "/")
    if not isinstance(command, str):
        return GateCall("run_command", {"command": command})
    arguments: dict[str, Any] = {"command": command}
    if where != real_path(root, "/"):
        arguments["command"] = f"cd {shlex.quote(where)} && {command}"
    links = links_on_the_way(command, where)
    if links:
        arguments["links_on_disk"] = {"cwd": where, "targets": links}
    return GateCall("run_command", arguments)


def _keep(source: dict, *keys: str) -> dict[str, Any]:
    return {key: source[key] for key in keys if source.get(key) is not None}


def _edit(item: dict) -> dict[str, Any]:
    edit = {"old_string": item.get("old_string", ""), "new_string": item.get("new_string", "")}
    if item.get("replace_all") is not None:
        edit["replace_all"] = bool(item["replace_all"])
    return edit


# What JavaScript's `String.prototype.trim` removes: its white space and line terminators,
# U+FEFF among them (Python's `str.strip()` keeps it, and strips U+001C-U+001F and U+0085,
# which JavaScript keeps).
_JS_TRIMMED = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def _trimmed(tool_input: dict) -> dict:
    """Claude Code trims a path argument before it expands it (`" ~"` is the home folder), and
    hands the hook Grep's and Glob's `path` as the model wrote it (F144); with U+FEFF in front,
    `/etc` is `/etc` to it."""
    return {
        key: value.strip(_JS_TRIMMED)
        if key in ("path", "file_path", "notebook_path") and isinstance(value, str)
        else value
        for key, value in tool_input.items()
    }


def claude_code_call(name: str, tool_input: dict, cwd: str, root: str) -> list[GateCall]:
    tool_input = _trimmed(tool_input)
    file_path = _path(tool_input.get("file_path", ""), cwd)
    if name == "Bash":
        return [_shell(tool_input.get("command", ""), cwd, root)]
    if name == "Read":
        return [GateCall("read_file", {"path": file_path})]
    if name == "Write":
        return [
            GateCall("write_file", {"path": file_path, "content": tool_input.get("content", "")})
        ]
    if name == "Edit":
        return [GateCall("write_file", {"path": file_path, "edits": [_edit(tool_input)]})]
    if name == "MultiEdit":
        edits = [_edit(item) for item in tool_input.get("edits") or [] if isinstance(item, dict)]
        return [GateCall("write_file", {"path": file_path, "edits": edits})]
    if name == "NotebookEdit":
        cell = _keep(tool_input, "cell_id", "new_source", "cell_type", "edit_mode")
        notebook = _path(tool_input.get("notebook_path", ""), cwd)
        return [GateCall("write_file", {"path": notebook, "cell": cell})]
    if name == "LS":
        return [GateCall("list_dir", {"path": _path(tool_input.get("path") or cwd, cwd)})]
    if name == "Glob":
        pattern = tool_input.get("pattern", "")
        base = tool_input.get("path") or cwd
        return _searched("find_files", base, cwd, {"pattern": pattern}, pattern)
    if name == "Grep":
        arguments = {"pattern": tool_input.get("pattern", ""), **_keep(tool_input, "glob")}
        base = tool_input.get("path") or cwd
        return _searched("search_text", base, cwd, arguments, tool_input.get("glob"))
    if name == "WebFetch":
        return [GateCall("fetch_url", {"url": tool_input.get("url", "")})]
    if name == "WebSearch":
        return [GateCall("web_search", {"query": tool_input.get("query", "")})]
    return [GateCall(name, tool_input)]


def _patch_writes(patch: str, cwd: str) -> list[GateCall]:
    # Each file the patch changes is a write of its own; the approver of any of them reads
    # the whole patch.
    paths = [path for target in patch_targets(patch) for path in _codex_paths(target, cwd)]
    return [GateCall("write_file", {"path": path, "content": patch}) for path in paths]


def _codex_paths(path: str, cwd: str) -> list[str]:
    """Where Codex may take `path`: whether its Rust code expands a `~` was not seen, so a
    `~/x` is asked both as the home folder's `x` and as the folder `~` of `cwd`."""
    return list(dict.fromkeys([real_path(path, cwd), real_path(path, cwd, home=False)]))


def codex_call(name: str, tool_input: dict, cwd: str, root: str) -> list[GateCall]:
    if name in ("Bash", "shell", "shell_command", "exec_command", "local_shell"):
        command = tool_input.get("command", tool_input.get("cmd", ""))
        parts = command if isinstance(command, list) else [command]
        if isinstance(command, list):
            command = shlex.join(str(part) for part in command)
        workdir = tool_input.get("workdir")
        # A `~` workdir is asked both ways (`_codex_paths`).
        homes = (True, False) if isinstance(workdir, str) and workdir.startswith("~") else (True,)
        calls: list[GateCall] = []
        for home in homes:
            where = (
                real_path(workdir, cwd, home=home) if isinstance(workdir, str) and workdir else cwd
            )
            # Codex applies `apply_patch <<'EOF' … EOF` itself instead of running it: its files
            # are asked about as an apply_patch call's are, besides the command.
            patch = shell_patch([str(part) for part in parts], where)
            writes = _patch_writes(patch.text, patch.folder) if patch else []
            shell = _shell(str(command), cwd, root, workdir, home=home)
            calls += [call for call in (shell, *writes) if call not in calls]
        return calls
    if name == "apply_patch":
        patch = tool_input.get("patch", tool_input.get("input", tool_input.get("command", "")))
        if isinstance(patch, list):
            patch = "\n".join(str(part) for part in patch)
        return _patch_writes(str(patch), cwd)
    return claude_code_call(name, tool_input, cwd, root)


# JavaScript's `\s`, which Gemini CLI splits a web_fetch prompt on, has U+FEFF besides what
# Python's `\s` has; splitting on more than it does asks about more, never less.
_PROMPT_SPACE = re.compile(r"[\s\ufeff]+")


def _gemini_fetched_urls(tool_input: dict) -> list[Any]:
    """Every URL Gemini CLI's `web_fetch` fetches: its `url` (when the CLI fetches directly)
    and each word of its `prompt` with a `://` (otherwise, up to 20 of them). The whole
    prompt asked as one URL would let `fetch_url:https://docs.python.org/*` carry a second
    URL along, anywhere."""
    urls: list[Any] = []
    if tool_input.get("url") is not None:
        urls.append(tool_input["url"])
    prompt = tool_input.get("prompt", "")
    if isinstance(prompt, str):
        for word in _PROMPT_SPACE.split(prompt):
            if "://" in word and word not in urls:
                urls.append(word)
    # Nothing the CLI would fetch: asked as it came (the CLI refuses such a call itself).
    if not urls:
        return [prompt]
    rewritten = [_github_raw(url) for url in urls if isinstance(url, str)]
    return urls + [url for url in rewritten if url and url not in urls]


def _github_raw(url: str) -> str | None:
    """Where Gemini CLI fetches a `github.com/…/blob/…` URL from (`convertGithubUrlToRaw`,
    after its checks): `raw.githubusercontent.com`, a host of its own. The URL is read as
    browsers do (`\\` a `/`, the host's case folded), so what the CLI rewrites is asked."""
    try:
        parts = urlsplit(url.replace("\\", "/"))
        host = (parts.hostname or "").lower()
    except ValueError:
        return None
    if host != "github.com" or "/blob/" not in parts.path:
        return None
    path = re.sub(r"^/([^/]+/[^/]+)/blob/", r"/\1/", parts.path)
    netloc = parts.netloc.rsplit("@", 1)
    netloc[-1] = netloc[-1].lower().replace("github.com", "raw.githubusercontent.com", 1)
    return urlunsplit(parts._replace(netloc="@".join(netloc), path=path))


# Gemini CLI's `stripShellWrapper`: `bash -c 'A' 'B'` runs `A' 'B` (first and last quote cut).
# Its `\s` and `trim()` are JavaScript's: U+FEFF is white space there, U+001C-U+001F and U+0085
# are not (Python's `\s` reads both the other way), so `bash -c 'A' 'B'` with U+FEFF after it
# still has its quotes cut.
_JS_SPACE = f"[{re.escape(_JS_TRIMMED)}]"
_JS_NON_SPACE = f"[^{re.escape(_JS_TRIMMED)}]"
_GEMINI_SHELL_WRAPPER = re.compile(
    r"^{s}*(?:(?:(?:{S}+/)?(?:sh|bash|zsh)){s}+-c|cmd\.exe{s}+/c"
    r"|powershell(?:\.exe)?{s}+(?:-NoProfile{s}+)?-Command"
    r"|pwsh(?:\.exe)?{s}+(?:-NoProfile{s}+)?-Command){s}+".replace("{s}", _JS_SPACE).replace(
        "{S}", _JS_NON_SPACE
    ),
    re.IGNORECASE,
)


def _gemini_commands(command: Any) -> list[Any]:
    """What Gemini CLI runs for `command`: it strips a leading `sh -c` (and the quotes around
    the rest, if any) and runs the rest itself, so `bash -c 'echo x' 'y; curl …'` runs `echo
    x' 'y; curl …`: the text it runs is the one asked (F144)."""
    if not isinstance(command, str):
        return [command]
    match = _GEMINI_SHELL_WRAPPER.match(command)
    if not match:
        return [command]
    rest = command[match.end() :].strip(_JS_TRIMMED)
    if len(rest) >= 2 and rest[0] == rest[-1] == "'":
        return [rest[1:-1]]
    if len(rest) >= 2 and rest[0] == rest[-1] == '"':
        return [rest[1:-1], rest]  # cut or not, as its shell-quote reading says: both asked
    return [rest]


def _gemini_paths(value: Any, cwd: str) -> list[Any]:
    """Where Gemini CLI's file tools open `file_path`: as written, or, when that does not
    exist, with a leading `@` (and the slashes after it) dropped (`resolveDefensiveToolPath`:
    `@.env` is `.env`) (F144)."""
    paths = [_gemini_path(value, cwd)]
    if isinstance(value, str) and value.startswith("@"):
        stripped = value[1:].lstrip("/")
        if stripped:
            paths.append(_gemini_path(stripped, cwd))
    return list(dict.fromkeys(paths))


# `replace` of a relative path that is not there edits the one file of that name found in the
# workspace (Gemini CLI's `correctPath`: a breadth-first search of up to 50 folders).
_GEMINI_SEARCHED_FOLDERS = 50


def _gemini_found_by_name(value: Any, cwd: str, root: str) -> list[str]:
    if not isinstance(value, str) or not value or value.startswith(("/", "@", "~")):
        return []
    if os.path.lexists(os.path.join(cwd, value)):
        return []
    name, found, folders = os.path.basename(value), [], [root]
    for folder in itertools.islice(_growing(folders), _GEMINI_SEARCHED_FOLDERS):
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.path)
            elif entry.name == name:
                found.append(_gemini_path(entry.path, cwd))
    return found


def _growing(items: list) -> Iterator:
    """Each item of a list, those appended while it is walked too (a breadth-first walk)."""
    index = 0
    while index < len(items):
        yield items[index]
        index += 1


def gemini_cli_call(name: str, tool_input: dict, cwd: str, root: str) -> list[GateCall]:
    file_paths = _gemini_paths(tool_input.get("file_path", ""), cwd)
    if name == "run_shell_command":
        directory = tool_input.get("dir_path")
        commands = _gemini_commands(tool_input.get("command", ""))
        return [_shell(command, cwd, root, directory, home=False) for command in commands]
    if name == "read_file":
        return [GateCall("read_file", {"path": path}) for path in file_paths]
    if name == "write_file":
        content = tool_input.get("content", "")
        return [GateCall("write_file", {"path": path, "content": content}) for path in file_paths]
    if name == "replace":
        edit = {
            "old_string": tool_input.get("old_string", ""),
            "new_string": tool_input.get("new_string", ""),
        }
        # Every occurrence, not one: the approver reads it as Claude Code's `replace_all`.
        if tool_input.get("allow_multiple") is not None:
            edit["replace_all"] = bool(tool_input["allow_multiple"])
        found = _gemini_found_by_name(tool_input.get("file_path"), cwd, root)
        paths = list(dict.fromkeys([*file_paths, *found]))
        return [GateCall("write_file", {"path": path, "edits": [edit]}) for path in paths]
    if name == "list_directory":
        path = _gemini_path(tool_input.get("dir_path") or cwd, cwd)
        return [GateCall("list_dir", {"path": path})]
    if name == "glob":
        pattern = tool_input.get("pattern", "")
        base = tool_input.get("dir_path") or cwd
        return _searched("find_files", base, cwd, {"pattern": pattern}, pattern, home=False)
    if name == "grep_search":
        arguments = {"pattern": tool_input.get("pattern", "")}
        # `include_pattern` since Gemini CLI 0.61, `include` before.
        include = tool_input.get("include_pattern") or tool_input.get("include")
        if include:
            arguments["glob"] = include
        base = tool_input.get("dir_path") or cwd
        return _searched("search_text", base, cwd, arguments, include, home=False)
    if name == "web_fetch":
        return [GateCall("fetch_url", {"url": url}) for url in _gemini_fetched_urls(tool_input)]
    if name == "google_web_search":
        return [GateCall("web_search", {"query": tool_input.get("query", "")})]
    return [GateCall(name, tool_input)]


DIALECTS = {"claude-code": claude_code_call, "codex": codex_call, "gemini-cli": gemini_cli_call}
