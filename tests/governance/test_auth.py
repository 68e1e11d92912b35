"""Credentials from the attacker's side: every wrong one is a JSON 4xx, never a 500."""

import pytest

from governance.services.orgs import api_key_create, api_key_revoke
from tests.conftest import Api


@pytest.mark.django_db
def test_a_revoked_key_is_refused_with_401(org, make_run):
    issued = api_key_create(org=org, name="old")
    run_id, _ = make_run()
    api_key_revoke(key=issued.key)
    response = Api(issued.plaintext).get(f"/v1/runs/{run_id}")
    assert response.status_code == 401
    assert response.json()["error"] == "unauthenticated"
    assert "revoked" in response.json()["detail"]


@pytest.mark.django_db
def test_another_orgs_key_gets_404_for_this_orgs_run(make_run, other_operator):
    run_id, _ = make_run()
    response = other_operator.get(f"/v1/runs/{run_id}")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer a b",
        "Basic dXNlcjpwYXNz",
        "Bearer fbx_" + "x" * 300,
        "Bearer not-a-fluidbox-key",
        "Bearer fbx_unknown",
        "Bearer fbr_unknown",
    ],
)
def test_malformed_or_unknown_credentials_get_401_json(org, header):
    api = Api()
    response = api.client.get("/v1/approvals", HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert response.json()["error"] == "unauthenticated"


@pytest.mark.django_db
def test_a_non_ascii_header_is_refused_not_crashed(org):
    api = Api()
    response = api.client.get("/v1/approvals", HTTP_AUTHORIZATION="Bearer fbx_\u00e9\u00e9")
    assert response.status_code in (401, 403)
    assert "error" in response.json()


@pytest.mark.django_db
def test_no_credentials_is_401(org):
    response = Api().get("/v1/approvals")
    assert response.status_code in (401, 403)
    assert response.json()["error"] in ("unauthenticated", "forbidden")


@pytest.mark.django_db
def test_an_operator_key_cannot_use_the_gate(make_run, operator):
    run_id, _ = make_run()
    response = operator.post(
        f"/v1/runs/{run_id}/permission",
        {"session_id": "s", "tool_call_id": "c", "tool": "read_file", "arguments": {"path": "x"}},
    )
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"


@pytest.mark.django_db
def test_a_finished_runs_token_stops_working(make_run):
    run_id, runner = make_run()
    assert runner.post(f"/v1/runs/{run_id}/finish").status_code == 200
    response = runner.post(
        f"/v1/runs/{run_id}/permission",
        {"session_id": "s", "tool_call_id": "c", "tool": "read_file", "arguments": {"path": "x"}},
    )
    assert response.status_code == 401


@pytest.mark.django_db
def test_one_runs_token_cannot_read_another_run(make_run):
    first_id, _ = make_run()
    _, second = make_run()
    assert second.get(f"/v1/runs/{first_id}/events").status_code == 404


@pytest.mark.django_db
def test_a_superuser_in_the_portal_reads_any_orgs_timeline(make_run):
    from django.contrib.auth.models import User

    run_id, _ = make_run()
    root = User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    response = Api(user=root).get(f"/v1/runs/{run_id}/events")
    assert response.status_code == 200
    assert response.json()["events"][0]["type"] == "run.created"
