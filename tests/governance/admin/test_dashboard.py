"""The admin index: decisions of the last 24 hours, pending approvals, most denied tools,
and what state the vault is in."""

import re

import pytest
from django.test import override_settings
from django.urls import reverse

from governance import vault
from tests.governance.admin.scenarios import ask, pending_approval, sandbox_run

pytestmark = pytest.mark.django_db


def bar_counts(page: str, section: str) -> dict[str, int]:
    block = page.split(f'id="{section}"', 1)[1]
    block = block.split('class="fb-bars"', 1)[0].split("</section>", 1)[0]
    rows = re.findall(
        r'<span class="fb-bar-label">(?:<code>)?([^<]+)(?:</code>)?</span>.*?'
        r'<span class="fb-bar-count">(\d+)</span>',
        block,
        re.S,
    )
    return {label: int(count) for label, count in rows}


def test_the_index_counts_decisions_pending_approvals_and_denied_tools(org, approver, login):
    run, _ = sandbox_run(org)
    ask(run, "read_file", {"path": "/workspace/a"}, call_id="c-1")
    ask(run, "run_command", {"command": "rm -rf /"}, call_id="c-2")
    ask(run, "write_file", {"path": "/etc/passwd", "content": "x"}, call_id="c-3")
    ask(run, "run_command", {"command": "rm x"}, call_id="c-4")
    pending_approval(org, call_id="c-5")
    page = login(approver).get(reverse("admin:index")).content.decode()
    assert bar_counts(page, "decisions-by-verdict") == {"allow": 1, "deny": 3, "pending": 1}
    assert bar_counts(page, "decisions-by-source") == {"policy": 4, "approval": 1}
    assert bar_counts(page, "top-denied") == {"run_command": 2, "write_file": 1}
    assert re.search(r'id="pending-for-me">1<', page)


def test_another_orgs_decisions_are_not_counted(org, other_org, other_admin, login):
    run, _ = sandbox_run(org)
    ask(run, "run_command", {"command": "rm -rf /"})
    page = login(other_admin).get(reverse("admin:index")).content.decode()
    assert bar_counts(page, "decisions-by-verdict") == {"allow": 0, "deny": 0, "pending": 0}
    assert 'id="top-denied"' not in page


def test_the_index_warns_when_secrets_are_sealed_with_the_machine_key(org, admin_user, login):
    page = login(admin_user).get(reverse("admin:index")).content.decode()
    assert 'id="vault-warning"' in page
    assert "sealed with the machine key (development)" in page


def test_the_index_shows_an_error_when_the_vault_is_sealed(org, admin_user, login):
    with override_settings(FLUIDBOX_VAULT_PASSPHRASE="the-right-passphrase"):
        vault.reset_cache()
        vault.seal_secret("anything")
    vault.reset_cache()
    page = login(admin_user).get(reverse("admin:index")).content.decode()
    assert 'id="vault-sealed"' in page and 'id="vault-warning"' not in page
    with override_settings(FLUIDBOX_VAULT_PASSPHRASE="the-right-passphrase"):
        vault.reset_cache()
        page = login(admin_user).get(reverse("admin:index")).content.decode()
        assert 'id="vault-sealed"' not in page and 'id="vault-warning"' not in page
