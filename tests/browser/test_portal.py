"""The portal in a real browser: an admin edits a policy, an approver releases a waiting
runner, a superuser meets the owner rule, an auditor reads a run and changes nothing."""

import threading

import httpx
import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from playwright.sync_api import expect

from governance.models import Approval, Policy
from governance.services.approvals import approval_decide
from ledger.models import Event
from tests.browser.conftest import csrf_token, log_in, screenshot
from tests.governance.admin.scenarios import (
    ask,
    pending_approval,
    personal_pending_approval,
    sandbox_run,
)

pytestmark = pytest.mark.browser


def rule_row(page, pattern: str):
    return page.locator("tr.fb-rule").filter(has=page.locator(f"input[value='{pattern}']"))


def test_an_admin_edits_a_rule_and_the_dry_run_shows_the_new_verdict(browser_page, org, admin_user):
    page = browser_page
    policy = Policy.objects.get(org=org, name="default")
    log_in(page, "ada", "pw-ada-123")

    page.goto(reverse("admin:governance_policy_change", args=[policy.pk]))
    page.fill("#id_dry-call", "run_command:git status")
    page.click("#dry-run-button")
    saved = page.locator(".fb-dry-result[data-against='saved'] [data-verdict]")
    expect(saved).to_have_text("ALWAYS")

    row = rule_row(page, "run_command:git status")
    row.locator("select").select_option("NEVER")
    row.locator("button.fb-up").click()  # above `run_command:rm *`, by the script
    page.fill("#id_dry-call", "run_command:git status")
    page.click("#dry-run-button")
    draft = page.locator(".fb-dry-result[data-against='draft'] [data-verdict]")
    expect(draft).to_have_text("NEVER")
    expect(saved).to_have_text("ALWAYS")
    expect(page.get_by_text("The draft changes this verdict.")).to_be_visible()
    screenshot(page, "policy-editor-dry-run")

    page.click("#save-policy")
    expect(page.locator(".messagelist .success")).to_have_text("Saved default v2.")
    page.fill("#id_dry-call", "run_command:git status")
    page.click("#dry-run-button")
    expect(page.locator("h3", has_text="Saved v2").locator("[data-verdict]")).to_have_text("NEVER")
    screenshot(page, "policy-editor-saved")

    policy.refresh_from_db()
    rules = policy.current_version.document["rules"]
    assert rules[1] == {"pattern": "run_command:git status", "action": "NEVER"}
    assert rules[2]["pattern"] == "run_command:rm *"


def test_an_approver_approves_and_the_waiting_runner_is_allowed(
    browser_page, portal, org, approver
):
    page = browser_page
    run, token = sandbox_run(org)
    arguments = {"to": "bob@example.com", "body": "hello \u202eetadpu ytiruces"}
    approval = ask(run, "send_email", arguments).approval
    answers = []

    def runner_waits():
        # As a runner does: long-poll again while the human has not decided yet.
        while not answers or answers[-1].json()["decision"] == "pending":
            response = httpx.post(
                f"{portal.url}/v1/runs/{run.pk}/permission",
                json={
                    "session_id": "s-1",
                    "tool_call_id": "c-1",
                    "tool": "send_email",
                    "arguments": arguments,
                    "wait_seconds": 25,
                },
                headers={"Authorization": f"Bearer {token}"},
                timeout=120,
            )
            answers.append(response)

    waiter = threading.Thread(target=runner_waits)
    waiter.start()
    log_in(page, "alice", "pw-alice-123")
    page.goto(reverse("admin:inbox"))
    card = page.locator(f"#approval-{approval.pk}")
    assert "bob@example.com" in card.locator(".fb-arguments").inner_text()
    expect(card.locator(".fb-arguments mark.fb-invisible")).to_have_text("\\u202e")
    assert card.locator(".fb-countdown").inner_text().startswith("expires in")
    card.locator("details.fb-remember summary").click()
    screenshot(page, "inbox")
    card.locator("button[value='approve']").click()
    assert "Approved: send_email" in page.locator(".messagelist .success").inner_text()

    waiter.join()
    assert {answer.status_code for answer in answers} == {200}
    assert answers[-1].json()["decision"] == "allow"
    assert answers[-1].json()["source"] == "approval"
    approval.refresh_from_db()
    assert (approval.status, approval.decided_by.username) == ("approved", "alice")


def test_a_superuser_sees_no_approve_button_and_a_forged_post_is_refused(browser_page, org, member):
    page = browser_page
    User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    approval = personal_pending_approval(org, owner="mo")
    log_in(page, "root", "pw-root-123")

    page.goto(reverse("admin:inbox-approval", args=[approval.pk]))
    assert page.locator("button[name='decision']").count() == 0
    assert "Only mo, who owns the personal connection" in page.locator(".fb-not-yours").inner_text()
    screenshot(page, "approval-not-yours")

    # A forged decision: a real form, with a valid CSRF token, posted from this page.
    with page.expect_navigation() as navigation:
        page.evaluate(
            """([action, token]) => {
                const form = document.createElement("form");
                form.method = "post";
                form.action = action;
                const fields = [["csrfmiddlewaretoken", token], ["decision", "approve"]];
                for (const [name, value] of fields) {
                    const input = document.createElement("input");
                    input.type = "hidden"; input.name = name; input.value = value;
                    form.appendChild(input);
                }
                document.body.appendChild(form);
                form.submit();
            }""",
            [reverse("admin:inbox-decide", args=[approval.pk]), csrf_token(page)],
        )
    assert navigation.value.status == 403
    assert "you may not decide this approval" in page.locator(".messagelist .error").inner_text()
    approval.refresh_from_db()
    assert approval.status == "pending"
    assert not Event.objects.filter(run_id=approval.run_id, type="approval.decided").exists()

    page.goto(reverse("admin:governance_connection_change", args=[approval.connection_id]))
    assert "sealed, sent as an HTTP header" in page.locator("#credential").inner_text()
    assert "mine-1" not in page.content()
    screenshot(page, "connection")


