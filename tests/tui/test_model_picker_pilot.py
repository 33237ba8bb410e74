"""/model opens a picker of every configured provider's models: typing filters it, Enter
switches the session (the next request goes to the chosen model), Escape keeps the current
one, and a provider that cannot be listed gets one line saying why. The lists come from the
fake OpenAI-compatible server and a fake Ollama through the real HTTP clients."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import OptionList, Static

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.tui.app import CoApp
from co_tui.tui.screens.model_picker import ModelPickerScreen
from tests.servers.fake_openai import FakeOpenAIServer, text
from tests.servers.models_fake import ModelsServer
from tests.tui.helpers import rendered, wait_until

SID = "11111111-2222-3333-4444-555555555555"
CLOSED_PORT = "http://127.0.0.1:9"  # discard: nothing listens there
NO_MODEL_FILE = "/nonexistent/co-tui-test/model.gguf"


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer(default=text("from the chosen model"), models=("fake", "other-9b"))
    server.start()
    yield server
    server.stop()


def picker_app(tmp_path: Path, base_url: str, ollama_host: str = CLOSED_PORT) -> CoApp:
    settings = Settings(
        theme="textual-dark",
        llm_provider="openai",
        openai_base_url=f"{base_url}/v1",
        ollama_host=ollama_host,
        local_model_path=NO_MODEL_FILE,
    )
    settings = settings.model_copy(update={"openai_model": "fake"})
    choice = SandboxChoice(SubprocessSandbox(tmp_path), "test sandbox")
    deps = create_deps(settings, tmp_path, session_id=SID, sandbox_choice=choice)
    return CoApp(settings, bundle=build_agent(settings), deps=deps, history_path=None)


async def open_picker(pilot: Any, app: CoApp) -> ModelPickerScreen:
    app.chat.prompt.text = "/model"
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, ModelPickerScreen), "the picker")
    screen = app.screen
    assert isinstance(screen, ModelPickerScreen)
    await wait_until(pilot, lambda: screen.listed is not None, "the model lists")
    await pilot.pause()
    return screen


def options(screen: ModelPickerScreen) -> list[str]:
    listed = screen.query_one("#model-options", OptionList)
    return [str(option.id) for option in listed.options]


def failures(screen: ModelPickerScreen) -> str:
    return " ".join(rendered(screen.query_one("#model-failures", Static)).split())


@pytest.mark.usefixtures("allow_model_requests")
async def test_typing_filters_and_enter_switches_the_session(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    app = picker_app(tmp_path, openai_server.url)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_picker(pilot, app)
        assert options(screen) == ["openai:fake", "openai:other-9b", "add-provider"]
        shown = failures(screen)
        assert "ollama: cannot list the models at http://127.0.0.1:9/api/tags" in shown
        assert f"local: the local model file {NO_MODEL_FILE} does not exist" in shown
        await pilot.press(*"other")
        await pilot.pause()
        assert options(screen) == ["openai:other-9b", "add-provider"]
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: app.session.model_label() == "openai:other-9b",
            "the switch to openai:other-9b",
        )
        assert not isinstance(app.screen, ModelPickerScreen)
        app.chat.prompt.text = "hello"
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: "from the chosen model" in rendered(app.chat.transcript),
            "the chosen model's answer",
        )
    assert openai_server.requests[-1].body["model"] == "other-9b"


async def test_escape_keeps_the_model(tmp_path: Path, openai_server: FakeOpenAIServer) -> None:
    app = picker_app(tmp_path, openai_server.url)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_picker(pilot, app)
        await pilot.press("down", "escape")
        await wait_until(
            pilot, lambda: not isinstance(app.screen, ModelPickerScreen), "the picker closed"
        )
        assert screen.listed is not None
        assert app.session.model_label() == "openai:fake"


async def test_the_picker_switches_to_another_provider(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    ollama = ModelsServer(["llama3.2:3b"]).start()
    try:
        app = picker_app(tmp_path, openai_server.url, ollama_host=ollama.url)
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_picker(pilot, app)
            assert "ollama:llama3.2:3b" in options(screen)
            await pilot.press(*"llama", "enter")
            await wait_until(
                pilot,
                lambda: app.session.model_label() == "ollama:llama3.2:3b",
                "the switch to ollama:llama3.2:3b",
            )
            assert "Model switched to" in rendered(app.chat.transcript)
    finally:
        ollama.stop()


async def test_a_served_name_cannot_write_escape_codes(tmp_path: Path) -> None:
    hostile = "evil\x1b]0;pwned\x07\x1b[2J"
    server = FakeOpenAIServer(models=("fake", hostile)).start()
    try:
        app = picker_app(tmp_path, server.url)
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_picker(pilot, app)
            listed = screen.query_one("#model-options", OptionList)
            prompts = [str(option.prompt) for option in listed.options]
            assert not any("\x1b" in prompt or "\x07" in prompt for prompt in prompts)
            assert any("evil\\x1b" in prompt for prompt in prompts)
    finally:
        server.stop()


async def test_model_name_still_switches_without_the_picker(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    app = picker_app(tmp_path, openai_server.url)
    async with app.run_test(size=(100, 30)) as pilot:
        app.chat.prompt.text = "/model other-9b"
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: app.session.model_label() == "openai:other-9b",
            "the switch to openai:other-9b",
        )
        assert not isinstance(app.screen, ModelPickerScreen)


def test_the_picker_at_80x24(
    snap_compare: Any, tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    app = picker_app(tmp_path, openai_server.url)

    async def run_before(pilot: Any) -> None:
        await open_picker(pilot, app)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


@pytest.mark.usefixtures("allow_model_requests")
async def test_a_filter_typed_and_enter_in_one_burst_chooses_from_the_filtered_list(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    """As a fast typist or a paste sends it: Enter right behind the filter's last key (it
    switched to the first model of the unfiltered list; found while trying /setup in tmux)."""
    app = picker_app(tmp_path, openai_server.url)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_picker(pilot, app)
        for key in [*"other", "enter"]:  # posted at once: no pause for the app between
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await wait_until(
            pilot,
            lambda: app.session.model_label() == "openai:other-9b",
            "the switch to openai:other-9b",
        )
