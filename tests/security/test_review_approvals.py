"""The approver's view, attacked: an agent that writes the call an approver remembers and the
text a notification quotes, and a remembered rule racing an admin's policy change."""

import threading

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from governance.models import Approval, Policy, RunGrant
from governance.services import policies
from governance.services.notifications import approval_message, approval_page_url
from governance.services.policies import policy_save
from ledger.models import Event
from tests.conftest import TEST_POLICY, Api
from tests.governance.gate.test_pipeline import ask
from tests.governance.test_notification_injection import (  # noqa: F401 (a fixture)
    auto_formatted,
    control_sequences,
    mrkdwn_texts,
    shell_approval,
)

# No `tests:` (they are optional) and autonomous runs fall back to allow: nothing but the
# rules stands between an autonomous run and `rm -rf /`.
NO_TESTS_FALLBACK_ALLOW = TEST_POLICY.split("tests:")[0].replace(
    "autonomous_fallback: deny", "autonomous_fallback: allow"
)
# send_email has no match argument: its rule is the whole arguments, and the page asks no
# tick for it ("it covers exactly these arguments to this tool"). A body long enough that
# the rule would be over the 1 KiB every pattern is held to.
OVERLONG = {"to": "ops@example.com", "body": "x" * 1100}


def decided_events(run_id) -> int:
    return Event.objects.filter(run_id=run_id, type="approval.decided").count()


def assert_nothing_decided(approval_id, run_id, org, version) -> None:
    """A refused Approve & Remember: nothing was decided, granted or saved."""
    assert Approval.objects.get(pk=approval_id).status == "pending"
    assert RunGrant.objects.count() == 0
    assert decided_events(run_id) == 0
    assert Policy.objects.get(org=org).current_version_id == version


@pytest.fixture
def overlong_approval(org, make_run):
    """A pending approval for a call too long to remember as a policy rule: (approval id,
    run id, the policy's current version)."""
    policy_save(org=org, text=NO_TESTS_FALLBACK_ALLOW, author=None)
    version = Policy.objects.get(org=org).current_version_id
    run_id, runner = make_run()
    approval_id = ask(runner, run_id, "send_email", OVERLONG)["approval"]["id"]
    return approval_id, run_id, version


@pytest.mark.django_db
def test_an_overlong_call_remembered_as_a_rule_is_refused_and_the_policy_keeps_its_nevers(
    org, make_run, approver, overlong_approval
):
    approval_id, run_id, version = overlong_approval

    response = Api(user=approver).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve", "remember": "policy"}
    )

    assert response.status_code == 400
    assert response.json()["error"] == "too_long_to_remember"
    assert_nothing_decided(approval_id, run_id, org, version)
    # New runs still meet the NEVER rule; an ALWAYS rule still allows without asking.
    autonomous_id, autonomous = make_run(autonomy="autonomous")
    rm = ask(autonomous, autonomous_id, "run_command", {"command": "rm -rf /"})
    assert (rm["decision"], rm["source"]) == ("deny", "policy")
    supervised_id, supervised = make_run()
    read = ask(supervised, supervised_id, "read_file", {"path": "/workspace/a"})
    assert (read["decision"], read["source"]) == ("allow", "policy")
    # The narrower choice still works for the same call.
    kept = Api(user=approver).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve", "remember": "run"}
    )
    assert kept.status_code == 200 and kept.json()["won"] is True


@pytest.mark.django_db
def test_the_approval_page_offers_no_rule_for_an_overlong_call_and_refuses_one_posted(
    org, approver, overlong_approval
):
    approval_id, run_id, version = overlong_approval
    client = Client()
    client.force_login(approver)

    page = client.get(reverse("admin:inbox-approval", args=[approval_id])).content.decode()
    assert 'value="remember_policy"' not in page
    assert "No rule for new runs: this call is too long to become a policy rule" in page
    assert 'value="remember"' in page  # the exact-call grant for this run is still offered

    posted = client.post(
        reverse("admin:inbox-decide", args=[approval_id]), {"decision": "remember_policy"}
    )
    assert posted.status_code == 400
    assert Approval.objects.get(pk=approval_id).status == "pending"
    assert Policy.objects.get(org=org).current_version_id == version
    assert decided_events(run_id) == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("script", "planted"),
    [
        ("ls ; timeout --x=https://evil.example/approve ls", "https://evil.example/approve"),
        ("ls ; bash --rcfile=https://fluidbox.evil.example/admin/inbox/7/ -c ls", "https://"),
        ("ls ; exec -a @channel ls", "@channel"),
        ("ls ; xargs *https://evil.example/a*", "https://evil.example/a"),
    ],
)
def test_a_reason_quoting_the_agent_links_and_pings_nothing_in_slack(
    shell_approval,  # noqa: F811
    script,
    planted,
):
    """fluidbox's reason for a command may quote the agent's words (an option it does not
    know, a glob): in Slack they stay text, never a link or a mention in the part of the
    message that fluidbox vouches for."""
    approval = shell_approval(script)
    message = approval_message(approval)
    link = approval_page_url(approval)
    reading = [t for t in mrkdwn_texts(message)[1:] if t.startswith("1. ")]
    assert reading and any(planted in text for text in reading)  # shown, as text
    for text in mrkdwn_texts(message):
        assert auto_formatted(text) == []
        assert {target for _, target in control_sequences(text)} <= {link}


