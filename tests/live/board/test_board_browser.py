"""The board in a real browser (Debian's headless Chromium): it opens with the token as
the Basic password, shows the columns and cards, moves a card when the store changes
without a reload, follows an issue's transcript, and logs no console error."""

from __future__ import annotations

import pytest

from hive.board.browser import Browser, missing
from hive.store import issues, transcript
from hive.store.issues import NewIssue
from tests.live.surface.conftest import TOKEN

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))

WAIT_SECONDS = 10  # a change shows within 2 s; this is the test's patience, not the goal


def add(world, n: int, title: str, **fields) -> None:
    issues.upsert(world.db, n, NewIssue(title=title, **fields))


@pytest.fixture
def browser():
    with Browser() as b:
        yield b


def wait(browser, script: str, what: str):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser.driver, WAIT_SECONDS, poll_frequency=0.05).until(
        lambda d: d.execute_script(script), message=what
    )


def column_of(browser, issue: int) -> str | None:
    return browser.driver.execute_script(
        "const c = document.getElementById('card-' + arguments[0]);"
        "return c ? c.closest('[data-cards]').dataset.cards : null;",
        issue,
    )


def test_the_board_opens_and_a_new_order_moves_its_card_without_a_reload(
    world, serve, browser, tmp_path
):
    add(world, 1, "Tidy the README")
    add(world, 2, "Needs the first one", blocked_by=(1,))
    add(world, 3, "Already going")
    world.queue_order(3)
    server = serve(token=TOKEN)
    driver = browser.driver
    driver.get(f"http://ada:{TOKEN}@127.0.0.1:{server.port}/board")
    wait(browser, "return document.getElementById('live').textContent === 'live'", "live")
    headings = [h.text.split()[0].lower() for h in driver.find_elements("css selector", "main h2")]
    assert headings == ["backlog", "blocked", "running", "review", "done", "dropped"]
    assert (column_of(browser, 1), column_of(browser, 2), column_of(browser, 3)) == (
        "backlog",
        "blocked",
        "running",
    )
    driver.execute_script("window.__drawn = true")  # gone if the page reloads
    world.queue_order(1)  # a new order: #1 moves to running
    wait(browser, "return document.querySelector('[data-cards=running] #card-1')", "#1 moved")
    add(world, 4, "Arrived while watching")  # a new issue appears
    wait(browser, "return document.querySelector('[data-cards=backlog] #card-4')", "#4 shown")
    assert driver.execute_script("return window.__drawn") is True
    assert driver.find_element("css selector", "[data-count=running]").text == "2"
    flashed = driver.execute_script("return document.querySelectorAll('#comb .flash').length")
    assert flashed >= 1
    driver.save_screenshot(str(tmp_path / "board.png"))
    assert browser.console_errors() == []


def test_an_issue_page_follows_its_transcript_live(world, serve, browser, tmp_path):
    add(world, 5, "Talkative bee")
    order = world.queue_order(5)
    transcript.append(world.db, order.conversation_id, 5, "say", "first line")
    server = serve(token=TOKEN)
    driver = browser.driver
    driver.get(f"http://ada:{TOKEN}@127.0.0.1:{server.port}/board/issues/5")
    wait(browser, "return document.getElementById('live').textContent === 'live'", "live")
    assert "first line" in driver.find_element("id", "lines").text
    transcript.append(world.db, order.conversation_id, 5, "say", "second <line>")
    wait(
        browser,
        "return document.getElementById('lines').textContent.includes('second <line>')",
        "the new line",
    )
    add(world, 5, "Talkative bee, renamed")
    wait(
        browser,
        "return document.querySelector('#summary h1').textContent.includes('renamed')",
        "the summary",
    )
    driver.save_screenshot(str(tmp_path / "issue.png"))
    assert browser.console_errors() == []
