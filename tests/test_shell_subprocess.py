"""run_shell_command over the subprocess backend: workspace, scrubbed env, timeouts, caps."""

from __future__ import annotations

import os
import time
from pathlib import Path

from co_tui.sandbox import SubprocessSandbox


async def test_runs_in_the_workspace_and_reports_the_exit_code(tmp_path: Path) -> None:
    sandbox = SubprocessSandbox(tmp_path)
    result = await sandbox.run_command("pwd; exit 4")
    assert result.output.strip() == str(tmp_path)
    assert result.exit_code == 4
    assert "exit code 4" in result.for_model(10)


async def test_secrets_in_the_environment_do_not_reach_the_command(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-secret-value")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-secret")
    result = await SubprocessSandbox(tmp_path).run_command("env")
    assert "secret-value" not in result.output and "xoxb" not in result.output
    assert "PATH=" in result.output


async def test_timeout_kills_the_whole_process_tree(tmp_path: Path) -> None:
    sandbox = SubprocessSandbox(tmp_path)
    started = time.monotonic()
    result = await sandbox.run_command(
        "(sleep 30; touch late) & echo $! > child.pid; sleep 30", timeout=1
    )
    assert time.monotonic() - started < 10
    assert result.timed_out
    assert "timed out after 1s" in result.for_model(1)
    child = int((tmp_path / "child.pid").read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{child}").exists() or _is_zombie(child)
    assert not (tmp_path / "late").exists()


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


async def test_huge_and_binary_output_is_capped_not_crashing(tmp_path: Path) -> None:
    sandbox = SubprocessSandbox(tmp_path, output_limit=10_000)
    result = await sandbox.run_command("head -c 50000000 /dev/zero; printf '\\377\\376 done'")
    assert result.truncated and result.exit_code == 0
    assert len(result.output) < 20_000
    assert "more bytes not shown" in result.output
    text = (await sandbox.run_command("printf 'caf\\351 \\000 ok'")).output
    assert "caf\ufffd" in text and "ok" in text


async def test_background_children_do_not_outlive_the_command(tmp_path: Path) -> None:
    result = await SubprocessSandbox(tmp_path).run_command("sleep 30 & echo $!")
    pid = int(result.output.strip())
    time.sleep(0.2)
    assert not Path(f"/proc/{pid}").exists() or _is_zombie(pid)
    assert os.getpgid(os.getpid()) != pid
