"""Headless Chromium driven by selenium through chromedriver, for the report's browser test
(tests/test_report_browser.py) and its benchmark (bench/bench_report.py).

The browser and driver are Debian's ``chromium`` and ``chromium-driver`` packages
(``/usr/bin/chromium``, ``/usr/bin/chromedriver``; ``$CHROMIUM`` and ``$CHROMEDRIVER``
name others).  selenium is given both paths, so it never looks for or downloads a browser.

Example::

    with Browser() as b:
        page = b.open(Path("report.html").resolve().as_uri())
        print(page.eval("document.title"))
        page.screenshot("shot.png")
        assert page.console_errors() == []
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: Flags for a quiet, network-free headless Chromium.
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
    "--disable-dev-shm-usage",
)


def _find(env: str, names: tuple[str, ...]) -> str | None:
    path = os.environ.get(env)
    if path:
        return path if Path(path).is_file() else None
    for name in names:
        found = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").is_file() else None)
        if found:
            return found
    return None


def find_chromium() -> str | None:
    """Path of the Chromium executable (``$CHROMIUM`` if set, else ``chromium`` on PATH or in
    /usr/bin), or ``None`` when there is none."""
    return _find("CHROMIUM", ("chromium", "chromium-browser"))


def find_chromedriver() -> str | None:
    """Path of chromedriver (``$CHROMEDRIVER`` if set, else ``chromedriver`` on PATH or in
    /usr/bin), or ``None`` when there is none."""
    return _find("CHROMEDRIVER", ("chromedriver",))


def missing() -> str | None:
    """Why no browser can be driven here (what to install), or ``None`` when Chromium and
    chromedriver are both present."""
    absent = [what for what, path in (("chromium", find_chromium()), ("chromedriver", find_chromedriver()))
              if path is None]
    if absent:
        return (f"{' and '.join(absent)} not found (apt-get install chromium chromium-driver, "
                f"or set $CHROMIUM / $CHROMEDRIVER)")
    return None


class Browser:
    """One headless Chromium session (a selenium ``webdriver.Chrome``).

    Args:
        width, height: window size in CSS pixels.
        timeout: seconds a page load or an asynchronous script may take.

    Raises:
        RuntimeError: Chromium or chromedriver is not installed (see :func:`missing`).
        selenium.common.exceptions.WebDriverException: chromedriver could not start Chromium.
    """

    def __init__(self, *, width: int = 1400, height: int = 1000, timeout: float = 60.0):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        why = missing()
        if why:
            raise RuntimeError(why)
        options = webdriver.ChromeOptions()
        options.binary_location = find_chromium()
        for flag in (*FLAGS, f"--window-size={width},{height}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(options=options, service=Service(find_chromedriver()))
        self.driver.set_page_load_timeout(timeout)
        self.driver.set_script_timeout(timeout)
        self._page: Page | None = None

    def open(self, url: str, *, timeout: float | None = None) -> Page:
        """Navigate to ``url``, wait for its load event and return the :class:`Page`.

        The console messages of the page shown before stay with that page's :class:`Page`.
        Raises selenium's ``TimeoutException`` when the load takes longer than ``timeout``
        (default: the browser's)."""
        if self._page is not None:
            self._page._drain()
        if timeout is not None:
            self.driver.set_page_load_timeout(timeout)
        self.driver.get(url)
        self._page = Page(self)
        return self._page

    def close(self) -> None:
        """Stop chromedriver and Chromium."""
        self.driver.quit()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Page:
    """The page a :class:`Browser` shows: evaluate JavaScript, read console errors, take screenshots."""

    def __init__(self, browser: Browser):
        self.browser = browser
        self._errors: list[str] = []

    def eval(self, expression: str):
        """The value of the JavaScript ``expression`` (a promise is awaited), as JSON-like
        Python data; ``undefined`` is ``None``.  Raises selenium's ``JavascriptException``
        when it throws."""
        return self.browser.driver.execute_script(f"return ({expression});")

    def run(self, statements: str) -> None:
        """Run JavaScript ``statements`` in the page (selenium's ``JavascriptException`` when they throw)."""
        self.browser.driver.execute_script(statements)

    def _drain(self) -> None:
        for entry in self.browser.driver.get_log("browser"):
            if entry.get("level") == "SEVERE":
                self._errors.append(f"{entry.get('source', '?')}: {entry.get('message')}")

    def console_errors(self) -> list[str]:
        """Errors seen so far on this page: ``console.error`` calls, uncaught exceptions and the
        browser's own error entries (a resource that did not load, a Content-Security-Policy
        violation)."""
        if self.browser._page is self:
            self._drain()
        return list(self._errors)

    def screenshot(self, path: str | os.PathLike) -> Path:
        """Save a PNG screenshot of the viewport to ``path`` and return it (RuntimeError when
        the browser could not take one)."""
        path = Path(path)
        if not self.browser.driver.save_screenshot(str(path)):
            raise RuntimeError(f"no screenshot written to {path}")
        return path
