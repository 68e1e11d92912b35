"""The verifier recomputes each hash from the row PostgreSQL gives back: a value whose stored
form differs from the one hashed at append time reads as "row was altered", a false alarm
that would teach an auditor to ignore the real ones.

jsonb keeps numbers as decimals: `-0.0` comes back `0.0`, an integral float written with an
exponent (`1e+300`) comes back as an integer, and NaN or infinity is no JSON number at all.
No event carries such a number from a request today (arguments reach the ledger only as text
and digests); an event that did must still verify.
"""

import math
from datetime import timedelta

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from governance.models import FrozenTool, Role, Run
from governance.services.orgs import user_create
from ledger.chain_checks import chain_verify, latest_ledger_check
from ledger.log_models import LedgerCheck
from ledger.models import Event
from ledger.redaction import redact
from ledger.services import event_append
from ledger.tasks import ledger_check_run
from tests.ledger.support import allow_a_denial, checkpoint_now, gate_traffic

NUMBERS = [1e300, 1e16, -1e22, -0.0, 0.1, 1.5e-300, 1e-7, 123456789.123456789, 2**64, 7]


@pytest.mark.django_db(transaction=True)
def test_numbers_a_database_stores_as_decimals_still_verify(make_run):
    run_id, _ = make_run()
    with transaction.atomic():
        event_append(
            run_id=run_id,
            type="tool.brokered",
            redacted=redact({"figures": NUMBERS, "nested": {"largest": 1e300, "zero": -0.0}}),
        )

    assert chain_verify(run_id, prove=False) == []
    stored = Event.objects.get(run_id=run_id, type="tool.brokered").data
    assert stored["figures"][0] == int(1e300) and stored["nested"]["zero"] == 0
    assert stored["figures"][4] == 0.1


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_a_number_json_cannot_hold_is_kept_as_its_name(make_run, number):
    run_id, _ = make_run()
    with transaction.atomic():
        event_append(run_id=run_id, type="tool.brokered", redacted=redact({"figure": number}))

    assert chain_verify(run_id, prove=False) == []
    assert Event.objects.get(run_id=run_id, type="tool.brokered").data["figure"] == str(number)


# A database writer edits the rows the run page shows as "Frozen at creation" (they are not
# ledger rows, no trigger guards them), leaving every event alone: the chain still verifies,
# so only a comparison with the run's run.created event tells the auditor.


def run_page(org, run_id) -> str:
    auditor = user_create(username="audrey", org=org, role=Role.AUDITOR, password="pw-a-123")
    client = Client()
    client.force_login(auditor)
    return client.get(reverse("admin:governance_run_change", args=[run_id])).content.decode()


def test_an_untouched_run_page_claims_no_difference_from_its_run_created(org, make_run):
    run_id, _ = make_run()

    page = run_page(org, run_id)

    assert "verified: the hash chain is intact" in page
    assert 'id="frozen-check"' not in page and 'id="frozen-differs"' not in page


def test_a_run_s_trust_tier_edited_in_the_database_is_named_on_its_page(org, make_run):
    run_id, _ = make_run()
    run = Run.objects.get(pk=run_id)
    tampered = "read_only" if run.trust_tier == "trusted" else "trusted"
    Run.objects.filter(pk=run_id).update(trust_tier=tampered, agent="innocent-bot")

    page = run_page(org, run_id)

    assert "verified: the hash chain is intact" in page  # the events were not touched
    assert "the frozen details differ from the run's run.created event" in page
    assert f"trust_tier: the row shown says &quot;{tampered}&quot;, run.created recorded" in page
    assert "agent: the row shown says &quot;innocent-bot&quot;" in page


def test_a_frozen_tool_s_definition_edited_in_the_database_is_named_on_its_page(org, make_run):
    run_id, _ = make_run()
    tool = FrozenTool.objects.filter(run_id=run_id).order_by("name").first()
    FrozenTool.objects.filter(pk=tool.pk).update(definition_digest="f" * 64)

    page = run_page(org, run_id)

    assert "the frozen details differ from the run's run.created event" in page
    assert "tools: the frozen tools&#x27; names, definition digests and callable flags" in page


# A database writer forges the record of the hourly check of the whole ledger: the run page
# and /metrics show the latest one, and the worker skips its check while one is running.


def test_a_clean_check_dated_in_the_future_hides_no_real_check(org, make_run):
    run_id, runner = make_run()
    gate_traffic(runner, run_id, 3)
    checkpoint_now(org)
    later = timezone.now() + timedelta(days=365)
    LedgerCheck.objects.create(started_at=later, finished_at=later, by="worker")
    allow_a_denial(run_id)

    assert ledger_check_run() >= 1

    assert latest_ledger_check().problem_count >= 1
    page = run_page(org, run_id)
    assert "the organization&#x27;s ledger was intact" not in page
    assert "✖ the check of the whole ledger at " in page


def test_a_check_forever_running_holds_back_no_scheduled_check(org, make_run):
    run_id, _ = make_run()
    later = timezone.now() + timedelta(days=365)
    LedgerCheck.objects.create(started_at=later, by="worker")

    assert ledger_check_run() == 0
    assert LedgerCheck.objects.exclude(finished_at=None).filter(by="worker").count() == 1
