"""Frozen schemas: guarded at freeze time, validated without the network, crash-safe."""

import socket

import pytest

from governance.models import FrozenTool
from governance.services.bundles import bundle_import
from tests.conftest import run_body
from tests.governance.gate.test_pipeline import ask


def nested(depth: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


HOSTILE_BUNDLE = """
name: hostile
tools:
  - name: deep_tool
    access: read
    schema: {deep}
  - name: huge_tool
    access: read
    schema: {huge}
  - name: remote_ref_tool
    access: read
    schema: {{type: object, properties: {{x: {{$ref: "http://127.0.0.1:9/evil.json"}}}}}}
  - name: file_ref_tool
    access: read
    schema: {{type: object, properties: {{x: {{$ref: "file:///etc/passwd"}}}}}}
  - name: local_ref_tool
    access: read
    schema: {{type: object, $defs: {{s: {{type: string}}}},
             properties: {{x: {{$ref: "#/$defs/s"}}}}}}
  - name: redos_tool
    access: read
    schema: {{type: object, properties: {{x: {{type: string, pattern: "^(a+)+$"}}}}}}
"""


@pytest.fixture
def hostile_run(org, operator):
    import json

    huge = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "d" * 100} for i in range(800)},
    }
    text = HOSTILE_BUNDLE.format(deep=json.dumps(nested(40)), huge=json.dumps(huge))
    bundle_import(org=org, text=text)
    response = operator.post("/v1/runs", run_body(bundles=["hostile"]))
    assert response.status_code == 201, response.content
    from tests.conftest import Api

    return response.json()["id"], Api(response.json()["session_token"]), response.json()


@pytest.mark.django_db
def test_too_deep_too_large_and_remote_refs_freeze_as_uncallable(hostile_run):
    run_id, runner, created = hostile_run
    tools = {tool["name"]: tool for tool in created["tools"]}
    assert tools["deep_tool"]["callable"] is False
    assert "deeper" in tools["deep_tool"]["guard_error"]
    assert tools["huge_tool"]["callable"] is False
    assert "bytes" in tools["huge_tool"]["guard_error"]
    assert tools["remote_ref_tool"]["callable"] is False
    assert tools["file_ref_tool"]["callable"] is False
    assert tools["local_ref_tool"]["callable"] is True
    for name in ("deep_tool", "huge_tool", "remote_ref_tool", "file_ref_tool"):
        answer = ask(runner, run_id, name, {"x": "y"}, call_id=f"c-{name}")
        assert (answer["decision"], answer["source"]) == ("deny", "schema")


@pytest.mark.django_db
def test_validation_never_opens_a_socket(hostile_run, monkeypatch):
    run_id, runner, _ = hostile_run
    opened = []
    real_connect = socket.socket.connect

    def spy(self, address):
        opened.append(address)
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", spy)
    # A remote $ref smuggled past the guard (edited into the frozen row) is still refused.
    FrozenTool.objects.filter(run_id=run_id, name="remote_ref_tool").update(
        callable=True, guard_error=""
    )
    answer = ask(runner, run_id, "remote_ref_tool", {"x": "y"}, call_id="c-remote")
    assert (answer["decision"], answer["source"]) == ("deny", "schema")
    answer = ask(runner, run_id, "local_ref_tool", {"x": 5}, call_id="c-local")
    assert (answer["decision"], answer["source"]) == ("deny", "schema")
    assert opened == []


@pytest.mark.django_db
@pytest.mark.timeout(20)
def test_a_pathological_pattern_is_a_clean_deny(hostile_run):
    run_id, runner, _ = hostile_run
    answer = ask(runner, run_id, "redos_tool", {"x": "a" * 40 + "!"})
    assert (answer["decision"], answer["source"]) == ("deny", "schema")
