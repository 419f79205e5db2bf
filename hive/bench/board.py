"""board: the board in a real browser: first paint, the page's weight, and the time from
an order's write to its card standing in its new column, then SIGTERM with streams open.

A `hive serve` (role runner, so no Queen writes orders of her own) serves the board on a
scratch database of `--issues` open issues. Debian's headless Chromium (`hive.board.
browser`) opens it with the token as the Basic password:

- first paint: the `first-contentful-paint` of `--loads` fresh loads (the first one with
  an empty cache), median;
- weight: the bytes of the page, its stylesheet and its script as served;
- a card moving: for each of `--events` issues in turn, an order is written to the store
  (the Queen's local insert: backlog -> running) and the page, never reloaded, records
  when the card stands in the running column (a MutationObserver, on the browser's wall
  clock, the machine's own); p50, p90 and max of (seen - written);
- SIGTERM: the time from SIGTERM to exit of a `hive serve` with no stream open and with
  `--streams` board streams open, side by side.

Goals (issue 12): a card moves within 1 s at p50, the page weighs under 100 kB.
"""

from __future__ import annotations

import argparse
import base64
import re
import signal
import socket
import statistics
import time
from typing import Any

from hive.bench.arguments import whole
from hive.bench.processes import LocalHive, local_hive
from hive.board.assets import asset
from hive.board.browser import Browser
from hive.errors import HiveError
from hive.rules.branches import branch_name
from hive.settings import Settings
from hive.store import orders
from hive.store.orders import NewOrder

