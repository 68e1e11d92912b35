"""The brokered call's fast path, attacked from outside (a run's session token, a member's key).

The speed work folded the broker's claim into the gate's record (the binding re-read by the
recording statement), read the called tool with the token on `/v1/mcp` (from a parse of the
body of our own, before the SDK parses it), appended the broker's outcome at the chain head
its decision left, and read address literals without the resolver. Each test here is a
bypass attempt on one of those, and asserts what the attacker gets: a refusal, nothing
recorded or a refusal recorded, and an upstream MCP server (a real one, on 127.0.0.1) that
saw nothing it should not have.
"""

import json
import socket
import threading
from http.server import ThreadingHTTPServer

import anyio
import httpx
import httpx2
import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connections
from django.test import Client

from governance.authentication import Actor, ActorKind
from governance.egress import EgressRefused, EgressRules, GuardedTransport, parse_entry
from governance.models import Connection, Membership, Role, Run, ToolCall
from governance.services.connections import connection_reconnect, connection_revoke
from governance.services.orgs import api_key_create, user_create
from governance.services.policies import policy_save
from governance.services.runs import run_finish
from ledger.chain_checks import chain_verify
from ledger.models import Event
from tests.conftest import Api, run_body
from tests.governance.broker.support import BROKER_POLICY, ECHO_TOOLS, connect
from tests.redirecting_server import Redirector
from tests.support.waiting import wait_until

ERAS = ["legacy", "2026-07-28"]
ENCODINGS = ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"]
# What a 2026-07-28 request carries in `params._meta` instead of an initialize handshake.
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "attacker", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def row_counts() -> dict[str, int]:
    return {model._meta.label: model._base_manager.count() for model in apps.get_models()}


def post_mcp(token: str, raw: bytes, *, era: str, name: str = "") -> tuple[int, dict]:
    """POST raw bytes to `/v1/mcp` in-process, as a client of `era` would (the 2026-07-28
    era mirrors the method and the tool's name in headers)."""
    status, body = post_mcp_raw(token, raw, era=era, name=name)
    return status, json.loads(body)


def post_mcp_raw(token: str, raw: bytes, *, era: str, name: str = "") -> tuple[int, bytes]:
    headers = {
        "HTTP_AUTHORIZATION": f"Bearer {token}",
        "HTTP_ACCEPT": "application/json, text/event-stream",
    }
    if era == "legacy":
        headers["HTTP_MCP_PROTOCOL_VERSION"] = "2025-06-18"
    else:
        headers.update(
            HTTP_MCP_PROTOCOL_VERSION="2026-07-28",
            HTTP_MCP_METHOD="tools/call",
            HTTP_MCP_NAME=name,
        )
    response = Client().generic("POST", "/v1/mcp", raw, content_type="application/json", **headers)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response.status_code, body


def call_body(name, arguments, *, era: str, call_id: str, request_id=1) -> dict:
    meta = {"fluidbox/toolCallId": call_id}
    if era != "legacy":
        meta.update(MODERN_META)
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta},
    }


def call_tool(token, name, arguments, *, era="legacy", call_id="c-1") -> tuple[int, dict]:
    body = json.dumps(call_body(name, arguments, era=era, call_id=call_id)).encode()
    return post_mcp(token, body, era=era, name=name)


def result_text(answer: dict) -> str:
    return " ".join(block.get("text", "") for block in answer["result"]["content"])


@pytest.fixture(autouse=True)
def endpoint_threads_let_go_of_the_database(monkeypatch):
    """The in-process endpoint's database threads keep their connection between jobs (for
    30 s idle); after each test here they end within moments, so the test database is
    not held open past the test."""
    from governance.mcp_server import db_threads

    monkeypatch.setattr(db_threads, "IDLE_SECONDS", 0.2)
    yield
    wait_until(
        lambda: not any(t.name == "fluidbox-mcp-db" for t in threading.enumerate()),
        "the endpoint's database threads to end",
    )


@pytest.fixture
def crm_run(broker_org, operator, echo_server):
    """A run bound to the shared `crm` connection (policy: lookup and update ALWAYS)."""
    connection_id = connect(operator, echo_server)
    created = operator.post("/v1/runs", run_body(bundles=[], connections=["crm"])).json()
    return {"id": created["id"], "token": created["session_token"], "connection": connection_id}


