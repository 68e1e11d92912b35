"""What a run may call through its MCP endpoint, asked of the gate's own stages.

A tool is listed only if the stages that do not depend on arguments would let it through
now: it is in the frozen set with a binding that still holds (`check_frozen_set`: status,
generation, photograph, personal owner, vault), its frozen schema passed the guard, and
the trust tier allows it (`check_trust_tier`). Budget, schema validation of arguments,
policy and approval are decided per call.
"""

from dataclasses import dataclass
from typing import Any

from governance.gate.context import CallContext
from governance.gate.stages.frozen_set import check_frozen_set
from governance.gate.stages.trust_tier import check_trust_tier
from governance.mcp_server.names import mcp_names
from governance.mcp_wire import tool_digest
from governance.models import FrozenTool, Run
from governance.process_cache import ProcessCache

# A run's brokered tools are frozen at its creation, so the names they are listed under
# never change: each process keeps the mapping of the runs it has served.
_mcp_names_of_runs = ProcessCache(size=4096)

# Wire fields of a photographed tool that describe it to a model (never its live form).
_DESCRIPTIVE_FIELDS = ("title", "description", "annotations", "outputSchema", "icons")


@dataclass(frozen=True)
class ListedTool:
    mcp_name: str
    frozen: FrozenTool
    definition: dict[str, Any]


def _frozen_definition(tool: FrozenTool) -> dict[str, Any] | None:
    """The tool object as the run froze it: the photograph entry whose digest is the frozen
    one (the frozen-set stage has just checked the photograph is unchanged)."""
    for wire in tool.connection.photograph:
        if wire.get("name") == tool.upstream_name and tool_digest(wire) == tool.definition_digest:
            return wire
    return None


def _callable_now(run: Run, tool: FrozenTool) -> bool:
    if not tool.callable:  # failed the schema guard at freeze time
        return False
    ctx = CallContext(run=run, session_id="", tool_call_id="", tool=tool.name, arguments={})
    ctx.__dict__["frozen_tool"] = tool  # the row in hand; the stage re-reads its connection
    return check_frozen_set(ctx) is None and check_trust_tier(ctx) is None


def run_mcp_catalog(run: Run) -> list[ListedTool]:
    """The brokered tools this run may call now, each with its MCP name and frozen definition."""
    frozen = list(
        run.frozen_tools.filter(connection__isnull=False)
        .select_related("connection")
        .order_by("name")
    )
    names = mcp_names([tool.name for tool in frozen])
    listed = []
    for tool in frozen:
        if not _callable_now(run, tool):
            continue
        wire = _frozen_definition(tool)
        if wire is None:
            continue
        definition = {"name": names[tool.name], "inputSchema": tool.schema}
        definition.update({key: wire[key] for key in _DESCRIPTIVE_FIELDS if key in wire})
        listed.append(ListedTool(names[tool.name], tool, definition))
    return listed


def frozen_name_for(run: Run, mcp_name: str) -> str | None:
    """The frozen tool an MCP name stands for in this run, callable now or not."""
    by_mcp_name = _mcp_names_of_runs.get(run.pk)
    if by_mcp_name is None:
        frozen = run.frozen_tools.filter(connection__isnull=False).values_list("name", flat=True)
        by_mcp_name = {name: frozen_name for frozen_name, name in mcp_names(list(frozen)).items()}
        _mcp_names_of_runs.put(run.pk, by_mcp_name)
    return by_mcp_name.get(mcp_name)
