"""Errors as a newcomer meets them: `{"error": code, "detail": a sentence}`, no label noise."""

import uuid

import pytest

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
