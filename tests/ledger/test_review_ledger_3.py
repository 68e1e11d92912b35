"""A third review of audit-log streaming, from the side of the organization's admin who
configures a sink and of the receiver that gets (or must not get) the ledger."""

import pytest
from django.test import override_settings

from ledger.models import AuditSink, Event
from ledger.sinks import sink_create, sink_update
from ledger.streaming import sink_lag, sinks_deliver
from tests.conftest import Api
from tests.support.receivers import SinkReceiver


def gate_calls(runner: Api, run_id: str, count: int = 3) -> None:
    for index in range(count):
        response = runner.post(
            f"/v1/runs/{run_id}/permission",
            {
                "session_id": "s",
                "tool_call_id": f"c-{index}",
                "tool": "read_file",
                "arguments": {"path": f"/workspace/{index}"},
            },
        )
        assert response.status_code == 200, response.content


@pytest.mark.django_db(transaction=True)
def test_a_sink_added_inactive_with_a_small_bound_is_saved_as_entered(org, admin_user, make_run):
    """Defect: the admin's Add form shows "Is active" and "Max backlog", but the sink is
    created active with the default bound of a million whatever was entered. An admin who
    adds a sink switched off (to finish setting up the receiver, or to enable it after a
    review) has the organization's whole ledger streamed to the URL at the streamer's next
    pass; the bound entered is silently replaced by the default."""
    with SinkReceiver() as receiver:
        added = Api(user=admin_user).client.post(
            "/admin/ledger/auditsink/add/",
            {
                "org": org.pk,
                "name": "staged",
                "kind": "jsonl",
                "url": f"http://127.0.0.1:{receiver.port}/ingest",
                "token": "",
                # "is_active" left unchecked: not posted
                "max_backlog": 50,
            },
        )
        assert added.status_code == 302, added.content.decode()[:2000]
        run_id, runner = make_run()
        gate_calls(runner, run_id)
        sinks_deliver()
        sink = AuditSink.objects.get(org=org, name="staged")
        assert (sink.is_active, sink.max_backlog) == (False, 50)
        assert receiver.lines() == []  # nothing goes to a sink that was added switched off


class HookedReceiver(SinkReceiver):
    """A sink that runs `hook` once, while it holds its first request (before answering)."""

    def __init__(self, hook) -> None:
        super().__init__()
        self.hook = hook

    def handle(self, handler, body):
        hook, self.hook = self.hook, None
        if hook is not None:
            hook()
        return super().handle(handler, body)


@pytest.mark.django_db(transaction=True)
@override_settings(FLUIDBOX_SINK_PARALLEL=1)
def test_a_sinks_new_url_is_where_the_next_batch_goes(org, make_run):
    """Defect: a pass loads every due sink first, then delivers them in turn (each may wait
    out its timeout: 10 s, a dead sink ahead can take long). A sink's URL and token changed
    by its admin meanwhile are not read again when the pass takes the sink's lease: the
    batch goes to the old URL, with the old token, after the admin moved the sink away
    from it (an endpoint given back, or one found to be the wrong party's)."""
    with SinkReceiver() as old, SinkReceiver() as new:
        moving = sink_create(
            org=org,
            name="moving",
            kind="jsonl",
            url=f"http://127.0.0.1:{old.port}/ingest",
            token="old-token-123456",
        )

        def admin_moves_the_sink():
            sink_update(
                sink=AuditSink.objects.get(pk=moving.pk),
                url=f"http://127.0.0.1:{new.port}/ingest",
                is_active=True,
                max_backlog=1_000_000,
                new_token="new-token-654321",
            )

        with HookedReceiver(admin_moves_the_sink) as slow:
            # Created after `moving`, but delivered first: `moving` already failed once.
            sink_create(org=org, name="ahead", kind="jsonl", url=f"http://127.0.0.1:{slow.port}/")
            AuditSink.objects.filter(pk=moving.pk).update(consecutive_failures=1)
            run_id, runner = make_run()
            gate_calls(runner, run_id)
            sinks_deliver()  # `ahead`, while it is answered the sink moves; then `moving`

            assert old.lines() == [], "events went to the URL the sink was moved away from"
            assert old.headers == []
            sinks_deliver()
            assert {line["idempotency_key"] for line in new.lines()} == {
                f"{run_id}:{seq}"
                for seq in Event.objects.filter(run_id=run_id).values_list("seq", flat=True)
            }
            assert {h["Authorization"] for h in new.headers} == {"Bearer new-token-654321"}
            assert sink_lag(AuditSink.objects.get(pk=moving.pk)) == 0
