"""Headless Chromium driven through the DevTools protocol over a pipe (``--remote-debugging-pipe``:
JSON messages ending in a NUL byte on file descriptors 3 and 4), with the standard library only.

``--dump-dom`` (what ``tests/report/browser.py`` uses for a static page) stops the clock at a
budget and ends before a page's web worker answers; a site's search runs in one. Here the page
runs in real time: a test waits until a script's condition holds, reads every console message,
uncaught exception and browser log entry (a resource that failed to load is one), and takes a
screenshot.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]


class DevToolsError(RuntimeError):
    pass


@dataclass
class Page:
    """One tab: its session, and the messages it logged (``level: text``)."""

    browser: Browser
    session: str
    messages: list[str] = field(default_factory=list)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        return self.browser.call(method, params, session=self.session)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise DevToolsError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def goto(self, url: str, timeout: float = 30) -> None:
        self.browser.events.clear()
        self.call("Page.navigate", url=url)
        self.browser.wait_event("Page.loadEventFired", self.session, timeout)

    def wait_until(self, condition: str, timeout: float = 30) -> Any:
        """The value of the script ``condition`` once it is truthy; fails after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(condition)
            if value:
                return value
            if time.monotonic() > deadline:
                raise DevToolsError(f"not true after {timeout} s: {condition}")
            self.browser.pump(0.2)

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path


class Browser:
    def __init__(self, exe: str) -> None:
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        # Copies above the standard descriptors, closed on exec: in the child they become 3 and
        # 4 (dup2 clears close-on-exec), whatever the parent keeps there.
        high_read = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD_CLOEXEC, 10)
        high_write = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD_CLOEXEC, 10)

        def child_fds() -> None:
            os.dup2(high_read, 3)
            os.dup2(high_write, 4)

        # close_fds=False: closing would drop 3 and 4 after preexec_fn; the parent's other
        # descriptors are close-on-exec (PEP 446), so nothing else reaches the browser.
        self.process = subprocess.Popen(
            [exe, *FLAGS, "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=child_fds,
        )
        for fd in (to_browser_read, from_browser_write, high_read, high_write):
            os.close(fd)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.pages: dict[str, Page] = {}

    def _send(self, message: dict[str, Any]) -> None:
        os.write(self._to_browser, json.dumps(message).encode("utf-8") + b"\0")

    def pump(self, timeout: float) -> None:
        """Read what the browser sent within ``timeout`` seconds; log entries go to their page."""
        ready, _w, _x = select.select([self._from_browser], [], [], timeout)
        if not ready:
            return
        chunk = os.read(self._from_browser, 1 << 20)
        if not chunk:
            raise DevToolsError("the browser closed its pipe")
        self._buffer += chunk
        while b"\0" in self._buffer:
            raw, self._buffer = self._buffer.split(b"\0", 1)
            message = json.loads(raw)
            self._note(message)
            self.events.append(message)

    def _note(self, message: dict[str, Any]) -> None:
        page = self.pages.get(message.get("sessionId", ""))
        if page is None:
            return
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled":
            args = params.get("args", [])
            text = " ".join(str(arg.get("value", arg.get("description", ""))) for arg in args)
            page.messages.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            page.messages.append(f"uncaught: {text}")
        elif method == "Log.entryAdded":
            entry = params["entry"]
            page.messages.append(f"log.{entry['level']}: {entry['text']} {entry.get('url', '')}")

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._send(message)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for event in self.events:
                if event.get("id") == message["id"]:
                    self.events.remove(event)
                    if "error" in event:
                        raise DevToolsError(f"{method}: {event['error']}")
                    return event.get("result", {})
            self.pump(0.5)
        raise DevToolsError(f"{method}: no answer in 60 s")

    def wait_event(self, method: str, session: str, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.events:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            self.pump(0.2)
        raise DevToolsError(f"no {method} in {timeout} s")

    def new_page(self, width: int = 1280, height: int = 1000) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        page = Page(self, session["sessionId"])
        self.pages[page.session] = page
        for domain in ("Page", "Runtime", "Log"):
            page.call(f"{domain}.enable")
        page.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        return page

    def close(self) -> None:
        with contextlib.suppress(DevToolsError, OSError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)


@contextlib.contextmanager
def open_browser(exe: str) -> Iterator[Browser]:
    running = Browser(exe)
    try:
        yield running
    finally:
        running.close()
