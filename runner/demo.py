"""`make demo`: a scripted agent session through the runner, against a serving fluidbox.

No model is involved: the script plays the agent. It creates a supervised run (the
`sandbox-basic` bundle and the `tracker` connection that `manage.py seed_demo` sets up), then
makes its calls through `GatedToolbox` exactly as an agent loop would, printing each gate
decision as it arrives. Every step states the decision it expects from the seeded policy
(`governance/demo/policy.yaml`); any other decision makes the demo exit non-zero.

One call needs a human. By default nobody has to be there: the demo prints the approval's
inbox link, pauses so you can watch it, then the demo approver (alice, with the personal
key `seed_demo` wrote) approves it through the API. `--wait-for-human` waits for a person to
decide in the inbox instead. At the end it verifies the run's hash chain with
`manage.py ledger verify RUN_ID` and prints the result.

    python -m runner.demo --url http://127.0.0.1:8000 [--operator-key KEY]
        [--wait-for-human [--approval-timeout S]] [--approver-key KEY] [--approver-pause S]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import httpx

from runner.adapters import GatedToolbox
from runner.client import GateClient
from runner.confinement import Workspace
from runner.errors import GateError
from runner.executor import Executor
from runner.tools import ToolResult, ToolRunner

REPO_ROOT = Path(__file__).resolve().parents[1]
OPERATOR_KEY_FILE = "demo-operator-key.txt"
APPROVER_KEY_FILE = "demo-approver-key.txt"
ANY_HUMAN_DECISION = ("allow", "deny")  # whatever the approver chooses is the right answer

# What the agent finds in its workspace.
WORKSPACE_FILES = {
    "README.md": (
        "# payments-web\n\nThe customer portal. `src/login.py` holds the login flow.\n"
        "Known issue: logins on slow links time out after 30 s.\n"
    ),
    "src/login.py": (
        "LOGIN_TIMEOUT_SECONDS = 30\n\n\ndef login(user, password):\n"
        '    """Authenticate against the identity service."""\n'
        "    raise NotImplementedError\n"
    ),
    "build/app.bundle.js": "/* build output */\n",
}


@dataclass(frozen=True)
class Step:
    """One call of the scripted agent and the gate decision the seeded policy must give it."""

    intent: str
    tool: str
    arguments: dict[str, Any]
    expect: tuple[str, ...]
    expect_source: str
    waits_for_approval: bool = False


SCRIPT: tuple[Step, ...] = (
    Step("Look around the workspace", "list_dir", {"path": "."}, ("allow",), "policy"),
    Step("Read the README", "read_file", {"path": "README.md"}, ("allow",), "policy"),
    Step("List files in detail", "run_command", {"command": "ls -la"}, ("allow",), "policy"),
    Step("Check the tracker (brokered read)", "tracker.list_issues", {}, ("allow",), "policy"),
    Step(
        "Open issue 1, with the wrong argument name",
        "tracker.get_issue",
        {"id": 1},
        ("deny",),
        "schema",
    ),
    Step(
        "Open issue 1 again, corrected after reading the schema error",
        "tracker.get_issue",
        {"issue_id": 1},
        ("allow",),
        "policy",
    ),
    Step(
        "Write triage notes",
        "write_file",
        {
            "path": "notes/triage.md",
            "content": "# Login timeout\n\nLOGIN_TIMEOUT_SECONDS is 30 in src/login.py; "
            "raise it to 60 and add a retry.\n",
        },
        ("allow",),
        "policy",
    ),
    Step(
        "Read the notes back",
        "run_command",
        {"command": "cat /workspace/notes/triage.md"},
        ("allow",),
        "policy",
    ),
    Step("Clean the build output", "run_command", {"command": "rm -rf build"}, ("deny",), "policy"),
    Step(
        "Try to sneak a delete behind an allowed command",
        "run_command",
        {"command": "ls -la; rm -rf /"},
        ("deny",),
        "policy",
    ),
    Step(
        "Open a follow-up issue (a write: needs a human)",
        "tracker.create_issue",
        {
            "title": "Raise the login timeout to 60 s",
            # The run id makes each demo's call its own: an "Approve & Remember" given to an
            # earlier demo (an exact-match rule) must not pre-approve this one.
            "body": "Slow links hit the 30 s limit in src/login.py (found by run {run}).",
        },
        ANY_HUMAN_DECISION,
        "approval",
        waits_for_approval=True,
    ),
)


@dataclass(frozen=True)
class StepOutcome:
    step: Step
    result: ToolResult

    @property
    def decision(self) -> str | None:
        return self.result.decision.decision if self.result.decision else None

    @property
    def source(self) -> str | None:
        return self.result.decision.source if self.result.decision else None

    @property
    def as_expected(self) -> bool:
        if self.decision not in self.step.expect or self.source != self.step.expect_source:
            return False
        # An allowed call must also have run: a refusal after the gate is not what was expected.
        return self.result.is_error == (self.decision != "allow")


@dataclass(frozen=True)
class ChainCheck:
    """What `manage.py ledger verify RUN_ID` said; `verified` is None when it could not run."""

    verified: bool | None
    text: str


@dataclass
class DemoReport:
    run_id: str
    base_url: str
    outcomes: list[StepOutcome] = field(default_factory=list)
    approval_ids: list[str] = field(default_factory=list)
    chain: ChainCheck | None = None

    @property
    def ok(self) -> bool:
        decided = len(self.outcomes) == len(SCRIPT) and all(o.as_expected for o in self.outcomes)
        return decided and (self.chain is None or self.chain.verified is not False)

    @property
    def timeline_url(self) -> str:
        return f"{self.base_url}/admin/governance/run/{self.run_id}/change/"

    @property
    def events_url(self) -> str:
        return f"{self.base_url}/v1/runs/{self.run_id}/events"


class DemoSetupError(Exception):
    """The demo could not start: no server, no operator key, or no seeded demo data."""


@dataclass(frozen=True)
class DemoApprover:
    """Stands in for the human: approves through the API after a pause you can watch."""

    key: str
    pause: float = 5.0

    def approve(self, base_url: str, approval_id: str) -> dict[str, Any]:
        try:
            response = httpx.post(
                f"{base_url}/v1/approvals/{approval_id}/decision",
                json={"decision": "approve"},
                headers={"Authorization": f"Bearer {self.key}"},
                timeout=30,
            )
        except httpx.TransportError as error:
            raise DemoSetupError(f"the demo approver could not reach fluidbox ({error})") from None
        if response.status_code != 200:
            raise DemoSetupError(
                f"the demo approver's decision was refused (HTTP {response.status_code}): "
                f"{response.text[:300]}\nIs its key alice's personal key from `seed_demo`?"
            )
        return response.json()["approval"]


def verify_chain_with_manage_py(run_id: str) -> ChainCheck:
    """The ledger's own verifier, on the database `make run` serves from this checkout."""
    manage = REPO_ROOT / "manage.py"
    if not manage.is_file():
        return ChainCheck(None, f"not checked here: run `manage.py ledger verify {run_id}`")
    result = subprocess.run(
        [sys.executable, str(manage), "ledger", "verify", run_id],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    text = (result.stdout + result.stderr).strip() or f"exit code {result.returncode}"
    if result.returncode == 0:
        return ChainCheck(True, text)
    if "break(s) found" in text:
        return ChainCheck(False, text)
    # Not a verdict on the chain: most often this checkout's manage.py reads another database
    # than the server's (the second terminal without the server's DATABASE_URL).
    last = text.splitlines()[-1]
    return ChainCheck(
        None,
        f"not checked: {last}; run `manage.py ledger verify {run_id}` with the server's "
        "DATABASE_URL",
    )


def approval_url(base_url: str, approval_id: str) -> str:
    return f"{base_url}/admin/inbox/{approval_id}/"


def create_run(base_url: str, operator_key: str, *, agent: str = "demo-agent") -> dict[str, Any]:
    """`POST /v1/runs` as the operator: a supervised run with the demo bundle and connection."""
    body = {
        "agent": agent,
        "policy": "default",
        "autonomy": "supervised",
        "source": {"kind": "manual"},
        "budget_tokens": 200_000,
        "bundles": ["sandbox-basic"],
        "connections": ["tracker"],
    }
    try:
        response = httpx.post(
            f"{base_url}/v1/runs",
            json=body,
            headers={"Authorization": f"Bearer {operator_key}"},
            timeout=30,
        )
    except httpx.TransportError as error:
        raise DemoSetupError(
            f"fluidbox is not reachable at {base_url} ({error}); is `make run` serving?"
        ) from None
    if response.status_code != 201:
        raise DemoSetupError(
            f"creating the run failed (HTTP {response.status_code}): {response.text[:500]}\n"
            "The demo needs the data `manage.py seed_demo` creates (`make run` seeds it) and "
            "the demo MCP server photographed."
        )
    return response.json()


def seed_workspace(root: Path) -> None:
    for relative, text in WORKSPACE_FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def run_demo(
    base_url: str,
    operator_key: str,
    *,
    approver: DemoApprover | None,
    approval_timeout: float | None = None,
    out: TextIO | None = None,
    workspace_root: Path | None = None,
    verify_chain: Callable[[str], ChainCheck] | None = verify_chain_with_manage_py,
) -> DemoReport:
    """Run the script against `base_url`; the report says whether every decision matched
    and the run's chain verified. `approver=None` waits for a person to decide, up to
    `approval_timeout` seconds (None: until the approval expires)."""
    base_url = base_url.rstrip("/")
    with tempfile.TemporaryDirectory(prefix="fluidbox-demo-") as scratch:
        root = workspace_root or Path(scratch)
        seed_workspace(root)
        run = create_run(base_url, operator_key)
        report = DemoReport(run_id=run["id"], base_url=base_url)
        say = _printer(out or sys.stdout)
        say(
            f"run {run['id']}: {run['autonomy']}, trust tier {run['trust_tier']}, "
            f"policy {run['policy']} v{run['policy_version']}, "
            f"tools: {', '.join(tool['name'] for tool in run['tools'])}"
        )
        say(f"workspace {root} (the agent sees it as /workspace)\n")
        workspace = Workspace(root)
        with GateClient(base_url, run["id"], run["session_token"]) as client:
            executor = Executor(workspace)
            session_id = f"demo-{uuid.uuid4().hex[:12]}"
            # Ordinary calls never wait: a call that unexpectedly needs a human is reported
            # at once. The approval step re-asks with the same ids and waits, bounded.
            prompt = GatedToolbox(
                ToolRunner(client, workspace, executor, total_wait=0), session_id=session_id
            )
            patient = GatedToolbox(
                ToolRunner(client, workspace, executor, total_wait=approval_timeout),
                session_id=session_id,
            )
            for number, step in enumerate(SCRIPT, start=1):
                say(f"{number:>2}. {step.intent}")
                arguments = _filled(step.arguments, run_id=report.run_id)
                say(f"    {step.tool} {json.dumps(arguments)}")
                call_id = f"call-{number}-{uuid.uuid4().hex[:8]}"
                result = prompt.call(step.tool, arguments, tool_call_id=call_id)
                if step.waits_for_approval and result.decision and result.decision.pending:
                    approval_id = str((result.decision.approval or {}).get("id"))
                    report.approval_ids.append(approval_id)
                    say(f"    -> pending   {_rule_text(result)}")
                    say(f"       approve or deny it at {approval_url(base_url, approval_id)}")
                    if approver is None:
                        limit = (
                            "until it expires"
                            if approval_timeout is None
                            else f"up to {approval_timeout:.0f} s"
                        )
                        say(f"       waiting {limit} for a human …")
                    else:
                        say(
                            f"       the demo approver approves it in {approver.pause:g} s "
                            "(`make demo WAIT_FOR_HUMAN=1` to decide yourself) …"
                        )
                        time.sleep(approver.pause)
                        decided = approver.approve(base_url, approval_id)
                        say(f"       approved by {decided['decided_by']} through the API")
                    result = patient.call(step.tool, arguments, tool_call_id=call_id)
                outcome = StepOutcome(step, result)
                report.outcomes.append(outcome)
                _print_outcome(say, outcome)
            try:
                client.finish()
            except GateError as error:
                say(f"note: the run could not be finished: {error}")
        matched = sum(1 for outcome in report.outcomes if outcome.as_expected)
        say(f"{matched} of {len(SCRIPT)} decisions as the script expects")
        say(f"timeline: {report.timeline_url}")
        say(f"events:   {report.events_url}  (operator key or auditor)")
        if verify_chain is not None:
            report.chain = verify_chain(report.run_id)
            verdict = {True: "verified", False: "BROKEN", None: "unverified"}
            say(f"chain:    {verdict[report.chain.verified]}: {report.chain.text}")
        return report


def _filled(arguments: dict[str, Any], *, run_id: str) -> dict[str, Any]:
    return {
        name: value.replace("{run}", run_id) if isinstance(value, str) else value
        for name, value in arguments.items()
    }


def _printer(out: TextIO) -> Callable[[str], None]:
    def say(line: str) -> None:
        print(line, file=out, flush=True)

    return say


def _rule_text(result: ToolResult) -> str:
    decision = result.decision
    if decision is None or not decision.rule:
        return "rule: none"
    return f"rule: {decision.rule.get('pattern')} ({decision.rule.get('action')})"


def _print_outcome(say: Callable[[str], None], outcome: StepOutcome) -> None:
    step = outcome.step
    decision = outcome.decision or "error"
    if outcome.as_expected:
        mark = "ok"
    elif decision == "pending":
        mark = "UNEXPECTED: nobody decided within the wait; the call did not run"
    else:
        expected = " or ".join(step.expect)
        mark = f"UNEXPECTED: the script expects {expected} from {step.expect_source}"
    say(
        f"    -> {decision:<8} source: {outcome.source or '-'}  {_rule_text(outcome.result)}  "
        f"[{mark}]"
    )
    label = "tool error" if outcome.result.is_error else "result"
    lines = outcome.result.text.splitlines() or [""]
    say(f"       {label}: {lines[0][:160]}")
    for line in lines[1:4]:
        say(f"         {line[:160]}")
    if len(lines) > 4:
        say(f"         … ({len(lines) - 4} more lines)")
    say("")


def operator_key_from(argument: str | None) -> str:
    """`--operator-key`, else `FLUIDBOX_OPERATOR_KEY`, else the key `seed_demo` wrote."""
    if argument:
        return argument
    if os.environ.get("FLUIDBOX_OPERATOR_KEY"):
        return os.environ["FLUIDBOX_OPERATOR_KEY"]
    data_dir = Path(os.environ.get("FLUIDBOX_DATA_DIR") or REPO_ROOT / "var")
    key_file = data_dir / OPERATOR_KEY_FILE
    if key_file.is_file():
        return key_file.read_text().strip()
    raise DemoSetupError(
        f"no operator key: pass --operator-key, set FLUIDBOX_OPERATOR_KEY, or run `make run` "
        f"(its seed writes {key_file})"
    )


def approver_key_from(argument: str | None) -> str:
    """`--approver-key`, else `FLUIDBOX_APPROVER_KEY`, else alice's key `seed_demo` wrote."""
    if argument:
        return argument
    if os.environ.get("FLUIDBOX_APPROVER_KEY"):
        return os.environ["FLUIDBOX_APPROVER_KEY"]
    data_dir = Path(os.environ.get("FLUIDBOX_DATA_DIR") or REPO_ROOT / "var")
    key_file = data_dir / APPROVER_KEY_FILE
    if key_file.is_file():
        return key_file.read_text().strip()
    raise DemoSetupError(
        f"no key for the demo approver: pass --approver-key (an approver's personal key), "
        f"set FLUIDBOX_APPROVER_KEY, run `manage.py seed_demo` (it writes {key_file}), or "
        "decide yourself with --wait-for-human"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m runner.demo", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the fluidbox server")
    parser.add_argument("--operator-key", help="an operator API key of the demo org")
    parser.add_argument(
        "--wait-for-human",
        action="store_true",
        help="a person decides the approval step in the inbox (default: the demo approver)",
    )
    parser.add_argument(
        "--approval-timeout",
        type=float,
        help="with --wait-for-human: seconds to wait (default: until the approval expires)",
    )
    parser.add_argument("--approver-key", help="the demo approver's personal API key")
    parser.add_argument(
        "--approver-pause",
        type=float,
        default=5.0,
        help="seconds the demo approver waits before approving, to watch it (default 5)",
    )
    options = parser.parse_args(argv)
    if options.approval_timeout is not None and options.approval_timeout <= 0:
        parser.error("--approval-timeout must be positive")
    if options.approval_timeout is not None and not options.wait_for_human:
        parser.error("--approval-timeout goes with --wait-for-human")
    if options.approver_pause < 0:
        parser.error("--approver-pause cannot be negative")
    try:
        approver = (
            None
            if options.wait_for_human
            else DemoApprover(approver_key_from(options.approver_key), options.approver_pause)
        )
        report = run_demo(
            options.url,
            operator_key_from(options.operator_key),
            approver=approver,
            approval_timeout=options.approval_timeout,
        )
    except DemoSetupError as error:
        print(f"demo: {error}", file=sys.stderr)
        return 2
    except GateError as error:  # e.g. the run was finished from elsewhere mid-session
        print(f"demo: stopped: {error}", file=sys.stderr)
        return 1
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
