"""A request's body is transformed once per message, not once per message type
(co_tui/shims/openai_transform.py): what reaches the server is what the SDK alone would send,
for the bodies pydantic-ai builds and for hostile ones, and the shim is still needed: the
SDK still transforms data against every member of a union."""

from __future__ import annotations

import datetime
import enum
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest
from openai import omit
from openai._utils import _transform
from openai._utils._transform import PropertyInfo
from openai.types.chat import ChatCompletionMessageParam, completion_create_params
from pydantic import BaseModel, SecretStr
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import ToolDefinition

from co_tui.config.settings import Settings
from co_tui.llm import resolve_model
from co_tui.shims.openai_transform import NOT_PLAIN, install_union_shortcut, plain_copy, unmarked
from tests.servers.fake_openai import serve, text

PARAMS = completion_create_params.CompletionCreateParamsStreaming
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


@pytest.fixture
def sdk_alone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The SDK's own transform for the test's duration (install_shims() installs the shim
    for the whole test session: tests/conftest.py)."""
    install_union_shortcut()
    for name in ("_transform_recursive", "_async_transform_recursive"):
        shimmed = getattr(_transform, name)
        monkeypatch.setattr(_transform, name, shimmed.co_tui_original)
    yield


def test_the_sdk_still_transforms_a_message_against_every_message_type(
    monkeypatch: pytest.MonkeyPatch, sdk_alone: None
) -> None:
    # When this fails, the SDK no longer walks a message once per member of the union:
    # delete co_tui/shims/openai_transform.py and its install in co_tui/shims/__init__.py.
    walks: list[type] = []
    original = _transform._transform_typeddict

    def counted(data: Any, expected_type: type) -> Any:
        walks.append(expected_type)
        return original(data, expected_type)

    monkeypatch.setattr(_transform, "_transform_typeddict", counted)
    _transform.transform({"role": "user", "content": "hi"}, ChatCompletionMessageParam)
    assert len(set(walks)) >= 6


def conversation() -> list[ModelMessage]:
    """A session's history with every kind of part co-tui sends."""
    return [
        ModelRequest(
            parts=[
                SystemPromptPart("You are co."),
                UserPromptPart("what is in \x1b[31mthis\x1b[0m picture? ünïcödé"),
            ]
        ),
        ModelResponse(
            parts=[TextPart("Let me look."), ToolCallPart("read_file", {"p": "a"}, "call-1")]
        ),
        ModelRequest(
            parts=[
                ToolReturnPart("read_file", {"lines": ["x", "y"], "n": 2}, "call-1"),
                UserPromptPart(
                    [
                        "and these:",
                        ImageUrl("https://example.com/a.png"),
                        BinaryContent(PNG, media_type="image/png"),
                    ]
                ),
            ]
        ),
        ModelResponse(parts=[ToolCallPart("run_shell", '{"cmd": "ls -la"}', "call-2")]),
        ModelRequest(
            parts=[ToolReturnPart("run_shell", "cmd must be a string", "call-2", outcome="retried")]
        ),
        ModelResponse(parts=[TextPart("Done: **two** files.")]),
        ModelRequest.user_text_prompt("thanks"),
    ]


async def send(history: list[ModelMessage]) -> dict[str, Any]:
    """The body the fake server receives for `history`, tools and settings included."""
    with serve([text("ok")]) as server:
        settings = Settings(
            llm_provider="openai",
            openai_base_url=f"{server.url}/v1",
            openai_api_key=SecretStr("sk-test"),
        )
        model = resolve_model(settings).model
        tools = [
            ToolDefinition(
                name=f"tool_{n}",
                description="A tool.",
                parameters_json_schema={
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "n": {"type": "integer"}},
                    "required": ["path"],
                },
            )
            for n in range(3)
        ]
        parameters = ModelRequestParameters(function_tools=tools)
        async with model.request_stream(history, None, parameters) as stream:
            async for _ in stream:
                pass
        return server.requests[-1].body


