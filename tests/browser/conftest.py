"""A real gunicorn serving the portal on the test database, and Debian's headless Chromium
driven by Playwright. Data is made through the services in the test process."""

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.servers import BIN, ROOT, WebServer, child_environment

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
# A give-up point for a page or element that never comes; passing steps never wait for it.
TIMEOUT_MS = 60_000
ASYNC_UNSAFE = "DJANGO_ALLOW_ASYNC_UNSAFE"


@pytest.fixture(scope="module")
def chromium():
    """Chromium for this module only: Playwright's sync API marks an asyncio loop as running
    in this thread while it is open, which would break later tests that call `anyio.run`."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium is not at /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)

    # The ORM calls these tests make between browser steps are plain synchronous code that
    # Django would refuse while Playwright's loop looks running; allowed for this module only.
    previous = os.environ.get(ASYNC_UNSAFE)
    os.environ[ASYNC_UNSAFE] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop(ASYNC_UNSAFE, None)
        else:
            os.environ[ASYNC_UNSAFE] = previous


@pytest.fixture(scope="module")
def portal_server(django_db_setup, django_db_blocker, tmp_path_factory):
    """gunicorn on the test database, with the admin's and the portal's static files."""
    tmp = tmp_path_factory.mktemp("portal")
    data_dir = str(tmp / "data")
    environment = child_environment(FLUIDBOX_DATA_DIR=data_dir)
    environment.pop(ASYNC_UNSAFE, None)
    subprocess.run(
        [str(BIN / "python"), "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env=environment,
        check=True,
    )
    server = WebServer(tmp, workers=1, threads=32, FLUIDBOX_DATA_DIR=data_dir)
    server.env.pop(ASYNC_UNSAFE, None)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def portal(transactional_db, portal_server):
    return portal_server


@pytest.fixture
def browser_page(portal, chromium):
    context = chromium.new_context(viewport={"width": 1440, "height": 1000}, base_url=portal.url)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    yield page
    context.close()


def log_in(page, username: str, password: str) -> None:
    """Through the real login form, as a person would."""
    page.goto("/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url("**/admin/")


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def csrf_token(page) -> str:
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    return cookies["csrftoken"]
