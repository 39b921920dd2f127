"""Look at the report (and ``dvc plots show``'s page) in a real browser: headless Chromium, offline.

Why: a table cut off on the right, or plots that stay blank because their scripts come from the internet, look
fine in the HTML source and only show in a browser.  ``inspect_page`` opens a local HTML file in headless
Chromium at a given width with every network request refused, runs a JavaScript check in the page, and can
save a full-page screenshot.  ``python -m boardrl.tools.browser`` (``make report-check``) runs the checks on
``reports/index.html`` and every report page it links to (one per game), and with ``--plots`` on
``dvc_plots/index.html``.

The browser is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: JSON messages ending
in NUL on file descriptors 3 and 4), so nothing beyond the standard library and a Chromium binary is needed.
Which binary: ``$BOARDRL_CHROMIUM``, else the first of ``chromium``, ``chromium-browser``, ``google-chrome``,
``google-chrome-stable``, ``chrome`` and ``headless_shell`` on ``PATH`` (Debian: ``apt-get install chromium``).
Chromium runs with ``--no-sandbox`` (it refuses to start as root otherwise, and containers rarely allow its
sandbox); it only ever opens the project's own local files.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from boardrl.errors import BoardRLError

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless_shell")
WIDTH = 1400
HEIGHT = 1000
#: Schemes a page may load without the network.
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome:", "devtools:")


class BrowserError(BoardRLError):
    """Chromium missing, failing to start, or not answering."""


def find_chromium() -> str | None:
    """The Chromium binary to use, or None when there is none."""
    env = os.environ.get("BOARDRL_CHROMIUM")
    if env:
        return shutil.which(env) or (env if Path(env).is_file() else None)
    return next((p for name in CANDIDATES if (p := shutil.which(name))), None)


# ---------------------------------------------------------------------------------------------- the protocol
class DevToolsPipe:
    """DevTools protocol over Chromium's debugging pipe: commands with ids, events buffered until asked for."""

    def __init__(self, proc: subprocess.Popen[bytes], write_fd: int, read_fd: int, timeout: float) -> None:
        self.proc, self.write_fd, self.read_fd, self.timeout = proc, write_fd, read_fd, timeout
        self.buf = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"Chromium did not answer within {self.timeout:.0f} s")
            ready, _, _ = select.select([self.read_fd], [], [], min(left, 0.5))
            if not ready:
                if self.proc.poll() is not None:
                    raise BrowserError(f"Chromium exited with status {self.proc.returncode}")
                continue
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed the debugging pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self.write_fd, data):]
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message', reply['error'])}")
                return reply.get("result") or {}
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str, session: str | None, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for i, ev in enumerate(self.events):
                if ev["method"] == method and ev.get("sessionId") == session:
                    return self.events.pop(i)
            msg = self._read_message(deadline)
            if "method" in msg:
                self.events.append(msg)


def _high_fd(fd: int) -> int:
    """``fd`` moved above 9, so that putting the pipe on 3 and 4 in the child cannot clobber the other end."""
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


@dataclass
class PageResult:
    """What ``inspect_page`` saw: the check's value, the URLs the page requested, console errors."""

    value: Any
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def network_requests(self) -> list[str]:
        """The requests that needed the network (none should: the pages must work offline)."""
        return [u for u in self.requests if not u.startswith(LOCAL_SCHEMES)]


def inspect_page(page: Path, check: str, *, width: int = WIDTH, height: int = HEIGHT,
                 screenshot: Path | None = None, ready: str = "true", timeout: float = 60.0,
                 chromium: str | None = None) -> PageResult:
    """Open ``page`` in headless Chromium at ``width`` x ``height`` CSS pixels, offline.

    Waits for the load event, then until the JavaScript expression ``ready`` is true (or ``timeout``), then
    evaluates the JavaScript expression ``check`` and returns its JSON value.  ``screenshot``: a PNG of the
    whole page (its full height, ``width`` wide).  Every http(s) request is refused (a dead proxy, and
    DevTools' offline mode) and recorded, so a page that needs the network shows it.
    """
    binary = chromium or find_chromium()
    if binary is None:
        raise BrowserError("no Chromium found (apt-get install chromium, or set BOARDRL_CHROMIUM)")
    page = Path(page).resolve()
    if not page.is_file():
        raise BrowserError(f"{page}: not found")
    with launch_chromium(binary, width, height, timeout) as (pipe, log):
        try:
            return _drive(pipe, page, check, width, height, screenshot, ready, timeout)
        except BrowserError as exc:
            said = log.read_text(errors="replace").splitlines() if log.is_file() else []
            tail = [ln for ln in said if ln.strip() and "dbus" not in ln][-3:]
            raise BrowserError(f"{exc}" + (f" (Chromium said: {' | '.join(tail)})" if tail else "")) from None


