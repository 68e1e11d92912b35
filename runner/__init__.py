"""The sandbox side of fluidbox: ask the gate, then run confined (SPEC §9).

Standard library and httpx only; nothing here imports Django.
"""

from runner.adapters import BypassRefused, GatedToolbox, GatePermission, claude_agent_options
from runner.client import GateClient
from runner.command_line import CommandRefused
from runner.confinement import DirEntry, Workspace, WorkspaceEscape
from runner.decisions import BudgetExhausted, GateDecision, Reservation
from runner.errors import (
    GateAuthError,
    GateError,
    GateProtocolError,
    GateRequestError,
    GateUnavailable,
    SecretsRefused,
)
from runner.executor import (
    DEFAULT_PROGRAMS,
    EXFILTRATION_PROGRAMS,
    CommandPlan,
    CommandResult,
    Executor,
)
from runner.masking import SecretMasker
from runner.tools import SANDBOX_BASIC, ToolResult, ToolRunner, ToolSpec

__all__ = [
    "DEFAULT_PROGRAMS",
    "EXFILTRATION_PROGRAMS",
    "SANDBOX_BASIC",
    "BudgetExhausted",
    "BypassRefused",
    "CommandPlan",
    "CommandRefused",
    "CommandResult",
    "DirEntry",
    "Executor",
    "GateAuthError",
    "GateClient",
    "GateDecision",
    "GateError",
    "GatePermission",
    "GateProtocolError",
    "GateRequestError",
    "GateUnavailable",
    "GatedToolbox",
    "Reservation",
    "SecretMasker",
    "SecretsRefused",
    "ToolResult",
    "ToolRunner",
    "ToolSpec",
    "Workspace",
    "WorkspaceEscape",
    "claude_agent_options",
]
