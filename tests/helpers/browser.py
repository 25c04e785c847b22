"""The console in a real browser: Debian's headless Chromium through its chromedriver (the
`browser` fixture: import it where it is used), a mark that skips a module without them,
following a link to the next page, and a picture of a page when SCREENSHOTS_DIR is set."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="no Chromium here: ./scripts/browser installs Debian's chromium and chromium-driver",
)


@pytest.fixture
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_AVOID_STATS", "true")
    options = webdriver.ChromeOptions()
    assert CHROMIUM is not None
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900",
                 "--disable-dev-shm-usage"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver: Any, name: str) -> None:
    if folder := os.environ.get("SCREENSHOTS_DIR"):
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / f"{name}.png"))


def follow(driver: Any, element: Any) -> None:
    """Click a link or a form's button and wait until the next page has replaced this one."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    page = driver.find_element(By.TAG_NAME, "html")
    element.click()

    def replaced(_: Any) -> bool:
        # Asked while the old document goes, Chromium may answer "stale element" or "node
        # does not belong to the document": both mean the page was replaced.
        try:
            page.is_enabled()
        except WebDriverException:
            return True
        return False

    WebDriverWait(driver, 15).until(replaced)