# --- our parse of the body and the SDK's -------------------------------------------------


def _swapped(era: str) -> str:
    """One `tools/call` naming `crm__lookup` first and `crm__update` last: a reader that
    keeps the first key (a reviewer, a proxy, a log) sees one call, the SDK runs another."""
    meta = json.dumps({"fluidbox/toolCallId": "swap", **(MODERN_META if era != "legacy" else {})})
    return (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "crm__lookup", '
        f'"arguments": {{"id": "1"}}, "_meta": {meta}, "name": "crm__update"}}}}'
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("era", ERAS)
def test_a_body_in_another_encoding_cannot_carry_a_second_tool_name(crm_run, echo_server, era):
    """Python's `json.loads` (the 2026-07-28 server's reader, and the token check's) reads
    bytes in UTF-16 or UTF-32, skips a UTF-8 byte order mark and lets UTF-8-encoded
    surrogates through; the duplicate-key check read the body as strict UTF-8 only, so such
    a body escaped it and ran the last name. Each is refused as the same body in UTF-8 is,
    before any gate, and nothing reaches the upstream."""
    swapped = _swapped(era)
    bodies = {encoding: swapped.encode(encoding) for encoding in ENCODINGS}
    # A raw UTF-8-encoded surrogate (not an escape) inside a string of the body.
    bodies["encoded surrogate"] = swapped.replace('"1"', '"1\udc00"').encode(
        "utf-8", "surrogatepass"
    )
    before = row_counts()
    for label, raw in bodies.items():
        status, answer = post_mcp(crm_run["token"], raw, era=era, name="crm__update")
        assert status == 400, (label, answer)
        assert answer["error"]["code"] == -32700, (label, answer)
    assert row_counts() == before
    assert echo_server.calls() == []
    # The same body in UTF-8 is refused for its duplicate key.
    status, answer = post_mcp(crm_run["token"], swapped.encode(), era=era, name="crm__update")
    assert status == 400 and "duplicate key 'name'" in answer["error"]["message"]
    # The control: a clean UTF-8 call is served.
    status, answer = call_tool(crm_run["token"], "crm__lookup", {"id": "1"}, era=era)
    assert status == 200 and answer["result"]["isError"] is False, answer
    assert [call["tool"] for call in echo_server.calls()] == ["lookup"]


def post_raw_lookup(token: str, arguments: str, *, era: str) -> tuple[int, dict]:
    """A `tools/call` of crm__lookup (request id 7) whose arguments are raw JSON text."""
    meta = json.dumps({"fluidbox/toolCallId": "odd", **(MODERN_META if era != "legacy" else {})})
    raw = (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "crm__lookup", '
        f'"arguments": {arguments}, "_meta": {meta}}}}}'
    ).encode()
    return post_mcp(token, raw, era=era, name="crm__lookup")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("era", "arguments"),
    [
        ("legacy", '{"id": "a\\u0000b"}'),
        ("legacy", '{"id": "1", "x\\u0000": "2"}'),
        ("2026-07-28", '{"id": "a\\u0000b"}'),
    ],
)
def test_arguments_the_ledger_cannot_store_are_a_tool_error_and_nothing_runs(
    crm_run, echo_server, era, arguments
):
    """REST refuses arguments holding a NUL or an unpaired surrogate with a 400; through
    `/v1/mcp` they reached the gate's digest (a surrogate has no UTF-8 form) or PostgreSQL's
    jsonb (no NUL), and the client got the SDK's `Internal server error` (on SQLite a NUL
    even reached the upstream). Now: a tool error saying why, nothing recorded, no call."""
    before = row_counts()
    status, answer = post_raw_lookup(crm_run["token"], arguments, era=era)
    assert status == 200, answer
    assert "error" not in answer, answer
    assert answer["result"]["isError"] is True
    assert "NUL characters" in result_text(answer)
    assert row_counts() == before
    assert echo_server.calls() == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
