"""The pre-tool hook of agent CLIs: every built-in tool call asks fluidbox's gate first.

    python -m runner.hook claude-code --url URL --run RUN_ID     (token: $FLUIDBOX_RUN_TOKEN)

Reads the CLI's hook JSON on stdin, asks `POST /v1/runs/{id}/permission` (waiting while a
human decides), and prints the CLI's answer. It never answers a local "ask" and never
"allow"s what fluidbox did not allow: unreachable, a void token, a crash, or a call still
waiting when --max-wait runs out all deny, with a reason the model reads. --max-wait bounds
the whole decision, every request and retry included, so the CLI (whose hook timeout is
longer) always gets the answer.

Calls of tools fluidbox's own MCP server lists for the run (`mcp__<server>__<listed name>`)
are left to that endpoint, which gates them itself under the same tool-call id: deciding
them here too would record the call twice.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shlex
import signal
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.agent_tools import DIALECTS, GateCall
from runner.cli_paths import UnresolvablePath
from runner.codex_patch import UnreadablePatch
from runner.deadline import Deadline
from runner.decisions import GateDecision
from runner.errors import GateAuthError, GateDeadlinePassed, GateError, GateUnavailable

if TYPE_CHECKING:
    from runner.cli_started_commands import WhatTheCliStarts
    from runner.client import GateClient

TOKEN_ENV = "FLUIDBOX_RUN_TOKEN"
RUN_ENV = "FLUIDBOX_RUN_ID"
DEFAULT_MAX_WAIT = 290.0
# The requests keep to the deadline themselves; the alarm catches what does not (a server
# trickling bytes, a stuck file system), well before the CLI's hook timeout.
_ALARM_GRACE_SECONDS = 5.0
_CONFIG_CHANGE_SECONDS = 30.0


class HookOutOfTime(Exception):
    """The hook's alarm rang: the decision took longer than --max-wait allows."""


def _ring(signum: int, frame: object) -> None:
    raise HookOutOfTime("no decision within --max-wait")


def _answer_by_the_deadline_at_the_latest(seconds: float) -> None:
    """Arm (or with 0, disarm) an alarm that interrupts whatever the hook is doing."""
    if hasattr(signal, "setitimer"):
        signal.signal(signal.SIGALRM, _ring)
        signal.setitimer(signal.ITIMER_REAL, seconds)


class Verdict:
    def __init__(self, allow: bool, reason: str) -> None:
        self.allow = allow
        self.reason = reason


def _answer(dialect: str, verdict: Verdict) -> dict[str, Any]:
    if dialect == "gemini-cli":
        return {"decision": "allow" if verdict.allow else "deny", "reason": verdict.reason}
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow" if verdict.allow else "deny",
            "permissionDecisionReason": verdict.reason,
        }
    }


def _own_mcp_tool(
    dialect: str, event: dict, server: str, endpoint: str, listed: Callable[[], frozenset[str]]
) -> bool:
    """A call of a tool fluidbox's endpoint lists for this run, under that server's name."""
    if dialect == "gemini-cli":
        context = event.get("mcp_context") or {}
        if not isinstance(context, dict) or context.get("server_name") != server:
            return False
        # Gemini CLI also says where that server is (what it leaves unset comes as null): one
        # of fluidbox's name at another address (a settings file that outranks the project's,
        # or one rewritten during the run), or one it runs or dials itself, is not the
        # endpoint and gates nothing.
        from runner.mcp_shadows import is_the_endpoint

        where = {key: value for key, value in context.items() if value is not None}
        if not is_the_endpoint(where, endpoint):
            return False
        tool = context.get("tool_name")
    else:
        name = str(event.get("tool_name", ""))
        prefix = f"mcp__{server}__"
        if not name.startswith(prefix):
            return False
        tool = name[len(prefix) :]
    if not isinstance(tool, str) or not tool:
        return False
    try:
        return tool in listed()
    except Exception:  # no listing, no deferring: the gate decides (and fails closed)
        return False


def _shadowed(dialect: str, event: dict, server: str, url: str) -> bool:
    """Whether another configured MCP server could take a call named as fluidbox's own tool
    (`fluidbox__tracker` for `mcp__fluidbox__tracker__list_issues`): then the call is no
    longer left to the endpoint, and goes to the gate under its own name."""
    from runner.mcp_shadows import mcp_endpoint, shadowing_servers

    project = Path(_project_folder(dialect, str(event.get("cwd") or os.getcwd())))
    return bool(shadowing_servers(dialect, project, server, mcp_endpoint(url)))


