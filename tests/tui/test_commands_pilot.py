"""Slash commands as a user meets them in the app: hints, validation, echo, /new and
/clear, /exit, prompts that start with a path, /copy, /compact, /model against a local
model list, /tools, /export, custom commands, and the palette's ranking."""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from co_tui.agent.build import build_agent
from co_tui.config.paths import exports_dir, user_config_dir
from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.store.session_store import SessionStore
from co_tui.tui.app import CoApp
from co_tui.tui.palette import SlashCommandProvider
from co_tui.tui.widgets.items import RenderedItem
from co_tui.tui.widgets.user_message import UserMessage
from tests.servers.models_fake import ModelsServer
from tests.tui.helpers import make_app, rendered, settle, text_stream, wait_until

TALL = (120, 80)
SID = "11111111-2222-3333-4444-555555555555"


async def submit(pilot: Any, app: CoApp, text: str) -> None:
    app.chat.prompt.text = text
    await pilot.press("enter")
    await settle(pilot, app)


def screen_text(app: CoApp) -> str:
    return rendered(app.chat.transcript)


def unwrapped(text: str) -> str:
    """`text` without its whitespace: a long path wraps across the transcript's lines."""
    return "".join(text.split())


def prompts_sent(messages: list[ModelMessage]) -> list[str]:
    return [
        str(part.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for part in m.parts
        if isinstance(part, UserPromptPart)
    ]


def recording_stream(seen: list[list[str]], answer: str = "ok") -> Any:
    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        seen.append(prompts_sent(messages))
        yield answer

    return fn


# -- 1. /help and /forget keep their argument hints ----------------------------------------


async def test_help_shows_every_usage_with_its_brackets(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "/help")
        shown = screen_text(app)
        for usage in ("/yolo [on|off]", "/forget <id>", "/copy [n]", "/export [file]", "/new"):
            assert usage in shown, usage
        assert "/clear" in shown and "the same as /new" in shown


async def test_forget_without_an_id_shows_the_usage_with_id(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "/forget")
        assert "/forget <id>" in screen_text(app)
        await submit(pilot, app, "/forget seven")
        assert "'seven' is not a memory id" in screen_text(app)


# -- 2. /clear: the note is in the new transcript ----------------------------------------


async def test_clear_says_so_after_clearing(tmp_path: Path) -> None:
    app = make_app(text_stream("an answer"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "hello")
        await submit(pilot, app, "/clear")
        await wait_until(pilot, lambda: "New session started." in screen_text(app), "the note")
        assert "an answer" not in screen_text(app)
        assert not list(app.query(UserMessage))


# -- 3. validation and hints for every command -------------------------------------------


async def test_yolo_with_a_bad_argument_changes_nothing(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "/yolo maybe")
        assert app.session.approve_all is False
        shown = screen_text(app)
        assert "'maybe' is neither on nor off" in shown and "/yolo [on|off]" in shown
        await submit(pilot, app, "/yolo on")
        assert app.session.approve_all is True


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("/help me", "/help takes no argument (got 'me')"),
        ("/new now", "/new takes no argument"),
        ("/copy x", "'x' is not a code block number"),
        ("/permissions foo", "'foo' is not something /permissions does"),
        ("/status everything", "/status takes no argument"),
    ],
)
async def test_arguments_a_command_cannot_use_get_its_usage(
    tmp_path: Path, typed: str, said: str
) -> None:
    app = make_app(text_stream("an answer"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "hello")
        await submit(pilot, app, typed)
        shown = screen_text(app)
        assert said in shown and "usage: /" in shown
        assert app.session.history  # /new now did not start a new session
        assert app.is_running


async def test_the_hint_line_shows_the_usage_once_a_command_is_typed(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        app.chat.prompt.text = "/yolo "
        await pilot.pause()
        assert app.chat.hint.display
        assert "/yolo [on|off]" in str(app.chat.hint.render())
        app.chat.prompt.text = "/etc/hosts what is this"
        await pilot.pause()
        assert not app.chat.hint.display


# -- 4. the palette ranks a name match first ---------------------------------------------


async def test_palette_search_puts_the_named_command_first(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await pilot.pause()
        provider = SlashCommandProvider(app.screen)
        hits = [hit async for hit in provider.search("forget")]
        best = max(hits, key=lambda hit: hit.score)
        assert str(best.match_display) == "/forget"


async def test_a_command_chosen_in_the_palette_runs_as_if_typed(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await pilot.pause()
        provider = SlashCommandProvider(app.screen)
        hits = [h async for h in provider.search("history")]
        hit = next(h for h in hits if str(h.match_display) == "/history")
        hit.command()
        await wait_until(
            pilot, lambda: "message(s) in this session" in screen_text(app), "/history"
        )
        assert "/history" in screen_text(app)  # echoed like a typed command


# -- 5. a path-like first word is a prompt ------------------------------------------------


async def test_a_prompt_starting_with_a_path_goes_to_the_model(tmp_path: Path) -> None:
    seen: list[list[str]] = []
    app = make_app(recording_stream(seen), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "/etc/hosts — what is in this file?")
        await submit(pilot, app, "/whatever is this")
        assert seen[-1][-2:] == ["/etc/hosts — what is in this file?", "/whatever is this"]
        await submit(pilot, app, "/hepl")
        assert "Unknown command /hepl. Did you mean /help?" in screen_text(app)


# -- 6. /exit, /quit, /new ----------------------------------------------------------------


@pytest.mark.parametrize("word", ["/exit", "/quit"])
async def test_exit_and_quit_leave_the_app(tmp_path: Path, word: str) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        app.chat.prompt.text = word
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.is_running, f"{word} to leave the app")


async def test_new_starts_a_fresh_session_and_the_old_one_stays(tmp_path: Path) -> None:
    app = make_app(text_stream("an answer"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "/yolo on")
        await submit(pilot, app, "hello")
        old = app.session_id
        await submit(pilot, app, "/new")
        assert app.session_id != old
        assert app.session.history == [] and app.session.approve_all is False
        await wait_until(pilot, lambda: f"/resume {old[:8]}" in screen_text(app), "the way back")
        assert app.session.store.resolve(old[:8]).id == old


# -- 7. /copy on an answer without code blocks --------------------------------------------


async def test_copy_a_block_of_an_answer_without_blocks(tmp_path: Path) -> None:
    app = make_app(text_stream("plain words"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "hello")
        await submit(pilot, app, "/copy 3")
        shown = screen_text(app)
        assert "The last answer has no code blocks" in shown and "<1..0>" not in shown


# -- 8. /compact when the summary would not be smaller ------------------------------------


async def test_compact_of_a_short_conversation_records_nothing(tmp_path: Path) -> None:
    def long_summary(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("A summary longer than what it summarises. " * 20)])

    settings = Settings(theme="textual-dark")
    summariser = FunctionModel(function=long_summary, model_name="sum")
    bundle = build_agent(
        settings,
        model=FunctionModel(stream_function=text_stream("hi"), model_name="fn"),
        instructions="test",
        summarizer=summariser,
    )
    choice = SandboxChoice(SubprocessSandbox(tmp_path), "test sandbox")
    deps = create_deps(settings, tmp_path, session_id=SID, sandbox_choice=choice)
    app = CoApp(settings, bundle=bundle, deps=deps, history_path=None)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "hello")
        await submit(pilot, app, "/compact")
        assert "already short" in screen_text(app)
        assert "saved)" not in screen_text(app)
        assert app.session.window.compactions == []


async def test_compact_reports_the_numbers_the_context_meter_shows(tmp_path: Path) -> None:
    """/compact's before and after are the context meter's count (the provider's, 12,000
    here): before, what the meter showed; after, what it shows now (until the next response
    reports the real size)."""

    def short_summary(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("We talked at length.")])

    answer = ModelResponse(
        parts=[TextPart("A long answer. " * 300)],
        model_name="fn",
        usage=RequestUsage(input_tokens=10_000, output_tokens=2_000),
    )
    db = tmp_path / "sessions.db"
    history = [ModelRequest.user_text_prompt("tell me a lot"), answer]
    SessionStore(db).save(SID, history, title="long", cwd=str(tmp_path.resolve()))
    settings = Settings(theme="textual-dark")
    bundle = build_agent(
        settings,
        model=FunctionModel(stream_function=text_stream("unused"), model_name="fn"),
        instructions="test",
        summarizer=FunctionModel(function=short_summary, model_name="sum"),
    )
    choice = SandboxChoice(SubprocessSandbox(tmp_path), "test sandbox")
    deps = create_deps(settings, tmp_path, session_id=SID, sandbox_choice=choice)
    app = CoApp(
        settings,
        bundle=bundle,
        deps=deps,
        history_path=None,
        session_store=SessionStore(db),
        resume=SID,
    )
    async with app.run_test(size=TALL) as pilot:
        await app.wait_ready()
        await wait_until(
            pilot, lambda: app.chat.status_bar.status.context_tokens, "the context meter"
        )
        assert app.chat.status_bar.status.context_tokens == 12_000
        await submit(pilot, app, "/compact")
        after = app.chat.status_bar.status.context_tokens
        assert 10_000 < after < 12_000  # about 1,100 tokens of text became a short summary
        said = unwrapped(screen_text(app))
        assert unwrapped(f"about 12,000 → {after:,} tokens ({12_000 - after:,} saved)") in said


# -- 9. the command line is echoed --------------------------------------------------------


async def test_a_command_is_echoed_before_its_output(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "/history")
        items = list(app.chat.transcript.items)
        echo = [i for i in items if isinstance(i, RenderedItem) and i.has_class("command-echo")]
        assert len(echo) == 1
        output = [i for i in items if isinstance(i, RenderedItem) and i.has_class("command-output")]
        assert items.index(echo[0]) < items.index(output[0])
        assert "/history" in rendered(echo[0])


# -- 10. /model lists what the provider serves --------------------------------------------


@pytest.fixture
def ollama() -> Iterator[ModelsServer]:
    server = ModelsServer(["llama3.2:3b", "qwen3:8b"]).start()
    yield server
    server.stop()


def ollama_app(tmp_path: Path, url: str) -> CoApp:
    settings = Settings(theme="textual-dark", llm_provider="ollama", ollama_host=url)
    settings = settings.model_copy(update={"ollama_model": "qwen3:8b"})
    choice = SandboxChoice(SubprocessSandbox(tmp_path), "test sandbox")
    deps = create_deps(settings, tmp_path, session_id=SID, sandbox_choice=choice)
    return CoApp(settings, bundle=build_agent(settings), deps=deps, history_path=None)


async def test_model_lists_the_served_models_and_refuses_an_unknown_one(
    tmp_path: Path, ollama: ModelsServer
) -> None:
    app = ollama_app(tmp_path, ollama.url)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "/model gpt-9")
        assert "does not serve a model named 'gpt-9'" in screen_text(app)
        assert app.session.model_label() == "ollama:qwen3:8b"
        await submit(pilot, app, "/model llama3.2:3b")
        assert app.session.model_label() == "ollama:llama3.2:3b"
    assert ollama.requests_to("/api/tags", "GET")


async def test_model_says_when_the_provider_cannot_switch_by_name(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "/model other")
        assert "name another provider as /model provider:model" in " ".join(
            screen_text(app).split()
        )


# -- 11. /tools shows what is not configured ----------------------------------------------


async def test_tools_marks_unconfigured_integrations(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "/tools")
        lines = screen_text(app).splitlines()
        slack = next(n for n, line in enumerate(lines) if line.strip().startswith("Slack"))
        slack_rows = " ".join(lines[slack : slack + 4])
        assert "not configured (SLACK_BOT_TOKEN): not" in lines[slack]
        assert "offered" in slack_rows.split("SLACK_BOT_TOKEN): not", 1)[1]  # nor to the model
        shell = next(line for line in lines if "run_shell_command" in line)
        assert "built-in" in shell and "ready" in shell  # the shell needs nothing


# -- 12. /export --------------------------------------------------------------------------


async def test_export_writes_a_private_file_in_the_data_folder_never_the_repository(
    tmp_path: Path,
) -> None:
    app = make_app(text_stream("the **answer**"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "what is it?")
        before = sorted(tmp_path.rglob("*"))
        await submit(pilot, app, "/export")
        target = exports_dir() / f"co-tui-{SID[:8]}.md"
        await wait_until(pilot, target.exists, "the export file")
        assert unwrapped(f"Exported this session to {target}") in unwrapped(screen_text(app))
        text = target.read_text()
        assert "## You\n\nwhat is it?" in text and "the **answer**" in text
        assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(exports_dir()).st_mode) == 0o700
        assert sorted(tmp_path.rglob("*")) == before  # nothing written into the workspace
        # Exported again (the session went on): a new file, the first one kept.
        await submit(pilot, app, "/export")
        again = exports_dir() / f"co-tui-{SID[:8]}-2.md"
        await wait_until(pilot, again.exists, "the second export")
        assert unwrapped(f"Exported this session to {again}") in unwrapped(screen_text(app))
        assert target.read_text() == text


async def test_export_to_a_named_file_never_replaces_one(tmp_path: Path) -> None:
    app = make_app(text_stream("the **answer**"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "what is it?")
        await submit(pilot, app, "/export notes/chat.md")
        assert "cannot create" in screen_text(app)  # no such folder: said, nothing written
        await submit(pilot, app, "/export chat.md")
        target = tmp_path / "chat.md"
        await wait_until(pilot, target.exists, "the export file")
        assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
        text = target.read_text()
        await submit(pilot, app, "/export chat.md")
        assert unwrapped("already exists; nothing was written") in unwrapped(screen_text(app))
        assert target.read_text() == text


async def test_export_never_writes_through_a_link_in_the_exports_folder(tmp_path: Path) -> None:
    """A link at the default name (left by anything that could write there) is not followed:
    the export takes the next name and the link's target is untouched."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    exports_dir().mkdir(parents=True)
    (exports_dir() / f"co-tui-{SID[:8]}.md").symlink_to(victim)
    app = make_app(text_stream("the **answer**"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await submit(pilot, app, "what is it?")
        await submit(pilot, app, "/export")
        again = exports_dir() / f"co-tui-{SID[:8]}-2.md"
        await wait_until(pilot, again.exists, "the export beside the link")
    assert victim.read_text() == "keep me"


# -- 13. custom commands ------------------------------------------------------------------


async def test_a_custom_command_sends_its_prompt(tmp_path: Path) -> None:
    folder = user_config_dir() / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("---\ndescription: review a file\n---\nReview $ARGUMENTS.")
    (folder / "help.md").write_text("not the built-in")
    seen: list[list[str]] = []
    app = make_app(recording_stream(seen), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await app.wait_ready()
        await settle(pilot, app)
        assert unwrapped("/help is a built-in command") in unwrapped(screen_text(app))
        app.chat.prompt.text = "/rev"
        await pilot.pause()
        assert "/review [arguments]  review a file" in str(app.chat.hint.render())
        await submit(pilot, app, "/review src/x.py")
        assert seen[-1][-1] == "Review src/x.py."
        assert any(m.text == "/review src/x.py" for m in app.query(UserMessage))
        await submit(pilot, app, "/help")
        assert "review a file" in screen_text(app)


async def test_an_untrusted_projects_commands_are_not_loaded(tmp_path: Path) -> None:
    folder = tmp_path / ".co-tui" / "commands"
    folder.mkdir(parents=True)
    (folder / "deploy.md").write_text("Deploy everything.")
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await app.wait_ready()
        await settle(pilot, app)
        assert "not loaded: this project is not trusted" in screen_text(app)
        assert "deploy" not in app.chat.custom_commands
