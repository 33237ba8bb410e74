"""`co-tui -p` with MCP servers in the (trusted) project settings: the working server's tool
is called in the turn, the broken one (and a tool named like a built-in) is reported on
stderr, the answer still arrives."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.cli_in_process import run_co_tui
from tests.servers.fake_openai import serve, text, tool_call

SERVER_APP = Path(__file__).with_name("server_app.py")


@pytest.mark.e2e
def test_headless_turn_uses_mcp_tools_and_reports_broken_servers(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    settings = {
        "mcp_servers": {
            "demo": {
                "command": sys.executable,
                "args": [str(SERVER_APP), str(log)],
                "approval": "never",
            },
            "broken": {"command": "/nonexistent/mcp-server"},
            # offers shell_command: run_shell_command is the built-in's name, so it is left out
            "run": {
                "command": sys.executable,
                "args": [str(SERVER_APP), str(log)],
                "approval": "never",
            },
        }
    }
    (tmp_path / ".co-tui").mkdir()
    (tmp_path / ".co-tui" / "settings.json").write_text(json.dumps(settings))
    env = {
        **os.environ,
        "LLM_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-test-not-a-secret",
        "CO_TUI_OPENAI_MODEL": "fake",
    }
    with serve([tool_call("demo_echo", text="from headless"), text("Echoed.")]) as srv:
        env["OPENAI_BASE_URL"] = f"{srv.url}/v1"
        proc = run_co_tui(
            ["-p", "echo it", "--output-format", "json", "--trust-project"], tmp_path, env
        )
    assert proc.returncode == 0, proc.stderr
    assert "MCP server 'broken'" in proc.stderr and "/nonexistent/mcp-server" in proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["text"] == "Echoed."
    assert [c["name"] for c in summary["tool_calls"]] == ["demo_echo"]
    tool_names = [t["function"]["name"] for t in srv.requests[0].body["tools"]]
    assert "demo_echo" in tool_names and "demo_add" in tool_names
    assert not any(name.startswith("broken_") for name in tool_names)
    assert "MCP server 'run': its tool 'shell_command' is left out" in proc.stderr
    assert tool_names.count("run_shell_command") == 1 and "run_echo" in tool_names
    tool_message = srv.requests[1].body["messages"][-1]
    assert tool_message["role"] == "tool"
    # An MCP server's result reaches the model fenced as untrusted data (the egress guard).
    fenced = '<untrusted source="mcp:demo demo_echo">\nFROM HEADLESS\n</untrusted>'
    assert tool_message["content"] == fenced
    assert json.loads(log.read_text()) == {"tool": "echo", "args": {"text": "from headless"}}
