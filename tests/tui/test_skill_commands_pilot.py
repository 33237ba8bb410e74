"""Skills as slash commands in the app: `/name request` sends a turn carrying the skill's
instructions, Tab and the hint know them, a built-in keeps its name, and an untrusted
project's skill is no command."""

from __future__ import annotations

from pathlib import Path

from co_tui.config.paths import user_config_dir
from co_tui.tui.widgets.user_message import UserMessage
from tests.skills.test_skills import skill_md, write_skill
from tests.tui.helpers import make_app, settle
from tests.tui.test_commands_pilot import TALL, recording_stream, screen_text, submit

BODY = "MYSKILL-STEPS: answer as a numbered list."


async def test_a_skill_runs_as_a_command_with_its_instructions(tmp_path: Path) -> None:
    write_skill(user_config_dir() / "skills", "myskill", skill_md("myskill", "list it", BODY))
    seen: list[list[str]] = []
    app = make_app(recording_stream(seen), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await app.wait_ready()
        await settle(pilot, app)
        app.chat.prompt.text = "/mysk"
        app.chat.prompt.move_cursor(app.chat.prompt.document.end)
        await pilot.pause()
        assert "/myskill [request]  skill: list it" in str(app.chat.hint.render())
        await pilot.press("tab")
        assert app.chat.prompt.text == "/myskill "
        await submit(pilot, app, "/myskill do x")
        sent = seen[-1][-1]
        assert BODY in sent
        assert "Use the skill `myskill` for this request: do x" in sent
        assert any(m.text == "/myskill do x" for m in app.query(UserMessage))
        assert BODY not in screen_text(app)  # the transcript shows what was typed
        await submit(pilot, app, "/skills")
        assert "run it: /myskill [request]" in screen_text(app)


async def test_a_built_in_keeps_its_name_over_a_skill(tmp_path: Path) -> None:
    write_skill(user_config_dir() / "skills", "help", skill_md("help", "not the help", BODY))
    seen: list[list[str]] = []
    app = make_app(recording_stream(seen), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await app.wait_ready()
        await settle(pilot, app)
        assert "help" not in app.chat.custom_commands
        await submit(pilot, app, "/help")
        assert "Keys" in screen_text(app) and not seen  # the built-in ran, no turn
        await submit(pilot, app, "/skills")
        assert "/help is a built-in command" in screen_text(app)


async def test_an_untrusted_projects_skill_is_no_command(tmp_path: Path) -> None:
    write_skill(tmp_path / ".co-tui" / "skills", "deploy-all", skill_md("deploy-all", "x", BODY))
    seen: list[list[str]] = []
    app = make_app(recording_stream(seen), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        await app.wait_ready()
        await settle(pilot, app)
        assert "deploy-all" not in app.chat.custom_commands
        await submit(pilot, app, "/deploy-all now")
        assert seen[-1][-1] == "/deploy-all now"  # a prompt like any other, no instructions
