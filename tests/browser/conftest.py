"""Browser tests: Debian's Chromium, driven by Playwright, against the real ``leadmail
serve`` on SQLite and on Postgres, as a school's staff use the dashboard.

No browser is downloaded: Playwright launches the machine's own ``chromium`` (apt-get
install chromium; .ci/run installs it). Without it the tests skip, except in CI, where
that is a failure. Each page's screenshot is kept under tests/browser/screens/ (ignored by
git; CI keeps it as an artifact).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Page, async_playwright

from tests.e2e.names import new_name
from tests.e2e.server import LeadmailServer, server_with_key
from tests.postgres import fresh_database, in_ci

SCREENS = Path(__file__).parent / "screens"
PASSWORD = "a long enough password"
# Chromium's own look-ups of Google's hosts go nowhere; the loopback stays reachable.
ARGS = [
    "--disable-gpu",
    "--disable-quic",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
]
# Campaigns paced so their counts are seen moving (the console provider: one message a
# request).
PACED = {"LEADMAIL_EMAIL_RATE": "4"}
_LINK = re.compile(r"^(http://\S+/app/password/\S+)$", re.MULTILINE)
_CSRF = re.compile(r'name="_csrf_token" value="([^"]+)"')


def chromium_path() -> str:
    found = shutil.which("chromium")
    if found is None:
        message = "Debian's chromium is needed for the browser tests (apt-get install chromium)"
        if in_ci():
            pytest.fail(f"{message}; in CI a skipped browser test is a failure", pytrace=False)
        pytest.skip(message)
    # The real binary: /usr/bin/chromium is a shell wrapper that prints a harmless error.
    real = Path("/usr/lib/chromium/chromium")
    return str(real) if real.exists() else found


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    """One Chromium for the session (Playwright's async API, on the session's event loop:
    its sync API would hold a loop running in this thread, and every async test after it
    would fail)."""
    path = chromium_path()
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=path, args=ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture(scope="session")
def sqlite_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LeadmailServer]:
    workdir = tmp_path_factory.mktemp("dashboard-sqlite")
    with server_with_key(
        f"sqlite:///{workdir / 'leadmail.db'}", workdir, extra_env=PACED
    ) as running:
        yield running


@pytest.fixture(scope="session")
async def dashboard_postgres_url(postgres_server: str) -> AsyncIterator[str]:
    """An empty database on the server for the session's dashboard (`serve` migrates it)."""
    async with fresh_database(postgres_server) as url:
        yield url


@pytest.fixture(scope="session")
def postgres_dashboard(
    dashboard_postgres_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LeadmailServer]:
    workdir = tmp_path_factory.mktemp("dashboard-postgres")
    with server_with_key(
        dashboard_postgres_url, workdir, key_first=False, extra_env=PACED
    ) as running:
        yield running


@pytest.fixture(
    scope="session", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def dashboard(request: pytest.FixtureRequest) -> LeadmailServer:
    """The real server, once per database."""
    name = "sqlite_dashboard" if request.param == "sqlite" else "postgres_dashboard"
    running: LeadmailServer = request.getfixturevalue(name)
    return running


@dataclass
class Staff:
    """A user of an account of its own on the server, its password set."""

    server: LeadmailServer
    account: str
    email: str
    secret: str  # an API key of the account (to check what the pages did)

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def api(self) -> httpx.Client:
        return self.server.client(self.secret)


def invite(server: LeadmailServer, account: str, email: str) -> str:
    """`leadmail users create`'s one-time link, on the server's port. (The command knows
    no server: its link starts with LEADMAIL_PUBLIC_URL, unset here, so with the default
    address.)"""
    result = server.cli("users", "create", "--account", account, "--email", email)
    assert result.returncode == 0, result.describe()
    found = _LINK.search(result.stdout)
    assert found, result.stdout
    assert found.group(1).startswith("http://127.0.0.1:8000/app/password/")
    return server.base_url + found.group(1).removeprefix("http://127.0.0.1:8000")


def set_password(link: str, password: str = PASSWORD) -> None:
    """What a person does with the link, over plain HTTP (the browser tests do it in the
    browser once)."""
    with httpx.Client() as client:
        form = client.get(link)
        token = _CSRF.search(form.text)
        assert token, form.text
        done = client.post(
            link, data={"password": password, "again": password, "_csrf_token": token.group(1)}
        )
        assert done.status_code == 303, done.text


def new_staff(server: LeadmailServer) -> Staff:
    account = new_name("school")
    [key] = server.create_keys(account)
    email = f"{new_name('staff')}@school.example"
    set_password(invite(server, account, email))
    return Staff(server, account, email, key.secret)


@pytest.fixture
def staff(dashboard: LeadmailServer) -> Staff:
    return new_staff(dashboard)


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    opened = await context.new_page()
    opened.set_default_timeout(10_000)
    try:
        yield opened
    finally:
        await context.close()


async def signed_in(page: Page, staff: Staff) -> Page:
    await page.goto(f"{staff.base_url}/app/sign-in")
    await page.get_by_label("Email address").fill(staff.email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(f"{staff.base_url}/app/")
    return page


async def screenshot(page: Page, name: str) -> None:
    """The page as it looks now, at its width and at a phone's (375 px)."""
    SCREENS.mkdir(exist_ok=True)
    await page.screenshot(path=str(SCREENS / f"{name}.png"), full_page=True)
    size = page.viewport_size
    await page.set_viewport_size({"width": 375, "height": 800})
    await page.screenshot(path=str(SCREENS / f"{name}-375.png"), full_page=True)
    # Readable at 375 px: nothing wider than the screen but what scrolls on purpose.
    overflow = await page.evaluate("document.documentElement.scrollWidth")
    assert overflow <= 375, f"{name}: the page is {overflow} px wide at 375 px"
    if size is not None:
        await page.set_viewport_size(size)
