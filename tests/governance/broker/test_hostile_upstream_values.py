"""What a hostile upstream answers that no record or JSON response can carry as it came.

A review (stop 52) ran a server answering an error whose message holds a NUL: PostgreSQL
refused to record it, the brokered call was a 500 and stayed `running` for good (its retry
replayed `running`), no `tool.brokered` event was written. And a result holding `NaN` or
`Infinity`, which the SDK's reader takes: the call was recorded as succeeded, then the JSON
answer could not be written, a 500, and the retry replayed no result. Both are tool errors
now, recorded, never a 500 (README, the broker).
"""

import pytest

from governance.models import ToolCall
from ledger.chain_checks import chain_verify
from ledger.models import Event
from tests.governance.broker.support import brokered_run, call, connect

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"fail_with_invisible_characters": True}, "error -32050: bad thing evil here"),
        ({"answer_nan": True}, "not JSON (NaN or infinity)"),
    ],
)
def test_what_no_record_can_hold_is_a_recorded_tool_error_not_a_500(
    broker_org, operator, echo_server, arguments, said
):
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)

    answer = call(runner, run_id, "crm.lookup", {"id": "1", **arguments})

    assert answer["result"]["isError"] is True
    assert answer["broker"]["status"] == "failed"
    text = answer["result"]["content"][0]["text"]
    assert said in " ".join(text.split())
    assert not any(ch in text for ch in "\x00\u202e\u202c")
    recorded = ToolCall.objects.get(run_id=run_id)
    assert recorded.broker_status == "failed" and "\x00" not in recorded.broker_error
    brokered = Event.objects.get(run_id=run_id, type="tool.brokered")
    assert brokered.data["status"] == "failed"
    retry = call(runner, run_id, "crm.lookup", {"id": "1", **arguments})
    assert retry["replayed"] is True and retry["broker"]["status"] == "failed"
    assert len(echo_server.calls()) == 1
    assert chain_verify(run_id) == []
