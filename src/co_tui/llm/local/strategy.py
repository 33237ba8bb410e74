"""How the embedded model uses tools: decide the next step of a turn, then let it fill in.

Each request with tools gets one of three steps:

- Answer: the model writes text, streamed as it comes, from the conversation (tool calls and
  results in it as plain text: see local_tools). No grammar and no tool list in the prompt,
  so an answer starts as fast as plain chat.
- Decline: a request that would get a tool but that the judge (local_judge) reads as one to
  refuse gets a fixed answer saying so; the model writes nothing.
- Call: one tool, whose arguments the model writes under a grammar (local_args) after the
  conversation and a short prompt naming the tool, its parameters and the closest worked
  example. It becomes an ordinary pydantic-ai ToolCallPart: approvals, read-only
  auto-approval and every rule apply to it as to any other call.

Which step (measured, see local_route): a new message is routed by retrieval (a tool, or
answer); one routed to a tool is declined if the decline judge says so, and answered if the
answer judge reads it as a question about the tool's subject rather than a request to use
it ("what is a Slack thread?"; see local_judge). A call the tool sent back for another try
(outcome "retried": bad arguments) is made again: to a tool the feedback names, else the
same tool, with the feedback in the arguments prompt and its words usable as values. After
any other result (success, failure, denial) the model answers from it. So a small model
makes at most one successful call per message and cannot loop; MAX_TOOL_ROUNDS bounds the
retries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    TextContent,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import ToolDefinition

from co_tui.llm.local.args import (
    arguments_grammar,
    arguments_prompt,
    translation_words,
    value_shapes,
)
from co_tui.llm.local.judge import WordJudge, builtin_answer_judge, builtin_decline_judge
from co_tui.llm.local.route import Router

MAX_TOOL_ROUNDS = 3
EXAMPLES_SHOWN = 1  # measured: 84% of arguments right with one close example, 80% with none


@dataclass(frozen=True)
class Answer:
    """The model answers in text."""


@dataclass(frozen=True)
class Decline:
    """The request is one to refuse: answer with `DECLINED`, run nothing."""


DECLINED = (
    "I won't do that: this request reads as one that could do harm (destroy data, deceive "
    "someone, or expose private data), and the small offline model cannot weigh it more "
    "carefully. If I misread you, put it another way."
)


@dataclass(frozen=True)
class Call:
    """Call `tool`; the model writes its arguments after `prompt`, held to `grammar`."""

    tool: ToolDefinition
    prompt: str
    grammar: str


Step = Answer | Decline | Call


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


def next_step(
    messages: Sequence[ModelMessage],
    tools: Sequence[ToolDefinition],
    router: Router,
    *,
    allow_text: bool = True,
    declines: WordJudge | None = None,
    answers: WordJudge | None = None,
) -> Step:
    """The next step of the turn that `messages` (ending with a request) are in; `declines`
    and `answers` judge a new request that retrieval sends to a tool (default: the built-in
    judges)."""
    turn = _turn(messages)
    by_name = {t.name: t for t in tools}
    if allow_text and turn.rounds >= MAX_TOOL_ROUNDS:
        return Answer()
    feedback = ""
    if turn.retried is not None and turn.retried.tool_name in by_name:
        feedback = _feedback(turn.retried)
        failed = by_name[turn.retried.tool_name]
        tool = _named_in(feedback, tools, besides=failed.name) or failed
    elif turn.new_message or not allow_text:
        route = router.route(turn.request, allow_answer=allow_text)
        if route.tool is None:
            return Answer()
        if allow_text and (declines or builtin_decline_judge()).says_yes(turn.request):
            return Decline()
        if allow_text and (answers or builtin_answer_judge()).says_yes(turn.request):
            return Answer()
        tool = by_name[route.tool]
    else:
        return Answer()
    examples = router.examples_for(tool.name, turn.request, EXAMPLES_SHOWN)
    sources = [turn.request, feedback] if feedback else [turn.request]
    worked = router.examples_of(tool.name)
    shown = {p for e in worked for p in e.args}  # optional ones offered
    vocabulary = translation_words(examples)  # measured: all examples' words invite "ls -l"
    shapes = value_shapes(tool, worked)
    grammar = arguments_grammar(tool, sources, vocabulary, optional=shown, shapes=shapes)
    prompt = arguments_prompt(tool, examples, turn.request, feedback, optional=shown)
    return Call(tool, prompt, grammar)
