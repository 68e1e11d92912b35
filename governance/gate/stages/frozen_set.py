"""Stage 2: only tools the run froze, over bindings that still hold (rug-pull defence)."""

from governance import vault
from governance.binding_state import BindingNow
from governance.gate.context import CallContext
from governance.gate.decision import CONTINUE, Decision, FailClosed, deny
from governance.models import CONSENTED, BindingConsent, ConnectionStatus, Source

_CURRENT_FIELDS = (
    "status",
    "authorization_generation",
    "photograph_digest",
    "owner_id",
    "transport",
    "url",
    "command",
    "credential_placement",
    "credential_name",
    "credential_sealed",
)


def check_frozen_set(ctx: CallContext) -> Decision | None:
    tool = ctx.frozen_tool
    if tool is None:
        if ctx.brokered:  # a sandbox tool's name too: the broker was not handed it
            return deny(Source.CAPABILITY, f"this run has no brokered tool named {ctx.tool!r}")
        return deny(Source.CAPABILITY, f"tool {ctx.tool!r} is not in this run's frozen tool set")
    if not tool.is_brokered:
        return CONTINUE
    return binding_problem(ctx.run, tool, ctx.binding_now)


def binding_problem(run, tool, now: BindingNow) -> Decision | None:
    """Capability drift or a stale binding for a brokered tool, judged on `now` (the
    binding and its connection as just read, see `governance.binding_state`); shared with
    the broker's re-verification right before a credential is unsealed."""
    connection = tool.connection
    binding = now.binding
    if not now.run_active:  # finished after its token was checked: nothing more runs
        return deny(Source.BINDING, "this run has finished")
    if binding is None:
        return deny(Source.BINDING, f"no binding to connection {connection.slug!r}")
    # The checks below, and the broker's credential and address after them, use what was
    # just read, not what the caller loaded earlier.
    current = binding.connection
    for field in _CURRENT_FIELDS:
        setattr(connection, field, getattr(current, field))
    if connection.photograph_digest != binding.photograph_digest:
        return deny(
            Source.CAPABILITY,
            f"connection {connection.slug!r} changed its tools since this run froze them",
        )
    if connection.status != ConnectionStatus.ACTIVE:
        return deny(Source.BINDING, f"connection {connection.slug!r} is {connection.status}")
    if connection.authorization_generation != binding.authorization_generation:
        return deny(
            Source.BINDING,
            f"connection {connection.slug!r} was re-authorized since this run started",
        )
    if connection.is_personal and not now.owner_active:
        return deny(
            Source.BINDING, f"the owner of personal connection {connection.slug!r} is inactive"
        )
    if binding.consent not in CONSENTED:
        if binding.consent == BindingConsent.DENIED:
            why = "its owner refused this run's use of it"
        else:
            why = "its owner has not yet approved this run's use of it (GET /v1/bindings)"
        return deny(Source.BINDING, f"personal connection {connection.slug!r}: {why}")
    if vault.tier2_status_of(now.keyring_protected) == "sealed":
        return deny(Source.BINDING, "vault sealed", fail_closed=FailClosed.VAULT_SEALED)
    return CONTINUE
