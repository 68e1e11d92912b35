"""Agent secrets: sealed in the vault, served to a run's `secrets: true` tools only, and
masked in everything a runner sends, whichever process it reaches."""

import logging
import secrets
import threading

from django.db import transaction
from django.db.models import Q

from governance import vault
from governance.errors import Conflict, Forbidden, NotFound
from governance.models import (
    AgentSecret,
    Decision,
    FrozenTool,
    Organization,
    Run,
    ToolCall,
    TrustTier,
)


@transaction.atomic
def agent_secret_set(*, org: Organization, name: str, value: str, agent: str = "") -> AgentSecret:
    secret, _ = AgentSecret.objects.update_or_create(
        org=org, agent=agent, name=name, defaults={"value_sealed": vault.seal_given(value)}
    )
    Organization.objects.filter(pk=org.pk).update(agent_secrets_stamp=secrets.token_hex(16))
    return secret


# The redactor masks the plaintexts this process has registered (`ledger.redaction`). A
# secret served by one process lives on in the sandbox, which may send it back to another
# process, or to this one after a restart; so each runner request first registers every
# agent secret of its run's organization, once per stamp the token check read
# (`Organization.agent_secrets_stamp`, new whenever one is set): a dict lookup otherwise.
_registered_stamps: dict[int, str] = {}
_registering = threading.Lock()
logger = logging.getLogger(__name__)


def register_for_masking(org_id: int, stamp: str) -> None:
    """Register the organization's agent secrets with the redactor, unless this process
    already did for `stamp`."""
    if _registered_stamps.get(org_id) == stamp:
        return
    with _registering:
        if _registered_stamps.get(org_id) == stamp:
            return
        sealed_values = AgentSecret.objects.filter(org_id=org_id).values_list(
            "value_sealed", flat=True
        )
        for sealed in sealed_values:
            try:
                vault.unseal_secret(sealed)  # registers the plaintext
            except vault.VaultError:  # nor can this process serve it
                logger.warning("an agent secret of organization %s cannot be unsealed", org_id)
        _registered_stamps[org_id] = stamp


def secrets_for_tool(*, run: Run, tool: str, session_id: str, tool_call_id: str) -> dict[str, str]:
    """The run's agent secrets, for a call of a frozen `secrets: true` tool that the gate
    allowed. A read_only run never gets any: its trust tier forbids secrets tools outright;
    and a call that was denied or still waits for a human gets none either."""
    if run.trust_tier == TrustTier.READ_ONLY:
        raise Forbidden("read-only runs receive no secrets")
    frozen = FrozenTool.objects.filter(run=run, name=tool).first()
    if frozen is None:
        raise NotFound(f"tool {tool!r} is not in this run's frozen tool set")
    if not frozen.secrets:
        raise Forbidden(f"tool {tool!r} does not declare secrets")
    allowed = ToolCall.objects.filter(
        run=run,
        session_id=session_id,
        tool_call_id=tool_call_id,
        tool=tool,
        decision=Decision.ALLOW,
    ).exists()
    if not allowed:
        raise Forbidden("secrets are served only for a call of this tool the gate allowed")
    rows = AgentSecret.objects.filter(org_id=run.org_id).filter(Q(agent="") | Q(agent=run.agent))
    env: dict[str, str] = {}
    # Agent-specific values override org-wide ones of the same name.
    try:
        for secret in sorted(rows, key=lambda s: s.agent != ""):
            env[secret.name] = vault.unseal_secret(secret.value_sealed)
    except vault.VaultSealed:
        # Fail closed with a word the runner can read: not a 500 (DEBUG's page for it).
        logger.warning("run %s: agent secrets refused, the vault is sealed", run.pk)
        raise Conflict("vault sealed", code="vault_sealed") from None
    except vault.VaultError:
        logger.warning("run %s: an agent secret cannot be unsealed", run.pk)
        raise Conflict(
            "an agent secret cannot be unsealed with the vault's current keys",
            code="vault_error",
        ) from None
    return env
