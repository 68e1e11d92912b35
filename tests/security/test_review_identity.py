"""Who a person is shown as, from the attacker's side: an account whose name reads like
another's (a Cyrillic letter, an invisible one, another case, `rn` for `m`), made through
every way an account is made or renamed, and the pages that show who decided and invoked.
Each attempt is refused with a form error (or a command error), never a 500, and no account
or membership is made; a look-alike made before the rule is shown marked, not hidden."""

import threading

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.urls import reverse

from governance.models import Approval, Membership, Role
from governance.services.orgs import api_key_create, user_create
from tests.conftest import Api, run_body
from tests.governance.gate.test_pipeline import ask

pytestmark = pytest.mark.django_db

# The name an attacker picks → the existing account it must not pass for.
LOOK_ALIKES = {
    "a Cyrillic a": ("\u0430lice", "alice"),
    "a Cyrillic i": ("al\u0456ce", "alice"),
    "a zero-width space": ("alice\u200b", "alice"),
    "a right-to-left override": ("\u202ealice", "alice"),
    "another case": ("Alice", "alice"),
    "all capitals": ("ALICE", "alice"),
    "rn for m": ("rno", "mo"),
    "a zero for an o": ("m0", "mo"),
    "a whole word in Cyrillic": ("\u0430\u0441\u0435", "ace"),
    "a fullwidth letter": ("\uff41lice", "alice"),
    "a letter drawn like a pipe": ("\u01c0ce", "ace"),
}
CASES = list(LOOK_ALIKES)


