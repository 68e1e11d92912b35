"""Personas logged in through Django's test client, and a superuser with no membership."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from governance.models import Role
from governance.services.channels import channel_create
from governance.services.orgs import api_key_create, user_create
from tests.governance.admin.scenarios import (
    ask,
    pending_approval,
    personal_connection,
    sandbox_run,
    shared_connection,
)


@pytest.fixture
def superuser(db):
    return User.objects.create_superuser("root", "root@example.com", "pw-root-123")


@pytest.fixture
def login():
    def client_for(user) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return client_for


@pytest.fixture
def other_admin(other_org):
    return user_create(username="gus", org=other_org, role=Role.ADMIN, password="pw-gus-123")


@pytest.fixture
def world(org, admin_user, approver, auditor, member):
    """One org with something of everything."""
    run, _ = sandbox_run(org)
    ask(run, "read_file", {"path": "/workspace/a"})
    approval = pending_approval(org, call_id="c-2")
    shared_connection(org)
    personal_connection(org, "mo", slug="mine")
    personal_connection(org, "alice", slug="alices")
    api_key_create(org=org, name="ci")
    channel_create(org=org, name="hook", kind="webhook", url="https://example.com/h", secret="s1")
    return {"run": run, "approval": approval}
