"""Configuring audit sinks, from the attacker's side: an organization's admin cannot send a
sink's stored token anywhere but the URL it was entered for, cannot store a password in
clear in the URL, and cannot save a sink that could never be delivered to."""

import pytest
from django.contrib.auth import get_user_model

from governance import vault
from governance.errors import Invalid
from governance.models import Role
from governance.services.orgs import org_allowed_hosts_set, user_create
from ledger.models import AuditSink, Event
from ledger.sinks import sink_create, sink_update
from ledger.streaming import sinks_deliver
from tests.conftest import Api
from tests.support.receivers import SinkReceiver

CANARY = "META-CANARY-TOKEN-1"
ADD = "/admin/ledger/auditsink/add/"


def change_url(sink) -> str:
    return f"/admin/ledger/auditsink/{sink.pk}/change/"


def edit(client, sink, **fields):
    data = {"url": sink.url, "token": "", "is_active": "on", "max_backlog": 1000, **fields}
    return client.post(change_url(sink), data)


def add(client, org, **fields):
    data = {"org": org.pk, "name": "meta", "kind": "jsonl", "is_active": "on"}
    return client.post(ADD, {**data, "max_backlog": 1000, **fields})


def deliver_all() -> None:
    while sinks_deliver().delivered:
        pass


def due_now(sink) -> None:
    AuditSink.objects.filter(pk=sink.pk).update(next_attempt_at=None)


@pytest.fixture
def root(db):
    return get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-123")


@pytest.fixture
def other_admin(org):
    return user_create(username="mallory", org=org, role=Role.ADMIN, password="pw-mallory-1")


@pytest.mark.django_db(transaction=True)
def test_another_admin_cannot_redirect_the_stored_token_to_a_url_of_their_own(
    org, root, other_admin, make_run
):
    siem, thief = SinkReceiver(), SinkReceiver()
    with siem, thief:
        added = add(
            Api(user=root).client,
            org,
            url=f"http://127.0.0.1:{siem.port}/ingest",
            token=CANARY,
        )
        assert added.status_code == 302, added.content.decode()[:2000]
        sink = AuditSink.objects.get(org=org, name="meta")
        steal = f"http://127.0.0.1:{thief.port}/steal"
        mallory = Api(user=other_admin).client

        # A new URL with the token left blank: refused, nothing changed.
        refused = edit(mallory, sink, url=steal)
        assert refused.status_code == 200
        assert "Enter the token again" in refused.content.decode()
        sink.refresh_from_db()
        assert sink.url == f"http://127.0.0.1:{siem.port}/ingest"
        # The service refuses it too, whoever calls it.
        with pytest.raises(Invalid, match="token again"):
            sink_update(sink=sink, url=steal, is_active=True, max_backlog=1000)
        # A different port or path on the same host is a different URL.
        for elsewhere in (f"http://127.0.0.1:{thief.port}/ingest", f"{sink.url}/../steal"):
            assert "Enter the token again" in edit(mallory, sink, url=elsewhere).content.decode()

        run_id, _ = make_run()
        deliver_all()
        assert len(siem.lines()) == Event.objects.filter(run_id=run_id).count() > 0
        assert siem.headers[0]["Authorization"] == f"Bearer {CANARY}"
        assert thief.attempts == 0

        # Whatever else writes the URL (a shell, a future API), the sealed token stays
        # bound to the URL it was entered for: nothing is sent.
        AuditSink.objects.filter(pk=sink.pk).update(url=steal)
        make_run()
        outcome = sinks_deliver()
        sink.refresh_from_db()
        assert outcome.failed and thief.attempts == 0
        assert "entered for another URL" in sink.last_error

        # With a token of their own, the new URL gets that token, never the canary.
        AuditSink.objects.filter(pk=sink.pk).update(url=f"http://127.0.0.1:{siem.port}/ingest")
        sink.refresh_from_db()
        moved = edit(mallory, sink, url=steal, token="mallory-own-token")
        assert moved.status_code == 302, moved.content.decode()[:2000]
        due_now(sink)
        deliver_all()
        assert thief.headers and all(
            headers["Authorization"] == "Bearer mallory-own-token" for headers in thief.headers
        )
        assert all(CANARY not in str(headers) for headers in thief.headers)


@pytest.mark.django_db(transaction=True)
def test_a_sink_without_a_token_may_move_and_one_with_its_token_unchanged_keeps_it(
    org, admin_user, make_run
):
    receiver = SinkReceiver()
    with receiver:
        plain = sink_create(org=org, name="plain", kind="jsonl", url="https://a.example.com/x")
        client = Api(user=admin_user).client
        moved = edit(client, plain, url=f"http://127.0.0.1:{receiver.port}/in")
        assert moved.status_code == 302, moved.content.decode()[:2000]

        kept = sink_create(
            org=org,
            name="kept",
            kind="jsonl",
            url=f"http://127.0.0.1:{receiver.port}/kept",
            token=CANARY,
        )
        unchanged = edit(client, kept, max_backlog=500)
        assert unchanged.status_code == 302, unchanged.content.decode()[:2000]
        make_run()
        deliver_all()
    kept_headers = [h for h in receiver.headers if "Authorization" in h]
    assert kept_headers and all(h["Authorization"] == f"Bearer {CANARY}" for h in kept_headers)


