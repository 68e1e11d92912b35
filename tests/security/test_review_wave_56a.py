"""Wave 56a: the approver's view, from the attacker's side.

An agent must not be able to keep the approver from being told of its call. The Slack-
compatible webhook body (`approval_message`, what the worker posts) lists what the shell
reads in a script, each command and its reason cut at a bound so that the two fit one Slack
section (Slack refuses a section over 3,000 characters with `invalid_blocks`: the whole
message is then refused, every retry too, and no approver is pinged). The bound counted raw
characters, and assumed six characters an escape at worst: a tag character (U+E0041) is
written `\\U000e0041`, ten, and `bash --x<tags>` puts the agent's characters in the reason
as well as in the command.
"""

import json

import pytest

from governance.services.notifications import approval_message
from tests.governance.test_notification_injection import shell_approval  # noqa: F401

SLACK_SECTION_MAX = 3000  # Slack refuses a section block whose text is longer

pytestmark = pytest.mark.django_db

TAG = "\U000e0041"  # TAG LATIN CAPITAL LETTER A: invisible, escaped as ten characters


@pytest.mark.parametrize(
    "script",
    [
        # The reason quotes the option raw: "bash --x… changes what the shell reads at start-up".
        "ls ; bash --x" + TAG * 250 + " -c ls",
        # Slack's own escapes grow too: `&` is `&amp;`.
        "ls ; bash '--x" + (TAG + "&") * 125 + "' -c ls",
    ],
)
def test_an_agent_cannot_make_its_slack_notification_one_slack_refuses(
    shell_approval,  # noqa: F811
    script,
):
    """Proves: whatever characters the agent puts in its script, every section of the webhook
    body fits Slack's limit (before the fix one was 3,928 characters: Slack would refuse the
    whole notification of this call), the commands are still listed escaped, and the cut is
    said."""
    approval = shell_approval(script)
    message = approval_message(approval)
    json.dumps(message)  # the body the worker posts
    sections = [b["text"]["text"] for b in message["blocks"] if b["type"] == "section"]
    too_long = [len(text) for text in sections if len(text) > SLACK_SECTION_MAX]
    assert too_long == [], f"sections Slack refuses: {too_long}"
    reading = "\n".join(text for text in sections if text.startswith("1. "))
    assert "`bash --x\\U000e0041" in reading
    assert "more characters" in reading
    assert TAG not in reading
