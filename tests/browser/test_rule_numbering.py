"""One rule, one number, on every surface: the gate's reason and its ledger event, the
evaluate API, `policy test`'s lint output, and the policy editor in the browser.

Rules are numbered as people count them, from 1. The rule every surface must call
"rule 3" here is `run_command:rm *`; rule 4 is shadowed by it.
"""

import httpx
import pytest
from django.core.management import call_command
from django.urls import reverse
from playwright.sync_api import expect

from governance.models import Policy
from governance.services.orgs import api_key_create
from governance.services.policies import policy_save
from ledger.models import Event
from tests.browser.conftest import log_in
from tests.governance.admin.scenarios import sandbox_run

pytestmark = pytest.mark.browser

NUMBERED = """name: default
rules:
  - {pattern: "read_file:*", action: ALWAYS}
  - {pattern: "send_email:*", action: ASK}
  - {pattern: "run_command:rm *", action: NEVER}
  - {pattern: "run_command:rm -rf /", action: NEVER}
  - {pattern: "run_command:git status", action: ALWAYS}
tests:
  - {call: "run_command:rm -rf /", expect: NEVER}
"""
SHADOW_WARNING = "warning: rule 4: never decides anything: rule 3 ('run_command:rm *')"


def test_the_same_rule_has_the_same_number_on_every_surface(
    browser_page, portal, org, admin_user, tmp_path, capsys
):
    policy_save(org=org, text=NUMBERED, author=None)
    key = api_key_create(org=org, name="numbers").plaintext

    # The gate: its reason and the ledger's tool.decision.
    run, token = sandbox_run(org)
    answer = httpx.post(
        f"{portal.url}/v1/runs/{run.pk}/permission",
        json={
            "session_id": "s-1",
            "tool_call_id": "c-1",
            "tool": "run_command",
            "arguments": {"command": "rm -rf /"},
        },
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    ).json()
    assert answer["decision"] == "deny"
    assert answer["reason"] == "policy denies this call (rule 3: 'run_command:rm *')"
    assert answer["rule"] == {"index": 3, "pattern": "run_command:rm *", "action": "NEVER"}
    decided = Event.objects.get(run_id=run.pk, type="tool.decision").data
    assert decided["rule"]["index"] == 3
    # rm deletes: its second segment is the write it does (`write_file:/`, no rule matches).
    assert [s["rule_index"] for s in decided["segments"]] == [3, None]

    # The evaluate API.
    evaluated = httpx.post(
        f"{portal.url}/v1/policies/default/evaluate",
        json={"call": "run_command:rm -rf /"},
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    ).json()
    assert evaluated["rule"]["index"] == 3
    assert [s["rule_index"] for s in evaluated["segments"]] == [3, None]
    # The policy's lint, as the API answers it (it was counted from 0 there).
    read = httpx.get(
        f"{portal.url}/v1/policies/default",
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    ).json()
    shadowed = [w for w in read["lint"] if "never decides anything" in w["message"]]
    assert [w["rule_index"] for w in shadowed] == [4]

    # `manage.py policy test` on the exported file, with and without the organization.
    call_command("policy", "export", "default", "--org", org.slug)
    exported = tmp_path / "default.yaml"
    exported.write_text(capsys.readouterr().out)
    for extra in ((), ("--org", org.slug)):
        call_command("policy", "test", str(exported), *extra)
        assert SHADOW_WARNING in capsys.readouterr().out

    # The policy editor: the rule's order number, the lint line, the dry run.
    page = browser_page
    log_in(page, "ada", "pw-ada-123")
    page.goto(reverse("admin:governance_policy_change", args=[Policy.objects.get(org=org).pk]))
    row = page.locator("tr.fb-rule").filter(has=page.locator("input[value='run_command:rm *']"))
    expect(row.locator("td.fb-order input")).to_have_value("3")
    expect(page.locator("li.fb-lint").filter(has_text="shadowed")).to_contain_text(
        "rule 4 shadowed never decides anything: rule 3 ('run_command:rm *')"
    )
    page.fill("#id_dry-call", "run_command:rm -rf /")
    page.click("#dry-run-button")
    saved = page.locator(".fb-dry-result[data-against='saved']")
    expect(saved).to_contain_text("rule 3 run_command:rm * → NEVER")
    expect(saved.locator("table")).to_contain_text("3: run_command:rm * → NEVER")