@contextmanager
def launch_chromium(binary: str, width: int, height: int, timeout: float,
                    block_loopback: bool = True) -> Iterator[tuple[DevToolsPipe, Path]]:
    """A fresh headless Chromium on a throwaway profile, spoken to over ``--remote-debugging-pipe``.

    Yields the protocol pipe and Chromium's log file; closes the browser and the pipe afterwards.  Every http(s)
    request goes to a dead proxy; ``block_loopback=False`` lets 127.0.0.1 through (a test of a local server).
    """
    to_child_r, to_child_w = map(_high_fd, os.pipe())
    from_child_r, from_child_w = map(_high_fd, os.pipe())

    def on_fds_3_and_4() -> None:  # runs in the child before exec
        os.dup2(to_child_r, 3)
        os.dup2(from_child_w, 4)

    with tempfile.TemporaryDirectory(prefix="boardrl-chromium-") as profile:
        args = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--remote-debugging-pipe", f"--user-data-dir={profile}", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--mute-audio",
                "--proxy-server=http://127.0.0.1:9", *(["--proxy-bypass-list=<-loopback>"] if block_loopback else []),
                f"--window-size={width},{height}", "about:blank"]
        log = Path(profile) / "chromium.log"
        with log.open("wb") as err:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=err, stderr=err, close_fds=False,
                                    preexec_fn=on_fds_3_and_4)
        os.close(to_child_r)
        os.close(from_child_w)
        pipe = DevToolsPipe(proc, to_child_w, from_child_r, timeout)
        try:
            yield pipe, log
        finally:
            try:
                pipe.timeout = 5.0
                pipe.call("Browser.close")
            except (BrowserError, OSError):
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            os.close(to_child_w)
            os.close(from_child_r)


def _evaluate(pipe: DevToolsPipe, session: str, expression: str) -> Any:
    res = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                    session)
    if "exceptionDetails" in res:
        det = res["exceptionDetails"]
        raise BrowserError(f"the check failed in the page: {det.get('exception', {}).get('description') or det}")
    return res.get("result", {}).get("value")


def _drive(pipe: DevToolsPipe, page: Path, check: str, width: int, height: int, screenshot: Path | None, ready: str,
           timeout: float) -> PageResult:
    target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for method in ("Page.enable", "Network.enable", "Runtime.enable"):
        pipe.call(method, {}, session)
    pipe.call("Network.emulateNetworkConditions", {"offline": True, "latency": 0, "downloadThroughput": -1,
                                                   "uploadThroughput": -1}, session)
    pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                     "mobile": False}, session)
    pipe.call("Page.navigate", {"url": page.as_uri()}, session)
    pipe.wait_event("Page.loadEventFired", session, timeout)
    deadline = time.monotonic() + timeout
    while not _evaluate(pipe, session, f"Boolean({ready})"):
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)
    value = _evaluate(pipe, session, check)
    if screenshot is not None:
        size = _evaluate(pipe, session, "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        clip = {"x": 0, "y": 0, "width": max(width, size[0]), "height": size[1], "scale": 1}
        shot = pipe.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip},
                         session)
        Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
        Path(screenshot).write_bytes(base64.b64decode(shot["data"]))
    requests = [ev["params"]["request"]["url"] for ev in pipe.events
                if ev["method"] == "Network.requestWillBeSent" and ev.get("sessionId") == session]
    errors = [_console_text(ev) for ev in pipe.events if ev.get("sessionId") == session and _is_error(ev)]
    return PageResult(value, requests, errors)


def _is_error(ev: dict[str, Any]) -> bool:
    if ev["method"] == "Runtime.exceptionThrown":
        return True
    return ev["method"] == "Runtime.consoleAPICalled" and ev["params"].get("type") == "error"


def _console_text(ev: dict[str, Any]) -> str:
    if ev["method"] == "Runtime.exceptionThrown":
        det = ev["params"]["exceptionDetails"]
        return (det.get("exception") or {}).get("description") or det.get("text", "exception")
    return " ".join(str(a.get("value", a.get("description", ""))) for a in ev["params"].get("args", []))


