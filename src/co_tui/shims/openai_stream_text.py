"""Linear text accumulation in pydantic-ai's OpenAI chat stream (a shim for an upstream cost).

pydantic-ai (2.68) keeps the whole answer so far in `OpenAIStreamedResponse._raw_text_content`
and grows it with `self._raw_text_content += content` for every chunk. On an attribute,
CPython cannot append in place, so each chunk copies everything before it: quadratic in the
answer. Measured with `co-tui -p` against the fake server, 1 KB chunks: 5,000 chunks took
9.9 s, half of it on that line. The attribute is only read once, when the stream ends, to see
whether citations may be placed.

The shim replaces the class attribute with a descriptor whose value appends each chunk to a
list and joins it when compared or printed, so `+=` is O(chunk). install_shims()
(co_tui/shims/__init__.py) installs it once pydantic-ai's OpenAI model is imported; it changes
no behaviour (tests/shims/test_openai_stream_text.py), and installs nothing once the attribute
is no longer a plain str field. That test also fails when the upstream line changes, to say
the shim can go.

Upstream: no upstream issue filed for this attribute. The same quadratic assembly in
pydantic-ai's parts manager, https://github.com/pydantic/pydantic-ai/issues/6432, was made
linear by https://github.com/pydantic/pydantic-ai/pull/6485, which left this line as it was.
"""

from __future__ import annotations

from typing import Any

_STORE = "_co_tui_raw_text_content"


class TextSoFar:
    """Text received chunk by chunk; `+=` appends, reading it joins once."""

    __slots__ = ("_chunks",)

    def __init__(self, text: str = "") -> None:
        self._chunks = [text] if text else []

    def __iadd__(self, chunk: str) -> TextSoFar:
        self._chunks.append(chunk)
        return self

    def __str__(self) -> str:
        joined = "".join(self._chunks)
        self._chunks = [joined]
        return joined

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TextSoFar | str):
            return str(self) == str(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # it changes as text arrives

    def __repr__(self) -> str:
        return repr(str(self))


class _TextSoFarAttribute:
    """A data descriptor: each instance gets its own TextSoFar (the dataclass default '' is
    read from the class, so there is nothing to set in __init__)."""

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return ""
        text = instance.__dict__.get(_STORE)
        if text is None:
            text = instance.__dict__[_STORE] = TextSoFar()
        return text

    def __set__(self, instance: object, value: TextSoFar | str) -> None:
        if value is not instance.__dict__.get(_STORE):
            instance.__dict__[_STORE] = value if isinstance(value, TextSoFar) else TextSoFar(value)


def install_linear_stream_text() -> None:
    """Give OpenAIStreamedResponse (and its subclasses) linear text accumulation. Idempotent."""
    from pydantic_ai.models.openai import OpenAIStreamedResponse

    current = OpenAIStreamedResponse.__dict__.get("_raw_text_content")
    if isinstance(current, _TextSoFarAttribute):
        return
    if current != "":
        return  # upstream changed the attribute: nothing here to fix any more
    OpenAIStreamedResponse._raw_text_content = _TextSoFarAttribute()  # type: ignore[assignment]
