"""The prompted tool-call protocol and the model checks: pure logic, no server needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import ToolDefinition

from co_tui.config import Settings
from co_tui.llm import ProviderError, local, local_tools

SHELL = ToolDefinition(
    name="run_shell_command",
    description="Run a shell command.\nMore detail the prompt leaves out.",
    parameters_json_schema={
        "type": "object",
        "properties": {"cmd": {"type": "string"}, "timeout": {"type": "integer"}},
        "required": ["cmd"],
    },
)
LIST = ToolDefinition(
    name="list_memories",
    description="List memories.",
    parameters_json_schema={"type": "object", "properties": {}},
)


def feed_all(decoder: local_tools.CallDecoder, chunks: list[str]) -> str:
    return "".join(text for chunk in chunks for text in decoder.feed(chunk))


def test_grammar_offers_each_tool_with_its_required_arguments() -> None:
    grammar = local_tools.grammar([SHELL, LIST])
    assert grammar.startswith("root ::= call | message")
    assert '\\"name\\": \\"run_shell_command\\"' in grammar
    assert '"\\"cmd\\": " string' in grammar
    assert "timeout" not in grammar  # optional arguments keep their defaults
    assert '\\"name\\": \\"list_memories\\", \\"arguments\\": " "{}"' in grammar
    assert local_tools.grammar([SHELL], allow_text=False).startswith("root ::= call\n")


def test_protocol_prompt_lists_tools_briefly() -> None:
    prompt = local_tools.protocol_prompt([SHELL, LIST])
    assert "- run_shell_command(cmd, timeout): Run a shell command." in prompt
    assert "More detail" not in prompt
    assert '<tool_call>{"name": "run_shell_command", "arguments": {"cmd": "..."}}</tool_call>' in (
        prompt
    )


def test_decoder_streams_answers_at_once() -> None:
    decoder = local_tools.CallDecoder(["run_shell_command"])
    assert feed_all(decoder, ["The", " sky", " is blue."]) == "The sky is blue."
    assert decoder.finish() == ("", None)


def test_decoder_buffers_and_parses_a_call() -> None:
    decoder = local_tools.CallDecoder(["run_shell_command"])
    call = '<tool_call>{"name": "run_shell_command", "arguments": {"cmd": "ls -l"}}</tool_call>'
    chunks = [call[i : i + 5] for i in range(0, len(call), 5)]
    assert feed_all(decoder, chunks) == ""
    rest, parsed = decoder.finish()
    assert rest == ""
    assert parsed is not None
    assert (parsed.tool_name, parsed.args) == ("run_shell_command", {"cmd": "ls -l"})
    assert parsed.tool_call_id.startswith("call_")


@pytest.mark.parametrize(
    "reply",
    [
        '<tool_call>{"name": "rm_everything", "arguments": {}}</tool_call>',  # unknown tool
        '<tool_call>{"name": "run_shell_command", "arguments": {"cmd": "l',  # cut short
        "<tool",  # ended inside the tag
    ],
)
def test_a_call_that_does_not_parse_is_shown_as_text(reply: str) -> None:
    decoder = local_tools.CallDecoder(["run_shell_command"])
    assert feed_all(decoder, [reply]) == ""
    assert decoder.finish() == (reply, None)


def test_history_becomes_plain_chat_with_the_protocol_first() -> None:
    call = ToolCallPart("run_shell_command", {"cmd": "ls"}, "c1")
    history = [
        ModelRequest(parts=[UserPromptPart("list files")], instructions="Be terse."),
        ModelResponse(parts=[call]),
        ModelRequest(parts=[ToolReturnPart("run_shell_command", "a.txt\nb.txt", "c1")]),
    ]
    out = local_tools.to_text_history(history, [SHELL])

    first = out[0]
    assert isinstance(first, ModelRequest) and first.instructions == "Be terse."
    assert isinstance(first.parts[0], SystemPromptPart)
    assert "run_shell_command" in first.parts[0].content
    assert isinstance(out[1], ModelResponse)
    (text,) = out[1].parts
    assert isinstance(text, TextPart)
    body = json.loads(text.content.removeprefix("<tool_call>").removesuffix("</tool_call>"))
    assert body == {"name": "run_shell_command", "arguments": {"cmd": "ls"}}
    assert isinstance(out[2], ModelRequest)
    (result,) = out[2].parts
    assert isinstance(result, UserPromptPart)
    assert result.content == "Result of run_shell_command:\na.txt\nb.txt"
    assert local_tools.tool_rounds(history) == 1
    assert local_tools.tool_rounds(history[:1]) == 0


def test_a_missing_model_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ProviderError, match=r"nope\.gguf does not exist; fix local_model_path"):
        local.find_local_model(Settings(local_model_path=str(missing)))


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"not a model")
    with pytest.raises(ProviderError, match="is not a GGUF model file"):
        local.find_local_model(Settings(local_model_path=str(fake)))


def test_without_the_extra_one_message_gives_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local, "_SERVER_MODULES", ("co_tui_no_such_module",))
    from co_tui.llm import resolve_model

    with pytest.raises(ProviderError) as info:
        resolve_model(Settings())
    message = str(info.value)
    assert 'pip install "co-tui[local]"' in message
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF' in message
    assert "make install" in message
    assert "\n" not in message