GOAL_MOVE_P50_MS = 1000.0
GOAL_PAGE_BYTES = 100_000
TOKEN = "bench-board-token"
START_SECONDS = 60.0
MOVE_SECONDS = 10.0  # an event not seen by then fails the bench
EXIT_SECONDS = 30.0
POLL_SECONDS = 0.02
PAINT_SECONDS = 10.0
_OBSERVE = """
window.__seen = {};
const mark = () => {
  for (const li of document.querySelectorAll('[data-cards=running] > li')) {
    const n = li.dataset.issue;
    if (!(n in window.__seen)) window.__seen[n] = performance.timeOrigin + performance.now();
  }
};
mark();
new MutationObserver(mark).observe(document.querySelector('main'),
  {childList: true, subtree: true});
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--issues", type=whole(1, 60), default=60, help="open issues (60)")
    parser.add_argument("--events", type=whole(1, 60), default=50, help="cards moved (50)")
    parser.add_argument("--loads", type=whole(1, 50), default=5, help="page loads timed (5)")
    parser.add_argument(
        "--streams", type=whole(0, 60), default=20, help="streams open at SIGTERM (20)"
    )


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    if args.events > args.issues:
        raise HiveError(f"--events {args.events} needs as many issues (--issues {args.issues})")
    result: dict[str, Any] = {"issues": args.issues, "events": args.events}
    with local_hive(settings) as hive:
        numbers = hive.new_issues(args.issues, hold=False)
        serve, port = _serve(hive, "board")
        url = f"http://ada:{TOKEN}@127.0.0.1:{port}/board"
        with Browser() as browser:
            result.update(_paint(browser, url, args.loads))
            result.update(_weight(browser, url))
            result.update(_moves(browser, url, hive, numbers[: args.events]))
            errors = browser.console_errors()
        result["console_errors"] = len(errors)
        result.update(_sigterm(hive, serve, port, args.streams))
    result["goal_move_p50_ms"] = GOAL_MOVE_P50_MS
    result["goal_page_bytes"] = GOAL_PAGE_BYTES
    return result


def _serve(hive: LocalHive, name: str) -> tuple[Any, int]:
    serve = hive.start(name, "runner", HIVE_API_TOKEN=TOKEN)
    found = hive.wait(
        lambda: re.search(r"serving on http://127\.0\.0\.1:(\d+)", serve.log()),
        START_SECONDS,
        f"{name} serves HTTP",
    )
    hive.wait(lambda: hive.registered(name), START_SECONDS, f"{name} registers")
    return serve, int(found[1])


def _wait_live(browser: Browser) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser.driver, START_SECONDS, poll_frequency=POLL_SECONDS).until(
        lambda d: d.execute_script("return document.getElementById('live').textContent") == "live",
        message="the board goes live",
    )


def _paint(browser: Browser, url: str, loads: int) -> dict[str, Any]:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    paints = []
    for _ in range(loads):
        browser.driver.get(url)
        _wait_live(browser)
        try:  # the entry is recorded once the frame is presented, maybe after the script ran
            paint = WebDriverWait(browser.driver, PAINT_SECONDS, POLL_SECONDS).until(
                lambda d: d.execute_script(
                    "const p = performance.getEntriesByName('first-contentful-paint')[0];"
                    "return p ? p.startTime : null;"
                )
            )
        except TimeoutException:
            raise HiveError("bench: the browser reported no first contentful paint") from None
        paints.append(float(paint))
    return {"first_paint_ms": statistics.median(paints), "first_paint_cold_ms": paints[0]}


def _weight(browser: Browser, url: str) -> dict[str, Any]:
    html = browser.driver.execute_script("return document.documentElement.outerHTML.length")
    sizes = {name: len(found.body) for name in ("board.css", "board.js") if (found := asset(name))}
    page = browser.driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0]; return n.decodedBodySize;"
    )
    return {
        "page_html_bytes": int(page or html),
        "page_css_bytes": sizes["board.css"],
        "page_js_bytes": sizes["board.js"],
        "page_bytes": int(page or html) + sizes["board.css"] + sizes["board.js"],
    }


def _moves(browser: Browser, url: str, hive: LocalHive, numbers: list[int]) -> dict[str, Any]:
    driver = browser.driver
    driver.get(url)
    _wait_live(browser)
    driver.execute_script(_OBSERVE)
    took = []
    for n in numbers:

        def seen_at(n: int = n) -> Any:
            return driver.execute_script("return window.__seen[arguments[0]]", str(n))

        written = time.time() * 1000
        orders.insert(hive.db, NewOrder(n, branch_name(n), "main"), queued=False)
        seen = hive.wait(seen_at, MOVE_SECONDS, f"card #{n} in the running column", POLL_SECONDS)
        took.append(float(seen) - written)
    if driver.execute_script("return window.__seen === undefined"):
        raise HiveError("bench: the page reloaded while it was measured")
    ordered = sorted(took)
    return {
        "move_p50_ms": statistics.median(took),
        "move_p90_ms": ordered[int(0.9 * (len(ordered) - 1))],
        "move_max_ms": ordered[-1],
    }


def _sigterm(hive: LocalHive, serve: Any, port: int, streams: int) -> dict[str, Any]:
    bare = _exit_seconds(hive, serve, [])
    watched, port = _serve(hive, "board-watched")
    opened = [_open_stream(port) for _ in range(streams)]
    try:
        with_streams = _exit_seconds(hive, watched, opened)
    finally:
        for sock in opened:
            sock.close()
    return {
        "sigterm_exit_s": bare,
        "sigterm_exit_with_streams_s": with_streams,
        "streams_open": streams,
        "sigterm_ratio": with_streams / bare if bare else float("nan"),
    }


def _exit_seconds(hive: LocalHive, serve: Any, streams: list[socket.socket]) -> float:
    sent = serve.send(signal.SIGTERM)
    code = hive.exit_code(serve, EXIT_SECONDS)
    took: float = time.monotonic() - sent
    if code != 0:
        raise HiveError(f"bench: hive serve exited {code} after SIGTERM (log {serve.log_path})")
    return took


def _open_stream(port: int) -> socket.socket:
    """A board stream, read up to its first event (the snapshot)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=START_SECONDS)
    auth = base64.b64encode(f"bench:{TOKEN}".encode()).decode()
    sock.sendall(
        f"GET /board/events HTTP/1.1\r\nHost: hive\r\nAuthorization: Basic {auth}\r\n\r\n".encode()
    )
    got = b""
    while b"event: snapshot" not in got:
        data = sock.recv(65536)
        if not data:
            raise HiveError("bench: a board stream closed before its snapshot")
        got += data
    if not got.startswith(b"HTTP/1.1 200"):
        raise HiveError(f"bench: a board stream was refused: {got[:60]!r}")
    return sock
