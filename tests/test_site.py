"""What every page of the site relies on."""


def test_favicon_is_served_as_an_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    body = b"".join(response.streaming_content)
    assert body[:4] == b"\x00\x00\x01\x00"  # an ICO header: type 1, icon


def test_the_servers_address_leads_a_browser_to_the_portal(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
    # and the portal asks an anonymous visitor to sign in
    portal = client.get(response["Location"])
    assert portal.status_code == 302
    assert portal["Location"].startswith("/admin/login/")


def test_an_unknown_address_is_still_a_json_404(client):
    response = client.get("/no-such-page")
    assert response.status_code == 404
    assert response.json() == {"error": "not_found", "detail": "no such endpoint"}
