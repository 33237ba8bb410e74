"""What counts as a slash command, the hint under the prompt, usage lines, the palette's
ranking and /compact's honest report (the app-level behaviour: tests/tui/test_commands_pilot.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from co_tui.context.compaction import Compaction
from co_tui.context.window import CompactResult
from co_tui.session import commands
from co_tui.session.commands.custom import CustomCommand
from co_tui.tui.palette import ranked

REVIEW = CustomCommand("review", "review a file", "Review $ARGUMENTS.", Path("r.md"), "user")


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("/help", True),
        ("/yolo maybe", True),
        ("/hepl", True),  # a typo: answered with a suggestion
        ("/", True),
        ("/etc/hosts — what is in this file?", False),
        ("/etc/hosts", False),
        ("/README.md explain", False),
        ("/whatever is this", False),
        ("/review src/x.py", False),  # not loaded here
        ("hello /help", False),
    ],
)
def test_what_is_a_command(text: str, command: bool) -> None:
    assert commands.is_command(text) is command


def test_a_custom_command_is_a_command() -> None:
    assert commands.is_command("/review src/x.py", {"review": REVIEW})


def test_hint_for_a_typed_command_is_its_usage() -> None:
    assert (
        commands.hint_for("/yolo ")
        == "/yolo [on|off]  toggle approving every tool call without asking"
    )
    assert commands.hint_for("/forget 3") == "/forget <id>  delete a saved memory by its id"
    assert commands.hint_for("/fo") == "/forget <id>  delete a saved memory by its id"
    several = commands.hint_for("/c")
    assert several is not None and "/clear" in several and "/copy" in several
    assert commands.hint_for("/etc/hosts") is None
    assert commands.hint_for("hello") is None
    assert commands.hint_for("/rev", {"review": REVIEW}) == "/review [arguments]  review a file"


def test_every_command_declares_whether_it_takes_arguments() -> None:
    for command in commands.COMMANDS.values():
        assert command.usage_line.startswith(f"/{command.name}")
        assert command.takes_argument == (command.usage != "")


def test_parse_splits_the_name_from_its_arguments() -> None:
    assert commands.parse("/Model  qwen3:8b ") == ("model", "qwen3:8b")
    assert commands.parse("/review\nthis file") == ("review", "this file")


def test_the_palette_ranks_a_name_match_above_a_description_match() -> None:
    assert ranked(0.01, 0.0) > ranked(0.0, 1.0)
    assert ranked(0.0, 0.0) == 0


def test_compaction_that_saves_nothing_says_so() -> None:
    compaction = Compaction(4, (), "compact")
    grew = CompactResult(compaction, 4, 34, 37)
    assert not grew.recorded
    assert "already short" in grew.describe() and "saved" not in grew.describe()
    shrank = CompactResult(compaction, 4, 3400, 370)
    assert shrank.recorded and "3,030 saved" in shrank.describe()


async def test_an_openai_compatible_server_lists_its_models() -> None:
    from pydantic import SecretStr

    from co_tui.config.settings import Settings
    from co_tui.llm.model_list import ModelListUnavailable, list_models
    from tests.servers.models_fake import ModelsServer

    server = ModelsServer(["b-model", "a-model"]).start()
    try:
        settings = Settings(openai_base_url=f"{server.url}/v1", openai_api_key=SecretStr("k-1"))
        assert await list_models(settings, "openai") == ["a-model", "b-model"]
        assert server.requests_to("/v1/models")[0].headers["authorization"] == "Bearer k-1"
        server.fail("/v1/models", 500, {"error": "down"})
        with pytest.raises(ModelListUnavailable, match="answered 500"):
            await list_models(settings, "openai")
    finally:
        server.stop()
    with pytest.raises(ModelListUnavailable, match="local_model_path"):
        await list_models(Settings(), "local")