@pytest.mark.usefixtures("allow_model_requests")
async def test_the_server_receives_what_the_sdk_alone_sends() -> None:
    with_shim = await send(conversation())
    with pytest.MonkeyPatch.context() as monkeypatch:
        for name in ("_transform_recursive", "_async_transform_recursive"):
            shimmed = getattr(_transform, name)
            monkeypatch.setattr(_transform, name, shimmed.co_tui_original)
        alone = await send(conversation())
    assert with_shim == alone
    assert len(with_shim["messages"]) == 9
    parts = [m["content"] for m in with_shim["messages"] if isinstance(m["content"], list)]
    assert [part["type"] for part in parts[0]] == ["text", "image_url", "image_url"]


class Colour(enum.StrEnum):
    RED = "red"


class Dumped(BaseModel):
    role: str = "user"
    content: str = "from a model"


class Renamed(TypedDict, total=False):
    card_id: Annotated[str, PropertyInfo(alias="cardID")]


class Dated(TypedDict, total=False):
    when: Annotated[datetime.date, PropertyInfo(format="iso8601")]


def hostile_bodies() -> list[tuple[object, object]]:
    """(data, type) pairs the shortcut must not take, or must take without changing a thing."""
    user: dict[str, Any] = {"role": "user", "content": "hi"}
    return [
        ({"messages": [user, {"role": "user", "content": "x", "name": omit}]}, PARAMS),
        ({"messages": [user, Dumped()], "model": "m"}, PARAMS),
        ({"messages": (user, user), "model": "m"}, PARAMS),
        ({"messages": iter([user]), "model": "m"}, PARAMS),
        ({"messages": [{"role": "user", "content": Colour.RED}], "model": "m"}, PARAMS),
        ({"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]}, PARAMS),
        ({"messages": [{1: "user", "content": "x"}]}, PARAMS),
        ({"messages": [{"role": "user", "content": datetime.date(2026, 1, 2)}]}, PARAMS),
        ({"card_id": "c-1"}, Renamed | Dated),
        ({"when": datetime.date(2026, 1, 2)}, Renamed | Dated),
        ([{"card_id": "c-1"}, {"when": datetime.date(2026, 1, 2)}], list[Renamed | Dated]),
    ]


@pytest.mark.parametrize("case", range(len(hostile_bodies())))
async def test_hostile_data_comes_out_as_from_the_sdk_alone(
    case: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_union_shortcut()

    async def both() -> list[object]:  # each transform gets its own data: iterators run out
        data, expected_type = hostile_bodies()[case]
        synced = _transform.transform(data, expected_type)
        data, expected_type = hostile_bodies()[case]
        return [synced, await _transform.async_transform(data, expected_type)]

    with_shim = await both()
    for name in ("_transform_recursive", "_async_transform_recursive"):
        monkeypatch.setattr(_transform, name, getattr(_transform, name).co_tui_original)
    assert with_shim == await both()


def test_renaming_and_formatting_types_never_take_the_shortcut() -> None:
    assert unmarked(ChatCompletionMessageParam)
    assert unmarked(PARAMS)
    assert not unmarked(Renamed)
    assert not unmarked(Renamed | Dated)
    assert not unmarked(list[Dated])
    install_union_shortcut()
    assert _transform.transform({"card_id": "c-1"}, Renamed | Dated) == {"cardID": "c-1"}
    when = datetime.date(2026, 1, 2)
    assert _transform.transform({"when": when}, Renamed | Dated) == {"when": "2026-01-02"}


def test_plain_copy_copies_json_and_refuses_the_rest() -> None:
    data = {"a": [1, 2.5, True, None, "s", {"b": []}]}
    copied = plain_copy(data)
    assert copied == data
    assert copied is not data
    assert copied["a"] is not data["a"]  # type: ignore[index]
    for not_plain in ((1, 2), {"a": omit}, {1: "a"}, Colour.RED, b"x", {"a": Dumped()}):
        assert plain_copy(not_plain) is NOT_PLAIN
