"""The welcome's example prompts on the embedded model are ones it handles: with the app's own
tools and the default tool choice for SmolLM2 (retrieval), none of them is routed to a tool,
so each gets an answer, not an approval for a call nobody asked for."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic_ai.messages import ModelRequest, UserPromptPart

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.evals.runner import tool_definitions
from co_tui.llm.local.provider import DEFAULT_MODEL_FILE, tool_choice
from co_tui.llm.local.shortlist import Shortlister
from co_tui.llm.local.strategy import Answer, next_step
from co_tui.tui.widgets.welcome import LOCAL_EXAMPLE_PROMPTS


async def test_each_local_example_prompt_is_answered_without_a_tool(tmp_path: Path) -> None:
    settings = Settings(sandbox_backend="subprocess")
    bundle = build_agent(settings)
    tools = list((await tool_definitions(bundle.agent, create_deps(settings, tmp_path))).values())
    names = {t.name for t in tools}  # a new user's tool set: nothing else is configured
    assert {"run_shell_command", "save_memory", "web_fetch"} <= names
    choice = tool_choice(settings, Path(DEFAULT_MODEL_FILE))
    assert choice == "retrieval"
    shortlister = Shortlister(tools)
    prompts = [p for p in LOCAL_EXAMPLE_PROMPTS if not p.startswith("!")]
    assert prompts
    for prompt in prompts:
        messages = [ModelRequest(parts=[UserPromptPart(prompt)])]
        step = next_step(messages, tools, shortlister, allow_text=True, choice=choice)
        assert isinstance(step, Answer), (prompt, step)


def test_no_local_example_prompt_is_an_eval_case() -> None:
    """The examples were tried in the app, not taken from the eval sets they would inflate."""
    root = Path(__file__).resolve().parents[2] / "evals"
    cases = [
        json.loads(line)
        for path in root.rglob("*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    prompts = {" ".join(c["prompt"].lower().split()) for c in cases if c.get("prompt")}
    assert len(prompts) > 100
    for example in LOCAL_EXAMPLE_PROMPTS:
        assert " ".join(example.lower().split()) not in prompts, example
