"""Each code block of an answer shows its number, as `/copy n` counts it: the labels come
while the answer streams, never change, and `/copy 2` copies the block labelled 2."""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from co_tui.tui.render.streaming import MAX_LIVE_CHARS
from co_tui.tui.widgets.assistant_message import AssistantMessage
from tests.tui.helpers import make_app, rendered, settle, wait_until

TALL = (100, 60)
ESC = "\x1b"
BLOCKS = [
    ("python", "def one():\n    return 1"),
    ("bash", "echo two"),
    ("", "three, plain"),
]


def fenced(language: str, code: str) -> str:
    return f"```{language}\n{code}\n```\n\n"


def labels(app: Any) -> list[str]:
    """The code block labels on screen, top to bottom: ' 2 bash ' at a line's right end."""
    found = []
    for line in rendered(app.chat.transcript).splitlines():
        match = re.search(r" (\d+)(?: (\w+))? +$", line)
        if match and line.strip() == match.group(0).strip():  # a line holding only a label
            found.append(match.group(0).strip())
    return found


def copied(written: list[str]) -> list[str]:
    """What the app put on the clipboard through OSC 52."""
    prefix = f"{ESC}]52;c;"
    return [
        base64.b64decode(w[len(prefix) :].rstrip("\a").split(ESC)[0]).decode()
        for w in written
        if w.startswith(prefix)
    ]


@pytest.fixture(autouse=True)
def no_local_clipboard_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)


async def test_three_blocks_are_labelled_while_streaming_and_copy_2_copies_the_second(
    tmp_path: Path,
) -> None:
    go_on = asyncio.Event()

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "Three blocks:\n\n" + fenced(*BLOCKS[0])
        yield fenced(*BLOCKS[1])[:-8]  # the second block, still open
        await go_on.wait()
        yield fenced(*BLOCKS[1])[-8:] + fenced(*BLOCKS[2]) + "Done."

    app = make_app(answer, tmp_path)
    async with app.run_test(size=TALL) as pilot:
        app._driver.write = (written := []).append
        app.chat.prompt.text = "three blocks please"
        await pilot.press("enter")
        await wait_until(pilot, lambda: labels(app) == ["1 python", "2 bash"], "labels 1, 2")
        go_on.set()
        await wait_until(pilot, lambda: "Done." in rendered(app.chat.transcript), "the answer")
        await settle(pilot, app)
        assert labels(app) == ["1 python", "2 bash", "3"]
        app.chat.prompt.text = "/copy 2"
        await pilot.press("enter")
        await wait_until(pilot, lambda: copied(written), "/copy 2 to copy")
        assert copied(written) == ["echo two"]
        assert "Copied code block 2." in rendered(app.chat.transcript)


async def test_a_block_too_long_to_stream_whole_keeps_its_number_across_the_cut(
    tmp_path: Path,
) -> None:
    long_code = "\n".join(f"line_{n} = {n}" for n in range(MAX_LIVE_CHARS // 4))
    text = fenced("python", long_code) + fenced("bash", "echo after")

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for start in range(0, len(text), 400):
            yield text[start : start + 400]
            await asyncio.sleep(0.02)

    app = make_app(answer, tmp_path)
    async with app.run_test(size=TALL) as pilot:
        app._driver.write = (written := []).append
        app.chat.prompt.text = "a long block"
        await pilot.press("enter")
        await settle(pilot, app)
        (message,) = app.chat.transcript.query(AssistantMessage)
        assert message.committed_blocks > 2  # the long block was cut while it streamed
        app.chat.prompt.text = "/copy 2"
        await pilot.press("enter")
        await wait_until(pilot, lambda: copied(written), "/copy 2 to copy")
        assert copied(written) == ["echo after"]
        app.chat.transcript.scroll_end(animate=False)
        await pilot.pause()
        assert labels(app)[-1] == "2 bash"
