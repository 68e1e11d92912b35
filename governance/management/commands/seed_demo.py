import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from governance.authentication import Actor, ActorKind
from governance.egress import allow_list_lines
from governance.errors import ServiceError
from governance.models import (
    ApiKey,
    Connection,
    ConnectionStatus,
    Organization,
    Policy,
    Role,
    Transport,
)
from governance.models.keys import hash_secret_token
from governance.services.bundles import bundle_import
from governance.services.connections import (
    connection_create,
    connection_move,
    connection_refresh,
)
from governance.services.orgs import (
    api_key_create,
    org_allowed_hosts_set,
    org_create,
    user_create,
)
from governance.services.policies import policy_save
from governance.vault import VaultError

DEMO = Path(__file__).resolve().parents[2] / "demo"
SANDBOX_BUNDLE = Path(__file__).resolve().parents[3] / "runner" / "bundles" / "sandbox-basic.yaml"
# The gate's names for agent CLIs' built-in tools (runner/hook.py maps them).
AGENT_CLI_BUNDLE = SANDBOX_BUNDLE.with_name("claude-code.yaml")
DEMO_TOKEN = "demo-token"


def _host_entry(url: str) -> str:
    """`host:port` of a URL, as an allowed-hosts entry (IPv6 in brackets)."""
    parts = urlsplit(url)
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{host}:{port}"


def _secret_file(name: str) -> Path:
    return Path(settings.DATA_DIR) / name


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


def _key_in_file_is_valid(path: Path, *, org: Organization, user: User | None) -> bool:
    """Whether the key the file holds is an unrevoked key of `org` (and `user`) here."""
    try:
        plaintext = path.read_text().strip()
    except FileNotFoundError:
        return False
    digest = hash_secret_token(plaintext)
    return ApiKey.objects.filter(key_hash=digest, org=org, user=user, revoked_at=None).exists()


class Command(BaseCommand):
    help = "Idempotent demo data: org demo, users, policy, sandbox bundle, demo MCP connection."

    def add_arguments(self, parser):
        parser.add_argument("--mcp-url", default="http://127.0.0.1:8765/mcp")
        parser.add_argument("--print-login", action="store_true", help="only print the login")

    def handle(self, *args, mcp_url, print_login, **options):
        if print_login:
            self._print_login()
            return
        org = Organization.objects.filter(slug="demo").first() or org_create(
            slug="demo", name="Demo"
        )
        password_file = _secret_file("admin-password.txt")
        # An admin the database already has keeps their password, whatever the data folder
        # holds (`--print-login` says when the file is not theirs).
        if not User.objects.filter(username="admin").exists():
            password = secrets.token_urlsafe(12)
            user_create(
                username="admin", org=org, role=Role.ADMIN, password=password, is_superuser=True
            )
            _write_private(password_file, password + "\n")
        # The bundled demo MCP server listens on loopback, which connections may not reach
        # unless allowed: the demo allows exactly its own server.
        demo_host = _host_entry(mcp_url)
        allowed = allow_list_lines(org.connection_allowed_hosts)
        if demo_host not in allowed:
            org_allowed_hosts_set(org=org, text="\n".join([*allowed, demo_host]))
        for username, role in (("alice", Role.APPROVER), ("audrey", Role.AUDITOR)):
            if not User.objects.filter(username=username).exists():
                user_create(username=username, org=org, role=role, password=f"{username}-demo")
        # alice's personal key: `make demo` approves through the API with it, unattended.
        # A key file is the data folder's, a key the database's: after `DATABASE_URL` changed
        # (or back), the file may hold another database's key, and is written anew.
        approver_key_file = _secret_file("demo-approver-key.txt")
        alice = User.objects.get(username="alice")
        if not _key_in_file_is_valid(approver_key_file, org=org, user=alice):
            issued = api_key_create(org=org, user=alice, name="demo-approver")
            _write_private(approver_key_file, issued.plaintext + "\n")
        operator_key_file = _secret_file("demo-operator-key.txt")
        if not _key_in_file_is_valid(operator_key_file, org=org, user=None):
            issued = api_key_create(org=org, name="demo-operator")
            _write_private(operator_key_file, issued.plaintext + "\n")
        bundle_import(org=org, text=SANDBOX_BUNDLE.read_text())
        bundle_import(org=org, text=AGENT_CLI_BUNDLE.read_text())
        if not Policy.objects.filter(org=org, name="default").exists():
            policy_save(org=org, text=(DEMO / "policy.yaml").read_text(), author=None, note="seed")
        operator = Actor(kind=ActorKind.OPERATOR, org_id=org.pk, roles={org.pk: "operator"})
        connection = Connection.objects.filter(org=org, slug="tracker").first()
        demo_credential = {"header": "Authorization", "value": f"Bearer {DEMO_TOKEN}"}
        if (
            connection is not None
            and connection.status == ConnectionStatus.ACTIVE
            and connection.transport == Transport.STREAMABLE_HTTP
            and connection.url != mcp_url
        ):
            # `make run MCP_PORT=…` after an earlier `make run`: the demo server listens
            # elsewhere now, and a connection left at the old address fails every call.
            was = connection.url
            try:
                connection = connection_move(
                    connection=connection, actor=operator, url=mcp_url, credential=demo_credential
                )
            except (VaultError, ServiceError) as error:
                # A data folder whose key is not the one this database's secrets were sealed
                # with (another `make run`'s var/, or its key removed): the vault is sealed.
                if isinstance(error, ServiceError) and error.code != "vault_sealed":
                    raise
                raise CommandError(
                    f"the demo MCP connection cannot move to {mcp_url}: {error} (this data "
                    "folder's vault key is not the one the database was seeded with; use that "
                    "folder, or the MCP port of the first `make run`)"
                ) from None
            self.stdout.write(f"demo MCP connection moved to {mcp_url} (was {was})")
        if connection is None:
            connection = connection_create(
                org=org,
                actor=operator,
                slug="tracker",
                kind="shared",
                transport="streamable-http",
                url=mcp_url,
                credential=demo_credential,
            )
        try:
            connection_refresh(connection=connection, actor=operator)
            self.stdout.write("demo MCP server photographed")
        except ServiceError as error:
            self.stdout.write(f"note: demo MCP server not photographed yet ({error.detail})")
        self.stdout.write("demo data ready")

    def _print_login(self):
        password_file = _secret_file("admin-password.txt")
        key_file = _secret_file("demo-operator-key.txt")
        password = password_file.read_text().strip() if password_file.exists() else ""
        admin = User.objects.filter(username="admin").first()
        if admin is not None and password and admin.check_password(password):
            self.stdout.write(f"  admin login: admin / {password}")
        else:
            # The file is this data folder's; the user is the database's (one seeded with
            # another DATABASE_URL, or a password changed since).
            self.stdout.write(
                f"  admin login: admin (no password of this database's admin is in "
                f"{password_file}: set one with `manage.py changepassword admin`)"
            )
        self.stdout.write(
            "  other demo users: alice / alice-demo (approver), audrey / audrey-demo (auditor)"
        )
        if key_file.exists():
            self.stdout.write(f"  operator API key: {key_file.read_text().strip()}")
        approver_key_file = _secret_file("demo-approver-key.txt")
        if approver_key_file.exists():
            self.stdout.write(
                f"  alice's personal API key: {approver_key_file.read_text().strip()}"
            )