@pytest.mark.parametrize(
    "arguments", ['{"id": "\\ud800"}', '{"\\udc00": "1"}', '{"id": ["ok", {"deep": "\\udbff"}]}']
)
def test_a_lone_surrogate_is_refused_as_not_text_in_both_eras(crm_run, echo_server, era, arguments):
    """An unpaired surrogate has no UTF-8 form: the ledger cannot hold it, and the SDK's
    parser refused it in one era (with a message about hex escapes) and read it in the
    other. Both eras: a parse error naming it, with the request's id; nothing recorded."""
    before = row_counts()
    status, answer = post_raw_lookup(crm_run["token"], arguments, era=era)
    assert status == 400, answer
    assert answer["error"]["code"] == -32700 and answer["id"] == 7
    assert "lone surrogate" in answer["error"]["message"]
    assert row_counts() == before
    assert echo_server.calls() == []
    # A pair is one character, read as always.
    status, answer = call_tool(crm_run["token"], "crm__lookup", {"id": "\U0001f600"}, era=era)
    assert status == 200 and answer["result"]["isError"] is False, answer


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("era", ERAS)
def test_a_batch_or_a_name_of_another_type_never_runs_a_tool(crm_run, echo_server, era):
    """The token check reads the tool of a single `tools/call` only; a batch, or a name
    that is not a string, is no call to anyone: refused by the SDK, nothing recorded."""
    token = crm_run["token"]
    lookup = call_body("crm__lookup", {"id": "1"}, era=era, call_id="b-1")
    update = call_body("crm__update", {"id": "1"}, era=era, call_id="b-2", request_id=2)
    before = row_counts()
    status, answer = post_mcp(token, json.dumps([lookup, update]).encode(), era=era, name="x")
    assert 400 <= status < 500, answer
    assert "result" not in json.dumps(answer)
    # A `tools/call` without an id is a notification: acknowledged, never run.
    notification = {key: value for key, value in lookup.items() if key != "id"}
    status, _ = post_mcp_raw(token, json.dumps(notification).encode(), era=era, name="crm__lookup")
    assert status == 202, status
    for odd in (1, None, True, ["crm__lookup"], {"name": "crm__lookup"}, 1.5):
        body = call_body(odd, {"id": "1"}, era=era, call_id="odd")
        status, answer = post_mcp(token, json.dumps(body).encode(), era=era, name="crm__lookup")
        assert status in (200, 400), (odd, answer)
        assert "error" in answer, (odd, answer)
    assert row_counts() == before
    assert echo_server.calls() == []


ESCAPED_POLICY = """  - pattern: "crm.a.b:*"
    action: ALWAYS
  - pattern: "crm.a_x2e_b:*"
    action: ALWAYS
"""


