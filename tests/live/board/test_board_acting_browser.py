"""Acting from the board in a real browser (Debian's headless Chromium): a click on
approve opens the gate and the publish job merges the issue, its card moving to done
live and saying "merged as <12 hex digits>"; a refusal shows its sentence; a note sends
work back; the filters keep to the URL; a form another site posts changes nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hive.board.browser import Browser, missing
from hive.store import issues, runners
from tests.live.surface.conftest import TOKEN

from .acting import Queen, accepted, add

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))

WAIT_SECONDS = 15  # the test's patience, not the goal


@pytest.fixture
def browser():
    with Browser() as b:
        yield b


def wait(browser, script: str, what: str, *args):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser.driver, WAIT_SECONDS, poll_frequency=0.05).until(
        lambda d: d.execute_script(script, *args), message=what
    )


def open_board(browser, server, path: str = "/board") -> None:
    browser.driver.get(f"http://ada:{TOKEN}@127.0.0.1:{server.port}{path}")
    wait(browser, "return document.getElementById('live').textContent === 'live'", "live")


def click(browser, selector: str) -> None:
    browser.driver.execute_script("document.querySelector(arguments[0]).click()", selector)


def answer(browser) -> str:
    return wait(
        browser,
        "const a = document.getElementById('answer'); return a.dataset.state && a.textContent",
        "an answer",
    )


def column_of(browser, issue: int) -> str | None:
    return browser.driver.execute_script(
        "const c = document.getElementById('card-' + arguments[0]);"
        "return c ? c.closest('[data-cards]').dataset.cards : null;",
        issue,
    )


def test_a_click_on_approve_merges_the_issue_and_its_card_moves_live(world, serve, browser):
    accepted(world, 1, "Greet politely")
    runners.register(world.db, "runner-1", 2)
    queen = Queen(world)
    queen.publish_job(1)
    assert queen.run().parked == 1  # no check ran: the gate waits for a person
    server = serve(token=TOKEN)
    open_board(browser, server)
    assert column_of(browser, 1) == "review"
    pulse = browser.driver.execute_script("return document.getElementById('pulse').innerText")
    assert "0.0 merged/h" in pulse and "runner-1 0/2 slots" in pulse and "$0.00" in pulse
    click(browser, "#card-1 button[data-act=approve]")
    assert answer(browser).startswith("approved #1 (attempt 1): the merge gate is open")
    assert queen.run().finished == 1
    wait(browser, "return document.querySelector('[data-cards=done] #card-1')", "#1 done")
    sha = world.db.execute("SELECT merged_sha FROM hive.queen_dispatch").fetchone()[0]
    # read in the page in one step: a live update may render the card again meanwhile
    card = browser.driver.execute_script("return document.getElementById('card-1').innerText")
    assert f"merged as {sha[:12]}" in card and sha not in card
    wait(browser, "return document.getElementById('pulse').textContent.includes('1 in 24 h')", "")
    assert browser.console_errors() == []


def test_a_refusal_shows_its_sentence_and_a_note_sends_work_back(world, serve, browser):
    accepted(world, 2)
    server = serve(token=TOKEN)
    open_board(browser, server, "/board/issues/2")
    world.db.execute("UPDATE hive.queen_dispatch SET approved_at = now() WHERE issue = 2")
    click(browser, "#act button[data-act=approve]")
    said = answer(browser)
    assert said.startswith("409: #2 ") and "cannot approve it again" in said
    driver = browser.driver
    driver.find_element("css selector", "#act details.reject summary").click()
    driver.find_element("css selector", "#act textarea[data-note]").send_keys("too rude")
    driver.execute_script("document.getElementById('answer').dataset.state = ''")
    click(browser, "#act button[data-act=reject]")
    assert answer(browser).startswith("rejected attempt 1: #2 is sent back with your note")
    row = world.db.execute("SELECT review_note FROM hive.queen_dispatch WHERE issue = 2")
    assert row.fetchone() == ("too rude",)
    (logged,) = browser.console_errors()  # the browser logs the refusal's status, no error
    assert "/api/issues/2/approve" in logged and "409 (Conflict)" in logged


def test_the_filters_keep_to_the_url_and_hide_the_other_cards(world, serve, browser):
    add(world, 1, "Fix the login bug", labels=("bug",))
    add(world, 2, "Write the docs", labels=("docs",))
    add(world, 3, "Another bug", labels=("bug",))
    server = serve(token=TOKEN)
    open_board(browser, server, "/board?label=bug")
    shown = "return Array.from(document.querySelectorAll('[data-cards] > li:not([hidden])'))"
    ids = shown + ".map((c) => c.dataset.issue).join(',')"
    assert browser.driver.execute_script(ids) == "1,3"
    search = browser.driver.find_element("css selector", "#filters input[name=q]")
    search.send_keys("login")
    wait(browser, ids.replace("return ", "return (") + ") === '1'", "the search")
    url = browser.driver.current_url
    assert "/board?" in url and sorted(url.split("?")[1].split("&")) == ["label=bug", "q=login"]
    add(world, 4, "A login bug arrives", labels=("bug",))  # a live card is filtered too
    wait(browser, ids.replace("return ", "return (") + ") === '1,4'", "#4 shown")
    assert browser.driver.find_element("css selector", "[data-count=backlog]").text == "2"
    assert browser.console_errors() == []


EVIL_PAGE = """<!doctype html><html><body>
<form id="f" method="post" action="{target}"><input name="x" value="1"></form>
<script>document.getElementById("f").submit();</script></body></html>"""


@pytest.fixture
def evil_site() -> Iterator[dict[str, str]]:
    """Another site (localhost, not 127.0.0.1) serving the page set in the dict."""
    served = {"page": ""}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = served["page"].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    served["url"] = f"http://localhost:{server.server_address[1]}/"
    yield served
    server.shutdown()
    server.server_close()


def test_a_form_another_site_posts_changes_nothing(world, serve, browser, evil_site):
    add(world, 1)
    server = serve(token=TOKEN)
    open_board(browser, server)  # the browser now holds the Basic credentials
    evil_site["page"] = EVIL_PAGE.format(
        target=f"http://127.0.0.1:{server.port}/api/issues/1/close"
    )
    browser.driver.get(evil_site["url"])
    wait(
        browser,
        "return document.body && document.body.textContent.includes('refused')",
        "the hive's refusal",
    )
    assert "a write from another site is refused" in browser.driver.page_source
    found = issues.get(world.db, 1)
    assert found is not None and found.state == "open"


def test_the_public_board_shows_its_cards_and_filters_by_column(world, serve, browser):
    add(world, 1, "Open to all")
    add(world, 2, "Running for all")
    world.queue_order(2)
    server = serve(token=TOKEN, board_public=True)
    driver = browser.driver
    driver.get(f"http://127.0.0.1:{server.port}/board?column=running")  # no token
    wait(browser, "return document.body.dataset.page === 'public'", "the public board")
    visible = driver.execute_script(
        "return Array.from(document.querySelectorAll('section[data-column]:not([hidden])'))"
        ".map((s) => s.dataset.column).join(',')"
    )
    assert visible == "running"
    assert "Running for all" in driver.find_element("id", "board").text
    assert not driver.find_elements("css selector", "button[data-act], .card a")
    assert browser.console_errors() == []
