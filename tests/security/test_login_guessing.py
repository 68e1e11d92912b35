"""Guessing a password at the sign-in form, from the attacker's side: after
FLUIDBOX_LOGIN_FAILURE_LIMIT (10) failures for one username from one address, that pair is
refused with 429 (the right password too) until the cool-off ends; a forged X-Forwarded-For
does not help, nobody else is locked out, and no guessed password is stored anywhere — not
even one typed into the username field."""

import logging
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.utils import timezone

PASSWORD = "the-real-password-7"
ATTACKER = "203.0.113.5"
COLLEAGUE = "198.51.100.7"


@pytest.fixture
def root(db):
    return get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)


def sign_in(client, password: str, address: str, **headers):
    return client.post(
        "/admin/login/?next=/admin/",
        {"username": "root", "password": password},
        REMOTE_ADDR=address,
        **headers,
    )


def signed_in(response) -> bool:
    return response.status_code == 302 and response.headers["Location"] == "/admin/"


def test_guessing_locks_the_pair_out_until_the_cool_off_ends(root, client, settings):
    guesses = [f"guess-{n}-hunter2" for n in range(settings.AXES_FAILURE_LIMIT)]
    answers = [sign_in(client, guess, ATTACKER).status_code for guess in guesses]
    assert answers[:-1] == [200] * (len(guesses) - 1)  # the form again, with its error
    assert answers[-1] == 429

    # Now the right password is refused too, from that address, whatever it claims to be.
    for extra in ({}, {"HTTP_X_FORWARDED_FOR": "192.0.2.99"}):
        locked = sign_in(client, PASSWORD, ATTACKER, **extra)
        assert locked.status_code == 429
        assert "sessionid" not in locked.cookies
    assert client.get("/admin/").status_code == 302  # still signed out

    # Someone else signing in as root from their own address is not locked out.
    assert signed_in(sign_in(client, PASSWORD, COLLEAGUE))
    client.logout()

    # No guessed password is kept, in any column of any table.
    for model in apps.get_models():
        for row in model._base_manager.values():
            text = repr(row)
            assert not any(guess in text for guess in guesses), model._meta.label

    # After the cool-off (15 minutes), the pair may try again.
    assert AccessAttempt.objects.filter(ip_address=ATTACKER).exists()
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert signed_in(sign_in(client, PASSWORD, ATTACKER))


def test_a_password_typed_as_the_username_is_kept_nowhere(root, client, settings, caplog):
    """People type their password into the username field. Such a name is no account's: it is
    counted (and locked out) under a keyed digest, so no table and no log line holds it."""
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="axes")
    typed = "Canary-Tr0ub4dor&3-typed-as-the-username"
    answers = [
        client.post(
            "/admin/login/", {"username": typed, "password": "x"}, REMOTE_ADDR=ATTACKER
        ).status_code
        for _ in range(settings.AXES_FAILURE_LIMIT)
    ]
    assert answers[-1] == 429  # still counted, and the pair locked out

    for model in apps.get_models():
        for row in model._base_manager.values():
            assert typed not in repr(row), model._meta.label
    assert caplog.records, "axes logged nothing: the scan below would prove nothing"
    for record in caplog.records:
        assert typed not in record.getMessage(), record.name

    # It is counted under that digest, and only that pair is locked out: the account's own
    # name is counted as typed, and root signs in from the same address.
    (attempt,) = AccessAttempt.objects.filter(ip_address=ATTACKER)
    assert attempt.username.startswith("unknown:")
    assert signed_in(sign_in(client, PASSWORD, ATTACKER))
    client.logout()
    sign_in(client, "a-wrong-one", ATTACKER)
    assert AccessAttempt.objects.filter(username="root", ip_address=ATTACKER).exists()


def test_a_success_resets_the_count(root, client, settings):
    for n in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in(client, f"typo-{n}", ATTACKER).status_code == 200
    assert signed_in(sign_in(client, PASSWORD, ATTACKER))
    client.logout()
    # The count started again: as many typos as before do not lock the account.
    for n in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in(client, f"typo-again-{n}", ATTACKER).status_code == 200
    assert signed_in(sign_in(client, PASSWORD, ATTACKER))


def test_an_operator_lifts_a_lockout_by_username(root, client, settings):
    for n in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, f"guess-{n}", ATTACKER)
    assert sign_in(client, PASSWORD, ATTACKER).status_code == 429
    call_command("axes_reset_username", "root")
    assert signed_in(sign_in(client, PASSWORD, ATTACKER))


def test_a_sign_in_lasts_twelve_hours_not_two_weeks(root, client):
    """A portal session can approve calls: it ends FLUIDBOX_SESSION_HOURS (12) after the
    sign-in, in the browser (the cookie's Max-Age) and on the server (its expiry)."""
    response = sign_in(client, PASSWORD, COLLEAGUE)
    assert signed_in(response)
    assert response.cookies["sessionid"]["max-age"] == 12 * 3600
    (session,) = Session.objects.all()
    lifetime = session.expire_date - timezone.now()
    assert timedelta(hours=11, minutes=59) < lifetime <= timedelta(hours=12)
    assert client.get("/admin/inbox/").status_code == 200

    # Twelve hours later the same cookie opens nothing: the form asks again.
    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    later = client.get("/admin/inbox/")
    assert later.status_code == 302
    assert later.headers["Location"].startswith("/admin/login/")


def test_behind_the_proxy_each_client_is_counted_apart(root, client, settings):
    """The proxy on this machine (127.0.0.1, trusted by default) appends each client's
    address to X-Forwarded-For; the guesser is locked out, not everyone behind the proxy."""
    proxy = "127.0.0.1"
    for n in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, f"guess-{n}", proxy, HTTP_X_FORWARDED_FOR=ATTACKER)
    assert sign_in(client, PASSWORD, proxy, HTTP_X_FORWARDED_FOR=ATTACKER).status_code == 429
    # An address the guesser writes into the header itself stands left of the one the proxy
    # appends, and is never read.
    forged = f"{COLLEAGUE}, {ATTACKER}"
    assert sign_in(client, PASSWORD, proxy, HTTP_X_FORWARDED_FOR=forged).status_code == 429
    assert signed_in(sign_in(client, PASSWORD, proxy, HTTP_X_FORWARDED_FOR=COLLEAGUE))


def test_odd_sign_in_attempts_get_an_answer_never_a_500(root, client):
    odd = [
        ({"username": "r" * 150, "password": "x"}, {}),
        ({"username": "r" * 5000, "password": "x"}, {}),
        ({"username": "root", "password": "x"}, {"HTTP_USER_AGENT": "u" * 10_000}),
        ({"username": "root", "password": "x"}, {"HTTP_ACCEPT": "a" * 10_000}),
        ({"username": "root", "password": "x"}, {"HTTP_X_FORWARDED_FOR": "not-an-address, ::1"}),
        ({"username": "root\x00", "password": "x"}, {}),
        ({"username": "röot", "password": "x" * 10_000}, {}),
    ]
    for form, headers in odd:
        response = client.post("/admin/login/", form, **headers)
        assert response.status_code == 200, (form["username"][:20], headers.keys())
        assert "sessionid" not in response.cookies
