"""The call context every stage reads; computed lazily, never written by a stage."""

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from governance.models import FrozenTool, Run, RunBudget
from governance.policy_store import compiled_policy, match_argument_of
from ledger.canonical import canonical_json


@dataclass
class CallContext:
    run: Run
    session_id: str
    tool_call_id: str
    tool: str
    arguments: Any

    @cached_property
    def frozen_tool(self) -> FrozenTool | None:
        # get(), not first(): (run, name) is unique, and first()'s ORDER BY pk costs CPU.
        try:
            return self.run.frozen_tools.select_related("connection").get(name=self.tool)
        except FrozenTool.DoesNotExist:
            return None

    @cached_property
    def budget(self) -> RunBudget:
        return RunBudget.objects.get(run=self.run)

    @cached_property
    def match_argument(self):
        return match_argument_of(self.frozen_tool.match_argument if self.frozen_tool else None)

    @cached_property
    def evaluation(self):
        policy = compiled_policy(self.run.policy_version)
        arguments = self.arguments if isinstance(self.arguments, dict) else {}
        return policy.evaluate(self.tool, arguments, self.match_argument)

    @cached_property
    def call_key(self) -> str:
        from governance.policy import call_key

        try:
            return call_key(self.tool, self.arguments, self.match_argument)
        except Exception:
            return f"{self.tool}:{canonical_json(self.arguments)}"

    @property
    def definition_digest(self) -> str:
        return self.frozen_tool.definition_digest if self.frozen_tool else ""