def signed_in(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


@pytest.fixture
def people(org, approver, member):
    """alice (approver), mo (member) and ace (member) exist in acme."""
    user_create(username="ace", org=org, role=Role.MEMBER)
    return {"alice": approver, "mo": member}


def accounts() -> set[str]:
    return set(User.objects.values_list("username", flat=True))


def memberships() -> set[tuple[str, str]]:
    return set(Membership.objects.values_list("user__username", "org__slug"))


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_an_org_admin_cannot_add_an_account_that_reads_like_an_existing_one(
    org, admin_user, people, case
):
    name, original = LOOK_ALIKES[case]
    before = (accounts(), memberships())
    response = signed_in(admin_user).post(
        reverse("admin:governance_membership_add"),
        {"org": org.pk, "username": name, "password": "pw-mallory-123", "role": "approver"},
    )
    assert response.status_code == 200  # the form again, with the error
    assert "errorlist" in response.content.decode()
    assert (accounts(), memberships()) == before


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_a_superuser_cannot_add_an_account_that_reads_like_an_existing_one(people, case):
    name, original = LOOK_ALIKES[case]
    root = User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    before = accounts()
    response = signed_in(root).post(
        reverse("admin:auth_user_add"),
        {"username": name, "usable_password": "false", "password1": "", "password2": ""},
    )
    assert response.status_code == 200
    assert "errorlist" in response.content.decode()
    assert accounts() == before


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_a_superuser_cannot_rename_an_account_to_read_like_another(org, people, case):
    name, original = LOOK_ALIKES[case]
    root = User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    newcomer = user_create(username="zed", org=org, role=Role.MEMBER)
    before = accounts()
    response = signed_in(root).post(
        reverse("admin:auth_user_change", args=[newcomer.pk]),
        {
            "username": name,
            "is_active": "on",
            "is_staff": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
            "initial-date_joined_0": "2026-01-01",
            "initial-date_joined_1": "00:00:00",
        },
    )
    assert response.status_code == 200
    assert "errorlist" in response.content.decode()
    assert accounts() == before


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_create_user_refuses_a_name_that_reads_like_an_existing_one(org, people, case):
    name, original = LOOK_ALIKES[case]
    before = (accounts(), memberships())
    with pytest.raises(CommandError):
        call_command("create_user", name, org="acme", role="approver", password="pw-m-12345")
    assert (accounts(), memberships()) == before


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_createsuperuser_refuses_a_name_that_reads_like_an_existing_one(people, case):
    name, original = LOOK_ALIKES[case]
    before = accounts()
    with pytest.raises(CommandError):
        call_command("createsuperuser", username=name, email="", interactive=False, verbosity=0)
    assert accounts() == before


def test_createsuperuser_still_makes_a_superuser_with_a_distinct_name(people):
    call_command("createsuperuser", username="root", email="", interactive=False, verbosity=0)
    assert User.objects.get(username="root").is_superuser


class _Terminal:
    def isatty(self) -> bool:
        return True


def test_createsuperuser_checks_the_name_again_where_it_creates_the_account(org, monkeypatch):
    """The operator types `carol`; while they type the e-mail address and the password, an
    org admin adds `Carol`. Checked only at the prompt, `carol` would be created beside it,
    a superuser whose name reads like a member's."""
    import getpass

    def typed(prompt: str) -> str:
        if prompt.startswith("Username"):
            return "carol"
        if prompt.startswith("Email"):
            user_create(username="Carol", org=org, role=Role.MEMBER)
            return "carol@example.com"
        raise AssertionError(f"unexpected prompt {prompt!r}")

    monkeypatch.setattr("builtins.input", typed)
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": "a-long-pass-phrase-81")
    with pytest.raises(CommandError, match="reads like"):
        call_command("createsuperuser", interactive=True, stdin=_Terminal(), verbosity=0)
    assert not User.objects.filter(username="carol").exists()
    assert User.objects.filter(username="Carol").exists()

    call_command(
        "createsuperuser", username="dora", email="", interactive=False, verbosity=0
    )  # the account is still created where nothing reads alike
    assert User.objects.get(username="dora").is_superuser


@pytest.mark.parametrize("name", ["zed", "Zoë", "李小龙", "renée", "j.doe@example.com", "mo2"])
def test_names_that_read_like_nobody_else_are_still_added(org, admin_user, people, name):
    response = signed_in(admin_user).post(
        reverse("admin:governance_membership_add"),
        {"org": org.pk, "username": name, "role": "member"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert (name, "acme") in memberships()


def test_an_account_the_ledger_names_cannot_be_renamed_so_its_name_is_never_someone_elses(
    org, approver, make_run
):
    """alice decided a call; renamed to `alice2`, her name would be free, and a new `alice`
    would read in the ledger as the one who approved it."""
    run_id, runner = make_run()
    pending = ask(runner, run_id, "send_email", {"to": "x@example.com"})
    signed_in(approver).post(
        reverse("admin:inbox-decide", args=[pending["approval"]["id"]]), {"decision": "approve"}
    )
    assert Approval.objects.get().decided_by == approver
    root = User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    response = signed_in(root).post(
        reverse("admin:auth_user_change", args=[approver.pk]),
        {
            "username": "alice2",
            "is_active": "on",
            "is_staff": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert response.status_code == 200
    assert "cannot be renamed" in response.content.decode()
    assert User.objects.filter(pk=approver.pk).values_list("username", flat=True)[0] == "alice"


def test_a_look_alike_made_before_the_rule_is_shown_marked_wherever_it_decided(
    org, approver, auditor, make_run
):
    """An account named `аlice` (Cyrillic а) from before this check approves a call: the
    approval page, the inbox and the timeline show its name with the letter marked."""
    impostor = User.objects.create(username="\u0430lice", is_staff=True)
    Membership.objects.create(org=org, user=impostor, role=Role.APPROVER)
    run_id, runner = make_run()
    pending = ask(runner, run_id, "send_email", {"to": "x@example.com"})
    approval_id = pending["approval"]["id"]
    decided = signed_in(impostor).post(
        reverse("admin:inbox-decide", args=[approval_id]), {"decision": "approve"}
    )
    assert decided.status_code == 302

    pages = {
        "approval page": signed_in(auditor).get(
            reverse("admin:inbox-approval", args=[approval_id])
        ),
        "inbox": signed_in(approver).get(reverse("admin:inbox")),
        "timeline": signed_in(auditor).get(reverse("admin:governance_run_change", args=[run_id])),
        "approvals list": signed_in(auditor).get(reverse("admin:governance_approval_changelist")),
    }
    for where, page in pages.items():
        assert page.status_code == 200, where
        text = page.content.decode()
        assert "\u0430lice" not in text, where
        assert '<mark class="fb-invisible"' in text and "\\u0430</mark>lice" in text, where


def test_two_admins_adding_the_same_new_name_at_once_get_one_account_and_no_500(
    transactional_db, org, admin_user
):
    """Both forms pass the "is the name free?" check before either saves; before, the second
    save hit the unique index and answered 500."""
    user_create(username="bea", org=org, role=Role.ADMIN)
    names = {"ada": "nell", "bea": "nell", "ada2": "NELL", "bea2": "ne\u04cfl"}
    for extra in ("ada2", "bea2"):
        user_create(username=f"{extra}x", org=org, role=Role.ADMIN)
    admins = {"ada": "ada", "bea": "bea", "ada2": "ada2x", "bea2": "bea2x"}
    barrier = threading.Barrier(len(names))
    statuses: dict[str, int] = {}
    pages: dict[str, str] = {}

    def add(who: str) -> None:
        try:
            client = signed_in(User.objects.get(username=admins[who]))
            barrier.wait()
            response = client.post(
                reverse("admin:governance_membership_add"),
                {"org": org.pk, "username": names[who], "role": "member"},
            )
            statuses[who], pages[who] = response.status_code, response.content.decode()
        finally:
            connection.close()

    threads = [threading.Thread(target=add, args=(who,)) for who in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(statuses.values()) == [200, 200, 200, 302]
    # Told what happened: the name is now a member here, or reads like one.
    told = [pages[who] for who, status in statuses.items() if status == 200]
    assert not any("none of the organizations you administer" in page for page in told)
    added = [name for name in accounts() if name.casefold().startswith("ne")]
    assert len(added) == 1


def test_an_operator_key_naming_alice_as_invoker_is_shown_as_its_word_not_hers(
    org, admin_user, approver, operator, auditor
):
    """An operator key may say a run is invoked by alice (SPEC §8), but only alice's own
    credential makes it so: the approval page and the timeline say who named her."""
    created = operator.post("/v1/runs", run_body(invoked_by="alice"))
    assert created.status_code == 201
    run_id, runner = created.json()["id"], Api(created.json()["session_token"])
    pending = ask(runner, run_id, "send_email", {"to": "x@example.com"})

    approval_page = signed_in(admin_user).get(
        reverse("admin:inbox-approval", args=[pending["approval"]["id"]])
    )
    timeline_page = signed_in(auditor).get(reverse("admin:governance_run_change", args=[run_id]))
    for page in (approval_page, timeline_page):
        assert page.status_code == 200
        invoked = page.content.decode().split('class="fb-invoked-by">', 1)[1].split("</dd>")[0]
        assert invoked.startswith("alice")
        assert "as named by operator key ci, not confirmed by alice" in invoked


def test_a_run_alice_creates_herself_says_only_that_she_invoked_it(org, approver, admin_user):
    mine = Api(api_key_create(org=org, user=approver, name="alice-laptop").plaintext)
    created = mine.post("/v1/runs", run_body())
    assert created.status_code == 201
    run_id, runner = created.json()["id"], Api(created.json()["session_token"])
    pending = ask(runner, run_id, "send_email", {"to": "x@example.com"})
    page = (
        signed_in(admin_user)
        .get(reverse("admin:inbox-approval", args=[pending["approval"]["id"]]))
        .content.decode()
    )
    assert page.split('class="fb-invoked-by">', 1)[1].split("</dd>")[0] == "alice"
