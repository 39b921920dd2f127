"""A headless Chromium tab that tests can click in: the DevTools protocol on Chromium's debugging pipe.

Why this and not Selenium or Playwright: the project already drives Chromium this way for the report check
(``boardrl.tools.browser``: the binary from ``$BOARDRL_CHROMIUM`` or ``PATH``, the protocol over
``--remote-debugging-pipe``), so the browser test needs nothing but a Chromium binary, exactly like the report's
test: no new Python package, no chromedriver whose version must match the browser, nothing downloaded.  The
protocol's ``Input.dispatchMouseEvent`` is a real click (hit-testing, the page's own event handlers), which is
all the play test needs beyond evaluating JavaScript and taking a screenshot.

Only loopback addresses are reachable: every other request goes to a dead proxy, so a page that needs the
internet (a CDN) fails the test instead of passing by luck.
"""

from __future__ import annotations

import base64
import json
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

# The report module's Chromium launcher and DevTools pipe, shared by both browser checks.
from boardrl.tools.browser import BrowserError, DevToolsPipe, find_chromium, launch_chromium

__all__ = ["BrowserError", "Page", "chromium_page", "find_chromium"]


class Page:
    """One tab: navigate, evaluate JavaScript, wait for a condition, click an element, take a screenshot."""

    def __init__(self, pipe: DevToolsPipe, session: str) -> None:
        self.pipe, self.session = pipe, session

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.pipe.call(method, params or {}, self.session)

    def goto(self, url: str, timeout: float = 30.0) -> None:
        self.call("Page.navigate", {"url": url})
        self.pipe.wait_event("Page.loadEventFired", self.session, timeout)

    def eval(self, expression: str) -> Any:
        res = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in res:
            det = res["exceptionDetails"]
            raise BrowserError(f"JavaScript failed: {det.get('exception', {}).get('description') or det}")
        return res.get("result", {}).get("value")

    def wait_for(self, expression: str, what: str, timeout: float = 30.0) -> Any:
        """The first truthy value of ``expression``, polled every 0.1 s; ``TimeoutError`` naming ``what``."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout:.0f} s for {what}; page status: {self.eval(STATUS_JS)}")
            time.sleep(0.1)

    def click(self, selector: str) -> None:
        """A real left click in the middle of the first element ``selector`` matches (scrolled into view)."""
        box = self.eval(f"""(() => {{
            const e = document.querySelector({json.dumps(selector)});
            if (!e) return null;
            e.scrollIntoView({{block: "center"}});
            const r = e.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2];
        }})()""")
        if box is None:
            raise BrowserError(f"nothing matches {selector!r}")
        x, y = box
        self.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def screenshot(self, path: Path) -> None:
        """A PNG of the whole page."""
        w, h = self.eval("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        shot = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                    "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def requests(self) -> list[str]:
        """URLs the tab requested so far."""
        return [ev["params"]["request"]["url"] for ev in self.pipe.events
                if ev["method"] == "Network.requestWillBeSent" and ev.get("sessionId") == self.session]

    def errors(self) -> list[str]:
        """JavaScript exceptions and console errors so far."""
        out = []
        for ev in self.pipe.events:
            if ev.get("sessionId") != self.session:
                continue
            if ev["method"] == "Runtime.exceptionThrown":
                det = ev["params"]["exceptionDetails"]
                out.append((det.get("exception") or {}).get("description") or det.get("text", "exception"))
            elif ev["method"] == "Runtime.consoleAPICalled" and ev["params"].get("type") == "error":
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in ev["params"]["args"]))
        return out


STATUS_JS = "({state: document.body.dataset.state, status: document.getElementById('status').textContent, " \
            "error: document.getElementById('error').textContent, url: location.search})"


@contextmanager
def chromium_page(width: int = 1400, height: int = 900, timeout: float = 60.0) -> Iterator[Page]:
    """A fresh headless Chromium with one tab of ``width`` x ``height`` CSS pixels; closed afterwards."""
    binary = find_chromium()
    if binary is None:
        raise BrowserError("no Chromium found (apt-get install chromium, or set BOARDRL_CHROMIUM)")
    with launch_chromium(binary, width, height, timeout, block_loopback=False) as (pipe, _log):
        target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for method in ("Page.enable", "Network.enable", "Runtime.enable"):
            pipe.call(method, {}, session)
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": 1, "mobile": False}, session)
        yield Page(pipe, session)
