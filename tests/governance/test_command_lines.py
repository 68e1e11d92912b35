"""Management commands as a newcomer runs them: in a shell, often with no terminal."""

import subprocess

import pytest
from django.core.management import call_command

from tests.support.servers import BIN, ROOT, child_environment

pytestmark = pytest.mark.django_db(transaction=True)


def manage(*args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
    """`manage.py …` in a child process on the test database, stdin a pipe (no terminal)."""
    return subprocess.run(
        [str(BIN / "python"), "manage.py", *args],
        cwd=ROOT,
        env=child_environment(**env),
        input=stdin or "",
        capture_output=True,
        text=True,
        timeout=300,
    )


def protected_vault(passphrase: str) -> None:
    """A keyring wrapped under `passphrase`, as production makes it."""
    made = manage("vault", "rotate", FLUIDBOX_VAULT_PASSPHRASE=passphrase)
    assert made.returncode == 0, made.stderr
    assert manage("vault", "status").stdout.strip() == "sealed"


def test_unseal_check_without_a_terminal_reads_stdin_and_never_shows_a_traceback():
    protected_vault("correct horse battery")
    nothing = manage("vault", "unseal-check")
    wrong = manage("vault", "unseal-check", stdin="wrong guess\n")
    right = manage("vault", "unseal-check", stdin="correct horse battery\n")

    for result in (nothing, wrong, right):
        assert "Traceback" not in result.stderr
    assert nothing.returncode == 1
    assert "no passphrase given" in nothing.stderr
    assert wrong.returncode == 1
    assert "that passphrase does not unseal the vault" in wrong.stderr
    assert right.returncode == 0, right.stderr
    assert "the passphrase unseals the vault" in right.stdout


def test_unseal_check_in_development_says_no_passphrase_is_set():
    made = manage("vault", "rotate")  # no FLUIDBOX_VAULT_PASSPHRASE: the development fallback
    assert made.returncode == 0, made.stderr
    result = manage("vault", "unseal-check", stdin="anything at all\n")
    assert result.returncode == 1
    assert "no passphrase protects this vault" in result.stderr
    assert "does not unseal" not in result.stderr


def test_a_development_vault_comes_under_a_passphrase_by_rotating_with_one_set(org):
    """A newcomer set FLUIDBOX_VAULT_PASSPHRASE on a `make run` database, as the dashboard
    advises, and the vault stayed under the machine key: nothing said how to move it."""
    from governance.authentication import Actor, ActorKind
    from governance.models import Connection
    from governance.services.connections import connection_create

    operator = Actor(kind=ActorKind.OPERATOR, org_id=org.pk, roles={org.pk: "operator"})
    connection_create(
        org=org,
        actor=operator,
        slug="crm",
        kind="shared",
        transport="streamable-http",
        url="http://127.0.0.1:9/mcp",
        credential={"header": "Authorization", "value": "Bearer crm-secret-1"},
    )
    assert manage("vault", "status").stdout.strip() == "machine-key"
    before = Connection.objects.get(slug="crm").credential_sealed

    moved = manage("vault", "rotate", FLUIDBOX_VAULT_PASSPHRASE="correct horse battery")
    assert moved.returncode == 0, moved.stderr
    assert Connection.objects.get(slug="crm").credential_sealed != before
    # Without the passphrase the vault is sealed now, the machine key no longer opens it;
    # with it, the credential unseals as before.
    assert manage("vault", "status").stdout.strip() == "sealed"
    unseal = (
        "from governance.models import Connection; from governance import vault; "
        "print(vault.unseal_secret(Connection.objects.get(slug='crm').credential_sealed))"
    )
    opened = manage("shell", "-c", unseal, FLUIDBOX_VAULT_PASSPHRASE="correct horse battery")
    assert opened.returncode == 0, opened.stderr
    assert "crm-secret-1" in opened.stdout
    refused = manage("shell", "-c", unseal)
    assert refused.returncode != 0 and "crm-secret-1" not in refused.stdout + refused.stderr
    # A rotation without the passphrase cannot take the protection off again.
    assert manage("vault", "rotate").returncode != 0
    assert manage("vault", "status").stdout.strip() == "sealed"


def test_unseal_check_before_any_secret_says_there_are_no_keys_yet():
    result = manage("vault", "unseal-check", stdin="anything\n")
    assert result.returncode == 1
    assert "the vault has no keys yet" in result.stderr


def test_create_user_without_a_password_says_how_to_sign_in(org, client, capsys):
    bob = ("create_user", "bob", "--org", "acme", "--role", "approver")
    call_command(*bob)
    said = capsys.readouterr().out
    assert "user bob is approver in acme" in said
    assert "bob cannot sign in to the portal yet" in said
    assert "--password" in said and "create_api_key --org acme --user bob" in said
    no_password = client.post("/admin/login/", {"username": "bob", "password": ""})
    assert no_password.status_code == 200 and "sessionid" not in no_password.cookies

    # Following the advice: run it again with a password, then sign in.
    call_command(*bob, "--password", "pw-b0b-1234")
    assert "password set: bob signs in at /admin/" in capsys.readouterr().out
    assert (
        client.post(
            "/admin/login/", {"username": "bob", "password": "pw-b0b-1234", "next": "/admin/"}
        ).headers["Location"]
        == "/admin/"
    )
