"""Headless Chromium for the results-page tests (tests/test_page_browser*.py): the system
browser, the ``browser`` fixture, and :class:`Opened`, a page opened from disk with every
http(s) request aborted and counted. Where Chromium or ``playwright`` is missing, importing this
module skips the test file that imports it, with a hint on how to install them."""
from __future__ import annotations

import re
import shutil

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HINT = ("the browser tests need Chromium and fonts: apt-get install -y chromium fonts-noto-core "
        "fonts-noto-cjk (and pip install -r requirements-test.txt for playwright)")
sync_api = pytest.importorskip("playwright.sync_api", reason=HINT)
if CHROMIUM is None:
    pytest.skip(HINT, allow_module_level=True)

ARGS = ["--disable-background-networking", "--disable-component-update", "--no-first-run",
        "--no-sandbox"]


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        assert chromium.version.split(".")[0].isdigit()
        yield chromium
        chromium.close()



class Opened:
    """A page opened from disk, recording network requests, page errors and dialogs."""

    def __init__(self, browser, path, fragment=""):
        self.context = browser.new_context(accept_downloads=True,
                                           permissions=["clipboard-read", "clipboard-write"])
        self.page = self.context.new_page()
        self.requests, self.errors, self.dialogs = [], [], []
        self.page.route(re.compile(r"^(https?|wss?)://"), self._abort)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else 0)
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.goto(path.as_uri() + fragment)
        self.wait()

    def _abort(self, route):
        self.requests.append(route.request.url)
        route.abort()

    def wait(self):
        self.page.wait_for_selector("body[data-ready]", state="attached", timeout=60_000)
        assert self.page.get_attribute("body", "data-ready") == "true", self.errors

    def view(self, fragment):
        """Follow a link within the page (a new URL hash), as a reader pasting it would."""
        self.page.evaluate("document.body.removeAttribute('data-ready')")
        self.page.evaluate("f => { location.hash = f; }", fragment)
        self.wait()

    def panel(self, name):
        self.page.evaluate("document.body.removeAttribute('data-ready')")
        self.page.click(f"nav button[data-panel='{name}']")
        self.wait()

    def visible(self, table_id) -> list[dict]:
        """The table's visible rows: header key -> cell text."""
        return self.page.evaluate("""id => {
            const t = document.querySelector(`table[data-table="${id}"]`);
            const keys = [...t.querySelectorAll('thead th')].map(th => th.dataset.key);
            return [...t.querySelectorAll('tbody tr')].map(tr => Object.fromEntries(
                [...tr.children].map((td, i) => [keys[i], td.textContent])));
        }""", table_id)

    def close(self):
        self.context.close()

