"""Review wave 53, the HTTP surface from the attacker's side: a portal list filtered by a
relation (`?org=`, `?run__org=`, `?policy=`) with an id no 64-bit key can hold.

Django reads an out-of-range value as "matches nothing" for an integer field's own lookups
(`?org__id__exact=`), but a relation's lookup (`?org=`, `?org__exact=`, `?run__org=`) hands
the number to the database driver as it came; on SQLite that was an OverflowError, a 500
with a stack trace in the log, for anyone signed in to the portal (a member included). Now
each is what any other filter Django cannot apply is: back to the list, flagged `e=1`.
(PostgreSQL compares such a number as a number: the list shows no rows, as it did.)"""

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.db import connection

from governance.models import Organization, Run
from tests.conftest import Api, run_body

pytestmark = pytest.mark.django_db

PAST_64_BITS = ("9223372036854775808", "-9223372036854775809", "99999999999999999999999999")


def refused_as_a_bad_filter(user, url: str) -> None:
    """SQLite's driver refuses the number: the bad-filter redirect. PostgreSQL compares it
    as a number, which no key equals: the list, empty. Never a 500."""
    page = Api(user=user).client
    page.raise_request_exception = False
    response = page.get(url)
    if connection.vendor == "sqlite":
        assert response.status_code == 302, (url, response.status_code)
        assert response.headers["Location"].endswith("?e=1")
    else:
        assert response.status_code == 200, (url, response.status_code)
        assert response.context["cl"].result_count == 0, url


@pytest.mark.parametrize("value", PAST_64_BITS)
@pytest.mark.parametrize(
    "listing",
    [
        "governance/run/?org=",
        "governance/run/?org__exact=",
        "governance/connection/?org=",
        "governance/apikey/?org=",
        "governance/capabilitybundle/?org=",
        "governance/policy/?org=",
        "governance/policyversion/?policy=",
        "governance/policyversion/?policy__org=",
        "governance/membership/?org=",
        "governance/notificationchannel/?org=",
        "governance/agentsecret/?org=",
        "governance/approval/?run__org=",
        "governance/toolcall/?run__org=",
        "ledger/event/?run__org=",
        "ledger/auditsink/?org=",
    ],
)
def test_a_relation_filter_past_64_bits_is_a_bad_filter_not_a_500(
    admin_user, operator, listing, value
):
    operator.post("/v1/runs", run_body())
    runs, orgs = Run.objects.count(), Organization.objects.count()
    refused_as_a_bad_filter(admin_user, f"/admin/{listing}{value}")
    assert (Run.objects.count(), Organization.objects.count()) == (runs, orgs)


@pytest.mark.parametrize("listing", ["governance/run", "governance/connection"])
def test_a_member_cannot_make_the_portal_err_with_one_either(member, listing):
    refused_as_a_bad_filter(member, f"/admin/{listing}/?org=9223372036854775808")


def test_every_list_of_the_portal_refuses_such_an_id(org):
    """Other apps' lists too, which only a superuser sees (Django's users and groups,
    django-q2's, django-axes'): each relation lookup past 64 bits is the bad-filter redirect."""
    root = User.objects.create_superuser("root", "root@example.com", "pw-root-12345")
    for model, model_admin in admin.site._registry.items():
        relations = [
            field.name
            for field in model._meta.get_fields()
            if field.is_relation and (field.many_to_one or field.many_to_many)
        ]
        lookups = [name for name in relations if model_admin.lookup_allowed(name, "1", None)]
        for name in lookups:
            url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/?{name}="
            refused_as_a_bad_filter(root, url + PAST_64_BITS[0])
