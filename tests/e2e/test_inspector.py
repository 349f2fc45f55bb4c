"""The inspector page in a real headless browser (Debian's chromium through Selenium).

A worker applies the demo conversation (a supersession among its turns); the test opens
the subject's page as a person would and finds the supersession, the chain in the history,
the review item and the search. ``SLOTWISE_SCREENSHOT=docs/inspector.png`` keeps the
screenshot (the README's).
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from slotwise.client import Client
from slotwise.streams.dev.demo import observations
from tests.e2e.harness import Pipeline
from tests.streams.api.server import ServerThread

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[WebDriver]:
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if binary is None or driver is None:
        pytest.fail("chromium and chromium-driver are missing: run `make setup`", pytrace=False)
    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager must not download anything
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1500", "--hide-scrollbars"):  # fmt: skip
        options.add_argument(flag)
    chrome = webdriver.Chrome(service=Service(driver), options=options)
    chrome.set_page_load_timeout(60)
    try:
        yield chrome
    finally:
        chrome.quit()


def _submit(browser: WebDriver, field: WebElement) -> None:
    """Submit the field's form and wait for the page it leads to.

    ``submit()`` returns once the navigation is asked for, not done: a lookup straight
    after it can read the page being left (no hits yet) and fail by timing alone.
    """
    field.submit()
    WebDriverWait(browser, 30).until(expected_conditions.staleness_of(field))
    WebDriverWait(browser, 30).until(
        lambda b: b.execute_script("return document.readyState") == "complete"
    )


def test_a_supersession_is_on_the_page(
    pipeline: Pipeline, browser: WebDriver, tmp_path: Path
) -> None:
    pipeline.worker().wait_healthy()
    subject = f"ana-{uuid.uuid4().hex[:6]}"
    turns = observations(subject)
    with Client(pipeline.deployment) as memory:
        for turn in turns:
            memory.publish(turn)
        memory.wait(subject, turns[-1].observation_id, timeout=120)
        # Searchable once the worker's commit has flushed the vectors, a little after.
        deadline = time.monotonic() + 20
        while not memory.search(subject, "where does she work"):
            assert time.monotonic() < deadline, "the facts never became searchable"
            time.sleep(0.2)
    server = ServerThread(pipeline.deployment).start()
    try:
        browser.get(f"{server.url}/inspector")
        box = browser.find_element(By.CSS_SELECTOR, "main input[name=subject]")
        box.send_keys(subject)
        _submit(browser, box)
        assert browser.find_element(By.ID, "subject").text == subject

        events = browser.find_elements(By.CSS_SELECTOR, "#supersessions .supersession")
        texts = [e.text for e in events]
        assert any("Datadog" in t and "Stripe" in t for t in texts), texts
        assert any("PostgreSQL" in t and "MySQL" in t for t in texts), texts
        old = browser.find_element(By.XPATH, "//ol[@class='timeline']/li[contains(., 'Datadog')]")
        assert "superseded" in old.get_attribute("class")  # type: ignore[operator]
        assert "superseded by" in old.text and "Stripe" in old.text
        assert "ana.souza@newmail.org" in browser.find_element(By.ID, "review").text
        current = browser.find_element(By.ID, "current").text
        assert "Stripe" in current and "Datadog" not in current

        query = browser.find_element(By.CSS_SELECTOR, "#search input[name=q]")
        query.send_keys("where does she work")
        _submit(browser, query)
        hits = browser.find_elements(By.CSS_SELECTOR, "#search .hit")
        found = browser.find_element(By.ID, "search").text
        assert hits and any("Stripe" in h.text for h in hits), found

        shot = Path(os.environ.get("SLOTWISE_SCREENSHOT") or tmp_path / "inspector.png")
        assert browser.save_screenshot(str(shot)), shot
        assert shot.stat().st_size > 10_000
    finally:
        server.stop()
