"""Review of the ledger (2): an honest ledger must verify, whatever the agent sends.

`run.finished` lists the calls in flight at the finish by their (session_id, tool_call_id),
masked as their `tool.brokered` records will name them, and every checker allows after it
exactly one broker record per listed call. The masking is lossy: two different call ids that
look like secrets (an OpenAI-shaped `sk-…`, a `password=…`) are both written `[redacted]`.
Two such calls in flight at the finish collapse into one awaited name, and the second
(genuine, untampered) broker record is then reported as "recorded twice": `ledger verify`,
the run page and the offline verifier call an honest ledger broken. The agent chooses its
call ids, so it can make its own run's ledger cry wolf whenever it likes, which teaches an
auditor to ignore real breaks.
"""

import threading

import pytest
from django.db import connections

from ledger.chain_checks import chain_verify
from ledger.models import Event, EventType
from tests.governance.broker.support import brokered_run, call, connect
from tests.ledger.support import checkpoint_now, export, offline_verify, vkey
from tests.support.waiting import wait_until

# Two call ids the redactor masks alike (the ids an agent sends are its own choice).
SECRET_SHAPED_IDS = ["sk-AAAAAAAAAAAAAAAAAAAAAAAA1", "sk-AAAAAAAAAAAAAAAAAAAAAAAA2"]


@pytest.mark.django_db(transaction=True)
def test_two_calls_in_flight_whose_ids_mask_alike_leave_an_honest_ledger_that_verifies(
    broker_org, operator, echo_server, tmp_path
):
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    release = tmp_path / "release"
    answers: list = []

    def in_flight_call(call_id: str) -> None:
        try:
            answers.append(
                call(
                    runner,
                    run_id,
                    "crm.lookup",
                    {"id": "7", "hold_until_file": str(release)},
                    call_id=call_id,
                )
            )
        finally:
            connections.close_all()

    callers = [threading.Thread(target=in_flight_call, args=(i,)) for i in SECRET_SHAPED_IDS]
    for caller in callers:
        caller.start()
    try:
        wait_until(lambda: len(echo_server.calls()) == 2, "both calls reached the upstream")
        assert runner.post(f"/v1/runs/{run_id}/finish").status_code == 200
        listed = Event.objects.get(run_id=run_id, type=EventType.RUN_FINISHED).data["in_flight"]
        assert len(listed) == 2  # two calls in flight, masked alike
    finally:
        release.touch()
        for caller in callers:
            caller.join()

    assert [a["broker"]["status"] for a in answers] == ["succeeded", "succeeded"]
    types = list(Event.objects.filter(run_id=run_id).order_by("seq").values_list("type", flat=True))
    assert types[-3:] == ["run.finished", "tool.brokered", "tool.brokered"]
    # Nobody touched the database: the ledger is exactly what fluidbox wrote.
    assert chain_verify(run_id) == []
    checkpoint_now(broker_org)
    verdict = offline_verify(export(tmp_path, "run.jsonl", run=run_id), vkey(broker_org))
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
