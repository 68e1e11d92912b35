"""The cap on approvals waiting at once holds when an agent fires its asks together: the
gate counts them again where it records each approval, under the run's ledger lock, so
no burst of calls passes it together."""

import pytest

from governance.models import Approval, ApprovalStatus, ToolCall
from ledger.chain_checks import chain_verify
from tests.concurrency.conftest import fire_at_once
from tests.concurrency.test_approval_races import gate_body, new_run
from tests.support.servers import WebServer

pytestmark = [pytest.mark.slow]

CAP = 2
BURST = 12


def test_a_burst_of_asks_leaves_exactly_the_cap_waiting(tmp_path, transactional_db, operator):
    server = WebServer(tmp_path, workers=2, threads=32, FLUIDBOX_PENDING_APPROVALS_PER_RUN=str(CAP))
    server.start()
    try:
        run_id, token = new_run(operator)
        answers = fire_at_once(
            BURST,
            lambda client, index: client.post(
                f"{server.url}/v1/runs/{run_id}/permission",
                json=gate_body(f"burst-{index}", 0),
                headers={"Authorization": f"Bearer {token}"},
            ),
        )
    finally:
        server.stop()
    assert all(answer.status_code == 200 for answer in answers), [a.text for a in answers]
    decisions = sorted(answer.json()["decision"] for answer in answers)
    assert decisions == ["deny"] * (BURST - CAP) + ["pending"] * CAP
    denied = [a.json() for a in answers if a.json()["decision"] == "deny"]
    assert all(f"already has {CAP} approvals waiting for a human" in d["reason"] for d in denied)
    assert Approval.objects.filter(run_id=run_id, status=ApprovalStatus.PENDING).count() == CAP
    assert ToolCall.objects.filter(run_id=run_id, decision="deny").count() == BURST - CAP
    assert chain_verify(run_id) == []
