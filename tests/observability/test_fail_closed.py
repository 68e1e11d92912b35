"""Calls that an error, not a rule, made ASK or deny: each says so in its ledger event and
counts in `fluidbox_gate_fail_closed_total` (alert on any)."""

import pytest
from django.test import override_settings
from prometheus_client.parser import text_string_to_metric_families

from governance import vault
from governance.services.bundles import bundle_import
from ledger.models import Event
from tests.conftest import Api, run_body
from tests.governance.broker.support import brokered_run, call, connect
from tests.governance.gate.test_pipeline import ask

TOKEN = "fail-closed-metrics-token"


def fail_closed_counts() -> dict[str, float]:
    with override_settings(FLUIDBOX_METRICS_TOKEN=TOKEN):
        text = Api(TOKEN).get("/metrics").content.decode()
    counts = {}
    for family in text_string_to_metric_families(text):
        if family.name == "fluidbox_gate_fail_closed":
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    counts[sample.labels["cause"]] = sample.value
    return counts


def last_event(run_id, type_: str) -> dict:
    return Event.objects.filter(run_id=run_id, type=type_).order_by("-seq").first().data


@pytest.mark.django_db
def test_a_policy_evaluation_error_asks_and_is_counted(make_run):
    before = fail_closed_counts().get("policy_error", 0)
    run_id, runner = make_run()
    answer = ask(runner, run_id, "run_command", {"command": "ls " + "a" * 70_000})
    assert answer["decision"] == "pending"
    assert last_event(run_id, "approval.requested")["fail_closed"] == "policy_error"
    # An ordinary ask (a rule said so) is not a failure.
    ask(runner, run_id, "send_email", {"to": "bob@example.com"}, call_id="c-2")
    assert "fail_closed" not in last_event(run_id, "approval.requested")
    assert fail_closed_counts()["policy_error"] == before + 1


BACKTRACKING_BUNDLE = """
name: backtracking
tools:
  - name: redos_tool
    access: read
    schema: {type: object, properties: {x: {type: string, pattern: "^(a|aa)+$"}}}
"""


@pytest.mark.django_db
@pytest.mark.timeout(20)
def test_a_schema_validator_crash_denies_and_is_counted(org, operator):
    bundle_import(org=org, text=BACKTRACKING_BUNDLE)
    created = operator.post("/v1/runs", run_body(bundles=["backtracking"]))
    run_id, runner = created.json()["id"], Api(created.json()["session_token"])
    before = fail_closed_counts().get("schema_validator", 0)
    # The pattern backtracks past its time bound: the validator gives up, the call is denied.
    answer = ask(runner, run_id, "redos_tool", {"x": "a" * 60 + "!"})
    assert (answer["decision"], answer["source"]) == ("deny", "schema")
    assert "took too long" in answer["reason"]
    assert last_event(run_id, "tool.decision")["fail_closed"] == "schema_validator"
    # Arguments that merely do not match are a rule's deny, not a failure.
    ask(runner, run_id, "redos_tool", {"x": 5}, call_id="c-2")
    assert "fail_closed" not in last_event(run_id, "tool.decision")
    assert fail_closed_counts()["schema_validator"] == before + 1


def test_a_sealed_vault_denies_and_is_counted(broker_org, operator, echo_server, settings):
    settings.FLUIDBOX_VAULT_PASSPHRASE = "correct horse battery staple"
    vault.reset_cache()
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    before = fail_closed_counts().get("vault_sealed", 0)
    settings.FLUIDBOX_VAULT_PASSPHRASE = "wrong passphrase"
    vault.reset_cache()
    answer = call(runner, run_id, "crm.lookup", {"id": "1"})
    assert (answer["source"], answer["reason"]) == ("binding", "vault sealed")
    assert last_event(run_id, "tool.decision")["fail_closed"] == "vault_sealed"
    assert fail_closed_counts()["vault_sealed"] == before + 1
    assert echo_server.calls() == []
