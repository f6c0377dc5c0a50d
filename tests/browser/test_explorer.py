"""The explorer page of `shatranj-tb serve --http` in a real headless browser.

Starts the binary ($SHATRANJ_TB_BIN) over a tables directory holding KQvKQ
($SHATRANJ_TB_TEST_TABLES), drives Debian's Chromium through chromedriver with Selenium,
and checks what a user sees: al-Suli's Diamond from the URL (White wins in 39 plies, the
best move b3b4 first), a click on it (38), back and forward, a move played on the board,
the position editor (removing a piece changes the value), errors shown in the page, the
flipped board, the best line played to the end, and a phone-sized window without sideways
scrolling. Screenshots go to $SHATRANJ_TB_SHOTS
(default target/). Prints the page's first paint time (a figure, not a check).
"""

import os
import re
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.support.ui import WebDriverWait

DIAMOND = "8/8/8/3k4/8/1KQ5/8/q7_w_-_-_0_1"
TIMEOUT = 20


def start_server(binary, tables):
    proc = subprocess.Popen(
        [binary, "serve", "--tables", tables, "--no-generate",
         "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    deadline = time.time() + 30
    url = None
    while time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        m = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
        if m:
            url = m.group(1)
        if "serving shatranj.tablebase.v1.Tablebase" in line:
            return proc, url
    proc.kill()
    raise SystemExit(f"the server did not start (last line: {line!r})")


def browser(width, height):
    opts = Options()
    opts.binary_location = os.environ.get("SHATRANJ_TB_CHROMIUM", "/usr/bin/chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--hide-scrollbars"):
        opts.add_argument(arg)
    service = Service(os.environ.get("SHATRANJ_TB_CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(service=service, options=opts)


def text(driver, css):
    return driver.find_element(By.CSS_SELECTOR, css).text


def until(driver, condition):
    """Waits for `condition`, asking again when the page re-rendered an element it had
    found (the board and lists are redrawn after each answer)."""
    return WebDriverWait(
        driver, TIMEOUT, ignored_exceptions=(StaleElementReferenceException,)
    ).until(condition)


def wait_text(driver, css, want):
    """Waits until the element's text contains `want` (or matches it, for a regex)."""
    def ok(d):
        t = text(d, css)
        return t if (want.search(t) if hasattr(want, "search") else want in t) else False
    try:
        return until(driver, ok)
    except Exception:
        raise AssertionError(f"{css} never showed {want!r}; it shows {text(driver, css)!r}")


def first_move(driver):
    until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#moves li"))
    return driver.find_elements(By.CSS_SELECTOR, "#moves li")[0]


def main():
    binary = os.environ["SHATRANJ_TB_BIN"]
    tables = os.environ["SHATRANJ_TB_TEST_TABLES"]
    shots = os.environ.get("SHATRANJ_TB_SHOTS", "target")
    proc, base = start_server(binary, tables)
    driver = browser(1000, 760)
    checks = 0
    try:
        # al-Suli's Diamond from the URL.
        driver.get(f"{base}/?fen={DIAMOND}")
        assert wait_text(driver, "#verdict", "plies") == "White wins in 39 plies"
        best = first_move(driver)
        assert best.get_attribute("data-uci") == "b3b4", best.get_attribute("data-uci")
        assert best.find_element(By.CSS_SELECTOR, ".san").text == "Kb4"
        assert best.find_element(By.CSS_SELECTOR, ".res").text == "win in 39"
        assert "win" in best.get_attribute("class").split()
        assert driver.find_element(By.ID, "fen").get_attribute("value") == DIAMOND.replace("_", " ")
        # The pieces are the page's own drawings: shah, ferz (not a queen) and so on.
        labels = sorted(e.get_attribute("aria-label")
                        for e in driver.find_elements(By.CSS_SELECTOR, "#board svg.pc"))
        assert labels == ["black ferz", "black shah", "white ferz", "white shah"], labels
        paint = driver.execute_script(
            "const p = performance.getEntriesByType('paint');"
            "return Object.fromEntries(p.map(e => [e.name, e.startTime]));")
        driver.save_screenshot(os.path.join(shots, "explorer.png"))
        checks += 1

        # Click the best move in the list: the value falls to 38, the URL follows.
        best.click()
        assert wait_text(driver, "#verdict", "38") == "White wins in 38 plies"
        assert "fen=8/8/8/3k4/1K6/2Q5/8/q7_b_-_-_1_1" in driver.current_url, driver.current_url
        checks += 1

        # Back and forward.
        driver.find_element(By.ID, "back").click()
        wait_text(driver, "#verdict", "39")
        driver.find_element(By.ID, "forward").click()
        wait_text(driver, "#verdict", "38")
        checks += 1

        # A move on the board: Black's best reply, from square to square.
        reply = first_move(driver).get_attribute("data-uci")
        driver.find_element(By.CSS_SELECTOR, f'.sq[data-sq="{reply[:2]}"]').click()
        targets = driver.find_elements(By.CSS_SELECTOR, ".sq.to")
        assert targets, "selecting a piece shows where it can go"
        driver.find_element(By.CSS_SELECTOR, f'.sq[data-sq="{reply[2:4]}"]').click()
        assert wait_text(driver, "#verdict", "37") == "White wins in 37 plies"
        checks += 1

        # The editor: remove Black's ferz (a1); Black, bare and to move, cannot take
        # White's ferz: lost at once.
        driver.find_element(By.ID, "back").click()
        wait_text(driver, "#verdict", "38")
        driver.find_element(By.ID, "edit").click()
        driver.find_element(By.CSS_SELECTOR, '#palette button[data-tool="x"]').click()
        driver.find_element(By.CSS_SELECTOR, '.sq[data-sq="a1"]').click()
        verdict = wait_text(driver, "#verdict", "has won")
        assert verdict == "White has won (bare-king): Black to move has lost", verdict
        assert driver.find_elements(By.CSS_SELECTOR, "#moves li") == []
        # ... and put a black rook there: another material, another value.
        driver.find_element(By.CSS_SELECTOR, '#palette button[data-tool="r"]').click()
        driver.find_element(By.CSS_SELECTOR, '.sq[data-sq="a1"]').click()
        wait_text(driver, "#details", "KQvKR")
        assert text(driver, "#verdict") != verdict
        driver.find_element(By.ID, "done").click()
        checks += 1

        # Errors are shown in the page: a bad FEN, and a position the server refuses.
        fen = driver.find_element(By.ID, "fen")
        fen.clear()
        fen.send_keys("not a fen\n")
        wait_text(driver, "#error", "bad FEN")
        fen.clear()
        fen.send_keys("8/8/8/4k3/8/8/4R3/K7 w - - 0 1\n")
        wait_text(driver, "#error", "illegal position")
        checks += 1

        # Flip: h1 comes first (top left), and the URL keeps it.
        driver.find_element(By.ID, "flip").click()
        until(driver,
              lambda d: d.find_element(By.CSS_SELECTOR, "#board .sq").get_attribute("data-sq") == "h1")
        assert "flip=1" in driver.current_url, driver.current_url
        driver.find_element(By.ID, "flip").click()
        checks += 1

        # Play the best line: a mate in one plays to the mate.
        fen.clear()
        fen.send_keys("3k3r/8/3K4/8/8/8/8/R7 w - - 0 1\n")
        wait_text(driver, "#verdict", "White wins in 1 ply")
        driver.find_element(By.ID, "bestline").click()
        assert wait_text(driver, "#verdict", "has won") == \
            "White has won (checkmate): Black to move has lost"
        checks += 1

        # A phone-sized window: the page fits its width, the board is whole.
        driver.set_window_size(390, 844)
        driver.get(f"{base}/?fen={DIAMOND}")
        wait_text(driver, "#verdict", "39")
        fits = driver.execute_script(
            "const b = document.getElementById('board').getBoundingClientRect();"
            "return [document.documentElement.scrollWidth, window.innerWidth, b.left, b.right];")
        scroll_width, inner, left, right = fits
        assert scroll_width <= inner and left >= 0 and right <= inner, fits
        driver.save_screenshot(os.path.join(shots, "explorer-phone.png"))
        checks += 1
    finally:
        driver.quit()
        proc.terminate()
        proc.wait(timeout=15)
    print(f"explorer: {checks} browser checks passed; first paint "
          f"{paint.get('first-paint', float('nan')):.0f} ms, first contentful paint "
          f"{paint.get('first-contentful-paint', float('nan')):.0f} ms; "
          f"screenshots in {shots}/explorer.png and explorer-phone.png")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"explorer browser test FAILED: {e}", file=sys.stderr)
        raise
