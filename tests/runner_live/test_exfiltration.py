"""curl from the sandbox, against a live gate: it runs only under an explicit ALWAYS rule, and
only from an executor configured with it. A listener on 127.0.0.1 is the data's destination."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from governance.services.policies import policy_save
from runner import Executor, GateClient, GatedToolbox, ToolRunner, Workspace
from tests.runner_live.conftest import create_run, decide

pytestmark = pytest.mark.slow


class Listener:
    """An HTTP server that records every request path it receives."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                listener.paths.append(self.path)
                body = b"the listener received the request"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


@pytest.fixture
def curl_policy(org, listener):
    """ALWAYS for one exact curl call; any other curl asks a human."""
    policy_save(
        org=org,
        text=f"""
name: default
rules:
  - pattern: "run_command:curl -s {listener.url}/explicit"
    action: ALWAYS
  - pattern: "run_command:curl *"
    action: ASK
""",
        author=None,
    )
    return org


def sandbox(server, operator, tmp_path, *, curl_configured: bool):
    run_id, token = create_run(operator)
    workspace = Workspace(tmp_path)
    exfiltration = frozenset({"curl"}) if curl_configured else frozenset()
    executor = Executor(workspace, exfiltration_programs=exfiltration)
    client = GateClient(server.url, run_id, token)
    return GatedToolbox(ToolRunner(client, workspace, executor, total_wait=0)), client


def test_curl_under_an_always_rule_is_refused_by_an_executor_not_configured_for_it(
    fluidbox_server, curl_policy, operator, listener, tmp_path
):
    toolbox, client = sandbox(fluidbox_server, operator, tmp_path, curl_configured=False)

    result = toolbox.call("run_command", {"command": f"curl -s {listener.url}/explicit"})
    client.close()

    assert (result.decision.decision, result.decision.rule_action) == ("allow", "ALWAYS")
    assert result.is_error
    assert "can send data out of the sandbox" in result.text
    assert listener.paths == []


def test_curl_approved_by_a_human_is_still_refused(
    fluidbox_server, curl_policy, operator, approver_key, listener, tmp_path
):
    toolbox, client = sandbox(fluidbox_server, operator, tmp_path, curl_configured=True)
    command = {"command": f"curl -s {listener.url}/approved"}

    waiting = toolbox.call("run_command", command, tool_call_id="c-curl")
    approval_id = waiting.decision.approval["id"]
    assert decide(fluidbox_server.url, approver_key, approval_id).status_code == 200
    result = toolbox.call("run_command", command, tool_call_id="c-curl")
    client.close()

    assert waiting.decision.pending
    assert (result.decision.decision, result.decision.source) == ("allow", "approval")
    assert result.is_error
    assert "only under an explicit ALWAYS rule" in result.text
    assert listener.paths == []


def test_curl_runs_under_an_explicit_always_rule_from_a_configured_executor(
    fluidbox_server, curl_policy, operator, listener, tmp_path
):
    toolbox, client = sandbox(fluidbox_server, operator, tmp_path, curl_configured=True)

    result = toolbox.call("run_command", {"command": f"curl -s {listener.url}/explicit"})
    client.close()

    assert not result.is_error, result.text
    assert "the listener received the request" in result.text
    assert listener.paths == ["/explicit"]
