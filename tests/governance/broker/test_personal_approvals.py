"""A personal connection's calls are decided by their owner only: no admin, no superuser."""

import pytest

from governance.models import Approval
from governance.services.orgs import user_create
from ledger.models import Event
from tests.conftest import Api
from tests.governance.broker.support import call, personal_call_pending

pytestmark = pytest.mark.django_db


@pytest.fixture
def personal_pending(broker_org, operator, echo_server, member):
    return personal_call_pending(operator, echo_server, member)


@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_a_superuser_and_an_org_admin_are_refused(personal_pending, admin_user, org, decision):
    run_id, _, approval_id = personal_pending
    root = user_create(
        username="root", org=org, role="admin", password="pw-root-1", is_superuser=True
    )
    for person in (root, admin_user):
        response = Api(user=person).post(
            f"/v1/approvals/{approval_id}/decision", {"decision": decision}
        )
        assert response.status_code == 403
        listed = Api(user=person).get("/v1/approvals?status=pending").json()["approvals"]
        assert listed == []
    assert Approval.objects.get(pk=approval_id).status == "pending"
    assert not Event.objects.filter(run_id=run_id, type="approval.decided").exists()


def test_the_owner_decides_and_the_call_runs(personal_pending, member, echo_server):
    run_id, runner, approval_id = personal_pending
    owner = Api(user=member)
    assert [a["id"] for a in owner.get("/v1/approvals?status=pending").json()["approvals"]] == [
        approval_id
    ]
    response = owner.post(f"/v1/approvals/{approval_id}/decision", {"decision": "approve"})
    assert response.status_code == 200
    answer = call(runner, run_id, "mine.update", {"id": "1", "value": "x"})
    assert answer["decision"] == "allow"
    assert answer["result"]["isError"] is False
    assert [c["tool"] for c in echo_server.calls()] == ["update"]


def test_a_personal_key_of_another_member_is_refused(personal_pending, org):
    from governance.services.orgs import api_key_create

    _, _, approval_id = personal_pending
    other = user_create(username="otto", org=org, role="approver", password="pw-otto-1")
    key = api_key_create(org=org, user=other, name="otto").plaintext
    response = Api(key).post(f"/v1/approvals/{approval_id}/decision", {"decision": "approve"})
    assert response.status_code == 403
