"""Scripted models and ready-made deps for tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
from pydantic_ai import ToolReturn
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel

from co_tui.agent.build import AgentBundle, build_agent
from co_tui.config.settings import Settings
from co_tui.config.trust.project_files import ProjectView
from co_tui.context.deps import CoDeps, create_deps
from co_tui.context.summaries import is_summary
from co_tui.protocol.tool_display import ToolDisplay
from co_tui.sandbox import SandboxChoice, SubprocessSandbox


@dataclass(frozen=True)
class Think:
    text: str


@dataclass(frozen=True)
class Call:
    name: str
    args: dict[str, Any]
    id: str


Item = str | Think | Call


class ScriptedModel:
    """Answers each model request with the next scripted response (a list of items).
    Records every message list it was given. When the script runs out it says 'done'."""

    def __init__(self, *responses: Sequence[Item]) -> None:
        self.responses = [list(r) for r in responses]
        self.seen: list[list[ModelMessage]] = []
        self.model = FunctionModel(stream_function=self._stream)

    async def _stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | dict[int, Any]]:
        self.seen.append(list(messages))
        items = self.responses.pop(0) if self.responses else ["done"]
        for index, item in enumerate(items):
            if isinstance(item, Think):
                yield {index: DeltaThinkingPart(content=item.text)}
            elif isinstance(item, Call):
                yield {
                    index: DeltaToolCall(
                        name=item.name, json_args=json.dumps(item.args), tool_call_id=item.id
                    )
                }
            else:
                yield item


def tool_returns(messages: Sequence[ModelMessage]) -> list[ToolReturnPart]:
    return [
        p
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]


def model_view(returned: ToolReturn) -> Any:
    """What a tool's return hands the model. When it carries a `ToolDisplay` (what the user
    sees), the model's copy of the text is that display's, and its `error` flag agrees."""
    assert isinstance(returned, ToolReturn), returned
    value = returned.return_value
    display = returned.metadata
    if display is not None:
        assert isinstance(display, ToolDisplay), display
        assert isinstance(value, dict) and value["display"] == display.text, value
        assert (value.get("error") is True) == display.error, value
    return value


def prompt_text(part: UserPromptPart) -> str:
    """A prompt as the model reads it: the typed text, then each attached file's block."""
    if isinstance(part.content, str):
        return part.content
    pieces = [
        item if isinstance(item, str) else getattr(item, "content", "") for item in part.content
    ]
    return "\n\n".join(str(piece) for piece in pieces)


def user_prompts(messages: Sequence[ModelMessage]) -> list[str]:
    """What the user sent, in order, attachments included (a summary of earlier turns is
    not a prompt)."""
    return [
        prompt_text(p)
        for m in messages
        if isinstance(m, ModelRequest) and not is_summary(m)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]


def make_bundle(model: Any, settings: Settings | None = None) -> AgentBundle:
    return build_agent(settings or Settings(), model=model)


def make_deps(
    workspace: Path,
    settings: Settings | None = None,
    isolation: str | None = None,
    *,
    project: ProjectView | None = None,
) -> CoDeps:
    """Deps on the subprocess sandbox. `isolation` pretends another level (for approval
    policy tests only; commands still run in the workspace). `project`: the project's files
    as read for trust (None: no project files at all)."""
    sandbox = SubprocessSandbox(workspace)
    if isolation is not None:
        sandbox.isolation_level = isolation  # type: ignore[assignment]
    choice = SandboxChoice(sandbox, "test")
    return create_deps(settings or Settings(), workspace, sandbox_choice=choice, project=project)


def engine_unavailable(reason: str) -> NoReturn:
    """A test tier's engine (Docker, bubblewrap, the local model, Chromium) is missing: skip
    locally with the reason; fail under CI (CO_TUI_CI=1), so CI never goes green by skipping."""
    if os.environ.get("CO_TUI_CI") == "1":
        pytest.fail(f"CO_TUI_CI=1 and {reason}", pytrace=False)
    pytest.skip(reason)


def _live_processes_in(folder: Path) -> Iterator[tuple[int, str]]:
    """(pid, command line) of live processes whose working directory is in `folder`."""
    for entry in Path("/proc").iterdir():
        try:
            cwd = Path(os.readlink(entry / "cwd"))
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):  # not a process, or gone meanwhile
            continue
        if state != "Z" and cwd.is_relative_to(folder):
            yield int(entry.name), cmdline.replace(b"\0", b" ").decode(errors="replace").strip()


def processes_in(folder: Path) -> list[str]:
    """The command lines of live processes whose working directory is in `folder` (Linux):
    a command run in a workspace, and whatever it started, works there."""
    return [cmdline for _pid, cmdline in _live_processes_in(folder)]


def kill_processes_in(folder: Path) -> None:
    """End what a SIGKILLed co-tui left running in `folder` (it could not stop it)."""
    for pid, _cmdline in _live_processes_in(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


def wait_for(
    condition: Callable[[], object],
    what: str,
    proc: subprocess.Popen[Any] | None = None,
    timeout: float = 60,
) -> None:
    """Poll until `condition()` holds; fail naming `what` when time runs out or `proc`
    (a co-tui process the condition depends on) exits first."""
    deadline = time.monotonic() + timeout
    while not condition():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"co-tui exited ({proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:g}s waiting for {what}")
        time.sleep(0.02)


def run_python(
    code: str, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> list[str]:
    """Run `code` in a fresh interpreter (what it imports is its own); its stdout lines."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()
