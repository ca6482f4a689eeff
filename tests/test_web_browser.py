"""``parlour serve`` in a real browser: headless Chromium driven by Selenium.

A German Whist deal started from the form on ``/`` and a Forty-Fives deal are played
to the end by clicking the move buttons; the German Whist game is then replayed
(stepping, then the autoplay) and the leaderboard of a small league is opened.
Screenshots of each page go to the test's temporary directory, or to
``$PARLOUR_WEB_SHOTS`` when it is set. Needs Debian's ``chromium`` and
``chromium-driver`` (``make test`` installs them when missing).
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    pytest.skip(
        "needs chromium and chromium-driver (make test installs them)",
        allow_module_level=True,
    )

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from parlour.cli import main as cli_main  # noqa: E402
from parlour.web.app import create_app, running  # noqa: E402
from parlour.web.service import Parlour  # noqa: E402

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1100,1400",
)


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    where = os.environ.get("PARLOUR_WEB_SHOTS")
    path = Path(where) if where else tmp_path_factory.mktemp("shots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[str]:
    """A server over a database with a small league in it."""
    db = tmp_path_factory.mktemp("browser") / "league.sqlite"
    league = ["league", "german_whist_v0", "--agents", "random", "heuristic"]
    assert cli_main([*league, "--games", "4", "--db", str(db), "--quiet"]) == 0
    with running(create_app(Parlour(db))) as base:
        yield base


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tmp_path_factory.mktemp("chromium-profile")
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def gone(element):
    """A wait condition: the page that held ``element`` has been replaced. Like
    selenium's ``staleness_of``, but chromedriver may also answer a detached node with
    "Node with given id does not belong to the document" mid-navigation."""

    def check(_driver) -> bool:
        try:
            element.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as err:
            if "does not belong to the document" in str(err):
                return True
            raise
        return False

    return check


def play_by_clicking(driver: webdriver.Chrome, shots: Path, name: str) -> str:
    """Click a random move button until the result shows; returns its text."""
    rng = random.Random(7)
    for clicks in range(500):
        results = driver.find_elements(By.CSS_SELECTOR, "[data-testid=result]")
        if results:
            driver.save_screenshot(str(shots / f"{name}-result.png"))
            return results[0].text
        buttons = driver.find_elements(By.CSS_SELECTOR, "button[data-action]")
        assert buttons, "a page without a result offers moves"
        assert not driver.find_elements(By.CSS_SELECTOR, ":not(button)[data-action]")
        if clicks == 2:
            driver.save_screenshot(str(shots / f"{name}-play.png"))
        old = driver.find_element(By.TAG_NAME, "main")
        rng.choice(buttons).click()
        WebDriverWait(driver, 60).until(gone(old))
    raise AssertionError("the game did not end")


def test_play_replay_and_leaderboard_in_chromium(site, browser, shots) -> None:
    driver = browser
    driver.get(site + "/")
    form = driver.find_element(By.CSS_SELECTOR, "[data-testid=play-form]")
    Select(form.find_element(By.NAME, "env")).select_by_value("german_whist_v0")
    driver.save_screenshot(str(shots / "index.png"))
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(driver, 60).until(
        ec.presence_of_element_located((By.CSS_SELECTOR, "button[data-action]"))
    )
    assert "German Whist" in driver.title
    result = play_by_clicking(driver, shots, "german-whist")
    assert "player_0 (you)" in result and "player_1" in result

    # the replay: step forward, switch to a seat's view, then let it play on
    driver.find_element(By.LINK_TEXT, "Replay this game").click()
    frame = driver.find_element(By.ID, "frame")
    total = int(frame.get_attribute("data-total"))
    assert total >= 26
    for _ in range(3):
        driver.find_element(By.CSS_SELECTOR, "[data-step=next]").click()
    step = driver.find_element(By.CSS_SELECTOR, "[data-testid=move]")
    assert "move 3 of" in step.text
    driver.find_element(By.LINK_TEXT, "player_1").click()
    assert "You are player_1" in driver.find_element(By.TAG_NAME, "pre").text
    driver.save_screenshot(str(shots / "replay-seat.png"))
    Select(driver.find_element(By.ID, "speed")).select_by_value("250")
    driver.find_element(By.ID, "play").click()
    WebDriverWait(driver, 120).until(
        ec.presence_of_element_located((By.CSS_SELECTOR, "[data-testid=result]"))
    )
    assert f"move {total} of {total}" in driver.page_source
    driver.save_screenshot(str(shots / "replay-end.png"))

    # a Forty-Fives deal against the heuristic bots
    driver.get(site + "/play/forty_fives_v0?opponent=heuristic&o=episode=deal")
    result = play_by_clicking(driver, shots, "forty-fives")
    assert "player_0 (you), player_2" in result

    driver.get(site + "/leaderboard/german_whist_v0")
    board = driver.find_element(By.CSS_SELECTOR, "[data-testid=leaderboard]")
    assert "heuristic" in board.text and "random" in board.text
    plot = board.find_element(By.CSS_SELECTOR, "img.plot")
    assert driver.execute_script("return arguments[0].naturalWidth", plot) > 100
    driver.save_screenshot(str(shots / "leaderboard.png"))

    # a bad request is a page that says what was wrong
    driver.get(site + "/play/german_whist_v0?opponent=ckpt:/etc/passwd")
    assert "never by a path" in driver.find_element(By.TAG_NAME, "main").text
