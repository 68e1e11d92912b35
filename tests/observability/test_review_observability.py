"""Attacks on what fluidbox logs and counts: text another party sends back must not forge
log lines, and values an agent controls must not add metric series."""

import logging
import secrets

import httpx
import pytest

from ledger.log_models import Publication
from ledger.publishing import publications_attempt_due
from tests.conftest import run_body
from tests.ledger.support import checkpoint_now
from tests.ledger.test_publishing import witness  # noqa: F401 - the fixture
from tests.support.servers import WebServer

pytestmark = pytest.mark.django_db

FORGED = (
    "busy\r\n2026-12-04 12:00:00,000 INFO ledger.publishing published checkpoint to every "
    "witness\x1b[2K\x1b[1A"
)


@pytest.fixture
def hostile_witness(witness):  # noqa: F811 - the fixture imported above
    witness.add_checkpoint = lambda body: (500, "text/plain", FORGED)
    return witness


def test_a_witness_answer_cannot_forge_a_log_line_or_a_terminal_escape(
    org, hostile_witness, caplog
):
    checkpoint = checkpoint_now(org)
    with caplog.at_level(logging.WARNING, logger="ledger.publishing"):
        assert publications_attempt_due() == 1
    logged = [
        record.getMessage() for record in caplog.records if record.name == "ledger.publishing"
    ]
    assert len(logged) == 1
    for control in ("\n", "\r", "\x1b"):
        assert control not in logged[0]
    assert "500: busy" in logged[0]  # what the witness said is still there, escaped
    stored = Publication.objects.get(checkpoint=checkpoint).last_error
    assert stored.startswith("500: busy") and "\x1b" not in stored and "\n" not in stored


METRICS_TOKEN = "metrics-review-token"


def series(text: str) -> set[str]:
    """Each sample's name and labels (the value left off)."""
    return {line.rpartition(" ")[0] for line in text.splitlines() if line and line[0] != "#"}


def agent_traffic(server, run_id: str, token: str, marker: str) -> None:
    """One of each thing an agent chooses, every value carrying `marker`."""
    runner = {"Authorization": f"Bearer {token}"}
    base = f"{server.url}/v1/runs/{run_id}"
    for tool in ("read_file", f"tool-{marker}", f"crm.{marker}"):
        httpx.post(
            f"{base}/permission",
            json={
                "session_id": f"session-{marker}",
                "tool_call_id": f"call-{tool}-{marker}",
                "tool": tool,
                "arguments": {"path": f"/workspace/{marker}"},
            },
            headers=runner,
        )
    httpx.post(
        f"{base}/tools/crm.{marker}/call",
        json={"session_id": marker, "tool_call_id": f"b-{marker}", "arguments": {}},
        headers=runner,
    )
    httpx.request(marker.upper(), f"{base}/permission", headers=runner)
    httpx.get(f"{server.url}/v1/{marker}", headers=runner)
    httpx.post(
        f"{server.url}/v1/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": f"tools/{marker}", "params": {}},
        headers={
            **runner,
            "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": marker,
        },
    )


def test_values_an_agent_chooses_add_no_metric_series(transactional_db, tmp_path, operator):
    created = operator.post("/v1/runs", run_body()).json()
    run_id, token = created["id"], created["session_token"]
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    env = {"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir), "FLUIDBOX_METRICS_TOKEN": METRICS_TOKEN}
    with WebServer(tmp_path, workers=1, threads=4, **env) as server:

        def scrape() -> str:
            answer = httpx.get(
                f"{server.url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
            )
            assert answer.status_code == 200
            return answer.text

        agent_traffic(server, run_id, token, "warmup")
        scrape()  # the scrape counts itself too: from the second one on, it adds nothing
        before = series(scrape())
        markers = [f"m{n}x{secrets.token_hex(4)}" for n in range(20)]
        for marker in markers:
            agent_traffic(server, run_id, token, marker)
        text = scrape()
    assert series(text) == before
    assert not any(marker in text or marker.upper() in text for marker in markers)
    assert token not in text
