"""A run's timeline: every event in seq order, filters, the chain's status, the export."""

import json
import re

import pytest
from django.db import connection
from django.urls import reverse

from governance.services.runs import run_finish
from ledger.api import event_json
from ledger.append_only import append_only_suspended
from ledger.models import Event
from tests.governance.admin.scenarios import ask, sandbox_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(org):
    run, _ = sandbox_run(org)
    ask(run, "read_file", {"path": "/workspace/a"}, call_id="c-1")
    ask(run, "run_command", {"command": "ls; rm -rf /"}, call_id="c-2")
    ask(run, "send_email", {"to": "bob@example.com"}, call_id="c-3")
    run_finish(run=run, actor_label="ci")
    return run


def timeline(client, run, query="") -> str:
    return client.get(
        reverse("admin:governance_run_change", args=[run.pk]) + query
    ).content.decode()


def shown_seqs(page: str) -> list[int]:
    return [int(s) for s in re.findall(r'<tr class="fb-event[^"]*" data-seq="(\d+)"', page)]


def test_every_event_is_listed_in_seq_order_with_its_decision_and_rule(run, auditor, login):
    page = timeline(login(auditor), run)
    assert shown_seqs(page) == list(
        Event.objects.filter(run=run).order_by("seq").values_list("seq", flat=True)
    )
    assert "verified: the hash chain is intact" in page
    assert "<code>run_command:rm * → NEVER</code>" in page
    assert "approval.requested" in page and "run.finished" in page
    assert 'data-stream-url="/v1/runs/' in page


def test_the_frozen_run_details_are_shown(run, auditor, login):
    page = timeline(login(auditor), run)
    frozen = page.split('id="frozen"', 1)[1].split("timeline-filters", 1)[0]
    assert run.tool_set_digest in frozen
    assert run.policy_version.digest[:16] in frozen
    assert "trusted" in frozen and "supervised" in frozen
    assert "0 used + 0 reserved of 100000 tokens" in frozen
    assert "<code>run_command</code>" in frozen


@pytest.mark.parametrize(
    ("query", "types"),
    [
        ("?decision=deny", {"tool.decision"}),
        ("?type=tool.requested", {"tool.requested"}),
        ("?source=policy", {"tool.decision"}),
    ],
)
def test_filters_narrow_the_events(run, auditor, login, query, types):
    page = timeline(login(auditor), run, query)
    shown = set(re.findall(r'data-seq="\d+" data-type="([^"]+)"', page))
    assert shown == types
    if "deny" in query:
        denials = [
            e.seq
            for e in Event.objects.filter(run=run, type="tool.decision").order_by("seq")
            if e.data["decision"] == "deny"
        ]
        assert shown_seqs(page) == denials and denials


def test_the_export_is_every_event_as_the_events_api_serves_it(run, auditor, login):
    response = login(auditor).get(reverse("admin:governance_run_export", args=[run.pk]))
    assert response["Content-Type"].startswith("application/x-ndjson")
    lines = b"".join(response.streaming_content).decode().splitlines()
    expected = [event_json(e) for e in Event.objects.filter(run=run).order_by("seq")]
    assert [json.loads(line) for line in lines] == expected


def test_a_tampered_event_shows_the_chain_broken_at_its_seq(run, auditor, login):
    victim = Event.objects.get(run=run, seq=3)
    # As the database superuser, past the append-only triggers.
    with append_only_suspended(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Event._meta.db_table} SET type = %s WHERE id = %s",
            ["run.finished", victim.pk],
        )
    page = timeline(login(auditor), run)
    assert "broken at seq 3: hash mismatch: row was altered" in page


def test_a_member_reads_only_runs_they_invoked(org, run, member, login):
    client = login(member)
    assert client.get(reverse("admin:governance_run_change", args=[run.pk])).status_code == 302
    assert client.get(reverse("admin:governance_run_export", args=[run.pk])).status_code == 403
    own, _ = sandbox_run(org, invoked_by="mo")
    assert client.get(reverse("admin:governance_run_change", args=[own.pk])).status_code == 200
