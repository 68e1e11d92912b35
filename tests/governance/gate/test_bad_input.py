"""Bad input gets a clear 4xx JSON error and writes nothing. Never a 500."""

import json

import pytest

from governance.models import ToolCall
from ledger.models import Event

GOOD = {"session_id": "s", "tool_call_id": "c", "tool": "read_file", "arguments": {"path": "a"}}


def counts(run_id):
    return ToolCall.objects.filter(run_id=run_id).count(), Event.objects.filter(
        run_id=run_id
    ).count()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        {},
        {**GOOD, "arguments": "not-an-object"},
        {**GOOD, "arguments": [1, 2]},
        {**GOOD, "arguments": None},
        {**GOOD, "tool": "bad name with spaces"},
        {**GOOD, "tool": "x" * 129},
        {**GOOD, "tool": 7},
        {**GOOD, "session_id": ""},
        {**GOOD, "session_id": "s" * 201},
        {**GOOD, "tool_call_id": None},
        {**GOOD, "wait_seconds": 31},
        {**GOOD, "wait_seconds": -1},
        {**GOOD, "wait_seconds": "soon"},
        {k: v for k, v in GOOD.items() if k != "tool"},
    ],
)
def test_malformed_gate_requests_get_400_and_write_nothing(make_run, body):
    run_id, runner = make_run()
    before = counts(run_id)
    response = runner.post(f"/v1/runs/{run_id}/permission", body)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid"
    assert response.json()["detail"]
    assert counts(run_id) == before


@pytest.mark.django_db
def test_malformed_json_is_a_400(make_run):
    run_id, runner = make_run()
    response = runner.client.post(
        f"/v1/runs/{run_id}/permission", data="{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid"


@pytest.mark.django_db
def test_a_non_json_content_type_is_a_415(make_run):
    run_id, runner = make_run()
    response = runner.client.post(
        f"/v1/runs/{run_id}/permission",
        data="a=b",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 415
    assert response.json()["error"] == "unsupported_media_type"


@pytest.mark.django_db
def test_arguments_over_256_kib_are_refused_and_nothing_is_written(make_run):
    run_id, runner = make_run()
    before = counts(run_id)
    body = {**GOOD, "arguments": {"path": "a" * (257 * 1024)}}
    response = runner.post(f"/v1/runs/{run_id}/permission", body)
    assert response.status_code == 400
    assert "256" in response.json()["detail"] or "262144" in response.json()["detail"]
    assert counts(run_id) == before


@pytest.mark.django_db
def test_a_body_over_the_upload_limit_is_a_413(make_run):
    run_id, runner = make_run()
    body = json.dumps({**GOOD, "arguments": {"path": "a" * (600 * 1024)}})
    response = runner.client.post(
        f"/v1/runs/{run_id}/permission", data=body, content_type="application/json"
    )
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"


@pytest.mark.django_db
@pytest.mark.parametrize("run_id", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_an_unknown_run_is_404(make_run, run_id):
    _, runner = make_run()
    response = runner.post(f"/v1/runs/{run_id}/permission", GOOD)
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


@pytest.mark.django_db
def test_another_runs_token_is_refused_and_writes_nothing(make_run):
    first_id, _ = make_run()
    _, second = make_run()
    before = counts(first_id)
    response = second.post(f"/v1/runs/{first_id}/permission", GOOD)
    assert response.status_code == 404
    assert counts(first_id) == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        {},
        {"agent": "a", "policy": "default", "source": {"kind": "manual"}},
        {"agent": "a", "policy": "default", "source": {"kind": "weird"}, "budget_tokens": 1},
        {"agent": "a", "policy": "nope", "source": {"kind": "manual"}, "budget_tokens": 1},
        {"agent": "a", "policy": "default", "source": {"kind": "manual"}, "budget_tokens": -5},
        {
            "agent": "a",
            "policy": "default",
            "source": {"kind": "manual"},
            "budget_tokens": 1,
            "bundles": ["missing"],
        },
        {
            "agent": "a",
            "policy": "default",
            "source": {"kind": "manual"},
            "budget_tokens": 1,
            "connections": ["missing"],
        },
        {"agent": "a", "policy": "default", "source": "manual", "budget_tokens": 1},
        {
            "agent": "a",
            "policy": "default",
            "source": {"kind": "manual"},
            "budget_tokens": 1,
            "autonomy": "yolo",
        },
        {
            "agent": "a",
            "policy": "default",
            "source": {"kind": "manual"},
            "budget_tokens": 1,
            "invoked_by": "nobody",
        },
    ],
)
def test_bad_run_creation_is_a_400_and_creates_nothing(operator, body):
    from governance.models import Run

    response = operator.post("/v1/runs", body)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid"
    assert Run.objects.count() == 0