@pytest.mark.django_db(transaction=True)
def test_names_built_with_the_reversible_escape_reach_only_their_own_tool(
    broker_org, operator, mcp_server_factory
):
    """`names` escapes `.` inside a tool's name as `_x2e_`; the token check guesses a
    frozen name from an MCP name by undoing it. A server offering `a.b` and `a_x2e_b` (two
    tools whose readable names collide, so both are listed under hashed names), and
    spellings that decode to a listed tool (`crm__look_x75_p` for `crm.lookup`), must not
    reach a tool they are not the listed name of."""
    tools = [
        {"name": "a.b", "inputSchema": {"type": "object"}},
        {"name": "a_x2e_b", "inputSchema": {"type": "object"}},
        *[dict(tool) for tool in ECHO_TOOLS],
    ]
    server = mcp_server_factory(tools=tools)
    connect(operator, server)
    policy_save(org=broker_org, text=BROKER_POLICY + ESCAPED_POLICY, author=None)
    created = operator.post("/v1/runs", run_body(bundles=[], connections=["crm"])).json()
    token = created["session_token"]
    from governance.mcp_server.names import mcp_names

    listed = mcp_names(["crm.a.b", "crm.a_x2e_b", "crm.lookup", "crm.update"])
    assert listed["crm.a.b"] != "crm__a_x2e_b" and listed["crm.a_x2e_b"] != "crm__a_x2e_b"
    aliases = ["crm__a_x2e_b", "crm__look_x75_p", "crm_x2e_lookup", "crm__lookup\n"]
    for index, name in enumerate(aliases):
        status, answer = call_tool(token, name, {"id": "1"}, call_id=f"alias-{index}")
        assert status == 200 and answer["result"]["isError"] is True, (name, answer)
        assert "this run has no brokered tool named" in result_text(answer), name
        recorded = ToolCall.objects.get(tool_call_id=f"alias-{index}")
        assert (recorded.tool, recorded.decision, recorded.source) == (name, "deny", "capability")
    assert server.calls() == []
    # The escaped JSON spelling of a listed name is that name: it runs that tool, recorded
    # under it (the guess and the listing agree, so the read-ahead is used).
    raw = json.dumps(call_body("crm__update", {"id": "9"}, era="legacy", call_id="esc"))
    raw = raw.replace('"crm__update"', '"crm\\u005f\\u005fupdat\\u0065"')
    status, answer = post_mcp(token, raw.encode(), era="legacy")
    assert status == 200 and answer["result"]["isError"] is False, answer
    assert ToolCall.objects.get(tool_call_id="esc").tool == "crm.update"
    # Each hashed name reaches its own tool, and only it.
    for frozen, upstream in (("crm.a.b", "a.b"), ("crm.a_x2e_b", "a_x2e_b")):
        status, answer = call_tool(token, listed[frozen], {}, call_id=f"hashed-{upstream}")
        assert status == 200 and answer["result"]["isError"] is False, answer
        assert server.calls()[-1]["tool"] == upstream
        assert ToolCall.objects.get(tool_call_id=f"hashed-{upstream}").tool == frozen
    assert [call["tool"] for call in server.calls()] == ["update", "a.b", "a_x2e_b"]


BROKEN_SCHEMA_TOOL = {
    "name": "fetch",
    "description": "A tool whose schema fails the freeze-time guard",
    "inputSchema": {"type": "object", "properties": {"u": {"$ref": "https://evil.test/s"}}},
}


@pytest.mark.django_db(transaction=True)
def test_tools_the_trust_tier_or_the_schema_guard_removed_are_denied_though_read_ahead(
    broker_org, operator, mcp_server_factory
):
    """A read-only run's listing leaves `crm__update` out, and every run's listing leaves
    out a tool whose schema failed the guard at freeze time; both names are still among
    the run's frozen tools, so the token check reads them ahead. The gate's trust tier and
    schema stages must still refuse them, and the server sees no call."""
    policy_save(org=broker_org, text=BROKER_POLICY + ALLOW_FETCH, author=None)
    server = mcp_server_factory(tools=[*[dict(tool) for tool in ECHO_TOOLS], BROKEN_SCHEMA_TOOL])
    connect(operator, server)
    created = operator.post(
        "/v1/runs", run_body(bundles=[], connections=["crm"], trust_tier="read_only")
    ).json()
    token = created["session_token"]
    attempts = [
        ("crm__update", {"id": "1", "value": "x"}, "trust_tier"),
        ("crm__fetch", {"u": "x"}, "schema"),
    ]
    for index, (name, arguments, source) in enumerate(attempts):
        status, answer = call_tool(token, name, arguments, call_id=f"removed-{index}")
        assert status == 200 and answer["result"]["isError"] is True, answer
        recorded = ToolCall.objects.get(tool_call_id=f"removed-{index}")
        assert (recorded.decision, recorded.source, recorded.broker_status) == ("deny", source, "")
    assert server.calls() == []
    # The control: the tool the run may call is served.
    status, answer = call_tool(token, "crm__lookup", {"id": "1"}, call_id="control")
    assert answer["result"]["isError"] is False, answer
    assert [call["tool"] for call in server.calls()] == ["lookup"]


ALLOW_FETCH = """  - pattern: "crm.fetch:*"
    action: ALWAYS
"""


# --- the binding read ahead with the token goes stale ------------------------------------


