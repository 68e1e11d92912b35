"""What a run may call through its MCP endpoint, asked of the gate's own stages.

A tool is listed only if the stages that do not depend on arguments would let it through
now: it is in the frozen set with a binding that still holds (`check_frozen_set`: status,
generation, photograph, personal owner, vault), its frozen schema passed the guard, and
the trust tier allows it (`check_trust_tier`). Budget, schema validation of arguments,
policy and approval are decided per call.
"""

from dataclasses import dataclass
from typing import Any

from governance.binding_state import BindingNow, bindings_now
from governance.gate.context import CallContext
from governance.gate.stages.frozen_set import check_frozen_set
from governance.gate.stages.trust_tier import check_trust_tier
from governance.mcp_server.eras import DESCRIPTIVE_FIELDS
from governance.mcp_server.names import mcp_names
from governance.mcp_wire import tool_digest
from governance.models import Connection, FrozenTool, Run
from governance.process_cache import ProcessCache
from governance.schemas import guard_schema

# A run's brokered tools are frozen at its creation, so the names they are listed under and
# their input schemas never change: each process keeps those of the runs it has served.
_tools_of_runs = ProcessCache(size=4096)


@dataclass(frozen=True)
class NamedTool:
    """A frozen brokered tool of a run under its MCP name."""

    frozen_name: str
    input_schema: dict[str, Any] | None  # the frozen one; None if it failed the schema guard


@dataclass(frozen=True)
class ListedTool:
    mcp_name: str
    frozen: FrozenTool
    definition: dict[str, Any]


def _photographed(connection: Connection) -> dict[tuple[str, str], dict[str, Any]]:
    """A connection's photograph by (name, digest): each entry hashed once for all its tools
    (a listing of hundreds of long definitions was hashed once per tool, and decoded too)."""
    return {
        (str(wire.get("name")), tool_digest(wire)): wire
        for wire in connection.photograph
        if isinstance(wire, dict)
    }


def _callable_now(run: Run, tool: FrozenTool, binding: BindingNow) -> bool:
    if not tool.callable:  # failed the schema guard at freeze time
        return False
    ctx = CallContext(run=run, session_id="", tool_call_id="", tool=tool.name, arguments={})
    # The rows in hand: the tool, and its binding and connection as just read.
    ctx.__dict__["frozen_tool"] = tool
    ctx.__dict__["binding_now"] = binding
    return check_frozen_set(ctx) is None and check_trust_tier(ctx) is None


def run_mcp_catalog(run: Run) -> list[ListedTool]:
    """The brokered tools this run may call now, each with its MCP name and frozen definition."""
    frozen = list(run.frozen_tools.filter(connection__isnull=False).order_by("name"))
    # Each connection read once (its photograph decoded once), shared by its tools.
    connections = Connection.objects.in_bulk({tool.connection_id for tool in frozen})
    photographed = {pk: _photographed(connection) for pk, connection in connections.items()}
    names = mcp_names([tool.name for tool in frozen])
    bindings = bindings_now(run)  # every binding in one statement, not one per tool
    listed = []
    for tool in frozen:
        tool.connection = connections[tool.connection_id]
        binding = bindings.get(tool.connection_id, BindingNow(None, False, None))
        if not _callable_now(run, tool, binding):
            continue
        # The tool object as the run froze it: the photograph entry whose digest is the
        # frozen one (the frozen-set stage has just checked the photograph is unchanged).
        wire = photographed[tool.connection_id].get((tool.upstream_name, tool.definition_digest))
        if wire is None:
            continue
        definition = {"name": names[tool.name], "inputSchema": tool.schema}
        # The fields that describe it to a model, as photographed (never its live form); the
        # protocol version a client speaks may not carry all of them (`eras.listable`).
        definition.update({key: wire[key] for key in DESCRIPTIVE_FIELDS if key in wire})
        if "outputSchema" in definition and guard_schema(definition["outputSchema"]):
            # A client checks each result against the output schema, and refuses every
            # result of a tool whose schema it cannot compile or resolve: the tool would be
            # listed but never callable. Listed without it, results reach the model.
            del definition["outputSchema"]
        listed.append(ListedTool(names[tool.name], tool, definition))
    return listed


def named_tools(run: Run) -> dict[str, NamedTool]:
    """Every frozen brokered tool of the run by MCP name, callable now or not."""
    tools = _tools_of_runs.get(run.pk)
    if tools is None:
        rows = list(
            run.frozen_tools.filter(connection__isnull=False).values_list(
                "name", "schema", "callable"
            )
        )
        names = mcp_names([name for name, _schema, _callable in rows])
        tools = {
            names[name]: NamedTool(name, schema if callable else None)
            for name, schema, callable in rows
        }
        _tools_of_runs.put(run.pk, tools)
    return tools


def frozen_name_for(run: Run, mcp_name: str) -> str | None:
    """The frozen tool an MCP name stands for in this run, callable now or not."""
    tool = named_tools(run).get(mcp_name)
    return tool.frozen_name if tool is not None else None