def _settings_against_the_hook(
    dialect: str, event: dict, server: str, url: str, run_id: str, known: tuple[str, ...] | None
) -> tuple[list[str], WhatTheCliStarts | None]:
    """What agent_setup refuses to set up beside (a setting that turns hooks off, another
    hook before the tool, the run's token sent to another server), or a command the CLI would
    start by itself that was not there at setup (a `SessionStart` hook, a status line, a
    local MCP server), appeared since: written during the run by something the policy
    allowed (a patch, an archive), the CLI runs it at its next start, unchecked. This
    session still asks (Claude Code asks the hook before it applies a changed file, and is
    refused: `_config_change`), and stops. Also what the CLI starts by itself, read once for
    `_writes_a_file_the_cli_runs` (None when a settings file cannot be read: that is listed)."""
    from runner.cli_started_commands import not_known, what_the_cli_starts
    from runner.mcp_shadows import mcp_endpoint
    from runner.setup_hazards import HookHazard, setup_hazards

    project = Path(_project_folder(dialect, str(event.get("cwd") or os.getcwd())))
    ours = _our_commands(dialect, url, run_id, server, known)

    def is_ours(command: str) -> bool:
        return _as_run(command) in ours

    hazards = setup_hazards(
        dialect,
        project,
        server,
        mcp_endpoint(url),
        shadows=False,
        is_ours=is_ours,
        expect_our_hook=known is not None,
    )
    try:
        started = what_the_cli_starts(dialect, project, is_ours, _session_folder(dialect, event))
    except HookHazard as error:
        return [*hazards, str(error)], None
    return hazards + not_known(started, known or ()), started


def _session_folder(dialect: str, event: dict) -> Path | None:
    """Where Claude Code runs its hooks now: the session's folder, which follows a `cd`
    (2.1.328), so `sh tools/post.sh` may name another folder's file than at setup."""
    cwd = event.get("cwd")
    return Path(cwd) if dialect == "claude-code" and isinstance(cwd, str) and cwd else None


def _writes_a_file_the_cli_runs(calls: list[GateCall], started: WhatTheCliStarts) -> str | None:
    """A write through the CLI's own file tools to a file a command it starts by itself names
    (`sh tools/post.sh` as a `PostToolUse` hook), there yet or not, or to a hard link of one:
    the CLI would run what was written right after, outside any call fluidbox decides. A
    shell command's write is seen at the next call (`_settings_against_the_hook`)."""
    written = [
        Path(call.arguments["path"])
        for call in calls
        if call.tool == "write_file" and isinstance(call.arguments.get("path"), str)
    ]
    if not written:
        return None
    targets = {_file_identity(path) for path in written}
    real_targets = [os.path.realpath(path) for path in written]
    for file in started.named:
        if _file_identity(file.path) in targets or (
            file.pattern
            and any(fnmatch.fnmatchcase(target, str(file.path)) for target in real_targets)
        ):
            return (
                f"fluidbox: {file.path} is the file {file.word} that {file.named_by.where} of "
                f"{file.named_by.path} names: the CLI runs it by itself, outside any call "
                "fluidbox decides, so the agent may not write it (change it outside the "
                "session and run agent_setup again); denied"
            )
    return None


def _file_identity(path: Path) -> tuple:
    """A file as the file system knows it (a hard link is the same file), or its real path
    while it is not there."""
    try:
        stat = path.stat()
    except OSError:
        return ("path", os.path.realpath(path))
    return ("file", stat.st_dev, stat.st_ino)


def _our_commands(
    dialect: str, url: str, run_id: str, server: str, known: tuple[str, ...] | None
) -> set[tuple[str, ...]]:
    """The command lines agent_setup writes for this hook (with the run, or reading it from
    the environment), as `_as_run` reads them: another entry that only mentions
    `runner.hook` (a comment would do) is someone else's hook."""
    from runner.agent_setup import hook_command

    return {_as_run(hook_command(dialect, url, run, server, known or ())) for run in (run_id, None)}


