"""An auditor's timeline cursor, attacked with spellings of `after` the stream's own
`Last-Event-ID` refuses: a number past any seq, a second `after`, a sign, non-ASCII digits.

`GET /v1/runs/{id}/events?after=N` and `…/events/stream?after=N` read `after` with DRF's
IntegerField from `query_params.dict()`. That field takes `+1` and `١` (ARABIC-INDIC DIGIT
ONE) as 1 and any number of digits, and `.dict()` keeps the last of `?after=1&after=2`
without a word; the same cursor given as `Last-Event-ID` is held to `[0-9]{1,18}` and
refused otherwise. A cursor is a seq: it is refused (400, the error shape) in every spelling
the seq is not written in, never answered with a page of "nothing after" that a client
would take for the end of the timeline (the events API echoed
`"next_after": 99999999999999999999`, past the largest seq a run can have)."""

import pytest
from django.test import Client

from tests.conftest import Api, run_body

pytestmark = pytest.mark.django_db

NOT_A_SEQ = [
    "after=99999999999999999999",  # 20 digits: past any seq (Last-Event-ID stops at 18)
    "after=9223372036854775808",  # 2**63: no database integer holds it
    "after=+1",  # a sign: another spelling of 1
    "after=%D9%A1",  # ARABIC-INDIC DIGIT ONE: another spelling of 1
    "after=1&after=5",  # two cursors: which one did the client mean?
]


def _body(response) -> bytes:
    if response.streaming:
        body = b"".join(response.streaming_content)
        response.close()
        return body
    return response.content


@pytest.mark.parametrize("query", NOT_A_SEQ)
def test_the_events_api_refuses_a_cursor_that_is_not_a_seq(make_run, operator, query):
    # Proves: the catch-up page answers a bad cursor with a 400 in the error shape, not a
    # 200 page of no events whose `next_after` a client would resume from.
    run_id, _runner = make_run()
    response = operator.get(f"/v1/runs/{run_id}/events?{query}")
    assert response.status_code == 400, (query, response.content[:300])
    assert response.json()["error"] == "invalid"


@pytest.mark.parametrize("query", NOT_A_SEQ)
def test_the_event_stream_refuses_a_cursor_its_last_event_id_would_refuse(
    make_run, operator, query, settings
):
    # Proves: `?after=` on the SSE stream is held to what `Last-Event-ID` is held to; before,
    # the stream opened (holding one of the credential's wait slots) and kept alive on a
    # cursor no event would ever pass.
    settings.FLUIDBOX_STREAM_SECONDS = 1
    run_id, _runner = make_run()
    response = operator.get(f"/v1/runs/{run_id}/events/stream?{query}")
    body = _body(response)
    assert response.status_code == 400, (query, body[:300])
    assert b'"error":"invalid"' in body.replace(b" ", b"")


def test_a_seq_spelt_as_written_still_pages_and_streams(make_run, operator, settings):
    # The fix refuses spellings only: the ordinary cursor still resumes exactly after it.
    settings.FLUIDBOX_STREAM_SECONDS = 1
    run_id, _runner = make_run()
    page = operator.get(f"/v1/runs/{run_id}/events?after=0&limit=1000")
    assert page.status_code == 200
    assert [e["seq"] for e in page.json()["events"]] == [1]
    assert page.json()["next_after"] == 1
    assert operator.get(f"/v1/runs/{run_id}/events?after=1").json() == {
        "events": [],
        "next_after": 1,
    }
    stream = operator.get(f"/v1/runs/{run_id}/events/stream?after=0")
    assert stream.status_code == 200
    assert b"id: 1\nevent: run.created\n" in _body(stream)


# --- the frozen source on the timeline page ----------------------------------------------

CLONE_TOKEN = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"


def test_a_token_in_the_runs_source_is_masked_on_the_timeline_as_in_its_ledger(operator, auditor):
    # Proves: a CI that names the run's source with its clone URL (GitHub Actions' own form,
    # `https://x-access-token:<token>@github.com/...`) has the token masked in run.created,
    # the ledger an auditor reads over the API; the auditor's timeline page showed the same
    # frozen source unmasked, from the run's row, in its "source" detail.
    repository = f"https://x-access-token:{CLONE_TOKEN}@github.com/acme/app"
    created = operator.post(
        "/v1/runs", run_body(source={"kind": "manual", "repository": repository})
    )
    assert created.status_code == 201, created.content
    run_id = created.json()["id"]

    ledger = operator.get(f"/v1/runs/{run_id}/events")
    assert ledger.status_code == 200
    assert CLONE_TOKEN not in ledger.content.decode()  # the ledger's envelope: masked

    client = Client()
    client.force_login(auditor)
    page = client.get(f"/admin/governance/run/{run_id}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert CLONE_TOKEN not in html
    assert "https://x-access-token:[redacted]" in html  # still shown, as run.created holds it
    assert 'id="frozen-differs"' not in html  # and the row still agrees with run.created


@pytest.mark.parametrize(
    "path",
    [
        "/v1/approvals?status=pending&status=denied",
        "/v1/ledger/checkpoints?limit=1&limit=50",
    ],
)
def test_a_query_parameter_given_twice_is_refused_on_every_endpoint(admin_user, path):
    # Read with `QueryDict.dict()`, the last of the two won silently; every endpoint now
    # reads its query through one reader that refuses a repeated name.
    response = Api(user=admin_user).get(path)
    assert response.status_code == 400, response.content
    assert "given more than once" in response.content.decode()
