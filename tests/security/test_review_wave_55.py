"""Review wave 55 (h3), the approver's view: a rule Approve & Remember adds for new runs,
attacked with the shell's wrappers and assignments, and the rule's place above a NEVER the
admin adds later. Probes that held (no defect found): kept as regressions."""

import pytest

from governance.models import Policy
from governance.services.policies import policy_save
from tests.conftest import TEST_POLICY, Api
from tests.governance.gate.test_pipeline import ask

pytestmark = pytest.mark.django_db

APPROVED = "curl https://example.com/x"


def remember_for_new_runs(make_run, approver, command):
    run_id, runner = make_run()
    answer = ask(runner, run_id, "run_command", {"command": command})
    assert answer["decision"] == "pending", answer
    response = Api(user=approver).post(
        f"/v1/approvals/{answer['approval']['id']}/decision",
        {"decision": "approve", "remember": "policy"},
    )
    assert response.status_code == 200, response.content


@pytest.mark.parametrize(
    "variant",
    [
        f"sudo {APPROVED}",
        f"LD_PRELOAD=/workspace/e.so {APPROVED}",
        f"HTTPS_PROXY=http://evil.example:1 {APPROVED}",
        f"env LD_PRELOAD=/workspace/e.so {APPROVED}",
        f"{APPROVED} > /workspace/.bashrc",
        f"echo -o/etc/x | xargs {APPROVED}",
    ],
)
def test_a_rule_remembered_for_one_command_does_not_allow_it_with_more_power(
    make_run, approver, variant
):
    # The approver saw `curl https://example.com/x`; a new run's agent wraps the same text in
    # a privilege, a preloaded library, a proxy, a redirect or extra xargs input: asks again.
    remember_for_new_runs(make_run, approver, APPROVED)
    run_id, runner = make_run()
    assert ask(runner, run_id, "run_command", {"command": APPROVED})["decision"] == "allow"
    answer = ask(runner, run_id, "run_command", {"command": variant}, call_id="c-2")
    assert answer["decision"] == "pending", (variant, answer)


def test_a_remembered_script_does_not_outrank_a_never_added_below_it_later(org, make_run, approver):
    # The remembered whole-script rule sits at the top; an admin's later NEVER for a command
    # inside that script still denies it in new runs (the most restrictive verdict wins).
    script = "echo x; touch /workspace/y"
    remember_for_new_runs(make_run, approver, script)
    policy = Policy.objects.get(org=org)
    text = policy.current_version.document
    assert text["rules"][0]["action"] == "ALWAYS"
    rules = "".join(
        f'  - pattern: "{rule["pattern"]}"\n    action: {rule["action"]}\n'
        for rule in text["rules"]
    )
    header = TEST_POLICY.split("rules:")[0]
    never = '  - pattern: "run_command:touch *"\n    action: NEVER\n'
    policy_save(org=org, text=f"{header}rules:\n{rules}{never}", author=None)
    run_id, runner = make_run()
    answer = ask(runner, run_id, "run_command", {"command": script})
    assert answer["decision"] == "deny", answer