# ---------------------------------------------------------------------------------------------- the checks
#: Everything in the page that sticks out to the right of the window, or is wider than its own box (a cell
#: whose text runs into the next one, a scroll container hiding part of a table).
OVERFLOW_CHECK = r"""
(() => {
  const vw = document.documentElement.clientWidth;
  const found = [];
  const name = (el) => el.tagName.toLowerCase() + (el.className ? "." + el.className : "");
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const what = (el.textContent || el.getAttribute("src") || "").trim().slice(0, 80);
    if (r.right > vw + 0.5 || r.left < -0.5)
      found.push({element: name(el), text: what, left: Math.round(r.left), right: Math.round(r.right),
                  problem: "outside the window"});
    const style = getComputedStyle(el);
    const clips = style.overflowX !== "visible" || el.tagName === "TD" || el.tagName === "TH";
    if (clips && el.scrollWidth > el.clientWidth + 1 && style.display !== "inline")
      found.push({element: name(el), text: what, width: el.clientWidth, content: el.scrollWidth,
                  problem: "content wider than its box"});
  }
  return {viewport: vw, pageWidth: document.documentElement.scrollWidth,
          pageHeight: document.documentElement.scrollHeight, tables: document.querySelectorAll("table").length,
          images: [...document.images].filter((i) => !(i.complete && i.naturalWidth > 0)).map((i) => i.src),
          overflow: found};
})()
"""

#: ``dvc plots show``'s page: what each vega plot (``PLOT_IDS``, the divs DVC's page hands to vegaEmbed) drew.
#: vega-embed draws on a canvas by default: ``ink`` counts the canvas's pixels that are not blank (with the svg
#: renderer, its drawn elements); 0 is a blank plot.
PLOTS_READY = r"""
(() => document.getElementById("vendor-missing") !== null ||
        PLOT_IDS.every((id) => { const d = document.getElementById(id); return d && d.querySelector(".marks"); }))()
"""
PLOTS_CHECK = r"""
(() => {
  const inked = (c) => {
    if (!c.width || !c.height) return 0;
    const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < px.length; i += 4)
      if (px[i + 3] > 0 && (px[i] < 240 || px[i + 1] < 240 || px[i + 2] < 240)) n++;
    return n;
  };
  const plot = (id) => {
    const d = document.getElementById(id);
    const svg = d && d.querySelector("svg.marks"), c = d && d.querySelector("canvas.marks");
    return {id, svg: Boolean(svg), canvas: Boolean(c),
            ink: svg ? svg.querySelectorAll("path, line, rect, text").length : c ? inked(c) : 0,
            width: c ? c.width : svg ? svg.getBoundingClientRect().width : 0};
  };
  return {missing: document.getElementById("vendor-missing") !== null,
          vega: typeof vega !== "undefined" ? vega.version : null,
          vegaLite: typeof vegaLite !== "undefined" ? vegaLite.version : null,
          vegaEmbed: typeof vegaEmbed !== "undefined" && vegaEmbed.version ? vegaEmbed.version : null,
          plots: PLOT_IDS.map(plot)};
})()
"""


def _with_ids(js: str, ids: list[str]) -> str:
    return f"((PLOT_IDS) => {js.strip()})({json.dumps(ids)})"


def check_report(page: Path, *, width: int = WIDTH, screenshot: Path | None = None) -> tuple[list[str], PageResult]:
    """Problems of the report page at ``width`` (empty when none) and what the browser saw."""
    res = inspect_page(page, OVERFLOW_CHECK, width=width, screenshot=screenshot,
                       ready="document.readyState === 'complete'")
    v = res.value
    problems = []
    if v["pageWidth"] > v["viewport"]:
        problems.append(f"the page is {v['pageWidth']} px wide at a {v['viewport']} px window (scrolls sideways)")
    for o in v["overflow"][:10]:
        where = (f"reaches x = {o['right']}" if o["problem"] == "outside the window"
                 else f"{o['content']} px of content in {o['width']} px")
        problems.append(f"{o['element']} {o['problem']} ({where}): {o['text']!r}")
    if len(v["overflow"]) > 10:
        problems.append(f"... and {len(v['overflow']) - 10} more")
    problems += [f"image not shown: {src}" for src in v["images"]]
    problems += [f"network request: {u}" for u in res.network_requests]
    return problems, res


