"""Who decided, as a watching auditor's live timeline shows it: an account whose name reads
like another's (made before usernames were checked) decides, and the row that arrives over
the stream shows its look-alike letter marked, as the page's own rows do."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from playwright.sync_api import expect

from governance.authentication import Actor, ActorKind, active_roles
from governance.models import Membership, Role
from governance.services.approvals import approval_decide
from ledger.models import Event
from tests.browser.conftest import log_in
from tests.governance.admin.scenarios import ask, sandbox_run

pytestmark = pytest.mark.browser


def test_a_live_timeline_row_marks_a_look_alike_approvers_name(browser_page, org, auditor):
    page = browser_page
    impostor = User.objects.create(username="\u0430lice", is_staff=True)
    Membership.objects.create(org=org, user=impostor, role=Role.APPROVER)
    run, _ = sandbox_run(org)
    approval = ask(run, "send_email", {"to": "bob@example.com"}, call_id="c-1").approval
    last = Event.objects.filter(run=run).order_by("-seq").values_list("seq", flat=True)[0]

    log_in(page, "audrey", "pw-audrey-123")
    page.goto(reverse("admin:governance_run_change", args=[run.pk]))
    expect(page.locator("#live-status")).to_have_text("live")
    actor = Actor(kind=ActorKind.PORTAL, user=impostor, roles=active_roles(impostor))
    approval_decide(approval_id=approval.pk, actor=actor, approve=True)

    decided = page.locator("#timeline tr.fb-new[data-type='approval.decided']")
    decided.wait_for()
    approver_cell = decided.locator("td").nth(8)
    expect(approver_cell.locator("mark.fb-invisible")).to_have_text("\\u0430")
    assert approver_cell.inner_text() == "\\u0430lice"
    assert last < int(decided.get_attribute("data-seq"))
