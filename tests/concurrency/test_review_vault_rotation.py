"""A secret sealed while `manage.py vault rotate` runs is never lost to the rotation.

The rotation locks the keyring row, re-seals the rows it reads, then keeps only the new
key. A connection created (POST /v1/connections) or an agent secret replaced (the admin's
"add again") in the middle of it used to read the keyring without any lock on PostgreSQL:
it was sealed under the old key and committed after the rotation had read its rows, and
once the old key was dropped nobody could ever unseal it again (the connection's refresh
was then a 500, its brokered calls failed, the agent secret never reached its tool).

Each race is made to happen in its worst order, with no hook in the code under test:
another connection holds a checkpoint signing key's row (a `LogKey`, which the rotation
re-seals after the connections and the agent secrets), so the rotation stops there with
the keyring locked and the other rows read; the sealer is sent then, and the hold lets go
once the sealer has finished or is itself waiting on a lock."""

import threading

import psycopg
import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import connection

from governance import vault
from governance.models import AgentSecret, Connection, VaultKeyring
from governance.services.agent_secrets import agent_secret_set
from ledger.checkpoints import active_key
from ledger.log_models import LogKey
from ledger.sequencer import log_for_org
from tests.conftest import Api
from tests.support.waiting import wait_until, wait_until_waiting_on_locks


def stdio_connection(slug: str, value: str) -> dict:
    return {
        "slug": slug,
        "kind": "shared",
        "transport": "stdio",
        "command": ["true"],
        "credential": {"env": "CRM_TOKEN", "value": value},
    }


def waiting_on_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def row_held(model, **where) -> psycopg.Connection:
    """Another connection holding a row, as a writer in the middle of its transaction
    holds it (released by rolling back)."""
    ((column, value),) = where.items()
    settings = connection.settings_dict
    held = psycopg.connect(
        host=settings["HOST"] or "127.0.0.1",
        port=settings["PORT"] or 5432,
        dbname=settings["NAME"],
        user=settings["USER"] or "postgres",
        password=settings["PASSWORD"] or None,
    )
    held.execute(f"SELECT 1 FROM {model._meta.db_table} WHERE {column} = %s FOR UPDATE", [value])
    return held


def in_thread(work, outcome: dict, name: str) -> threading.Thread:
    def run() -> None:
        try:
            outcome[name] = work()
        except BaseException as error:  # reported by the test, not lost in the thread
            outcome[name] = error
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def rotate_and_seal(held: psycopg.Connection, seal) -> dict:
    """The rotation queued behind `held`, then `seal()` sent, and `held` let go once the
    sealer has finished or waits on a lock too. Returns both outcomes."""
    outcome: dict = {}
    threads = []
    try:
        threads.append(in_thread(lambda: call_command("vault", "rotate"), outcome, "rotation"))
        wait_until_waiting_on_locks(1, "the rotation to queue behind the held row")
        threads.append(in_thread(seal, outcome, "seal"))
        wait_until(
            lambda: "seal" in outcome or waiting_on_locks() >= 2,
            "the sealer to finish or queue behind the rotation",
        )
    finally:
        held.rollback()
        held.close()
    for thread in threads:
        thread.join()
    assert not isinstance(outcome["rotation"], BaseException), outcome["rotation"]
    assert not isinstance(outcome["seal"], BaseException), outcome["seal"]
    return outcome


def seal_during_rotation(org, seal) -> dict:
    """`seal()` sent while the rotation has the keyring locked and the secrets read: it
    waits on a signing key's row, which it re-seals after the connections and agent
    secrets."""
    key = active_key(log_for_org(org))
    return rotate_and_seal(row_held(LogKey, id=key.pk), seal)


def readable(sealed: str) -> str | None:
    try:
        return vault.unseal_secret(sealed)
    except vault.VaultError:
        return None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_connection_created_during_a_rotation_stays_readable(org, operator, settings):
    settings.FLUIDBOX_STDIO_COMMANDS = ["true"]
    # A secret before the rotation, so the keyring exists and has a key to drop.
    agent_secret_set(org=org, name="EARLIER", value="earlier-value")

    outcome = seal_during_rotation(
        org,
        lambda: Api(operator.token).post("/v1/connections", stdio_connection("crm", "crm-9a")),
    )

    created = outcome["seal"]
    assert created.status_code == 201, created.content
    vault.reset_cache()  # as a process started after the rotation would
    stored = Connection.objects.get(pk=created.json()["id"])
    assert readable(stored.credential_sealed) == "crm-9a", (
        "the credential sealed during the rotation was sealed under the dropped key"
    )
    assert readable(AgentSecret.objects.get(name="EARLIER").value_sealed) == "earlier-value"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_agent_secret_replaced_during_a_rotation_stays_readable(org):
    agent_secret_set(org=org, name="JIRA_TOKEN", value="old-value")

    seal_during_rotation(
        org, lambda: agent_secret_set(org=org, name="JIRA_TOKEN", value="new-value-7c")
    )

    vault.reset_cache()
    assert readable(AgentSecret.objects.get(name="JIRA_TOKEN").value_sealed) == "new-value-7c", (
        "the agent secret replaced during the rotation was sealed under the dropped key"
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_reconnect_queued_behind_a_rotation_never_deadlocks_it(org, operator, settings):
    """Sealing now waits for the keyring's lock, which the rotation takes before the rows
    it re-seals: a reconnect that locked its connection's row first and only then sealed
    would hold what the rotation waits for while waiting for what the rotation holds."""
    settings.FLUIDBOX_STDIO_COMMANDS = ["true"]
    created = operator.post("/v1/connections", stdio_connection("crm", "crm-9a"))
    assert created.status_code == 201, created.content
    connection_id = created.json()["id"]
    # The keyring held as a sealer holds it; the rotation queues for it first, the
    # reconnect after it.
    outcome = rotate_and_seal(
        row_held(VaultKeyring, name=vault.KEYRING),
        lambda: Api(operator.token).post(
            f"/v1/connections/{connection_id}/reconnect",
            {"credential": {"env": "CRM_TOKEN", "value": "crm-9b"}},
        ),
    )

    assert outcome["seal"].status_code == 200, outcome["seal"].content
    vault.reset_cache()
    assert readable(Connection.objects.get(pk=connection_id).credential_sealed) == "crm-9b"


@pytest.mark.django_db(transaction=True)
def test_refreshing_a_connection_whose_credential_cannot_be_unsealed_is_a_409(
    org, operator, settings
):
    """A credential no key of the keyring opens (sealed under a key since dropped, or a
    database restored beside another keyring) is a 409 the admin can act on (reconnect),
    not a 500."""
    settings.FLUIDBOX_STDIO_COMMANDS = ["true"]
    created = operator.post("/v1/connections", stdio_connection("crm", "crm-9a"))
    assert created.status_code == 201, created.content
    foreign = Fernet(Fernet.generate_key()).encrypt(b"crm-9a").decode()
    Connection.objects.filter(pk=created.json()["id"]).update(credential_sealed=foreign)

    refreshed = operator.post(f"/v1/connections/{created.json()['id']}/tools/refresh")

    assert refreshed.status_code == 409, refreshed.content
    assert refreshed.json()["error"] == "credential_unreadable"
    assert "reconnect" in refreshed.json()["detail"]