def _as_run(command: str) -> tuple[str, ...]:
    """A hook command's words, its program as the file it is (a link to the interpreter is
    the interpreter)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return ()
    if not words:
        return ()
    return (os.path.realpath(words[0]), *words[1:])


def _listed_by_endpoint(url: str, token: str, deadline: Deadline) -> frozenset[str]:
    # The MCP SDK takes a second to import: only calls named like fluidbox's own tools pay it.
    from runner.mcp_listing import mcp_tool_names

    return mcp_tool_names(url, token, deadline)


def _gate_calls(dialect: str, event: dict) -> list[GateCall]:
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict):
        tool_input = {}
    cwd = str(event.get("cwd") or os.getcwd())
    name = str(event.get("tool_name") or "")
    if dialect == "gemini-cli":
        context = event.get("mcp_context")
        if isinstance(context, dict) and context.get("server_name") and context.get("tool_name"):
            # As Claude Code and Codex name an MCP tool: never a connection's brokered tool.
            name = f"mcp__{context['server_name']}__{context['tool_name']}"
            return [GateCall(name, tool_input)]
    return DIALECTS[dialect](name, tool_input, cwd, _project_folder(dialect, cwd))


def _project_folder(dialect: str, cwd: str) -> str:
    """The folder the CLI's session works in, whatever folder a command runs in: Claude Code
    names it (`cwd` follows a `cd`), Codex starts its hooks there (`cwd` is a call's
    `workdir`), Gemini CLI's `cwd` is it (a command's `dir_path` is apart)."""
    if dialect == "claude-code":
        return os.environ.get("CLAUDE_PROJECT_DIR") or cwd
    if dialect == "codex":
        return os.getcwd()
    return cwd


def _ask_all(
    gate: GateClient, session_id: str, ids: list[str], calls: list[GateCall], deadline: Deadline
) -> list[GateDecision]:
    """The decisions, up to the first one that is not an allow.

    Every call is asked once before any is waited on, so an approver sees them all at once.
    """
    decisions: list[GateDecision] = []
    for tool_call_id, call in zip(ids, calls, strict=True):
        decisions.append(
            gate.ask(session_id, tool_call_id, call.tool, call.arguments, total_wait=0)
        )
        if not decisions[-1].allowed and not decisions[-1].pending:
            return decisions
    for index, decision in enumerate(decisions):
        if decision.pending:
            call = calls[index]
            decisions[index] = gate.ask(
                session_id, ids[index], call.tool, call.arguments, total_wait=deadline.left()
            )
            if not decisions[index].allowed:
                return decisions[: index + 1]
    return decisions


def _verdict(calls: list[GateCall], decisions: list[GateDecision], url: str) -> Verdict:
    several = len(calls) > 1
    last, call = decisions[-1], calls[len(decisions) - 1]
    target = f" for {call.arguments.get('path', call.arguments.get('url'))}" if several else ""
    if last.allowed:
        if several:
            return Verdict(True, f"fluidbox allowed {call.tool} for all {len(calls)} targets")
        rule = last.rule_action
        return Verdict(True, f"fluidbox allowed {call.tool}" + (f" ({rule})" if rule else ""))
    if last.pending:
        approval = last.approval or {}
        link = f"{url.rstrip('/')}/admin/inbox/{approval.get('id')}/"
        return Verdict(
            False,
            f"fluidbox: {call.tool}{target} still awaits a human's approval ({link}); "
            "it did not run. Try again later.",
        )
    return Verdict(False, last.as_tool_error() + (f" (asked{target})" if several else ""))


def decide(
    event: dict,
    *,
    dialect: str,
    url: str,
    run_id: str,
    token: str | None,
    mcp_server: str,
    deadline: Deadline,
    known_commands: tuple[str, ...] | None = None,
) -> Verdict:
    if not token:
        return Verdict(False, f"fluidbox: no run token (${TOKEN_ENV} is not set); denied")
    changed, started = _settings_against_the_hook(
        dialect, event, mcp_server, url, run_id, known_commands
    )
    if changed or started is None:
        return Verdict(
            False,
            f"{_not_there_at_setup(changed)}: every call is denied while it is (the next "
            "session would run it unchecked); remove it, or run agent_setup again if it is "
            "yours; denied",
        )
    from runner.mcp_shadows import mcp_endpoint

    if _own_mcp_tool(
        dialect,
        event,
        mcp_server,
        mcp_endpoint(url),
        lambda: _listed_by_endpoint(url, token, deadline),
    ) and not _shadowed(dialect, event, mcp_server, url):
        return Verdict(True, "fluidbox's MCP endpoint gates this call itself")
    try:
        calls = _gate_calls(dialect, event)
    except (UnresolvablePath, UnreadablePatch) as error:
        return Verdict(False, f"fluidbox: {error}; denied")
    started_by_itself = _writes_a_file_the_cli_runs(calls, started)
    if started_by_itself:
        return Verdict(False, started_by_itself)
    session_id = str(event.get("session_id") or "agent-cli")[:200]
    tool_call_id = str(event.get("tool_use_id") or f"hook-{uuid.uuid4().hex}")[:190]
    ids = (
        [tool_call_id]
        if len(calls) == 1
        else [f"{tool_call_id}#{number}" for number in range(1, len(calls) + 1)]
    )
    from runner.client import GateClient  # after main() set httpx's command line aside

    try:
        with GateClient(
            url, run_id, token, retries=2, timeout=10, deadline=deadline, trust_env=False
        ) as gate:
            decisions = _ask_all(gate, session_id, ids, calls, deadline)
    except GateAuthError as error:
        return Verdict(False, f"fluidbox refused this run's token ({error}); denied")
    except GateDeadlinePassed as error:
        return Verdict(False, f"fluidbox did not answer in time ({error}); denied")
    except GateUnavailable as error:
        return Verdict(False, f"fluidbox is unreachable ({error}); denied")
    except GateError as error:
        return Verdict(False, f"fluidbox could not decide ({error}); denied")
    return _verdict(calls, decisions, url)


def _config_change(args: argparse.Namespace, event: dict, known: tuple[str, ...] | None) -> int:
    """Claude Code asks before it applies a settings file changed during the session: a
    change that brings what every call would be denied for (`disableAllHooks`, another
    pre-tool hook, a command the CLI starts by itself …) is refused, exit 2, the reason on
    stderr. The hook stays in place, and the next call is denied, naming it."""
    changed, _ = _settings_against_the_hook(
        args.dialect, event, args.mcp_server, args.url or "", args.run or "", known
    )
    if not changed:
        return 0
    sys.stderr.write(f"{_not_there_at_setup(changed)}: this change is not applied\n")
    return 2


def _not_there_at_setup(changed: list[str]) -> str:
    return f"fluidbox: {changed[0]}. It was not there when fluidbox was set up"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m runner.hook", description=__doc__.split("\n")[0]
    )
    parser.add_argument("dialect", choices=sorted(DIALECTS))
    parser.add_argument("--url", default=os.environ.get("FLUIDBOX_URL"))
    parser.add_argument("--run", default=os.environ.get(RUN_ENV))
    parser.add_argument("--mcp-server", default=os.environ.get("FLUIDBOX_MCP_SERVER", "fluidbox"))
    parser.add_argument("--max-wait", type=float, default=DEFAULT_MAX_WAIT)
    parser.add_argument(
        "--known-commands",
        help="the fingerprints of the commands the CLI starts by itself that agent_setup "
        "found; given, the hook also expects its own entry in the CLI's settings",
    )
    args = parser.parse_args(argv)
    # Started once per tool call: httpx imports its own command line (rich, click) whenever
    # those are installed, a third of the hook's start-up, and the hook never uses it; httpx
    # reads a missing one as not installed (bench/hook_startup.py).
    sys.modules.setdefault("httpx._main", None)
    known = None
    if args.known_commands is not None:
        known = tuple(filter(None, args.known_commands.split(",")))
    deadline = Deadline(args.max_wait)
    event: object = None
    try:
        _answer_by_the_deadline_at_the_latest(args.max_wait + _ALARM_GRACE_SECONDS)
        event = json.loads(sys.stdin.read() or "{}")
        if not isinstance(event, dict):
            raise ValueError("the hook input is not a JSON object")
        if event.get("hook_event_name") == "ConfigChange":
            # Well within the CLI's timeout for it (agent_setup), after which it applies
            # the change.
            _answer_by_the_deadline_at_the_latest(_CONFIG_CHANGE_SECONDS)
            return _config_change(args, event, known)
        if not args.url:
            verdict = Verdict(False, "fluidbox: the hook has no --url (nor $FLUIDBOX_URL); denied")
        elif not args.run:
            verdict = Verdict(
                False, f"fluidbox: no run id (${RUN_ENV} is not set, and no --run); denied"
            )
        else:
            verdict = decide(
                event,
                dialect=args.dialect,
                url=args.url,
                run_id=args.run,
                token=os.environ.get(TOKEN_ENV),
                mcp_server=args.mcp_server,
                deadline=deadline,
                known_commands=known,
            )
    except Exception as error:  # whatever broke, the call does not run
        if isinstance(event, dict) and event.get("hook_event_name") == "ConfigChange":
            sys.stderr.write(f"fluidbox hook failed ({type(error).__name__}: {error})\n")
            return 2  # nor is the change applied
        verdict = Verdict(False, f"fluidbox hook failed ({type(error).__name__}: {error}); denied")
    finally:
        _answer_by_the_deadline_at_the_latest(0)
    sys.stdout.write(json.dumps(_answer(args.dialect, verdict)) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
