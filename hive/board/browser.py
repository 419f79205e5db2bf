"""Debian's Chromium, headless, driven by Selenium through the installed chromedriver:
for the board's tests and `hive bench board`. Selenium comes with the dev extra; a
machine without it (or without the browser) gets one clear line.

The flags keep the browser off the network it would otherwise reach for at start (this
machine has none, and it would hang): no first-run, sync, component or background
fetches, no QUIC, and a profile of its own in an empty directory.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from hive.errors import HiveError

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1500,900",
)


def missing() -> str | None:
    """Why no browser can be started here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} is not installed (make system installs it)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


class Browser:
    """`with Browser() as b:` a headless Chromium (`b.driver`, a Selenium WebDriver)
    with its console log kept, in a profile removed on exit."""

    def __init__(self) -> None:
        why = missing()
        if why is not None:
            raise HiveError(f"no browser: {why}")
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self._profile = tempfile.mkdtemp(prefix="hive-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in (*FLAGS, f"--user-data-dir={self._profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        try:
            self.driver: Any = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        except Exception:
            shutil.rmtree(self._profile, ignore_errors=True)
            raise

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def console_errors(self) -> list[str]:
        """The console's errors since the last call (SEVERE entries)."""
        return [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]

    def close(self) -> None:
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self._profile, ignore_errors=True)
