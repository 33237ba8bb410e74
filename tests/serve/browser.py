"""Headless Debian Chromium driven by selenium, for the `co-tui serve` tests.

The page draws the terminal on a canvas, so the text is read from what the WebSocket
delivers: a script injected before the page loads keeps every binary frame. Chromium's
performance log (the DevTools protocol's Network events) records every request the page
makes, its console log what it refused (a Content-Security-Policy violation)."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers import engine_unavailable

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# As root, on a machine with a closed network (see .ci/setup.d/30-browser.sh).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,900",
]
RECORD_TERMINAL_OUTPUT = """
window.__coOut = [];
const OriginalWebSocket = window.WebSocket;
window.WebSocket = function (url, protocols) {
  const ws = protocols === undefined ? new OriginalWebSocket(url)
                                     : new OriginalWebSocket(url, protocols);
  ws.addEventListener("message", (event) => {
    if (typeof event.data !== "string") {
      window.__coOut.push(new TextDecoder().decode(new Uint8Array(event.data)));
    }
  });
  return ws;
};
window.WebSocket.prototype = OriginalWebSocket.prototype;
"""
_ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-B]")


@dataclass(frozen=True)
class Request:
    url: str
    document: str  # the page that made it ("" when Chromium does not say)


def require_browser() -> None:
    """Skip when Chromium or selenium is missing; under CI (CO_TUI_CI=1) fail instead."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not shutil.which(p)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip install -e '.[dev]')")
    if not missing:
        return
    engine_unavailable(
        f"browser test needs {', '.join(missing)} (apt-get install chromium chromium-driver)"
    )


class Browser:
    def __init__(self) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self._profile = tempfile.mkdtemp(prefix="co-tui-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={self._profile}"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        self.driver: Any = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.driver.execute_cdp_cmd(
            "Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_TERMINAL_OUTPUT}
        )

    def open(self, url: str) -> None:
        self.driver.get(url)

    def terminal_text(self) -> str:
        raw = self.driver.execute_script("return (window.__coOut || []).join('')")
        return _ESCAPES.sub("", raw)

    def wait_for(self, predicate: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.terminal_text()
            if predicate(text):
                return text
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; the terminal showed:\n{text[-2000:]}")

    def type(self, keys: str) -> None:
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.CSS_SELECTOR, ".xterm-helper-textarea").send_keys(keys)

    def type_without_clicking(self, keys: str) -> None:
        """Keys to whatever the page focused, as a person types after the page opens."""
        from selenium.webdriver.common.action_chains import ActionChains

        ActionChains(self.driver).send_keys(keys).perform()

    def press_ctrl(self, key: str) -> None:
        """Ctrl+`key`, to whatever the page focused."""
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys

        ActionChains(self.driver).key_down(Keys.CONTROL).send_keys(key).key_up(
            Keys.CONTROL
        ).perform()

    def focused(self) -> str:
        """The focused element, as `tag.class` or `tag#id`."""
        return str(
            self.driver.execute_script(
                "const e = document.activeElement;"
                "return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '.' + e.className);"
            )
        )

    def wait_until(self, script: str, what: str, timeout: float = 30) -> None:
        """Until the page's JavaScript expression `script` is true."""
        deadline = time.monotonic() + timeout
        while not self.driver.execute_script(f"return Boolean({script})"):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what} ({script})")
            time.sleep(0.1)

    def requests(self) -> list[Request]:
        """Every request a page made since the last call (WebSockets included)."""
        made = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            params = message["params"]
            if message["method"] == "Network.requestWillBeSent":
                made.append(Request(params["request"]["url"], params.get("documentURL", "")))
            elif message["method"] == "Network.webSocketCreated":
                made.append(Request(params["url"], params.get("initiator", {}).get("url", "")))
        return made

    def console(self) -> list[str]:
        """The page's console messages since the last call."""
        return [entry["message"] for entry in self.driver.get_log("browser")]

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(path))

    def close(self) -> None:
        self.driver.quit()
        shutil.rmtree(self._profile, ignore_errors=True)
