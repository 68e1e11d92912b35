"""The call context every stage reads; computed lazily, never written by a stage."""

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from fluidbox.canonical import canonical_json
from governance.binding_state import BindingNow, binding_now
from governance.models import FrozenTool, Run, RunBudget
from governance.policy_store import compiled_policy, match_argument_of
from governance.process_cache import ProcessCache
from ledger.redaction import ArgumentSecrets, argument_digest, argument_secrets

# Frozen sandbox tools never change after run creation, so each process keeps the ones it
# has read. Brokered tools are not cached: their connection is re-read on every call.
_sandbox_tools = ProcessCache(size=4096)
# A caller that has not read the frozen tool itself (None would mean "there is none").
NOT_READ = object()


@dataclass
class CallContext:
    run: Run
    session_id: str
    tool_call_id: str
    tool: str
    arguments: Any
    # Asked by the broker (REST's tools/{tool}/call, /v1/mcp): only brokered tools are called.
    brokered: bool = False

    @cached_property
    def frozen_tool(self) -> FrozenTool | None:
        cached = _sandbox_tools.get((self.run.pk, self.tool))
        if cached is not None:
            return cached
        # get(), not first(): (run, name) is unique, and first()'s ORDER BY pk costs CPU.
        try:
            tool = self.run.frozen_tools.select_related("connection").get(name=self.tool)
        except FrozenTool.DoesNotExist:
            return None
        if not tool.is_brokered:
            _sandbox_tools.put((self.run.pk, self.tool), tool)
        return tool

    @cached_property
    def binding_now(self) -> BindingNow:
        """A brokered tool's binding and connection as they are now (never cached: a
        revocation must reach the next call)."""
        return binding_now(self.run, self.frozen_tool.connection_id)

    @cached_property
    def budget(self) -> RunBudget:
        # Loaded with the run by the runner's authentication when it can be.
        return self.run.budget

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

    @cached_property
    def arguments_digest(self) -> str:
        """The digest of the full arguments: what a remembered grant is bound to."""
        return argument_digest(self.arguments)

    @cached_property
    def argument_secrets(self) -> ArgumentSecrets:
        """What the redactor masks of these arguments, collected once for every text this
        call's decision stores (its reason, rule, events and preview)."""
        return argument_secrets(self.arguments)

    @property
    def definition_digest(self) -> str:
        return self.frozen_tool.definition_digest if self.frozen_tool else ""
