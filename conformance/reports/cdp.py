"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe``.

Used by the report's browser test and by ``bench/bench_report.py`` to open a report in
headless Chromium, evaluate JavaScript in it, collect console errors and exceptions,
and take screenshots, without a WebSocket library or a browser driver: Chromium reads
NUL-terminated JSON commands from file descriptor 3 and writes replies and events to
file descriptor 4.

Example::

    with Browser() as b:
        page = b.open(Path("report.html").resolve().as_uri())
        print(page.eval("document.title"))
        page.screenshot("shot.png")
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

#: Flags for a quiet, network-free headless Chromium.
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
    "--disable-dev-shm-usage",
)


class CDPError(Exception):
    """Chromium could not be started, or a DevTools command failed or timed out."""


def find_chromium() -> str | None:
    """Path of a Chromium/Chrome executable, or ``None`` (``$CHROMIUM`` wins, then PATH)."""
    env = os.environ.get("CHROMIUM")
    if env and Path(env).is_file():
        return env
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


class Browser:
    """One headless Chromium process driven over a DevTools pipe.

    Args:
        executable: Chromium binary (default: :func:`find_chromium`).
        width, height: window size in CSS pixels.
        timeout: default seconds to wait for a reply.
    """

    def __init__(self, executable: str | None = None, *, width: int = 1400, height: int = 1000,
                 timeout: float = 60.0):
        exe = executable or find_chromium()
        if not exe:
            raise CDPError("no Chromium executable found")
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="cdp-profile-")
        r_cmd, w_cmd = os.pipe()   # we write commands, chromium reads fd 3
        r_evt, w_evt = os.pipe()   # chromium writes fd 4, we read events
        args = [exe, *FLAGS, f"--user-data-dir={self._profile}", f"--window-size={width},{height}",
                "--remote-debugging-pipe", "about:blank"]

        # Chromium's ends, moved above fd 10 (close-on-exec) so that putting them at 3 and 4 in the
        # child cannot clobber one with the other; dup2 in the child clears close-on-exec.
        child_r = fcntl.fcntl(r_cmd, fcntl.F_DUPFD_CLOEXEC, 10)
        child_w = fcntl.fcntl(w_evt, fcntl.F_DUPFD_CLOEXEC, 10)
        for fd in (r_cmd, w_evt):
            os.close(fd)

        def _child():  # runs in the child between fork and exec
            os.dup2(child_r, 3)
            os.dup2(child_w, 4)

        try:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, preexec_fn=_child, close_fds=False)
        except OSError as exc:
            for fd in (w_cmd, r_evt):
                os.close(fd)
            shutil.rmtree(self._profile, ignore_errors=True)
            raise CDPError(f"cannot start {exe}: {exc}") from exc
        finally:
            os.close(child_r)
            os.close(child_w)
        self._w, self._r = w_cmd, r_evt
        self._buf = b""
        self._next_id = 0
        self.events: list[dict] = []

    # -- transport ------------------------------------------------------------------
    def _send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            n = os.write(self._w, data)
            data = data[n:]
        return self._next_id

    def _read_message(self, deadline: float) -> dict | None:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._r], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise CDPError("Chromium closed the DevTools pipe (it exited?)")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float | None = None) -> dict:
        """Send a command and return its ``result`` (events that arrive meanwhile go to :attr:`events`)."""
        mid = self._send(method, params, session)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            msg = self._read_message(deadline)
            if msg is None:
                raise CDPError(f"{method}: no reply within {timeout or self.timeout} s")
            if msg.get("id") == mid:
                if "error" in msg:
                    raise CDPError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def pump(self, seconds: float) -> None:
        """Collect events for ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            msg = self._read_message(deadline)
            if msg is None:
                return
            if "method" in msg:
                self.events.append(msg)

    # -- pages ----------------------------------------------------------------------
    def open(self, url: str, *, timeout: float | None = None) -> Page:
        """Open ``url`` in a new tab, wait for its load event, return the :class:`Page`."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=session)
        self.call("Page.navigate", {"url": url}, session=session)
        deadline = time.monotonic() + (timeout or self.timeout)
        while not any(e.get("method") == "Page.loadEventFired" and e.get("sessionId") == session
                      for e in self.events):
            msg = self._read_message(deadline)
            if msg is None:
                raise CDPError(f"{url}: no load event within {timeout or self.timeout} s")
            if "method" in msg:
                self.events.append(msg)
        return page

    def close(self) -> None:
        """Stop Chromium and remove its temporary profile."""
        try:
            if self.proc.poll() is None:
                try:
                    self._send("Browser.close")
                    self.proc.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    self.proc.kill()
                    self.proc.wait(timeout=5)
        finally:
            for fd in (self._w, self._r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Page:
    """A tab attached with a flat DevTools session."""

    def __init__(self, browser: Browser, session: str):
        self.browser = browser
        self.session = session

    def eval(self, expression: str, *, await_promise: bool = True, timeout: float | None = None):
        """Evaluate ``expression`` in the page and return its value (JSON-serialisable).

        Raises:
            CDPError: the expression threw.
        """
        res = self.browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                      "awaitPromise": await_promise},
                                session=self.session, timeout=timeout)
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            raise CDPError(f"JavaScript exception: {d.get('exception', {}).get('description') or d.get('text')}")
        return res.get("result", {}).get("value")

    def console_errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen so far on this page."""
        out = []
        for e in self.browser.events:
            if e.get("sessionId") != self.session:
                continue
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(f"exception: {d.get('exception', {}).get('description') or d.get('text')}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.error: " + " ".join(str(a.get("value", a.get("description", "")))
                                                         for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} ({p['entry'].get('url', '')})")
        return out

    def screenshot(self, path: str | os.PathLike, *, full_page: bool = False) -> Path:
        """Save a PNG screenshot of the viewport (or the whole page) to ``path``."""
        params: dict = {"format": "png"}
        if full_page:
            m = self.browser.call("Page.getLayoutMetrics", session=self.session)
            size = m.get("cssContentSize") or m["contentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 16000),
                              "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.browser.call("Page.captureScreenshot", params, session=self.session)["data"]
        path = Path(path)
        path.write_bytes(base64.b64decode(data))
        return path
