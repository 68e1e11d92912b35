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


def test_signing_in_with_a_next_address_elsewhere_lands_on_the_portal(client, admin_user):
    # A link planted with ?next=//evil.example is not followed, and the user is not left on
    # a 404 either.
    admin_user.set_password("a-long-password-1")
    admin_user.save()
    response = client.post(
        "/admin/login/?next=//evil.example/x",
        {
            "username": admin_user.username,
            "password": "a-long-password-1",
            "next": "//evil.example/x",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
