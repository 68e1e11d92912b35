"""The sandbox side of fluidbox: ask the gate, then run confined (SPEC §9).

Standard library and httpx only; nothing here imports Django.

The names below are imported on first use (PEP 562): the hook command runs once per tool
call of an agent CLI, and should not pay for the SDK adapters and the executor it never uses.
"""

import importlib

_EXPORTS = {
    "runner.adapters": ("BypassRefused", "GatedToolbox", "GatePermission", "claude_agent_options"),
    "runner.client": ("GateClient",),
    "runner.command_line": ("CommandRefused",),
    "runner.confinement": ("DirEntry", "Workspace", "WorkspaceEscape"),
    "runner.decisions": ("BudgetExhausted", "GateDecision", "Reservation"),
    "runner.errors": (
        "GateAuthError",
        "GateError",
        "GateProtocolError",
        "GateRequestError",
        "GateUnavailable",
        "SecretsRefused",
    ),
    "runner.executor": (
        "DEFAULT_PROGRAMS",
        "EXFILTRATION_PROGRAMS",
        "CommandPlan",
        "CommandResult",
        "Executor",
    ),
    "runner.masking": ("SecretMasker",),
    "runner.tools": ("SANDBOX_BASIC", "ToolResult", "ToolRunner", "ToolSpec"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'runner' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
