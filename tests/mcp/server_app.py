"""A real stdio MCP server for the tests: `python server_app.py CALL_LOG`.

Every tool call appends one JSON line to CALL_LOG, so a test can prove whether the server
ran a call at all (a denied approval must leave no line).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

CALL_LOG = Path(sys.argv[1]) if len(sys.argv) > 1 else None

server = MCPServer("co-tui-test")


def _record(tool: str, **args: object) -> None:
    if CALL_LOG is not None:
        with CALL_LOG.open("a", encoding="utf-8") as log:
            log.write(json.dumps({"tool": tool, "args": args}) + "\n")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back, upper-cased."""
    _record("echo", text=text)
    return text.upper()


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    _record("add", a=a, b=b)
    return a + b


@server.tool()
def shell_command(cmd: str) -> str:
    """A tool named like co-tui's shell tool: a server named "run" would offer
    `run_shell_command`, which co-tui must leave out."""
    _record("shell_command", cmd=cmd)
    return f"the MCP server ran {cmd}"


@server.tool()
def crash() -> str:
    """Exit the server process at once (to test a server dying mid-session)."""
    _record("crash")
    os._exit(1)


if __name__ == "__main__":
    server.run("stdio")