_LOCAL_PAGE = re.compile(r'href="([A-Za-z0-9_.-]+\.html)(?:#[^"]*)?"')


def linked_pages(page: Path) -> list[Path]:
    """The pages of the report that ``page`` links to in its own directory (the index: one page per game)."""
    page = Path(page)
    names = dict.fromkeys(_LOCAL_PAGE.findall(page.read_text(errors="replace")))
    return [page.parent / n for n in names if n != page.name and (page.parent / n).is_file()]


def plot_specs(page: Path) -> dict[str, dict[str, Any]]:
    """The vega-lite spec of each plot div of ``dvc plots show``'s page, by div id (``{}`` where DVC had none)."""
    html = Path(page).read_text(errors="replace")
    found = re.finditer(r'<div id\s*=\s*"([^"]+)">\s*<script[^>]*>\s*var spec = (.*?);\s*vegaEmbed\(', html, re.S)
    specs = {}
    for m in found:
        try:
            specs[m.group(1)] = json.loads(m.group(2))
        except json.JSONDecodeError:
            specs[m.group(1)] = {"unparsed": True}
    return specs


def check_plots(page: Path, *, width: int = WIDTH, screenshot: Path | None = None,
                timeout: float = 60.0) -> tuple[list[str], list[str], PageResult]:
    """Problems of ``dvc plots show``'s page offline (none when every vega plot with a spec drew), notes (plots
    DVC gave no spec: it names their error when it runs), and what the browser saw."""
    specs = plot_specs(page)
    ids = [k for k, spec in specs.items() if spec]
    notes = [f"DVC gave plot {k} no spec: it could not plot that file (`dvc plots show --json` names the error)"
             for k, spec in specs.items() if not spec]
    res = inspect_page(page, _with_ids(PLOTS_CHECK, ids), width=width, screenshot=screenshot,
                       ready=_with_ids(PLOTS_READY, ids), timeout=timeout)
    v = res.value
    problems = []
    if v["missing"]:
        problems.append("the page did not find .dvc/plots/vendor/ (vega scripts)")
    if not v["plots"]:
        problems.append("no vega plot on the page")
    problems += [f"plot {p['id']} drew nothing" for p in v["plots"] if not p["ink"]]
    problems += [f"network request: {u}" for u in res.network_requests]
    problems += [f"console: {e}" for e in res.errors]
    return problems, notes, res


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("page", type=Path, nargs="?", default=Path("reports/index.html"), help="the report page")
    ap.add_argument("--width", type=int, default=WIDTH, help="window width in CSS pixels")
    ap.add_argument("--screenshot", type=Path, help="write a full-page PNG here")
    ap.add_argument("--plots", type=Path, help="also check this `dvc plots show` page (dvc_plots/index.html)")
    ap.add_argument("--plots-screenshot", type=Path, help="write a full-page PNG of the plots page here")
    args = ap.parse_args(argv)
    if find_chromium() is None:
        print("error: no Chromium found (apt-get install chromium, or set BOARDRL_CHROMIUM)", file=sys.stderr)
        raise SystemExit(2)
    failed = False
    try:
        for page in [args.page, *linked_pages(args.page)]:
            shot = args.screenshot if page == args.page else None
            problems, res = check_report(page, width=args.width, screenshot=shot)
            v = res.value
            print(f"{page}: {v['tables']} tables, page {v['pageWidth']} x {v['pageHeight']} px at a "
                  f"{v['viewport']} px window" + (f"; screenshot {shot}" if shot else ""))
            for p in problems:
                print(f"  problem: {p}")
            failed |= bool(problems)
        if args.plots is not None:
            problems, notes, res = check_plots(args.plots, width=args.width, screenshot=args.plots_screenshot)
            v = res.value
            drawn = sum(1 for p in v["plots"] if p["ink"])
            print(f"{args.plots}: {drawn} of {len(v['plots'])} vega plots drawn offline (vega {v['vega']}, "
                  f"vega-lite {v['vegaLite']}, vega-embed {v['vegaEmbed']})"
                  + (f"; screenshot {args.plots_screenshot}" if args.plots_screenshot else ""))
            for p in problems:
                print(f"  problem: {p}")
            for n in notes:
                print(f"  note: {n}")
            failed |= bool(problems)
    except BrowserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
