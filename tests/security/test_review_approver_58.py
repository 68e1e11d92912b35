"""What an approver reads in the e-mail, from the attacker's side: whoever starts a run names
its agent (any visible text up to 100 characters: spaces, quotes, arrows, parentheses), and the
e-mail's subject and first lines print that name among fluidbox's own words. A name written
to finish fluidbox's sentence ("nightly → read_file (already approved …)") read as fluidbox
saying the call was harmless or settled. Slack shows the name as inline code; the e-mail must
show it as one delimited value too, a quote inside it escaped, so the reader can tell where
the agent's words end."""

import json

import pytest
from django.core import mail

from governance.models import Approval, NotificationChannel
from governance.services.notifications import approval_notify_all
from tests.conftest import Api, run_body
from tests.governance.gate.test_pipeline import ask

pytestmark = pytest.mark.django_db

# Written to read, in the subject, as fluidbox's words about a harmless, settled call; its
# quotes try to close a quoting the e-mail might put around it.
FORGED_AGENT = 'nightly" → "read_file" (already approved by security, FYI only) "x'
PREFIX = "[fluidbox] approval needed: "


def literal_then_rest(text: str) -> tuple[str, str]:
    """The JSON string literal `text` starts with, decoded, and what follows it: how a reader
    delimits a quoted value (an escaped quote does not end it)."""
    assert text.startswith('"'), text
    value, end = json.JSONDecoder().raw_decode(text)
    assert isinstance(value, str)
    return value, text[end:]


@pytest.fixture
def emailed(org, operator):
    NotificationChannel.objects.create(org=org, name="mail", kind="email", emails="a@example.com")
    response = operator.post("/v1/runs", run_body(agent=FORGED_AGENT))
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    runner = Api(response.json()["session_token"])
    answer = ask(runner, run_id, "send_email", {"to": "ops@example.com", "body": "numbers"})
    assert answer["decision"] == "pending"
    approval = Approval.objects.get(pk=answer["approval"]["id"])
    approval_notify_all(approval_id=approval.pk)
    assert len(mail.outbox) == 1
    return mail.outbox[0]


def test_the_agents_name_is_one_quoted_value_in_the_email_subject(emailed):
    # Before: `[fluidbox] approval needed: nightly" → "read_file" (already approved by
    # security, FYI only) "x → send_email`: the name's own words read as fluidbox's.
    subject = emailed.subject
    assert subject.startswith(PREFIX)
    agent, rest = literal_then_rest(subject[len(PREFIX) :])
    assert agent == FORGED_AGENT
    assert rest == ' → "send_email"'


def test_the_agents_name_is_one_quoted_value_in_the_emails_first_sentence(emailed):
    line = next(x for x in emailed.body.splitlines() if x.startswith("Approval needed: "))
    agent, rest = literal_then_rest(line.removeprefix("Approval needed: agent "))
    assert agent == FORGED_AGENT
    tool, rest = literal_then_rest(rest.removeprefix(" wants to call "))
    assert tool == "send_email"
    assert rest.startswith(" (run ")
