"""A real headless chromium, driven over the DevTools protocol on a pipe.

`--remote-debugging-pipe` makes chromium read protocol messages (JSON, each ended by a NUL
byte) from file descriptor 3 and answer on 4: no port, no websocket library, nothing beyond
the standard library. Used by tests/project/test_report.py to click through Snakemake's HTML report
as a reader would. Nothing is installed here: without chromium those tests skip.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from system_packages import missing

BINARY = shutil.which("chromium") or "/usr/bin/chromium"  # Debian's
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)


def unavailable() -> str | None:
    """None where chromium is installed; otherwise the reason to skip, with its apt-get line."""
    return missing("chromium")


class Chromium:
    """One headless browser with a fresh profile; `page(url)` opens a tab."""

    def __init__(self, width: int = 1400, height: int = 1000, timeout: float = 60):
        self.timeout, self.size = timeout, (width, height)
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def use_fds_3_and_4():  # in the child, before exec
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)  # above 4: dup2 cannot clobber
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.process = subprocess.Popen(
            [BINARY, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}"],
            pass_fds=(3, 4),
            preexec_fn=use_fds_3_and_4,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer, self._events, self._next_id = b"", [], 0

    def _message(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError(f"chromium sent nothing for {self.timeout} s")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium closed the pipe (exit {self.process.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, session: str | None = None, **params) -> dict:
        """Send one protocol command and return its result (events are kept for later)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._message()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self._events.append(reply)

    def wait_for(self, event: str, session: str) -> dict:
        while True:
            for i, message in enumerate(self._events):
                if message.get("method") == event and message.get("sessionId") == session:
                    return self._events.pop(i)
            self._events.append(self._message())

    def page(self, url: str) -> Page:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        width, height = self.size
        self.call("Page.enable", session)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Page.navigate", session, url=url)
        self.wait_for("Page.loadEventFired", session)
        return Page(self, session)

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    def __init__(self, browser: Chromium, session: str):
        self.browser, self.session = browser, session

    def evaluate(self, expression: str):
        """The value of a JavaScript expression (promises awaited); JS errors raise."""
        result = self.browser.call(
            "Runtime.evaluate",
            self.session,
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError(details.get("exception", {}).get("description", details))
        return result["result"].get("value")

    def wait_until(self, expression: str, timeout: float = 20):
        """Poll a JavaScript expression until it is truthy; return its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"still false after {timeout} s: {expression}")
            time.sleep(0.1)

    def screenshot(self, path) -> Path:
        data = self.browser.call("Page.captureScreenshot", self.session, format="png")["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)