def _after_the_token_check(monkeypatch, change) -> list:
    """Run `change` once, right after `/v1/mcp`'s token check has read the run, the called
    tool and its binding (while the binding still held), before the gate decides."""
    from governance.api import mcp

    read = mcp.run_and_tool_for_session_token
    changed: list = []

    def read_then_change(digest, tool):
        answer = read(digest, tool)
        if not changed:
            changed.append(tool)
            change()
        return answer

    monkeypatch.setattr(mcp, "run_and_tool_for_session_token", read_then_change)
    return changed


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("change", ["revoke", "reconnect", "owner_leaves", "run_finished"])
def test_a_binding_that_changes_after_the_token_check_read_it_is_refused(
    broker_org, org, operator, echo_server, monkeypatch, change
):
    """The token check reads the binding with the run; the gate decides on that read. A
    revocation, a re-authorization, the personal owner's deactivation or the run's finish
    committed right after it must still stop the call before the credential is used: the
    gate allows (on the stale read), and the statement that records the call re-reads the
    binding and the run's status. (A finished run's call used to run: the re-read did not
    look at the run.) A finish is now caught before anything is recorded."""
    owner = user_create(username="mallory", org=org, role=Role.MEMBER, password="pw-mal-123")
    owner_key = Api(api_key_create(org=org, user=owner, name="mallory").plaintext)
    personal = change == "owner_leaves"
    connection_id = connect(
        owner_key if personal else operator,
        echo_server,
        **({"kind": "personal", "owner": "mallory"} if personal else {}),
    )
    creator = owner_key if personal else operator
    created = creator.post("/v1/runs", run_body(bundles=[], connections=["crm"])).json()

    connection = Connection.objects.get(pk=connection_id)
    actor = Actor(kind=ActorKind.OPERATOR, org_id=org.pk, roles={org.pk: "operator"})

    def apply() -> None:
        if change == "revoke":
            connection_revoke(connection=connection, actor=actor)
        elif change == "reconnect":
            credential = {"header": "Authorization", "value": "Bearer crm-secret-2"}
            connection_reconnect(connection=connection, actor=actor, credential=credential)
        elif change == "owner_leaves":
            Membership.objects.filter(user=owner).update(is_active=False)
        else:  # the operator stops the run: "token stops working" (SPEC)
            run_finish(run=Run.objects.get(pk=created["id"]), actor_label="operator key ci")

    changed = _after_the_token_check(monkeypatch, apply)
    status, answer = call_tool(created["session_token"], "crm__update", {"id": "1"})
    assert changed == ["crm.update"]
    assert status == 200 and answer["result"]["isError"] is True, answer
    if change == "run_finished":
        # The finish moved the ledger head the token check read; the record, taken under
        # the counter's lock, sees the run has ended: nothing recorded after `run.finished`.
        assert "this run has finished" in result_text(answer)
        assert not ToolCall.objects.filter(run_id=created["id"]).exists()
        last = Event.objects.filter(run_id=created["id"]).order_by("-seq").first()
        assert last.type == "run.finished"
        assert echo_server.calls() == []
        assert chain_verify(created["id"]) == []
        return
    assert "binding" in result_text(answer)
    recorded = ToolCall.objects.get(run_id=created["id"])
    # The gate allowed on what the token check read; the recording statement's re-read
    # refused it before the credential was unsealed.
    assert (recorded.decision, recorded.broker_status) == ("allow", "refused")
    brokered = Event.objects.get(run_id=created["id"], type="tool.brokered").data
    assert (brokered["status"], brokered["source"]) == ("refused", "binding")
    assert echo_server.calls() == []
    assert chain_verify(created["id"]) == []


# --- concurrent calls of one run (PostgreSQL, gunicorn) ----------------------------------


@pytest.fixture
def live(transactional_db, tmp_path):
    from tests.support.servers import WebServer

    # An ASK is answered at once (pending), not waited on: the tests decide it themselves.
    with WebServer(tmp_path, workers=2, threads=16, FLUIDBOX_MCP_APPROVAL_WAIT="0") as server:
        yield server


def _post_live(url: str, token: str, body: dict) -> dict:
    response = httpx.post(
        f"{url}/v1/mcp",
        json=body,
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        },
        timeout=120,
    )
    assert response.status_code == 200, response.text[:300]
    return response.json()


