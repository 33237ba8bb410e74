"""`co-tui -p` against TestModel and a local HTTP server: its command line run in this process
(tests/cli_in_process.py), and as a subprocess where the process itself matters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from co_tui.headless.runner import EXIT_NOT_SAVED
from tests.cli_in_process import Ran, run_co_tui
from tests.servers.fake_openai import error, error_mid_stream, serve, text, tool_call

CLI = [str(Path(sys.executable).parent / "co-tui")]


def run_cli(args: list[str], cwd: Path, **env: str) -> Ran:
    """`co-tui ARGS` in this process (tests/cli_in_process.py)."""
    return run_co_tui(args, cwd, {**os.environ, **env})


def spawn_cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`co-tui ARGS` as a process of its own: what it writes to stderr includes its log
    warnings, which pytest captures in this process."""
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def openai_env(url: str) -> dict[str, str]:
    return {
        "LLM_PROVIDER": "openai",
        "OPENAI_BASE_URL": f"{url}/v1",
        "OPENAI_API_KEY": "sk-test-not-a-secret",
        "CO_TUI_OPENAI_MODEL": "fake",
    }


@pytest.mark.slow
def test_version(tmp_path: Path) -> None:
    proc = run_cli(["--version"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("co-tui ")


@pytest.mark.slow
def test_stream_json_has_explicit_boundaries(tmp_path: Path) -> None:
    proc = run_cli(["-p", "hello", "--model", "test", "--output-format", "stream-json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "turn_start" and kinds[-1] == "turn_end"
    assert "text_start" in kinds and "text_end" in kinds
    assert kinds.index("text_start") < kinds.index("text_delta") < kinds.index("text_end")
    assert len({e["session_id"] for e in events}) == 1


@pytest.mark.slow
def test_json_output_is_one_object_with_text_usage_and_tool_calls(tmp_path: Path) -> None:
    proc = run_cli(["-p", "hello", "--model", "test", "--output-format", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    summary = json.loads(line)
    assert summary["text"] and summary["usage"]["requests"] >= 1
    assert summary["tool_calls"][0]["name"] == "run_shell_command"
    assert summary["denials"][0]["name"] == "run_shell_command"


@pytest.mark.slow
def test_streams_an_openai_compatible_server(tmp_path: Path) -> None:
    with serve([text("The sky is blue.", chunks=4)]) as srv:
        env = {"LLM_PROVIDER": "ollama", "OLLAMA_HOST": srv.url, "OLLAMA_MODEL": "fake"}
        proc = run_cli(["-p", "colour of the sky?"], tmp_path, **env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "The sky is blue."
    assert srv.requests[0].body["stream"] is True


@pytest.mark.slow
def test_429_with_retry_after_then_answer_after_about_a_second(tmp_path: Path) -> None:
    with serve([error(429, "busy", **{"Retry-After": "1"}), text("Paris.")]) as srv:
        env = {"LLM_PROVIDER": "ollama", "OLLAMA_HOST": srv.url, "OLLAMA_MODEL": "fake"}
        started = time.monotonic()
        proc = run_cli(["-p", "capital of France?"], tmp_path, **env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Paris."
    gap = srv.requests[1].at - srv.requests[0].at
    assert 0.9 <= gap < 5, gap
    assert "retry 1 of 2 in 1s" in proc.stderr
    assert time.monotonic() - started >= 1


@pytest.mark.slow
def test_shell_call_is_denied_without_yes_and_the_denial_is_visible(tmp_path: Path) -> None:
    script = [tool_call("run_shell_command", cmd="echo ran > proof.txt"), text("I could not.")]
    with serve(script) as srv:
        proc = run_cli(["-p", "write proof"], tmp_path, **openai_env(srv.url))
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "proof.txt").exists()
    assert "denied run_shell_command" in proc.stderr and "--yes" in proc.stderr
    tool_message = srv.requests[1].body["messages"][-1]
    assert tool_message["role"] == "tool" and "denied" in tool_message["content"]


@pytest.mark.slow
def test_shell_call_runs_with_yes_and_its_output_reaches_the_model(tmp_path: Path) -> None:
    script = [
        tool_call("run_shell_command", cmd="echo ran > proof.txt && echo wrote-it"),
        text("Done."),
    ]
    with serve(script) as srv:
        proc = run_cli(
            ["-p", "write proof", "--yes", "--output-format", "json"],
            tmp_path,
            **openai_env(srv.url),
        )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "proof.txt").read_text() == "ran\n"
    tool_message = srv.requests[1].body["messages"][-1]
    assert tool_message["role"] == "tool" and "wrote-it" in tool_message["content"]
    summary = json.loads(proc.stdout)
    assert summary["text"] == "Done." and summary["tool_calls"][0]["status"] == "ok"


@pytest.mark.slow
def test_a_command_that_exits_non_zero_is_shown_as_failed(tmp_path: Path) -> None:
    script = [tool_call("run_shell_command", cmd="echo partial; exit 3"), text("It failed.")]
    with serve(script) as srv:
        proc = run_cli(["-p", "try it", "--yes"], tmp_path, **openai_env(srv.url))
    assert proc.returncode == 0, proc.stderr
    assert "← run_shell_command [failed]\npartial\n[exit code 3]" in proc.stderr
    assert proc.stdout.strip() == "It failed."
    tool_message = srv.requests[1].body["messages"][-1]  # the model still gets it all
    assert tool_message["role"] == "tool"
    assert "partial" in tool_message["content"] and "exit code 3" in tool_message["content"]


@pytest.mark.slow
def test_abort_exits_non_zero_with_a_message(tmp_path: Path) -> None:
    with serve([error(401, "invalid api key")]) as srv:
        proc = run_cli(["-p", "hi"], tmp_path, **openai_env(srv.url))
    assert proc.returncode == 1
    assert "refused the credentials" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "sk-test-not-a-secret" not in proc.stderr + proc.stdout


@pytest.mark.slow
def test_status_names_provider_model_and_sandbox(tmp_path: Path) -> None:
    proc = run_cli(["status"], tmp_path, LLM_PROVIDER="ollama", OLLAMA_MODEL="llama3")
    assert proc.returncode == 0, proc.stderr
    for expected in ("Provider", "ollama", "llama3", "Sandbox", "isolation", "Data dir"):
        assert expected in proc.stdout, expected


@pytest.mark.slow
def test_status_says_why_there_is_no_sandbox_once(tmp_path: Path) -> None:
    """Both isolating backends refuse the workspace for one reason (as root: it is owned by
    root; as anyone else: it is not writable): the reason is printed once, in the warning."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    if os.geteuid() != 0:
        workspace.chmod(0o555)
    try:
        proc = run_cli(["status"], workspace, CO_TUI_SANDBOX_BACKEND="auto", COLUMNS="400")
    finally:
        workspace.chmod(0o755)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(f"the workspace {workspace} is") == 1, proc.stdout
    lines = proc.stdout.splitlines()
    assert any("warning" in line and "no sandbox" in line for line in lines)
    for backend in ("docker", "bwrap"):
        [row] = [line for line in lines if line.startswith(f"│   {backend} ")]
        assert "the warning above" in row


@pytest.mark.slow
def test_words_of_a_failed_attempt_never_reach_stdout(tmp_path: Path) -> None:
    script = [error_mid_stream("The capital is Ly"), text("The capital is Paris.")]
    with serve(script) as srv:
        proc = run_cli(["-p", "capital of France?"], tmp_path, **openai_env(srv.url))
    assert proc.returncode == 0, proc.stderr
    assert len(srv.requests) == 2  # the first answer was cut short, then retried
    assert proc.stdout == "The capital is Paris.\n"
    assert "the server fell over; retry 1 of 2" in proc.stderr


@pytest.mark.slow
def test_stream_json_says_which_words_were_discarded(tmp_path: Path) -> None:
    script = [error_mid_stream("The capital is Ly"), text("The capital is Paris.")]
    with serve(script) as srv:
        args = ["-p", "capital of France?", "--output-format", "stream-json"]
        proc = run_cli(args, tmp_path, **openai_env(srv.url))
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    [discarded] = [e for e in events if e["type"] == "attempt_discarded"]
    assert discarded["text"] == "The capital is Ly" and "fell over" in discarded["reason"]
    assert kinds.index("attempt_discarded") < kinds.index("response_complete")
    [complete] = [e for e in events if e["type"] == "response_complete"]
    assert complete["content"] == "The capital is Paris."


@pytest.mark.slow
def test_json_text_is_the_final_answer_only(tmp_path: Path) -> None:
    script = [error_mid_stream("The capital is Ly"), text("The capital is Paris.")]
    with serve(script) as srv:
        args = ["-p", "capital of France?", "--output-format", "json"]
        proc = run_cli(args, tmp_path, **openai_env(srv.url))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["text"] == "The capital is Paris."


@pytest.mark.slow
def test_text_mode_prints_no_words_from_before_a_tool_call(tmp_path: Path) -> None:
    script = [tool_call("run_shell_command", cmd="echo hi"), text("It said hi.")]
    with serve(script) as srv:
        proc = run_cli(["-p", "say hi", "--yes"], tmp_path, **openai_env(srv.url))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "It said hi.\n"  # the tool's output went to stderr
    assert "← run_shell_command [ok]\nhi" in proc.stderr


@pytest.mark.e2e
def test_a_turn_that_cannot_be_saved_exits_non_zero_with_the_reason(
    tmp_path: Path, isolated_env: Path
) -> None:
    database = isolated_env / "data" / "co-tui" / "sessions.db"
    database.mkdir(parents=True)  # sqlite cannot open it: every save fails
    with serve([text("Hello."), text("Hello again.")]) as srv:
        proc = run_cli(["-p", "hi"], tmp_path, **openai_env(srv.url))
        as_json = run_cli(["-p", "hi", "--output-format", "json"], tmp_path, **openai_env(srv.url))
    assert proc.returncode == EXIT_NOT_SAVED != 0
    assert proc.stdout == "Hello.\n"  # the answer is still given
    [reason] = [line for line in proc.stderr.splitlines() if line.startswith("co-tui: ")]
    assert "could not save the session" in reason
    assert str(database) in reason and "Is a directory" in reason
    assert as_json.returncode == EXIT_NOT_SAVED
    summary = json.loads(as_json.stdout)
    assert summary["text"] == "Hello again." and "Is a directory" in summary["save_error"]


@pytest.mark.slow
def test_a_chatty_command_sends_a_few_tool_outputs_a_second_and_its_last_lines(
    tmp_path: Path,
) -> None:
    # 10,000 lines in 200 bursts: unthrottled, about one event a burst.
    chatty = (
        "start=$(date +%s%N); i=0; while [ $i -lt 200 ]; do "
        "seq $((i*50+1)) $((i*50+50)) | sed 's/^/line /'; i=$((i+1)); sleep 0.01; done; "
        "echo $(( ($(date +%s%N) - start) / 1000000 )) > took_ms"
    )
    script = [tool_call("run_shell_command", cmd=chatty), text("Counted.")]
    with serve(script) as srv:
        args = ["-p", "count", "--yes", "--output-format", "stream-json"]
        proc = run_cli(args, tmp_path, CO_TUI_SANDBOX_BACKEND="subprocess", **openai_env(srv.url))
    assert proc.returncode == 0, proc.stderr
    took = int((tmp_path / "took_ms").read_text()) / 1000
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    outputs = [e for e in events if e["type"] == "tool_output"]
    assert 1 <= len(outputs) <= took * 10 + 2, f"{len(outputs)} tool_output events in {took}s"
    assert outputs[-1]["lines"][-1] == "line 10000"  # the last lines, always
    last_output = len(kinds) - 1 - kinds[::-1].index("tool_output")
    assert last_output < kinds.index("tool_result")
