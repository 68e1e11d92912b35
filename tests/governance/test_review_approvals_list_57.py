"""The approvals list shows what waits first, then the latest decisions.

`GET /v1/approvals` gave at most 500 approvals, the soonest-expiring first, decided ones
included: an organization with 500 approvals behind it saw only long-decided ones, and never
a call waiting for it now; `?status=denied` gave the 500 oldest denials, never this week's.
"""

import pytest

from tests.conftest import Api
from tests.governance.gate.test_pipeline import ask

pytestmark = pytest.mark.django_db


@pytest.fixture
def four_asks(make_run, approver):
    """Four calls asked in turn, the first approved and the second denied."""
    run_id, runner = make_run()
    ids = [
        ask(runner, run_id, "send_email", {"to": f"{n}@b.c"}, call_id=f"c-{n}")["approval"]["id"]
        for n in range(1, 5)
    ]
    person = Api(user=approver)
    for approval_id, decision in zip(ids, ["approve", "deny"], strict=False):
        decided = person.post(f"/v1/approvals/{approval_id}/decision", {"decision": decision})
        assert decided.status_code == 200, decided.content
    return person, ids


def listed(person, query=""):
    response = person.get(f"/v1/approvals{query}")
    assert response.status_code == 200, response.content
    return [approval["id"] for approval in response.json()["approvals"]]


def test_the_list_puts_the_waiting_first_then_the_latest_decided(four_asks):
    person, (first, second, third, fourth) = four_asks

    assert listed(person) == [third, fourth, second, first]
    assert listed(person, "?status=pending") == [third, fourth]  # the soonest to expire first
    assert listed(person, "?status=approved") == [first]
    assert listed(person, "?status=denied") == [second]
