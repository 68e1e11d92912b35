"""The verifier recomputes each hash from the row PostgreSQL gives back: a value whose stored
form differs from the one hashed at append time reads as "row was altered", a false alarm
that would teach an auditor to ignore the real ones.

jsonb keeps numbers as decimals: `-0.0` comes back `0.0`, an integral float written with an
exponent (`1e+300`) comes back as an integer, and NaN or infinity is no JSON number at all.
No event carries such a number from a request today (arguments reach the ledger only as text
and digests); an event that did must still verify.
"""

import math

import pytest
from django.db import transaction

from ledger.chain_checks import chain_verify
from ledger.models import Event
from ledger.redaction import redact
from ledger.services import event_append

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