def _all_at_once(count: int, job) -> list:
    barrier = threading.Barrier(count)
    answers: list = [None] * count

    def run(index: int) -> None:
        barrier.wait()
        answers[index] = job(index)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


@pytest.mark.slow
@pytest.mark.postgres
def test_concurrent_duplicates_of_one_call_run_the_upstream_once(live, crm_run, echo_server):
    """A client (or an attacker replaying its request) sends the same `tools/call` with the
    same tool-call id eight times at once, to two web processes: the call is recorded once,
    claimed once and run once; the others are told it already ran."""
    body = call_body("crm__update", {"id": "1", "value": "x"}, era="legacy", call_id="dup-1")
    answers = _all_at_once(8, lambda _: _post_live(live.url, crm_run["token"], body))
    assert len(echo_server.calls()) == 1
    ran = [answer for answer in answers if answer["result"]["isError"] is False]
    assert len(ran) == 1, answers
    others = [result_text(answer) for answer in answers if answer["result"]["isError"]]
    assert len(others) == 7 and all("already ran once" in text for text in others), others
    recorded = ToolCall.objects.get(run_id=crm_run["id"])
    assert (recorded.tool_call_id, recorded.broker_status) == ("dup-1", "succeeded")
    assert Event.objects.filter(run_id=crm_run["id"], type="tool.brokered").count() == 1
    assert chain_verify(crm_run["id"]) == []


@pytest.mark.slow
@pytest.mark.postgres
def test_an_approved_call_retried_eight_times_at_once_runs_once(
    live, broker_org, operator, approver, mcp_server_factory
):
    """An ASK approved by a human: every retry with its tool-call id gets the recorded
    allow without a new decision, so only the broker's claim keeps it at once. Eight
    retries at once through two web processes: the upstream runs it once."""
    server = mcp_server_factory(tools=[dict(tool) for tool in ECHO_TOOLS])
    connect(operator, server, slug="mine")  # the policy ASKs for `mine.*`
    created = operator.post("/v1/runs", run_body(bundles=[], connections=["mine"])).json()
    run_id, token = created["id"], created["session_token"]
    arguments = {"id": "1", "value": "x"}
    body = call_body("mine__update", arguments, era="legacy", call_id="ask-1")
    asked = _post_live(live.url, token, body)
    assert "awaits a human's approval" in result_text(asked), asked
    approval = ToolCall.objects.get(run_id=run_id, tool_call_id="ask-1").approval
    decided = Api(user=approver).post(
        f"/v1/approvals/{approval.pk}/decision", {"decision": "approve"}
    )
    assert decided.status_code == 200, decided.content
    answers = _all_at_once(8, lambda _: _post_live(live.url, token, body))
    assert len(server.calls()) == 1
    assert sum(answer["result"]["isError"] is False for answer in answers) == 1, answers
    assert all(
        "already ran once" in result_text(answer)
        for answer in answers
        if answer["result"]["isError"]
    ), answers
    recorded = ToolCall.objects.get(run_id=run_id)
    assert (recorded.decision, recorded.broker_status) == ("allow", "succeeded")
    assert Event.objects.filter(run_id=run_id, type="tool.brokered").count() == 1
    assert chain_verify(run_id) == []


@pytest.mark.slow
@pytest.mark.postgres
def test_a_burst_of_brokered_calls_on_one_run_leaves_a_chain_that_verifies(
    live, crm_run, echo_server, capsys
):
    """Sixteen different calls of one run at once (those past the per-process cap of calls
    in flight are sent again, as the refusal asks): each outcome is appended at its
    decision's head when the chain still ends there and under the counter's lock when a
    parallel call moved it. Every call ran once, has exactly one outcome event, and
    `manage.py ledger verify` passes."""
    count = 16

    def one(index: int) -> dict:
        body = call_body("crm__lookup", {"id": str(index)}, era="legacy", call_id=f"burst-{index}")
        while True:
            answer = _post_live(live.url, crm_run["token"], body)
            # Past the run's (or its organization's) calls in flight in one process, a call
            # is turned away before the gate, unrecorded, and the client sends it again.
            if "brokered calls in flight in this process" not in result_text(answer):
                return answer

    events_before = Event.objects.filter(run_id=crm_run["id"]).count()
    answers = _all_at_once(count, one)
    assert all(answer["result"]["isError"] is False for answer in answers), answers
    seen = sorted(int(call["arguments"]["id"]) for call in echo_server.calls())
    assert seen == list(range(count))
    calls = ToolCall.objects.filter(run_id=crm_run["id"])
    assert sorted(call.broker_status for call in calls) == ["succeeded"] * count
    brokered = Event.objects.filter(run_id=crm_run["id"], type="tool.brokered")
    assert sorted(event.data["tool_call_id"] for event in brokered) == sorted(
        f"burst-{index}" for index in range(count)
    )
    capsys.readouterr()
    call_command("ledger", "verify", crm_run["id"])
    events = Event.objects.filter(run_id=crm_run["id"]).count()
    assert f"ok: 1 run(s), {events} event(s) verified" in capsys.readouterr().out
    assert events == events_before + 3 * count  # requested, decision, brokered for each call
    connections.close_all()