@pytest.mark.django_db
def test_a_form_loaded_before_another_admins_change_cannot_send_their_token_back(org):
    """Two admins edit one sink. The second moves it to their SIEM with its token; the
    first, whose page shows the old URL, saves without a token. That save would point the
    new token at the old URL: a form error, not a refusal deep in the save (a 500)."""
    from django.db import transaction

    from ledger.admin import AuditSinkForm

    sink = sink_create(
        org=org, name="meta", kind="jsonl", url="https://old.example.com/in", token=CANARY
    )
    stale = AuditSink.objects.get(pk=sink.pk)  # the first admin's page
    sink_update(
        sink=sink,
        url="https://siem.example.com/in",
        is_active=True,
        max_backlog=1000,
        new_token="SECOND-ADMIN-TOKEN",
    )
    data = {"org": org.pk, "name": "meta", "kind": "jsonl", "url": stale.url, "token": ""}
    data |= {"is_active": "on", "max_backlog": 1000}

    with transaction.atomic():  # as the admin's change view runs it
        form = AuditSinkForm(data=data, instance=stale)
        assert not form.is_valid()
    assert list(form.errors) == ["token"]
    assert "Enter the token again" in str(form.errors["token"])
    assert AuditSink.objects.get(pk=sink.pk).url == "https://siem.example.com/in"


@pytest.mark.django_db
def test_a_password_in_the_url_is_refused_and_never_stored(org, admin_user, approver, auditor):
    url = "https://user:SECRETPW-CANARY@example.com/x"
    refused = add(Api(user=admin_user).client, org, url=url)
    assert refused.status_code == 200
    assert "cannot carry a user or password" in refused.content.decode()
    assert not AuditSink.objects.exists()
    with pytest.raises(Invalid, match="user or password"):
        sink_create(org=org, name="meta", kind="jsonl", url=url)
    # Nor by editing an existing sink.
    sink = sink_create(org=org, name="meta", kind="jsonl", url="https://example.com/x")
    assert edit(Api(user=admin_user).client, sink, url=url).status_code == 200
    assert not AuditSink.objects.filter(url__contains="SECRETPW").exists()
    for reader in (approver, auditor):
        page = Api(user=reader).get("/admin/ledger/auditsink/").content.decode()
        assert "SECRETPW" not in page


@pytest.mark.django_db
@pytest.mark.parametrize(
    "token",
    ["tökén", "abc\r\nX-Evil: 1", "with space", "tab\there", "nul\x00byte", "del\x7f"],
)
def test_a_token_that_cannot_go_in_a_header_is_refused(org, admin_user, token):
    refused = add(Api(user=admin_user).client, org, url="https://siem.example.com/", token=token)
    assert refused.status_code == 200
    page = refused.content.decode()
    # (Django's own check refuses the NUL first.)
    assert "visible ASCII characters only" in page or "Null characters are not allowed" in page
    assert not AuditSink.objects.exists()
    with pytest.raises(Invalid, match="visible ASCII"):
        sink_create(org=org, name="meta", kind="jsonl", url="https://x.example.com/", token=token)
    sink = sink_create(org=org, name="ok", kind="jsonl", url="https://x.example.com/")
    assert edit(Api(user=admin_user).client, sink, token=token).status_code == 200
    assert AuditSink.objects.get(pk=sink.pk).token_sealed == ""


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "http://٠.com/",
        "https://example.com:0/",
        "https://example.com:65536/",
        "https://exa%41mple.com/",
        "https://-bad.example.com/",
        "https://ex..com/",
        "https://999.1.1.1/",
    ],
)
def test_a_url_that_can_never_be_delivered_to_is_refused(org, admin_user, url):
    refused = add(Api(user=admin_user).client, org, url=url)
    assert refused.status_code == 200
    assert 'class="errorlist' in refused.content.decode()
    assert not AuditSink.objects.exists()
    with pytest.raises(Invalid):
        sink_create(org=org, name="meta", kind="jsonl", url=url)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "https://siem.example.com:8088/services/collector/event",
        "https://bücher.example/ingest",
        "https://[2001:db8::1]:8443/x",
        "https://10.0.0.5/",
        "https://siem.corp./x",
    ],
)
def test_urls_a_sink_can_deliver_to_are_accepted(org, admin_user, url):
    # Internal addresses only once the organization allows them (tests/security/
    # test_control_plane_egress.py has the refusals).
    org_allowed_hosts_set(org=org, text="10.0.0.0/8, 2001:db8::/32")
    added = add(Api(user=admin_user).client, org, url=url)
    assert added.status_code == 302, added.content.decode()[:2000]


@pytest.mark.django_db(transaction=True)
def test_a_success_clears_the_last_error_and_an_old_bad_token_fails_cleanly(
    org, admin_user, make_run
):
    receiver = SinkReceiver(refuse_first=1)
    with receiver:
        sink = sink_create(
            org=org, name="flaky", kind="jsonl", url=f"http://127.0.0.1:{receiver.port}/in"
        )
        make_run()
        assert sinks_deliver().failed
        sink.refresh_from_db()
        assert sink.last_error == "the sink answered 503" and sink.last_error_at

        due_now(sink)
        deliver_all()
        sink.refresh_from_db()
        assert sink.last_success_at and sink.delivered_events > 0
        assert sink.last_error == "" and sink.last_error_at is None
        page = Api(user=admin_user).get("/admin/ledger/auditsink/").content.decode()
        assert "answered 503" not in page

        # A token sealed before tokens were checked: a plain error, not a traceback.
        AuditSink.objects.filter(pk=sink.pk).update(token_sealed=vault.seal_infrastructure("tökén"))
        make_run()
        assert sinks_deliver().failed
        sink.refresh_from_db()
        assert "visible ASCII" in sink.last_error
        assert receiver.attempts == 2
