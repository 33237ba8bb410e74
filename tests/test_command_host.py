"""What a slash command asks of its front (`CommandHost`): a front without the app's screens
says where to find each feature instead; a front that has them gets exactly what the user
typed. (The app as a host: tests/tui/test_commands_pilot.py and the pilots of each screen.)"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pydantic_ai.models.test import TestModel

from co_tui.agent.build import AgentBundle
from co_tui.config.settings import Settings
from co_tui.session import commands
from co_tui.session.commands import CommandHost, NoScreens
from tests.helpers import make_bundle, make_deps

ANSWER = "Here:\n\n```sh\nls -la\n```\n\nand\n\n```py\nprint(1)\n```\n"


def context(tmp_path: Path, host: CommandHost, shown: list[object]) -> commands.CommandContext:
    return commands.CommandContext(
        [],
        make_deps(tmp_path),
        make_bundle(TestModel()),
        Settings(),
        shown.append,
        host=host,
        last_answer=ANSWER,
    )


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("/resume", "Resume from the command line: `co-tui --continue` or `co-tui --resume [id]`."),
        (
            "/resume 1f3a",
            "Resume from the command line: `co-tui --continue` or `co-tui --resume [id]`.",
        ),
        (
            "/spans",
            "The span viewer is part of the app (F2). Here: `co-tui traces` or `co-tui logs`.",
        ),
        ("/find needle", "There is no conversation to search here."),
        ("/exit", "There is no app to leave here."),
        ("/setup", "Set up a provider with `co-tui init PROVIDER` in a shell."),
        ("/export notes.md", "Export a stored session with `co-tui sessions export ID [file]`."),
        ("/trust", "Trust a project with `co-tui trust` in its folder."),
        ("/copy", "There is no clipboard here."),
    ],
)
async def test_a_front_without_screens_says_where_to_find_the_feature(
    tmp_path: Path, typed: str, said: str
) -> None:
    shown: list[object] = []
    outcome = await commands.dispatch(context(tmp_path, NoScreens(), shown), typed)
    assert outcome.known and outcome.history is None
    assert shown == [said]
    assert not (tmp_path / "notes.md").exists()


async def test_model_without_a_picker_says_which_model_runs(tmp_path: Path) -> None:
    shown: list[object] = []
    await commands.dispatch(context(tmp_path, NoScreens(), shown), "/model")
    assert len(shown) == 1 and "picker" not in str(shown[0])


@dataclass
class RecordingFront:
    """A front with every screen, which notes what the commands asked of it."""

    asked: list[tuple[str, str]] = field(default_factory=list)

    def resume_session(self, session_id: str) -> None:
        self.asked.append(("resume", session_id))

    def open_spans(self, span_filter: str) -> None:
        self.asked.append(("spans", span_filter))

    def find_in_transcript(self, text: str) -> None:
        self.asked.append(("find", text))

    def choose_model(self) -> None:
        self.asked.append(("model picker", ""))

    def set_up_provider(self) -> None:
        self.asked.append(("setup", ""))

    def replace_bundle(self, bundle: AgentBundle, settings: Settings) -> None:
        self.asked.append(("agent", settings.model))

    def copy_to_clipboard(self, text: str) -> None:
        self.asked.append(("copy", text))

    def exit_app(self) -> None:
        self.asked.append(("exit", ""))

    async def export_session(self, name: str) -> str:
        self.asked.append(("export", name))
        return f"Exported to {name}"

    async def trust_project(self) -> str:
        self.asked.append(("trust", ""))
        return "Trusted."


@pytest.mark.parametrize(
    ("typed", "asked", "said"),
    [
        ("/resume  1f3a ", ("resume", "1f3a"), []),
        ("/resume", ("resume", ""), []),
        ("/spans sandbox", ("spans", "sandbox"), []),
        ("/find needle", ("find", "needle"), []),
        ("/model", ("model picker", ""), []),
        ("/setup", ("setup", ""), []),
        ("/copy", ("copy", ANSWER), ["Copied the last answer."]),
        ("/copy 2", ("copy", "print(1)"), ["Copied code block 2."]),
        ("/exit", ("exit", ""), []),
        ("/export notes.md", ("export", "notes.md"), ["Exported to notes.md"]),
        ("/trust", ("trust", ""), ["Trusted."]),
    ],
)
async def test_a_front_with_screens_gets_what_was_typed(
    tmp_path: Path, typed: str, asked: tuple[str, str], said: list[str]
) -> None:
    front = RecordingFront()
    shown: list[object] = []
    outcome = await commands.dispatch(context(tmp_path, front, shown), typed)
    assert outcome.known
    assert front.asked == [asked]
    assert [str(s) for s in shown] == said
