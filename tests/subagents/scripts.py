"""A FunctionModel that plays a parent which delegates twice in one response, and both
sub-agents. Requests are told apart by their first user prompt."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from tests.helpers import tool_returns

TASK_A = "find the alpha facts"
TASK_B = "find the beta facts"
ANSWER_A = "ALPHA-REPORT"
ANSWER_B = "BETA-REPORT"
PARENT_PROMPT = "research alpha and beta"


def first_prompt(messages: list[ModelMessage]) -> str:
    for m in messages:
        if isinstance(m, ModelRequest):
            for p in m.parts:
                if isinstance(p, UserPromptPart):
                    return str(p.content)
    return ""


@dataclass
class DelegatingScript:
    """`block=True`: the sub-agents never finish (for cancellation tests)."""

    block: bool = False
    started: set[str] = field(default_factory=set)
    both_started: asyncio.Event = field(default_factory=asyncio.Event)
    active: int = 0  # sub-agent streams running right now
    blocked: int = 0  # sub-agent streams that reached the never-ending wait
    cancelled: int = 0  # sub-agent streams stopped before their answer
    parent_requests: int = 0

    def model(self) -> FunctionModel:
        return FunctionModel(stream_function=self.stream, model_name="scripted")

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | dict[int, Any]]:
        prompt = first_prompt(messages)
        if prompt in (TASK_A, TASK_B):
            async for item in self._child(prompt, messages):
                yield item
            return
        self.parent_requests += 1
        done = tool_returns(messages)
        if not done:
            yield "Let me ask two helpers. "
            for i, task in enumerate((TASK_A, TASK_B)):
                args = {"task": task, "tools": ["list_memories"] if task == TASK_A else []}
                yield {
                    i + 1: DeltaToolCall(
                        name="delegate", json_args=json.dumps(args), tool_call_id=f"del-{i}"
                    )
                }
            return
        answers = " + ".join(str(r.content.get("answer", "?")) for r in done)  # type: ignore[union-attr]
        yield f"Combined: {answers}"

    async def _child(
        self, task: str, messages: list[ModelMessage]
    ) -> AsyncIterator[str | dict[int, Any]]:
        self.active += 1
        try:
            self.started.add(task)
            if len(self.started) == 2:
                self.both_started.set()
            if task == TASK_A and not tool_returns(messages):
                yield {0: DeltaToolCall(name="list_memories", json_args="{}", tool_call_id="lm-a")}
                return
            yield "child thinking aloud: "
            # Neither child finishes before both have started: their events interleave.
            await self.both_started.wait()
            if self.block:
                self.blocked += 1
                await asyncio.Event().wait()
            yield ANSWER_A if task == TASK_A else ANSWER_B
        except BaseException:  # CancelledError, or GeneratorExit when the stream is closed
            self.cancelled += 1
            raise
        finally:
            self.active -= 1
