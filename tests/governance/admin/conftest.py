"""Personas logged in through Django's test client, and a superuser with no membership."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from governance.models import Role
from governance.services.orgs import user_create


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
