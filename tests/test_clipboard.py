"""Copying: OSC 52 plus a local clipboard tool (a fake `xclip` on PATH records what it got)."""

from __future__ import annotations

import base64
import stat
from pathlib import Path
from typing import Any

import pytest

from co_tui.tui.terminal.clipboard import copy_locally
from tests.tui.helpers import SIZE, make_app, settle, text_stream, wait_until


def fake_tool(folder: Path, name: str, *, exit_code: int = 0) -> Path:
    """A `name` script on `folder` that writes its arguments and stdin to name.got."""
    got = folder / f"{name}.got"
    script = folder / name
    script.write_text(
        f'#!/bin/sh\necho "$@" > "{got}"\ncat >> "{got}"\nexit {exit_code}\n', encoding="utf-8"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return got


def env_with(folder: Path, **extra: str) -> dict[str, str]:
    return {"PATH": f"{folder}:/usr/bin:/bin", **extra}  # the scripts need `cat`


def test_xclip_gets_the_text_when_a_display_is_set(tmp_path: Path) -> None:
    got = fake_tool(tmp_path, "xclip")
    outcome = copy_locally("héllo\nworld", env_with(tmp_path, DISPLAY=":0"))
    assert got.read_text(encoding="utf-8") == "-selection clipboard\nhéllo\nworld"
    assert outcome.message("the selection") == "Copied the selection (xclip + OSC 52)"


def test_wayland_prefers_wl_copy(tmp_path: Path) -> None:
    fake_tool(tmp_path, "xclip")
    got = fake_tool(tmp_path, "wl-copy")
    env = env_with(tmp_path, DISPLAY=":0", WAYLAND_DISPLAY="wayland-0")
    assert copy_locally("x", env).message() == "Copied (wl-copy + OSC 52)"
    assert got.read_text(encoding="utf-8").endswith("x")


def test_no_display_no_tool_says_osc52_only(tmp_path: Path) -> None:
    got = fake_tool(tmp_path, "xclip")
    outcome = copy_locally("x", env_with(tmp_path))  # no DISPLAY: xclip cannot work
    assert outcome.message() == "Copied via OSC 52 (your terminal must allow it)"
    assert not got.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert copy_locally("x", {"PATH": str(empty), "DISPLAY": ":0"}).tool is None


def test_a_failing_tool_is_reported(tmp_path: Path) -> None:
    fake_tool(tmp_path, "xsel", exit_code=1)
    outcome = copy_locally("x", env_with(tmp_path, DISPLAY=":0"))
    assert outcome.failed
    assert "xsel failed (exit status 1)" in outcome.message()
    assert "OSC 52 only" in outcome.message()


async def test_ctrl_o_copies_through_osc52_and_xclip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    got = fake_tool(bin_dir, "xclip")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = make_app(text_stream("the answer"), tmp_path)
    written: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        driver: Any = app._driver  # Textual's headless driver writes nowhere: record it
        driver.write = written.append
        app.chat.prompt.text = "hi"
        await pilot.press("enter")
        await settle(pilot, app)
        await pilot.press("ctrl+o")

        def told() -> bool:
            return any("xclip + OSC 52" in str(n.message) for n in app._notifications)

        await wait_until(pilot, told, "the toast saying how the answer was copied")
    assert got.read_text(encoding="utf-8").endswith("the answer")
    osc52 = f"\x1b]52;c;{base64.b64encode(b'the answer').decode()}\a"
    assert osc52 in written
    assert any("Copied the last answer" in str(n.message) for n in app._notifications)
