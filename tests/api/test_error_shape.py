"""Errors as a newcomer meets them: `{"error": code, "detail": a sentence}`, no label noise."""

import uuid

import pytest

from governance.models import Connection, Run
from tests.conftest import Api, run_body

pytestmark = pytest.mark.django_db


def assert_plain_error(response, status: int, code: str, detail: str) -> None:
    assert response.status_code == status
    body = response.json()
    assert (body["error"], body["detail"]) == (code, detail)


def test_auth_failures_say_what_is_wrong_without_repeating_their_label(org):
    run = f"/v1/runs/{uuid.uuid4()}"
    assert_plain_error(
        Api().get(run), 401, "unauthenticated", "Authentication credentials were not provided."
    )
    assert_plain_error(Api("fbx_not-a-key").get(run), 401, "unauthenticated", "invalid API key")


def test_not_found_and_wrong_method_are_plain_sentences(operator):
    assert_plain_error(operator.get(f"/v1/runs/{uuid.uuid4()}"), 404, "not_found", "no such run")
    assert_plain_error(operator.get("/v1/nothing-here"), 404, "not_found", "no such endpoint")
    assert_plain_error(
        operator.get("/v1/runs"), 405, "method_not_allowed", 'Method "GET" not allowed.'
    )


def test_a_form_level_problem_is_a_sentence_and_field_problems_name_their_field(auditor):
    both = Api(user=auditor).post(
        "/v1/policies/default/evaluate", {"call": "read_file:x", "tool": "read_file"}
    )
    assert both.status_code == 400
    assert not both.json()["detail"].startswith(("non_field_errors", "detail"))
    assert both.json()["detail"] == "give either call or tool (+ arguments)"


def test_field_problems_still_name_the_field(operator):
    response = operator.post("/v1/runs", run_body(budget_tokens="lots"))
    assert_plain_error(response, 400, "invalid", "budget_tokens: A valid integer is required.")
    assert response.json()["fields"] == {"budget_tokens": ["A valid integer is required."]}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/approvals/99999/decision", '{"decision": "\\udc00"}'),
        ("/v1/bindings/99999/consent", '{"decision": "\\udc00"}'),
        ("/v1/runs", '{"agent": "x", "policy": "default", "source": {"kind": "\\ud800"}}'),
        (
            "/v1/runs",
            '{"agent": "x", "policy": "default", "source": {"kind": "manual"}, '
            '"autonomy": "\\ud800"}',
        ),
        (
            "/v1/runs",
            '{"agent": "x", "policy": "default", "source": {"kind": "manual"}, '
            '"trust_tier": "\\ud800"}',
        ),
        ("/v1/connections", '{"slug": "x", "kind": "\\ud800", "transport": "stdio"}'),
        ("/v1/connections", '{"slug": "x", "kind": "shared", "transport": "\\ud800"}'),
    ],
)
def test_a_lone_surrogate_in_a_choice_is_a_400_that_quotes_it_escaped(
    org, operator_key, approver, path, body
):
    """DRF's message quotes the choice it refuses, and UTF-8 cannot encode a lone surrogate:
    the 400 had become a 500 while being written."""
    person = Api(user=approver) if "approvals" in path or "bindings" in path else None
    api = person or Api(operator_key)
    before = {model: model.objects.count() for model in (Run, Connection)}

    response = api.client.post(path, data=body, content_type="application/json")

    assert response.status_code == 400, response.content[:300]
    assert "\\ud" in response.json()["detail"]
    assert {model: model.objects.count() for model in (Run, Connection)} == before


@pytest.mark.parametrize("path", ["/v1/mcp", "/v1/runs"])
def test_a_host_the_server_does_not_answer_to_is_a_json_400_on_the_api(operator_key, path):
    response = Api(operator_key).client.post(
        path, data="{}", content_type="application/json", HTTP_HOST="evil.example"
    )

    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["error"] == "invalid"
    assert "Host header" in response.json()["detail"]