# --- the egress guard's address literals -------------------------------------------------


class _Listener:
    """A TCP listener on 127.0.0.1 that only records whether anyone connected."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.contacts = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            self.contacts += 1
            client.close()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def listener():
    listening = _Listener()
    yield listening
    listening.close()


@pytest.fixture
def no_allowed_hosts(settings):
    settings.FLUIDBOX_CONNECTION_ALLOWED_HOSTS = []
    return settings


def _literals(port: int) -> list[str]:
    return [
        f"http://2130706433:{port}/",
        f"http://0x7f.1:{port}/",
        f"http://127.1:{port}/",
        f"http://0177.0.0.1:{port}/",
        f"http://[::ffff:127.0.0.1]:{port}/",
        f"http://[::1]:{port}/",
        f"http://[fe80::1%25eth0]:{port}/",
        f"http://[fe80::1%251]:{port}/",  # a numeric scope: the address is read, and refused
        "http://169.254.169.254/",
    ]


@pytest.mark.django_db
def test_a_member_cannot_point_a_personal_connection_at_an_address_literal(
    no_allowed_hosts, org, listener
):
    member = user_create(username="mallory", org=org, role=Role.MEMBER, password="pw-mal-123")
    mallory = Api(api_key_create(org=org, user=member, name="mallory").plaintext)
    for index, url in enumerate(_literals(listener.port)):
        response = mallory.post(
            "/v1/connections",
            {
                "slug": f"mine-{index}",
                "kind": "personal",
                "owner": "mallory",
                "transport": "streamable-http",
                "url": url,
                "credential": {"header": "Authorization", "value": "Bearer mine"},
            },
        )
        assert 400 <= response.status_code < 500, (url, response.content)
        assert response.json()["error"] in ("address_refused", "invalid"), url
        assert response.json()["detail"], url
    assert not Connection.objects.exists()
    assert listener.contacts == 0


def test_a_redirect_to_an_address_literal_is_refused_before_a_socket_opens(listener):
    """The broker's transport reads an address literal without the resolver
    (`AI_NUMERICHOST`); a server the organization allowed redirects to each spelling of an
    internal address: every one is refused, and the listener is never contacted."""
    for target in _literals(listener.port):
        handler = type("Redirect", (Redirector,), {"target": target})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        rules = EgressRules(allowed=(parse_entry(f"127.0.0.1:{port}"),))

        async def fetch(port=port, rules=rules):
            async with httpx2.AsyncClient(
                transport=GuardedTransport(rules), follow_redirects=True, timeout=10
            ) as client:
                return await client.get(f"http://127.0.0.1:{port}/mcp")

        try:
            with pytest.raises((EgressRefused, httpx2.HTTPError)) as refused:
                anyio.run(fetch)
            if not isinstance(refused.value, EgressRefused):
                # Or the client could not read the redirect's URL (`0177.0.0.1`), or the
                # host is no address nor a name (`fe80::1%25eth0`): nothing is sent either.
                problem = str(refused.value).lower()
                assert "invalid" in problem or "does not resolve" in problem, (target, problem)
        finally:
            server.shutdown()
            server.server_close()
    assert listener.contacts == 0
