"""When the embedded model cannot start (here: its model file does not exist), the app says
so once, in one short notice naming the fix; a message sent then gets one line pointing at
/model, never the build instructions; and /model chooses another provider, after which the
conversation goes on with it (the fake OpenAI-compatible server, through the real client)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from co_tui.config.settings import Settings
from co_tui.tui.app import CoApp
from co_tui.tui.screens.model_picker import ModelPickerScreen
from tests.servers.fake_openai import FakeOpenAIServer, text
from tests.tui.helpers import rendered, wait_until

NO_MODEL_FILE = "/nonexistent/co-tui-test/model.gguf"


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer(default=text("the other provider answers")).start()
    yield server
    server.stop()


def shown(app: CoApp) -> str:
    return " ".join(rendered(app.chat.transcript).split())


async def send(pilot: Any, app: CoApp, prompt: str) -> None:
    app.chat.prompt.text = prompt
    await pilot.press("enter")
    await pilot.pause()


@pytest.mark.usefixtures("allow_model_requests")
async def test_a_local_model_that_cannot_start_is_said_once_and_model_recovers(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    settings = Settings(
        theme="textual-dark",
        local_model_path=NO_MODEL_FILE,  # no provider configured: the embedded model
        openai_base_url=f"{openai_server.url}/v1",
        ollama_host="http://127.0.0.1:9",
        sandbox_backend="subprocess",
    )
    app = CoApp(settings, history_path=None)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_until(pilot, lambda: app.load_error is not None, "the model's failure")
        await wait_until(pilot, lambda: "does not exist" in shown(app), "the start notice")
        for prompt in ("hello", "anyone there?"):
            await send(pilot, app, prompt)
        await wait_until(
            pilot, lambda: shown(app).count("No model to answer") == 2, "two short replies"
        )
        text_now = shown(app)
        assert text_now.count("does not exist") == 1  # the reason: once, at start
        assert "choose one with /model" in text_now and "CMAKE" not in text_now

        await send(pilot, app, "/model")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPickerScreen), "the picker")
        picker = app.screen
        assert isinstance(picker, ModelPickerScreen)
        await wait_until(pilot, lambda: picker.listed is not None, "the model lists")
        await pilot.press(*"openai", "enter")
        await wait_until(pilot, lambda: app.session.model_label() == "openai:fake", "the switch")
        assert app.load_error is None
        await send(pilot, app, "and now?")
        await wait_until(
            pilot, lambda: "the other provider answers" in shown(app), "the new model's answer"
        )
    assert openai_server.requests[-1].body["model"] == "fake"
