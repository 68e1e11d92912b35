"""Behind a proxy that ends TLS, as production runs: with an https:// public URL the admin's
cookies are Secure-only, its login works through the proxy, a forged origin is refused, and
HSTS is sent when the request came through the trusted proxy (gunicorn believes
X-Forwarded-Proto only from FORWARDED_ALLOW_IPS). Over plain HTTP (`make run`) the cookies
stay usable."""

import re

import httpx
import pytest
from django.contrib.auth import get_user_model

from tests.support.servers import WebServer

pytestmark = pytest.mark.slow

PUBLIC = "https://fluidbox.test"
PASSWORD = "a-long-admin-password-1"


@pytest.fixture
def admin(transactional_db):
    return get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)


def cookie(response: httpx.Response, name: str) -> str:
    """The Set-Cookie line for `name` (its attributes included)."""
    lines = [line for line in response.headers.get_list("set-cookie") if line.startswith(name)]
    assert len(lines) == 1, response.headers.get_list("set-cookie")
    return lines[0]


def value(set_cookie: str) -> str:
    return set_cookie.split(";", 1)[0].split("=", 1)[1]


def form_token(form: httpx.Response) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)


def login(client: httpx.Client, origin: str) -> tuple[httpx.Response, httpx.Response]:
    """The admin's login form fetched and posted as a browser would through the proxy.
    Cookies are passed by hand: httpx, like a browser, keeps a Secure cookie off plain HTTP,
    and the proxy's hop to gunicorn is plain HTTP."""
    form = client.get("/admin/login/")
    assert form.status_code == 200
    csrf = value(cookie(form, "csrftoken"))
    token = form_token(form)
    posted = client.post(
        "/admin/login/?next=/admin/",
        data={"csrfmiddlewaretoken": token, "username": "root", "password": PASSWORD},
        headers={
            "Cookie": f"csrftoken={csrf}",
            "Origin": origin,
            "Referer": f"{PUBLIC}/admin/login/",
        },
    )
    return form, posted


def test_behind_a_tls_proxy_the_cookies_are_secure_and_the_login_works(admin, tmp_path):
    env = {
        "FLUIDBOX_PUBLIC_URL": PUBLIC,
        "ALLOWED_HOSTS": "fluidbox.test",
        "FLUIDBOX_HSTS_SECONDS": "31536000",
    }
    proxied = {"Host": "fluidbox.test", "X-Forwarded-Proto": "https"}
    with (
        WebServer(tmp_path, workers=1, threads=4, **env) as server,
        httpx.Client(base_url=server.url, headers=proxied, follow_redirects=False) as client,
    ):
        form, posted = login(client, PUBLIC)
        assert "Secure" in cookie(form, "csrftoken")
        assert form.headers["strict-transport-security"] == "max-age=31536000"
        assert posted.status_code == 302, posted.text[:500]
        assert posted.headers["location"] == "/admin/"
        session = cookie(posted, "sessionid")
        assert "Secure" in session and "HttpOnly" in session
        signed_in = client.get("/admin/", headers={"Cookie": f"sessionid={value(session)}"})
        assert signed_in.status_code == 200 and "Log out" in signed_in.text

        # A page on another site posting to the login: refused, and no session handed out.
        _, forged = login(client, "https://evil.test")
        assert forged.status_code == 403
        assert "sessionid" not in forged.headers.get("set-cookie", "")


def test_a_client_that_is_not_the_proxy_cannot_claim_https(admin, tmp_path):
    env = {
        "FLUIDBOX_PUBLIC_URL": PUBLIC,
        "ALLOWED_HOSTS": "fluidbox.test",
        "FLUIDBOX_HSTS_SECONDS": "3600",
        "FORWARDED_ALLOW_IPS": "192.0.2.1",  # the proxy is elsewhere; the test is not it
    }
    spoofed = {"Host": "fluidbox.test", "X-Forwarded-Proto": "https"}
    with (
        WebServer(tmp_path, workers=1, threads=4, **env) as server,
        httpx.Client(base_url=server.url, headers=spoofed) as client,
    ):
        form, posted = login(client, PUBLIC)
        assert "strict-transport-security" not in form.headers
        assert "strict-transport-security" not in posted.headers
        # The cookies are Secure whatever the request says: the public URL decides, and the
        # public origin is trusted for CSRF even when the request is seen as plain HTTP.
        assert "Secure" in cookie(form, "csrftoken")
        assert posted.status_code == 302, posted.text[:500]
        assert "Secure" in cookie(posted, "sessionid")


def test_over_plain_http_the_cookies_are_not_secure_only(admin, tmp_path):
    with (
        WebServer(tmp_path, workers=1, threads=4) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        form = client.get("/admin/login/")
        assert "Secure" not in cookie(form, "csrftoken")
        assert "strict-transport-security" not in form.headers
        token = form_token(form)
        posted = client.post(
            "/admin/login/?next=/admin/",
            data={"csrfmiddlewaretoken": token, "username": "root", "password": PASSWORD},
            headers={"Origin": server.url},
        )
        assert posted.status_code == 302, posted.text[:500]
        assert client.get("/admin/").status_code == 200
