"""A request's messages transformed once each, not once per message type (a shim for an
upstream cost).

Before it sends a request, the openai SDK (3.57) walks the whole body against its parameter
types (`openai._utils._transform`), to rename keys and format values where a type says so.
At a union of types it transforms the data against every member in turn, and a chat message
is a union of six message types, each with unions inside: 0.2 ms a message here, so 13 ms of
the event loop's time for the 62 messages of a session's 31st turn, and growing with every
turn, before the first byte is sent.

No chat completion parameter renames or formats anything: no type under the body's unions
carries the `PropertyInfo` that would. For such a type, plain JSON data (dicts with string
keys, lists, strings, numbers, booleans, None) comes out of the SDK's walk equal to what went
in, only copied. So at a union whose types (and the annotation around it) carry no
PropertyInfo anywhere, the shim copies plain JSON data in one pass and returns the copy.
Anything else (a type that does rename or format, data holding a model, a date, a file, an
omitted value, a tuple) takes the SDK's own path, unchanged.

install_shims() (co_tui/shims/__init__.py) installs it once openai is imported.
tests/shims/test_openai_transform.py checks that bodies pydantic-ai builds, and hostile ones,
come out equal with and without the shim, and fails once the SDK stops transforming data
against every member of a union, to say the shim can go.

Upstream: https://github.com/openai/openai-python/pull/3616 (open) names the walk once per
union member and fixes it for `parse()` only; the SDK generator's same code in Anthropic's
SDK: https://github.com/anthropics/anthropic-sdk-python/issues/1195.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Awaitable, Callable
from typing import Any

import typing_extensions
from openai._utils import _transform
from openai._utils._typing import is_union_type, strip_annotated_type

Transform = Callable[..., object]
AsyncTransform = Callable[..., Awaitable[object]]


class _NotPlain:
    """The data is not plain JSON: the SDK's own walk must see it."""


NOT_PLAIN = _NotPlain()

_WRAPPERS = {  # the typing forms whose arguments are types, looked through
    typing.Union,
    types.UnionType,
    typing_extensions.Required,
    typing_extensions.NotRequired,
    typing_extensions.ReadOnly,
}
_LEAVES = (str, int, float, bool, bytes, object, type(None), Any)


def plain_copy(data: object) -> object:
    """A copy of `data` if it is plain JSON (exact dict, list, str, int, float, bool,
    None), else NOT_PLAIN."""
    if data is None or type(data) in (str, int, float, bool):
        return data
    if type(data) is dict:
        copied: dict[str, object] = {}
        for key, value in data.items():
            if type(key) is not str:
                return NOT_PLAIN
            item = plain_copy(value)
            if item is NOT_PLAIN:
                return NOT_PLAIN
            copied[key] = item
        return copied
    if type(data) is list:
        items = []
        for value in data:
            item = plain_copy(value)
            if item is NOT_PLAIN:
                return NOT_PLAIN
            items.append(item)
        return items
    return NOT_PLAIN


_unmarked: dict[object, bool] = {}


def unmarked(annotation: object) -> bool:
    """Whether nothing in `annotation`, however deep, carries the SDK's PropertyInfo (so
    its walk renames and formats nothing there). Unsure (a forward reference, a type
    variable, a type that refers to itself, a form not known here) is False."""
    try:
        known = _unmarked.get(annotation)
    except TypeError:  # an unhashable annotation
        return False
    if known is not None:
        return known
    _unmarked[annotation] = False  # a type met again inside itself: unsure
    result = _check(annotation)
    _unmarked[annotation] = result
    return result


def _check(annotation: object) -> bool:
    origin = typing_extensions.get_origin(annotation)
    args = typing_extensions.get_args(annotation)
    if origin is typing_extensions.Annotated:
        metadata = getattr(annotation, "__metadata__", ())
        if any(isinstance(item, _transform.PropertyInfo) for item in metadata):
            return False
        return unmarked(args[0])
    if origin is typing_extensions.Literal or origin is typing.Literal:
        return True
    if origin is not None:  # list[X], Iterable[X], dict[K, V], Union[...], Required[X]...
        if origin not in _WRAPPERS and not isinstance(origin, type):
            return False
        return all(arg is Ellipsis or unmarked(arg) for arg in args)
    if typing_extensions.is_typeddict(annotation):
        try:
            hints = _transform.get_type_hints(annotation, include_extras=True)
        except Exception:  # a forward reference that does not resolve: unsure
            return False
        return all(unmarked(hint) for hint in hints.values())
    return annotation in _LEAVES


def _shortcut(data: object, annotation: object, inner_type: object | None) -> object:
    """The copy the SDK's walk would return, or NOT_PLAIN where only the walk can tell."""
    inner = annotation if inner_type is None else inner_type
    if not is_union_type(strip_annotated_type(inner)):  # type: ignore[arg-type]
        return NOT_PLAIN
    if not (unmarked(inner) and unmarked(annotation)):
        return NOT_PLAIN
    return plain_copy(data)


def _sync(original: Transform) -> Transform:
    def transform_recursive(
        data: object, *, annotation: type, inner_type: type | None = None
    ) -> object:
        copied = _shortcut(data, annotation, inner_type)
        if copied is not NOT_PLAIN:
            return copied
        return original(data, annotation=annotation, inner_type=inner_type)

    transform_recursive.co_tui_original = original  # type: ignore[attr-defined]
    return transform_recursive


def _async(original: AsyncTransform) -> AsyncTransform:
    async def transform_recursive(
        data: object, *, annotation: type, inner_type: type | None = None
    ) -> object:
        copied = _shortcut(data, annotation, inner_type)
        if copied is not NOT_PLAIN:
            return copied
        return await original(data, annotation=annotation, inner_type=inner_type)

    transform_recursive.co_tui_original = original  # type: ignore[attr-defined]
    return transform_recursive


def install_union_shortcut() -> None:
    """Route the SDK's transform (sync and async) through the shortcut. Idempotent; the
    SDK's recursion looks its functions up in the module, so it passes through too."""
    module: Any = _transform
    if not hasattr(module._transform_recursive, "co_tui_original"):
        module._transform_recursive = _sync(module._transform_recursive)
    if not hasattr(module._async_transform_recursive, "co_tui_original"):
        module._async_transform_recursive = _async(module._async_transform_recursive)
