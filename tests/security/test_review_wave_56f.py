"""The gate's stages, attacked from the runner's and a hostile upstream's side.

A connection's photograph is what its MCP server said in `tools/list`: its input schemas are
the server's choice, frozen into every run that binds it. The frozen-schema stage must answer
every call promptly (SPEC §3: "a validator crash (e.g. a pathological `pattern`) is a clean
deny"): a schema that costs the validator exponential time is the same attack as a
backtracking `pattern`, without any `pattern` in it."""

import pytest

from governance.models import Connection
from governance.services.connections import photograph_store
from ledger.models import Event
from tests.conftest import Api, run_body

pytestmark = pytest.mark.django_db


def _photographed(operator, slug: str, tools: list[dict]) -> Connection:
    """A shared connection whose photograph is `tools`, as a refresh would store it from the
    server's listing (no server is reached: the calls below are decided before the broker)."""
    created = operator.post(
        "/v1/connections",
        {
            "slug": slug,
            "kind": "shared",
            "transport": "streamable-http",
            "url": "http://127.0.0.1:43299/mcp",
        },
    )
    assert created.status_code == 201, created.content
    connection = Connection.objects.get(pk=created.json()["id"])
    return photograph_store(connection=connection, tools=tools)


def _brokered_run(operator, slug: str) -> tuple[str, Api]:
    response = operator.post("/v1/runs", run_body(bundles=[], connections=[slug]))
    assert response.status_code == 201, response.content
    return response.json()["id"], Api(response.json()["session_token"])


def _call(runner, run_id, tool, arguments, call_id="c-1"):
    response = runner.post(
        f"/v1/runs/{run_id}/tools/{tool}/call",
        {"session_id": "s-1", "tool_call_id": call_id, "arguments": arguments},
    )
    assert response.status_code == 200, response.content
    return response.json()


def _fan_out(levels: int) -> dict:
    """`a0` is anyOf [a1, a1'], `a1` anyOf [a2, a2'], …: 2**levels paths to the leaf, in
    about 100 bytes a level. Well inside the freeze guard (64 KiB, depth 32, local $refs)."""
    defs: dict = {f"a{levels}": {"type": "string"}}
    for level in range(levels):
        following = {"$ref": f"#/$defs/a{level + 1}"}
        defs[f"a{level}"] = {"anyOf": [following, {**following, "description": "again"}]}
    return {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/a0"}}}


def test_a_schema_whose_refs_fan_out_is_a_prompt_fail_closed_deny(operator):
    # Proves: a hostile upstream's 1.7 KiB schema (18 levels of `anyOf` over `$ref`s) passes
    # the freeze guard, and then every call of the tool whose argument fails it held a web
    # worker (and the GIL) for about 50 s on one core before its deny (30 levels: days). The
    # whole validation now has a deadline, checked at every keyword: the call is denied by
    # `schema` within seconds, recorded as a fail-closed validator failure.
    _photographed(
        operator,
        "up",
        [{"name": "search", "inputSchema": _fan_out(18), "annotations": {"readOnlyHint": True}}],
    )
    run_id, runner = _brokered_run(operator, "up")

    answer = _call(runner, run_id, "up.search", {"x": 1})

    assert answer["decision"] == "deny"
    assert answer["source"] == "schema"
    # Cut off at the validation's deadline, not answered after walking every path.
    assert "schema validation took longer than 5 s" in answer["reason"], answer
    decision = Event.objects.filter(run_id=run_id, type="tool.decision").get()
    assert decision.data["source"] == "schema"
    assert decision.data.get("fail_closed") == "schema_validator", decision.data


def test_an_argument_that_passes_the_same_kind_of_schema_is_still_validated(operator):
    # The deadline bounds the validator's time only: a shallow fan-out is validated as before
    # (a string passes, a number is denied with the schema's words, not as a crash).
    _photographed(
        operator,
        "up",
        [{"name": "search", "inputSchema": _fan_out(4), "annotations": {"readOnlyHint": True}}],
    )
    run_id, runner = _brokered_run(operator, "up")
    denied = _call(runner, run_id, "up.search", {"x": 1}, call_id="c-1")
    assert denied["decision"] == "deny" and denied["source"] == "schema"
    assert "violates 'anyOf'" in denied["reason"]
