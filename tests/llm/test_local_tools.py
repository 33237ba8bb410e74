"""The history as plain chat for the local model, and the model file checks: no server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from co_tui.config.settings import Settings
from co_tui.llm import ProviderError
from co_tui.llm.local import provider as local
from co_tui.llm.local import tools as local_tools


def test_history_becomes_plain_chat() -> None:
    """A call and its result reach the model as one message naming the call, with no call
    text of "its own" for a small model to imitate; its answers stay as they were."""
    call = ToolCallPart("run_shell_command", {"cmd": "ls"}, "c1")
    history = [
        ModelRequest(parts=[UserPromptPart("list files")], instructions="Be terse."),
        ModelResponse(parts=[call]),
        ModelRequest(parts=[ToolReturnPart("run_shell_command", "a.txt\nb.txt", "c1")]),
        ModelResponse(parts=[TextPart("a.txt and b.txt")]),
    ]
    out = local_tools.to_text_history(history)

    first, result, answer = out
    assert isinstance(first, ModelRequest) and first.instructions == "Be terse."
    assert [type(p) for p in first.parts] == [UserPromptPart]  # no tool list in the prompt
    assert isinstance(result, ModelRequest)
    (text,) = result.parts
    assert isinstance(text, UserPromptPart)
    assert text.content == (
        'Output of run_shell_command {"cmd": "ls"}:\n```\na.txt\nb.txt\n```\n'
        + local_tools.ANSWER_CUE
    )
    assert isinstance(answer, ModelResponse) and answer.parts == [TextPart("a.txt and b.txt")]


def test_a_missing_model_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ProviderError, match=r"nope\.gguf does not exist; fix local_model_path"):
        local.find_local_model(Settings(local_model_path=str(missing)))


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"not a model")
    with pytest.raises(ProviderError, match="is not a GGUF model file"):
        local.find_local_model(Settings(local_model_path=str(fake)))


def test_without_the_extra_one_short_message_names_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # what find_spec sees when it is absent
    from co_tui.llm import resolve_model

    with pytest.raises(ProviderError) as info:
        resolve_model(Settings())
    message = str(info.value)
    assert "CMAKE_ARGS" not in message  # the build flags live in docs/local-model.md
    assert "make install" in message and "docs/local-model.md" in message
    assert "/model" in message
    assert "\n" not in message and len(message) < 240


def test_auto_lets_retrieval_pick_for_smollm2_and_the_model_for_others(tmp_path: Path) -> None:
    """SmolLM2-135M's own pick was measured not to beat retrieval's (docs/local-model.md)."""
    smollm2 = tmp_path / local.DEFAULT_MODEL_FILE
    other = tmp_path / "Qwen2.5-1.5B-Instruct-Q4_K_M.gguf"
    assert local.tool_choice(Settings(), smollm2) == "retrieval"
    assert local.tool_choice(Settings(), other) == "model"
    chosen = Settings(local_tool_choice="model")
    assert local.tool_choice(chosen, smollm2) == "model"
