"""Two gunicorn processes append to many runs while two sequencers assign leaves and sign
checkpoints: every event lands in exactly one leaf, each run's seq stays gapless, and the
signed history verifies offline."""

import random
import threading
import time

import httpx
import pytest
from django.db import connection

from ledger.chain_checks import chain_verify
from ledger.log_models import Checkpoint, LogLeaf, OrgLog
from ledger.models import Event
from tests.concurrency.test_gate_races import create_run
from tests.ledger.support import CALLS, export, offline_verify, vkey
from tests.support.servers import BIN, ServerProcess, child_environment

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

RUNS = 24
CALLS_PER_RUN = 25


def sequencer(tmp_path, name: str) -> ServerProcess:
    env = child_environment(
        FLUIDBOX_CHECKPOINT_EVERY_EVENTS="50", FLUIDBOX_CHECKPOINT_EVERY_SECONDS="1"
    )
    args = [str(BIN / "python"), "manage.py", "ledger", "sequence", "--seconds", "600"]
    return ServerProcess(args, env, tmp_path / f"{name}.log")


def hammer(server, runs, halfway=None) -> list:
    """Every run's calls from its own thread; `halfway` runs once, when every thread has
    made half its calls and none has gone on."""
    errors: list = []
    barrier = threading.Barrier(len(runs))
    middle = threading.Barrier(len(runs), action=halfway)

    def work(run_id: str, token: str) -> None:
        rng = random.Random(run_id)
        with httpx.Client(timeout=60) as client:
            barrier.wait()
            for index in range(CALLS_PER_RUN):
                if index == CALLS_PER_RUN // 2:
                    middle.wait()
                tool, arguments = CALLS[rng.randrange(len(CALLS))]
                response = client.post(
                    f"{server.url}/v1/runs/{run_id}/permission",
                    json={
                        "session_id": "s",
                        "tool_call_id": f"c-{index}",
                        "tool": tool,
                        "arguments": arguments,
                    },
                    headers={"Authorization": f"Bearer {token}"},
                )
                if response.status_code != 200:
                    errors.append(response.text)

    threads = [threading.Thread(target=work, args=run) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def signed_up_to(total: int, log) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        latest = Checkpoint.objects.order_by("-tree_size").first()
        if latest is not None and latest.tree_size == total:
            return
        time.sleep(0.2)
    raise AssertionError(f"not all {total} events were signed:\n{log()[-2000:]}")


def test_every_event_lands_in_exactly_one_leaf_under_load(web_server, operator, org, tmp_path):
    runs = [create_run(operator) for _ in range(RUNS)]
    with sequencer(tmp_path, "sequencer-a") as first, sequencer(tmp_path, "sequencer-b"):

        def halfway() -> None:
            # The sequencers sign while the load is under way, not only once it is over
            # (on a busy machine they may start only after a quick first half).
            try:
                signed_up_to(Event.objects.filter(run__org=org).count(), first.log)
            finally:
                connection.close()

        errors = hammer(web_server, runs, halfway)
        assert errors == []
        total = Event.objects.filter(run__org=org).count()
        assert total == RUNS * (1 + 2 * CALLS_PER_RUN)
        signed_up_to(total, first.log)
    leaves = list(LogLeaf.objects.order_by("index").values_list("index", "event_id"))
    assert [index for index, _ in leaves] == list(range(total))
    assert sorted(event for _, event in leaves) == sorted(
        Event.objects.filter(run__org=org).values_list("pk", flat=True)
    )
    assert OrgLog.objects.get(org=org).size == total
    sizes = list(Checkpoint.objects.order_by("tree_size").values_list("tree_size", flat=True))
    assert len(sizes) >= 2 and sizes[0] < total, sizes  # signed mid-load, and at the end
    for run_id, _ in runs:
        seqs = list(
            Event.objects.filter(run_id=run_id).order_by("seq").values_list("seq", flat=True)
        )
        assert seqs == list(range(1, 2 + 2 * CALLS_PER_RUN))
        assert chain_verify(run_id) == []
    # Every checkpoint's root, and their consistency, rebuilt offline from the leaves.
    result = offline_verify(export(tmp_path, org="acme"), vkey(org))
    assert result.returncode == 0, result.stderr
    assert f"{total} events in {RUNS} run(s)" in result.stdout