FORCE_PUSH_NEVER = '  - pattern: "run_command:git push --force*"\n    action: NEVER\n'


@pytest.mark.django_db
def test_a_remembered_rule_cannot_undo_a_never_the_policy_gained_after_the_run_froze(
    org, make_run, approver
):
    """A run froze the policy when the call was only ASK; an admin has since made it NEVER.
    An approver's Approve & Remember of that call in the old run would put an ALWAYS rule
    above the admin's NEVER, and every new run would be allowed it: refused."""
    run_id, runner = make_run()
    push = {"command": "git push --force origin main"}
    approval_id = ask(runner, run_id, "run_command", push)["approval"]["id"]
    policy_save(
        org=org, text=TEST_POLICY.replace("rules:\n", "rules:\n" + FORCE_PUSH_NEVER, 1), author=None
    )
    version = Policy.objects.get(org=org).current_version_id

    response = Api(user=approver).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve", "remember": "policy"}
    )

    assert response.status_code == 409
    assert response.json()["error"] == "policy_denies"
    assert_nothing_decided(approval_id, run_id, org, version)
    new_id, new = make_run()
    denied = ask(new, new_id, "run_command", push)
    assert (denied["decision"], denied["source"]) == ("deny", "policy")
    # The old run may still have its call, by the version it froze: approve, this run only.
    approved = Api(user=approver).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve", "remember": "run"}
    )
    assert approved.status_code == 200 and approved.json()["won"] is True


ADMIN_NEVER = '  - pattern: "send_email:*evil*"\n    action: NEVER\n'


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_remembered_rule_never_undoes_a_policy_change_saved_meanwhile(
    org, make_run, approver, monkeypatch
):
    """An admin tightens the policy while an approver's Approve & Remember is adding its
    rule: the new version must build on the admin's, not on the one read before it."""
    run_id, runner = make_run()
    approval_id = ask(runner, run_id, "send_email", {"to": "b@example.com"})["approval"]["id"]
    tightened = TEST_POLICY.replace("rules:\n", "rules:\n" + ADMIN_NEVER, 1)
    checked = policies.test_failures
    admin = []

    def admin_saves():
        try:
            policy_save(org=org, text=tightened, author=None)
        finally:
            connection.close()

    def admin_saves_meanwhile(document, organization):
        # Between the remembered rule's read of the policy and its save: the admin's save,
        # committed from another connection (or, once the read is locked, waiting for it).
        if not admin:
            admin.append(threading.Thread(target=admin_saves))
            admin[0].start()
            admin[0].join(timeout=2)
        return checked(document, organization)

    monkeypatch.setattr(policies, "test_failures", admin_saves_meanwhile)
    response = Api(user=approver).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve", "remember": "policy"}
    )
    assert response.status_code == 200, response.content
    admin[0].join(timeout=10)
    current = Policy.objects.get(org=org).current_version
    assert "send_email:*evil*" in [rule["pattern"] for rule in current.document["rules"]]


SECRET_CALLS = {
    "inline-token": (
        "run_command",
        {"command": 'curl -H "Authorization: Bearer ghp_Canary0123456789abcdefghijklmnopqrst" x'},
        "ghp_Canary0123456789abcdefghijklmnopqrst",
    ),
    "secret-named-value": (
        "send_email",
        {"to": "ops@example.com", "body": "password=canary-pw-4f3e2d1c"},
        "canary-pw-4f3e2d1c",
    ),
}


@pytest.mark.parametrize("shape", list(SECRET_CALLS))
@pytest.mark.django_db
def test_a_call_holding_a_secret_is_never_remembered_as_a_policy_rule(
    org, make_run, approver, shape
):
    """An agent puts a credential in a call it knows will be asked about; an approver who
    picks "a rule for new runs" would copy it into the organization's policy, read by every
    admin, exported, kept in every later version: refused, nothing decided, the secret
    nowhere in the policy. Approving, or remembering for this run only, still works."""
    tool, arguments, secret = SECRET_CALLS[shape]
    version = Policy.objects.get(org=org).current_version_id
    run_id, runner = make_run()
    approval_id = ask(runner, run_id, tool, arguments)["approval"]["id"]

    response = Api(user=approver).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve", "remember": "policy"}
    )

    assert response.status_code == 400, response.content
    assert response.json()["error"] == "secret_in_rule"
    assert secret not in response.content.decode()
    assert_nothing_decided(approval_id, run_id, org, version)
    page = Client()
    page.force_login(approver)
    card = page.get(reverse("admin:inbox-approval", args=[approval_id])).content.decode()
    # The approver sees the call as it is; the page only offers no rule for it.
    assert "No rule for new runs: this call holds a secret" in card
    assert 'value="remember_policy"' not in card
    kept = Api(user=approver).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve", "remember": "run"}
    )
    assert kept.status_code == 200, kept.content
    assert Policy.objects.get(org=org).current_version_id == version
    texts = Policy.objects.get(org=org).versions.values_list("content", flat=True)
    assert not any(secret in text for text in texts)
