"""Connections: create, reconnect (new credential, generation + 1), revoke, photograph."""

import json
import re
import shlex

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from governance import vault
from governance.authentication import Actor, ActorKind
from governance.egress import rules_for_org, url_address_refused, url_credentials_refused
from governance.errors import Conflict, Forbidden, Invalid
from governance.mcp_stdio import env_name_refused
from governance.mcp_wire import (
    AddressRefused,
    McpEndpoint,
    PlacementRefused,
    UpstreamError,
    header_name_refused,
    list_tools,
    tool_set_digest,
)
from governance.models import (
    Connection,
    ConnectionKind,
    ConnectionStatus,
    CredentialPlacement,
    Membership,
    Organization,
    Role,
    Transport,
)
from governance.schemas import arguments_storable
from governance.services.bundles import TOOL_NAME

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
HEADER_NAME = re.compile(r"^[A-Za-z0-9-]{1,100}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
# What an HTTP client sends as a header's value (h11, under the MCP client): printable ASCII
# with blanks inside only. A CR or LF (a header injected after it), a pasted newline or an
# accented letter would be refused at every send, never once at the door.
HEADER_VALUE = re.compile(r"[\x21-\x7e](?:[\t\x20-\x7e]*[\x21-\x7e])?")


def stdio_command_allowed(command: list[str]) -> bool:
    """The control plane runs stdio servers itself, so only the deployment's allow-list."""
    return shlex.join(command) in settings.FLUIDBOX_STDIO_COMMANDS


def _credential(raw: dict | None) -> tuple[str, str, str]:
    if raw is None:
        return "", "", ""
    if not isinstance(raw, dict) or not isinstance(raw.get("value"), str) or not raw["value"]:
        raise Invalid("credential needs a non-empty value and a header or env name")
    if "header" in raw and "env" not in raw:
        if not HEADER_NAME.match(str(raw["header"])):
            raise Invalid("credential header name is not a valid HTTP header name")
        if (problem := header_name_refused(raw["header"])) is not None:
            raise Invalid(problem)
        if not HEADER_VALUE.fullmatch(raw["value"]):
            # Not quoted: it is the secret.
            raise Invalid(
                "credential value cannot be sent in an HTTP header: only printable ASCII, "
                "with no line break and no blank at either end"
            )
        return CredentialPlacement.HEADER, raw["header"], raw["value"]
    if "env" in raw and "header" not in raw:
        if not ENV_NAME.match(str(raw["env"])):
            raise Invalid("credential env name is not a valid environment variable name")
        if (problem := env_name_refused(raw["env"])) is not None:
            raise Invalid(problem)
        if "\x00" in raw["value"]:
            raise Invalid("credential value cannot hold a NUL: no environment variable can")
        return CredentialPlacement.ENV, raw["env"], raw["value"]
    raise Invalid("credential needs exactly one of header or env")


def _may_manage(actor: Actor, org_id: int, owner_id: int | None) -> bool:
    if actor.kind == ActorKind.OPERATOR:
        return actor.org_id == org_id
    if actor.user is None:
        return False
    if owner_id is not None and owner_id == actor.user.pk:
        return actor.role_in(org_id) is not None
    return actor.has_role(org_id, Role.ADMIN)


@transaction.atomic
def connection_create(
    *,
    org: Organization,
    actor: Actor,
    slug: str,
    kind: str,
    transport: str,
    owner: str | None = None,
    url: str = "",
    command: list[str] | None = None,
    credential: dict | None = None,
) -> Connection:
    if not SLUG.match(slug):
        raise Invalid("slug must be lowercase letters, digits and dashes")
    if Connection.objects.filter(org=org, slug=slug).exists():
        raise Conflict(f"connection {slug!r} already exists")
    owner_user = None
    if kind == ConnectionKind.PERSONAL:
        owner_user = User.objects.filter(username=owner or "").first()
        if owner_user is None or not Membership.objects.filter(org=org, user=owner_user).exists():
            raise Invalid("a personal connection needs an owner who is a member of the org")
    elif owner:
        raise Invalid("only personal connections have an owner")
    if not _may_manage(actor, org.pk, owner_user.pk if owner_user else None):
        raise Forbidden("you may not create this connection")
    command = list(command or [])
    if transport == Transport.STREAMABLE_HTTP:
        _url_checked(org, url)
        command = []
    elif transport == Transport.STDIO:
        if not command or not stdio_command_allowed(command):
            raise Invalid(
                "this stdio command is not in the deployment's allow-list: "
                "FLUIDBOX_STDIO_COMMANDS must hold it exactly, as one entry "
                f"{shlex.join(command)!r} (the command's words joined as a shell quotes them)"
            )
        url = ""
    placement, name, value = _credential(credential)
    by_owner = owner_user is not None and actor.user is not None and actor.user.pk == owner_user.pk
    return Connection.objects.create(
        org=org,
        slug=slug,
        kind=kind,
        owner=owner_user,
        transport=transport,
        url=url,
        command=command,
        credential_placement=placement,
        credential_name=name,
        credential_sealed=vault.seal_given(value) if value else "",
        # Only a personal connection has an owner to ask; a shared one has nothing to flag.
        credential_from_owner=owner_user is None or by_owner or not value,
    )


@transaction.atomic
def connection_reconnect(*, connection: Connection, actor: Actor, credential: dict) -> Connection:
    """A new credential: sealed, and every existing binding refuses from now on."""
    owner_id = connection.owner_id if connection.is_personal else None
    if connection.is_personal:
        allowed = actor.user is not None and actor.user.pk == owner_id
    else:
        allowed = _may_manage(actor, connection.org_id, None)
    if not allowed:
        raise Forbidden("you may not reconnect this connection")
    placement, name, value = _credential(credential)
    # Sealed (the keyring locked) before the row is: in a rotation's order (`vault.keyring_lock`).
    sealed = vault.seal_given(value)
    connection = Connection.objects.select_for_update().get(pk=connection.pk)
    connection.credential_placement = placement
    connection.credential_name = name
    connection.credential_sealed = sealed
    connection.authorization_generation += 1
    connection.status = ConnectionStatus.ACTIVE
    # Reconnecting a personal connection is its owner's alone (above).
    connection.credential_from_owner = True
    connection.save(
        update_fields=[
            "credential_placement",
            "credential_name",
            "credential_sealed",
            "credential_from_owner",
            "authorization_generation",
            "status",
        ]
    )
    return connection


def _url_checked(org: Organization, url: str) -> None:
    if not url:
        raise Invalid("a streamable-http connection needs a url")
    url_credentials_refused(url, what="a connection URL", secret_goes="the credential")
    url_address_refused(org, url)


@transaction.atomic
def connection_move(
    *, connection: Connection, actor: Actor, url: str, credential: dict
) -> Connection:
    """A shared streamable-HTTP connection's server at a new URL. The credential is entered
    again with it (one is never sent to a URL it was not entered for), so it is a reconnect:
    every existing binding refuses from now on."""
    if connection.is_personal or connection.transport != Transport.STREAMABLE_HTTP:
        raise Invalid("only a shared streamable-http connection is moved")
    if not _may_manage(actor, connection.org_id, None):
        raise Forbidden("you may not move this connection")
    _url_checked(connection.org, url)
    vault.keyring_lock()  # before the row: in a rotation's order
    Connection.objects.filter(pk=connection.pk).update(url=url)
    return connection_reconnect(connection=connection, actor=actor, credential=credential)


@transaction.atomic
def connection_revoke(*, connection: Connection, actor: Actor) -> Connection:
    if not _may_manage(actor, connection.org_id, connection.owner_id):
        raise Forbidden("you may not revoke this connection")
    Connection.objects.filter(pk=connection.pk).update(status=ConnectionStatus.REVOKED)
    connection.refresh_from_db()
    return connection


def endpoint_for(connection: Connection) -> McpEndpoint:
    """The endpoint with the credential unsealed into it. Call only inside the broker."""
    headers: dict[str, str] = {}
    env: dict[str, str] = {}
    if connection.credential_sealed:
        # Checked again here, not only when the credential was stored: a row written before
        # a name was refused must not send a Host header or start a program with LD_PRELOAD.
        in_header = connection.credential_placement == CredentialPlacement.HEADER
        problem = (header_name_refused if in_header else env_name_refused)(
            connection.credential_name
        )
        if problem is not None:
            raise PlacementRefused(problem)
        value = vault.unseal_secret(connection.credential_sealed)
        if in_header:
            headers[connection.credential_name] = value
        else:
            env[connection.credential_name] = value
    if connection.transport == Transport.STDIO:
        return McpEndpoint(transport="stdio", command=tuple(connection.command), env=env)
    return McpEndpoint(
        transport="streamable-http",
        url=connection.url,
        headers=headers,
        egress=rules_for_org(connection.org),
    )


def connection_refresh(*, connection: Connection, actor: Actor) -> Connection:
    """Re-photograph the server's tools. Runs already created keep what they froze."""
    if not _may_manage(actor, connection.org_id, connection.owner_id):
        raise Forbidden("you may not refresh this connection")
    if connection.status != ConnectionStatus.ACTIVE:
        raise Conflict(f"connection {connection.slug!r} is {connection.status}")
    try:
        tools = list_tools(endpoint_for(connection), timeout=settings.FLUIDBOX_MCP_TIMEOUT)
    except AddressRefused as refused:
        raise Conflict(str(refused), code="address_refused") from None
    except PlacementRefused as refused:
        raise Conflict(str(refused), code="placement_refused") from None
    except UpstreamError as error:
        raise Conflict(
            f"the MCP server did not answer tools/list: {error}", code="upstream"
        ) from None
    except vault.VaultSealed:
        raise Conflict("vault sealed", code="vault_sealed") from None
    except vault.VaultError:
        raise Conflict(
            f"the credential of connection {connection.slug!r} cannot be unsealed with the "
            "vault's keys: reconnect it with the credential",
            code="credential_unreadable",
        ) from None
    return photograph_store(connection=connection, tools=tools)


@transaction.atomic
def photograph_store(*, connection: Connection, tools: list[dict]) -> Connection:
    refused = listing_refused(connection.slug, tools)
    if refused is not None:
        raise Conflict(refused, code="upstream")
    connection = Connection.objects.select_for_update().get(pk=connection.pk)
    digest = tool_set_digest(tools)
    if digest != connection.photograph_digest:
        connection.previous_photograph = connection.photograph
    connection.photograph = tools
    connection.photograph_digest = digest
    connection.photographed_at = timezone.now()
    connection.save(
        update_fields=["photograph", "photograph_digest", "photographed_at", "previous_photograph"]
    )
    return connection


def listing_refused(slug: str, tools: list[dict]) -> str | None:
    """Why a server's tool listing cannot be photographed, or None. A tool's name is the
    SPEC's (`<connection>.<tool>` of letters, digits, `_`, `.` and `-`, at most 128): a `:`
    would let the rule `tracker.list_issues:*` allow a tool named `list_issues:purge`, and
    a control or bidi character would be decided where no argument could hold one. And
    PostgreSQL stores no NUL or lone surrogate, nor a number past a double's range."""
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        shown = json.dumps(name if not isinstance(name, str) else name[:80])
        if not arguments_storable(tool):
            return (
                f"the MCP server's listing of the tool {shown} holds what fluidbox cannot "
                "store (a NUL, a lone surrogate, a number past a double's range)"
            )
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(f"{slug}.{name}"):
            return (
                f"the MCP server names a tool {shown}: a tool's name is letters, digits, `_`, "
                "`.` and `-`, at most 128 characters with the connection's name and a `.` "
                "before it, so that a rule for one tool names no other"
            )
    return None


def photograph_drift(connection: Connection) -> dict:
    """What changed since the previous photograph: added, withdrawn, changed tool names."""
    from governance.mcp_wire import tool_digest

    before = {t["name"]: tool_digest(t) for t in connection.previous_photograph or []}
    after = {t["name"]: tool_digest(t) for t in connection.photograph or []}
    return {
        "added": sorted(set(after) - set(before)),
        "withdrawn": sorted(set(before) - set(after)),
        "changed": sorted(n for n in set(after) & set(before) if after[n] != before[n]),
    }
