"""P7: prompt size per request over a long conversation, against a configured budget.

200 scripted turns of one ChatSession with the real history processors: each turn the model
calls a tool that returns 8,000 characters, then answers in ~600 characters. A FunctionModel
records every message list it is sent; the summariser is a FunctionModel too.

Budget (tokens, ~4 characters a token), from the settings alone:
    budget = (max_history_messages + 1) * tool_output_trim_chars / 4  +  current turn
i.e. every kept message as large as a trimmed tool output, plus the summary, plus what the
current turn itself carries untrimmed (its prompt, tool call and tool output). Goal: the
largest request after turn 20 <= 1x the budget. Also printed: what the same request would
cost with no history processors.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import (
    AgentInfo,
    DeltaToolCall,
    FunctionModel,
)

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.context.summaries import approx_tokens, current_turn_start
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.session.chat import ChatSession

TURNS = 200
TOOL_OUTPUT = ("log line with some detail " * 4 + "\n") * 76  # ~8,000 characters
ANSWER = "Here is what the log shows. " * 22  # ~600 characters
WARMUP = 20


class Recorder:
    def __init__(self) -> None:
        self.requests: list[list[ModelMessage]] = []
        self.turn = 0

    async def stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        self.requests.append(list(messages))
        last = messages[-1]
        if any(getattr(p, "part_kind", "") == "tool-return" for p in last.parts):
            yield ANSWER
            return
        args = json.dumps({"name": f"service-{self.turn}"})
        yield {0: DeltaToolCall(name="read_log", json_args=args, tool_call_id=f"c{self.turn}")}


def summarise(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart(content="Summary: the user reviewed logs. " * 20)])


async def run(settings: Settings) -> tuple[Recorder, list[ModelMessage]]:
    rec = Recorder()
    bundle = build_agent(
        settings,
        model=FunctionModel(stream_function=rec.stream),
        instructions="You read logs.",
        summarizer=FunctionModel(function=summarise),
    )

    @bundle.agent.tool_plain
    def read_log(name: str) -> str:
        """Read a service's log."""
        return TOOL_OUTPUT

    with tempfile.TemporaryDirectory() as tmp:
        choice = SandboxChoice(SubprocessSandbox(Path(tmp)), "bench")
        deps = create_deps(settings, Path(tmp), sandbox_choice=choice)
        session = ChatSession(settings, record=False, bundle=bundle, deps=deps)
        session.build()
        for n in range(TURNS):
            rec.turn = n
            prompt = f"Turn {n}: what does the log of service-{n} say? " + "Be thorough. " * 10
            result = await session.run(prompt)
            assert result.ok, result.error
        await session.aclose()
    return rec, session.history


def main() -> None:
    settings = Settings()
    rec, history = asyncio.run(run(settings))
    late = rec.requests[WARMUP * 2 :]
    sizes = [approx_tokens(m) for m in late]
    current = max(approx_tokens(m[current_turn_start(m) :]) for m in late)
    budget = (settings.max_history_messages + 1) * settings.tool_output_trim_chars // 4 + current
    worst = max(sizes)
    # Without processors every turn would stay whole: its first request plus the answer.
    unbounded = (approx_tokens(rec.requests[1]) + len(ANSWER) // 4) * TURNS
    print(
        f"P7 prompt tokens per request after {TURNS} turns: largest {worst:,}, mean "
        f"{sum(sizes) // len(sizes):,}, messages <= {max(len(m) for m in late)}; budget "
        f"{budget:,} (max_history_messages={settings.max_history_messages}, "
        f"tool_output_trim_chars={settings.tool_output_trim_chars}); ratio "
        f"{worst / budget:.2f}x (goal <= 1x)"
    )
    print(
        f"P7 without history processors the last request would be ~{unbounded:,} tokens "
        f"({unbounded / budget:.1f}x the budget); stored history now {len(history)} messages"
    )


if __name__ == "__main__":
    main()
