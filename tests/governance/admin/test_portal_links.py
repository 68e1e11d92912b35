"""Every link the portal shows a person opens for them: a link to a page that answers 403
is a dead end (a newcomer crawled the portal as each role and found some)."""

import re
from collections import deque

import pytest

pytestmark = pytest.mark.django_db

LINK = re.compile(r'href="(/admin/[^"#]*)"')
# Enough for every list, page and filter of the one-of-everything organization.
MAX_PAGES = 600


@pytest.mark.parametrize("who", ["admin_user", "approver", "auditor", "member"])
def test_no_link_in_the_portal_leads_a_role_to_a_403(org, world, who, login, request):
    client = login(request.getfixturevalue(who))
    seen, queue, dead = {"/admin/"}, deque(["/admin/"]), []
    found_on: dict[str, str] = {}
    while queue and len(seen) < MAX_PAGES:
        url = queue.popleft()
        response = client.get(url)
        if response.status_code >= 400:
            dead.append((url, response.status_code, found_on.get(url)))
            continue
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        for link in LINK.findall(response.content.decode()):
            link = link.replace("&amp;", "&")
            if "logout" in link or link in seen:  # signing out would end the crawl
                continue
            seen.add(link)
            found_on[link] = url
            queue.append(link)
    assert len(seen) > 10, "the crawl found almost nothing: it would prove nothing"
    assert dead == []
