"""Every example in README.md, run against a live fluidbox as `make run` serves it.

The convention the README follows is in tests/readme/README.md.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.agents.installed_clis import CLAUDE_CODE, CODEX, GEMINI_CLI
from tests.mcp_servers.fixtures import demo_tracker_process
from tests.readme.examples import (
    PROVIDED,
    Block,
    captured,
    json_mismatches,
    read_blocks,
    text_mismatches,
)
from tests.support.servers import BIN, ROOT, WebServer, child_environment

pytestmark = pytest.mark.long

README = ROOT / "README.md"
BLOCKS = read_blocks(README)
SEED_DEMO_TOKEN = "demo-token"  # the credential seed_demo gives the tracker connection
# Commands a `no-run` block may hold: servers, the whole suite, interactive agent CLIs.
NOT_RUN = {"make", "claude", "codex", "gemini", "export", "cd"}
# What a `needs=` block may name: the pinned agent CLIs, put first on PATH for it.
AGENT_CLIS = {"claude": CLAUDE_CODE, "codex": CODEX, "gemini": GEMINI_CLI}
# What an illustration may not hold: a command line of curl or manage.py, or a policy.
COMMAND_OR_POLICY = re.compile(r"^\s*(curl\b|(\S*python\S*\s+)?manage\.py\b|rules:)", re.M)


def test_every_fenced_block_of_the_readme_is_a_kind_the_test_knows():
    problems = []
    for block in BLOCKS:
        kind = block.kind
        if kind is None:
            problems.append(f"{block.where}: ```{block.language} is no kind of example")
        elif kind == "run" and re.search(r"\bcurl\b|manage\.py", block.text) and not block.output:
            problems.append(f"{block.where}: a curl or manage.py example needs its output")
        elif block.has("needs") and block.attributes["needs"] not in AGENT_CLIS:
            problems.append(f"{block.where}: needs= names none of {sorted(AGENT_CLIS)}")
        elif kind == "no-run" and not all(
            line.split()[0] in NOT_RUN for line in _commands(block.text)
        ):
            problems.append(f"{block.where}: no-run is only for make targets and agent CLIs")
        elif kind == "file" and not any(
            earlier.runnable for earlier in BLOCKS[: BLOCKS.index(block)]
        ):
            problems.append(f"{block.where}: no earlier example writes {block.attributes['file']}")
        elif kind == "illustration" and COMMAND_OR_POLICY.search(block.text):
            problems.append(f"{block.where}: an illustration may not hold a command or a policy")
        elif kind == "as" and not any(
            later.runnable and block.attributes["as"] in later.text
            for later in BLOCKS[BLOCKS.index(block) + 1 :]
        ):
            problems.append(f"{block.where}: no later example uses {block.attributes['as']}")
        elif kind == "env":
            exported = re.findall(r"^export (\w+)=", block.text, re.M)
            problems += [
                f"{block.where}: the test does not provide {name}"
                for name in exported
                if name not in PROVIDED
            ]
        elif kind == "quote":
            source = ROOT / block.attributes["quote"]
            if not source.is_file() or block.text not in source.read_text(encoding="utf-8"):
                problems.append(f"{block.where}: not a verbatim excerpt of {source}")
    exported = {
        name
        for block in BLOCKS
        if block.kind == "env"
        for name in re.findall(r"^export (\w+)=", block.text, re.M)
    }
    # The converse: what every example gets, a reader is told to set.
    problems += [
        f"no ```sh env block tells readers to set {name}"
        for name in PROVIDED
        if name not in exported
    ]
    assert problems == [], "see tests/readme/README.md\n" + "\n".join(problems)


def _commands(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


@pytest.fixture
def live_demo(transactional_db, tmp_path):
    """What `make run` serves: the demo tracker, the seeded demo, gunicorn; and the keys."""
    data_dir = tmp_path / "var"
    tracker = demo_tracker_process(
        {"PATH": os.environ.get("PATH", ""), "DEMO_TRACKER_EXPECTED_TOKEN": SEED_DEMO_TOKEN},
        tmp_path / "demo-mcp.log",
    )
    tracker.start()
    try:
        env = child_environment(FLUIDBOX_DATA_DIR=str(data_dir))
        tracker_url = f"http://127.0.0.1:{tracker.port}/mcp"
        seeded = subprocess.run(
            [str(BIN / "python"), "manage.py", "seed_demo", "--mcp-url", tracker_url],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert seeded.returncode == 0 and "photographed" in seeded.stdout, seeded.stderr
        metrics_token = "readme-metrics-token"
        with WebServer(
            tmp_path,
            workers=1,
            threads=16,
            FLUIDBOX_DATA_DIR=str(data_dir),
            FLUIDBOX_METRICS_TOKEN=metrics_token,
        ) as web:
            yield {
                "FLUIDBOX_DEVELOPMENT": "1",
                "FLUIDBOX_URL": web.url,
                "FLUIDBOX_METRICS_TOKEN": metrics_token,
                "FLUIDBOX_KEY": (data_dir / "demo-operator-key.txt").read_text().strip(),
                "APPROVER_KEY": (data_dir / "demo-approver-key.txt").read_text().strip(),
                "TRACKER_URL": tracker_url,
                "FLUIDBOX_DATA_DIR": str(data_dir),
            }
    finally:
        tracker.stop()


@pytest.mark.slow
# Every example in turn against one live server: at load average 8 on two cores the whole
# took over the suite's 300 s (stop 58's CI), each example well within its own wait.
@pytest.mark.timeout(900)
def test_every_readme_example_gives_its_documented_output(live_demo, tmp_path):
    # A checkout as a user has one: the repository's files (linked), and room for new ones.
    scratch = tmp_path / "checkout"
    scratch.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in (".git", "var", "test-artifacts"):
            (scratch / entry.name).symlink_to(entry)
    (scratch / ".venv").unlink(missing_ok=True)
    (scratch / ".venv").symlink_to(BIN.parent)
    variables = dict(live_demo, HOME=str(scratch))
    ran: list[str] = []
    for block in BLOCKS:
        if block.has("as"):
            (scratch / block.attributes["as"]).write_text(block.text, encoding="utf-8")
        if block.has("file"):
            written = scratch / block.attributes["file"]
            assert written.is_file(), f"{block.where}: no example wrote {written}"
            problems = _compare(block, written.read_text(encoding="utf-8"))
            assert problems == [], f"{block.where}: {written}\n" + "\n".join(problems)
        if not block.runnable:
            continue
        needs = block.attributes.get("needs")
        if needs and not AGENT_CLIS[needs].exists():
            continue  # .ci/run installs it; tests/agents skip without it too
        result = _run(block, scratch, variables)
        context = f"{block.where}\n{block.text}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        assert result.returncode == int(block.attributes.get("exit") or 0), context
        if block.output is not None:
            problems = _compare(block.output, result.stdout)
            assert problems == [], context + "\n" + "\n".join(problems)
        if block.has("sets"):
            variables.update(captured(result.stdout, block.attributes["sets"]))
        ran.append(block.text)
    # What a newcomer needs to call the API without reading the schema (issue 13, item 11).
    for needed in (
        '/v1/runs"',
        "/permission",
        "/v1/approvals?status=pending",
        "/decision",
        "/tools/tracker.create_issue/call",
        "/budget/reservations",
        "/events?",
        "/evaluate",
        "/v1/schema.json",
        "manage.py ledger verify",
        "manage.py policy test",
    ):
        assert any(needed in text for text in ran), f"no README example runs {needed}"


def _run(block: Block, scratch: Path, variables: dict[str, str]) -> subprocess.CompletedProcess:
    env = child_environment(**variables)
    if block.has("needs"):
        env["PATH"] = f"{AGENT_CLIS[block.attributes['needs']].parent}:{env['PATH']}"
    if block.language == "sh":
        command = ["bash", "-euo", "pipefail", "-c", block.text]
    else:
        command = [str(BIN / "python"), "-c", block.text]
    return subprocess.run(
        command, cwd=scratch, env=env, capture_output=True, text=True, timeout=300
    )


def _compare(output: Block, printed: str) -> list[str]:
    if output.language == "json":
        try:
            actual = json.loads(printed)
        except ValueError:
            return [f"printed no JSON: {printed[:500]!r}"]
        return json_mismatches(json.loads(output.text), actual)
    return text_mismatches(output.text, printed)
