"""How the embedded model uses tools: the model chooses, retrieval only shortlists.

For a new request, retrieval (local_shortlist) ranks the tools by what they say of
themselves and keeps the best few. Then, with `local_tool_choice`:

- "model" (the default): the model picks one of the shortlist, "answer" (reply in words) or
  "decline" (refuse) under a schema that allows nothing else (Choose). A picked tool's
  arguments are written by the model under the tool's own JSON schema (Call). With no
  candidate at all the model answers.
- "retrieval": the first candidate is called when it scores well enough, else the model
  answers: what the eval reports as retrieval alone.
- "random": a seeded random pick among the shortlist and "answer": the floor the other two
  must beat.

Declining is the model's choice, or its own answer (the prompt asks it to decline harmful
requests); approvals remain the safety net for whatever it calls. A call the tool sent back
for another try (outcome "retried": bad arguments) is made again, to a tool the feedback
names, else the same tool, with the feedback in the arguments prompt. After any other result
(success, failure, denial) the model answers from it, so a small model makes at most one
successful call per message and cannot loop; MAX_TOOL_ROUNDS bounds the retries.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    TextContent,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import ToolDefinition

from co_tui.llm.local.arguments import arguments_prompt, arguments_schema, summary
from co_tui.llm.local.shortlist import Shortlister

MAX_TOOL_ROUNDS = 3
ToolChoice = Literal["model", "retrieval", "random"]
ANSWER, DECLINE = "answer", "decline"


@dataclass(frozen=True)
class Answer:
    """The model answers in text."""


@dataclass(frozen=True)
class Decline:
    """The model chose to refuse: answer with `DECLINED`, run nothing."""


DECLINED = (
    "I won't help with that: it could harm someone, deceive people or expose private data. "
    "If I misread you, say more about what you need."
)


@dataclass(frozen=True)
class Call:
    """Call `tool`; the model writes its arguments after `prompt`, held to `schema`."""

    tool: ToolDefinition
    prompt: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class Choose:
    """The model picks one of `options` (tool names, "answer", "decline") after `prompt`."""

    request: str
    tools: tuple[ToolDefinition, ...]
    can_answer: bool = True  # False when the turn must end in a tool call

    @property
    def options(self) -> list[str]:
        words = [ANSWER, DECLINE] if self.can_answer else []
        return [*words, *(t.name for t in self.tools)]

    @property
    def prompt(self) -> str:
        lines = [f"My request: {self.request}", "", "How will you handle it? The options:"]
        if self.can_answer:
            lines += [
                f"- {ANSWER}: reply in words, without a tool",
                f"- {DECLINE}: refuse, because doing it could harm someone, deceive people "
                "or expose private data",
            ]
        lines += [f"- {t.name}: {summary(t)}" for t in self.tools]
        lines.append("Reply with the name of one option.")
        return "\n".join(lines)

    @property
    def schema(self) -> dict[str, Any]:
        return {"enum": self.options}

    def picked(self, option: str) -> Answer | Decline | Call:
        """The step `option` (what the model wrote) stands for; anything else answers."""
        for tool in self.tools:
            if tool.name == option:
                return call(tool, self.request)
        return Decline() if option == DECLINE else Answer()


Step = Answer | Decline | Call | Choose


@dataclass(frozen=True)
class _Turn:
    request: str  # what the user asked in this turn
    new_message: bool  # the last request is the user's (not a tool result)
    retried: ToolReturnPart | RetryPromptPart | None  # a call sent back for another try
    rounds: int  # tool results since the user's message


def _text(part: UserPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    texts = [
        item if isinstance(item, str) else item.content
        for item in part.content
        if isinstance(item, str | TextContent)
    ]
    return "\n\n".join(texts)


def _turn(messages: Sequence[ModelMessage]) -> _Turn:
    request, rounds, retried = "", 0, None
    last = messages[-1] if messages else None
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        prompts = [_text(p) for p in message.parts if isinstance(p, UserPromptPart)]
        if prompts:
            request = "\n".join(prompts)
            break
        returns = [p for p in message.parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
        if returns:
            rounds += 1
        if message is last:
            retried = next((p for p in returns if _sent_back(p)), None)
    new_message = isinstance(last, ModelRequest) and any(
        isinstance(p, UserPromptPart) for p in last.parts
    )
    return _Turn(request, new_message, retried, rounds)


def _sent_back(part: ToolReturnPart | RetryPromptPart) -> bool:
    return isinstance(part, RetryPromptPart) or part.outcome == "retried"


def _feedback(part: ToolReturnPart | RetryPromptPart) -> str:
    if isinstance(part, RetryPromptPart):
        return part.model_response()
    return part.model_response_str(wrap_if_error=False)


def _named_in(text: str, tools: Sequence[ToolDefinition], besides: str) -> ToolDefinition | None:
    """The one other tool `text` names ("call search_drive first"); None for none or several
    (a list of choices names tools without asking for one)."""
    named = [t for t in tools if t.name != besides and re.search(rf"\b{re.escape(t.name)}\b", text)]
    return named[0] if len(named) == 1 else None


def call(tool: ToolDefinition, request: str, feedback: str = "") -> Call:
    return Call(tool, arguments_prompt(tool, request, feedback), arguments_schema(tool))


def next_step(
    messages: Sequence[ModelMessage],
    tools: Sequence[ToolDefinition],
    shortlister: Shortlister,
    *,
    allow_text: bool = True,
    choice: ToolChoice = "model",
) -> Step:
    """The next step of the turn that `messages` (ending with a request) are in."""
    turn = _turn(messages)
    by_name = {t.name: t for t in tools}
    if allow_text and turn.rounds >= MAX_TOOL_ROUNDS:
        return Answer()
    if turn.retried is not None and turn.retried.tool_name in by_name:
        feedback = _feedback(turn.retried)
        failed = by_name[turn.retried.tool_name]
        tool = _named_in(feedback, tools, besides=failed.name) or failed
        return call(tool, turn.request, feedback)
    if not (turn.new_message or not allow_text):
        return Answer()
    candidates = [c.tool for c in shortlister.shortlist(turn.request)]
    if not allow_text:  # a tool must be called: the model's pick among tools only
        candidates = candidates or list(tools)
    if choice == "retrieval":
        first = shortlister.first(turn.request) or (None if allow_text else candidates[0])
        return Answer() if first is None else call(first, turn.request)
    if choice == "random":
        options: list[ToolDefinition | None] = [*candidates, *([None] if allow_text else [])]
        picked = random.Random(turn.request).choice(options) if options else None
        return Answer() if picked is None else call(picked, turn.request)
    if not candidates:
        return Answer()
    if not allow_text and len(candidates) == 1:
        return call(candidates[0], turn.request)
    return Choose(turn.request, tuple(candidates), can_answer=allow_text)