def test_an_auditor_reads_a_run_timeline_live_and_cannot_change_anything(
    browser_page, org, approver, auditor
):
    page = browser_page
    run, _ = sandbox_run(org)
    ask(run, "read_file", {"path": "/workspace/README.md"}, call_id="c-1")
    ask(run, "run_command", {"command": "ls; rm -rf /"}, call_id="c-2")
    approval = ask(run, "send_email", {"to": "bob@example.com"}, call_id="c-3").approval
    approval_decide(approval_id=approval.pk, actor=_portal_actor(approver), approve=False)
    ask(run, "read_file", {"path": "/workspace/a"}, call_id="c-4")
    seqs = list(Event.objects.filter(run=run).order_by("seq").values_list("seq", flat=True))
    policy_versions = Policy.objects.get(org=org, name="default").versions.count()

    pending_approval(org, call_id="c-9")
    log_in(page, "audrey", "pw-audrey-123")
    expect(page.locator("#decisions-by-verdict")).to_be_visible()
    screenshot(page, "dashboard")
    page.goto(reverse("admin:governance_run_change", args=[run.pk]))
    assert "verified: the hash chain is intact" in page.locator("#chain-status").inner_text()
    shown = [int(s) for s in page.locator("#timeline tr.fb-event td.fb-seq").all_inner_texts()]
    assert shown == seqs
    expect(page.locator("#live-status")).to_have_text("live")
    # A live call whose command hides a zero-width space: it arrives over the stream, is
    # ASK (invisible characters never pass), and the character shows as a marked escape.
    ask(run, "run_command", {"command": "git status\u200b"}, call_id="c-5")
    page.locator(f"#timeline tr[data-seq='{seqs[-1] + 2}']").wait_for()
    shown = [int(s) for s in page.locator("#timeline tr.fb-event td.fb-seq").all_inner_texts()]
    assert shown == seqs + [seqs[-1] + 1, seqs[-1] + 2]
    live = page.locator(f"#timeline tr[data-seq='{seqs[-1] + 1}']")
    expect(live.locator("mark.fb-invisible")).to_have_text("\\u200b")
    live_types = page.locator("#timeline tr.fb-new").evaluate_all(
        "rows => rows.map(r => r.dataset.type)"
    )
    assert live_types == ["tool.requested", "approval.requested"]
    screenshot(page, "run-timeline")

    token = csrf_token(page)
    headers = {"X-CSRFToken": token}
    forged = {
        reverse("admin:governance_run_add"): "get",
        reverse("admin:governance_run_change", args=[run.pk]): "post",
        reverse("admin:governance_run_delete", args=[run.pk]): "post",
        reverse("admin:ledger_event_add"): "get",
        reverse(
            "admin:ledger_event_delete", args=[Event.objects.filter(run=run).first().pk]
        ): "post",
        reverse("admin:governance_policy_add"): "get",
        reverse("admin:governance_policy_change", args=[Policy.objects.get(org=org).pk]): "post",
        reverse("admin:inbox-decide", args=[approval.pk]): "post",
    }
    for url, method in forged.items():
        if method == "get":
            response = page.request.get(url)
        else:
            response = page.request.post(
                url,
                form={"csrfmiddlewaretoken": token, "do": "save", "decision": "approve"},
                headers=headers,
            )
        assert response.status == 403, (url, response.status)
    assert list(Event.objects.filter(run=run).values_list("seq", flat=True))[: len(seqs)] == seqs
    assert Policy.objects.get(org=org, name="default").versions.count() == policy_versions
    assert Approval.objects.get(pk=approval.pk).status == "denied"


def _portal_actor(user):
    from governance.authentication import Actor, ActorKind, active_roles

    return Actor(kind=ActorKind.PORTAL, user=user, roles=active_roles(user))


def test_portal_pages_load_without_a_single_failed_request(browser_page, org, admin_user):
    # Browsers ask for /favicon.ico on every page; it used to be a 404 each time.
    page = browser_page
    failed = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else 0)
    log_in(page, "ada", "pw-ada-123")
    for name in ("admin:index", "admin:inbox", "admin:governance_run_changelist"):
        page.goto(reverse(name))
        page.wait_for_load_state("networkidle")
    icon = page.request.get("/favicon.ico")
    assert (icon.status, icon.headers["content-type"]) == (200, "image/x-icon")
    assert failed == []


def test_revoking_a_connection_asks_first_and_cancelling_keeps_it(
    browser_page, org, admin_user, member
):
    """The confirmation used to be an inline `onsubmit`, which the page's CSP blocks: the
    connection was revoked at the first click, unasked."""
    from governance.models import Connection

    page = browser_page
    approval = personal_pending_approval(org, owner="mo")
    log_in(page, "ada", "pw-ada-123")
    page.goto(reverse("admin:governance_connection_change", args=[approval.connection_id]))
    revoke = page.locator("form[data-confirm] button")
    asked = []

    def dismiss(dialog):
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    revoke.click()
    expect(revoke).to_be_visible()
    assert asked and asked[0].startswith("Revoke ")
    assert Connection.objects.get(pk=approval.connection_id).status != "revoked"

    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        revoke.click()
    assert Connection.objects.get(pk=approval.connection_id).status == "revoked"
