"""Every patch of, and every path around, a dependency: one folder, each with its upstream
issue and the canary test that fails once upstream no longer has the cost, to say it can go.

`install_shims()` installs the patches, for the whole process, once at its entry
(entry.py's `main`, the served app's process in serve/server.py, tests/conftest.py).
Importing a module of co-tui installs nothing.

The patches (process-wide, installed by `install_shims()`):

- openai_import.py: marks openai's vendored aiohttp transport absent, so `import openai` does
  not import aiohttp (0.17 s of CPU at every start, for a client co-tui never makes). Upstream:
  no upstream issue filed for the cost; the same eager import is what broke `import openai`
  with an old aiohttp in https://github.com/openai/openai-python/issues/3939. Canary:
  tests/shims/test_openai_import.py.
- openai_stream_text.py: pydantic-ai's `OpenAIStreamedResponse._raw_text_content` grows by
  `+=` on an attribute, a copy of the whole answer per chunk (5,000 1 KB chunks: 9.9 s, half
  of it on that line); the shim makes it linear. Upstream: no upstream issue filed for that
  attribute; https://github.com/pydantic/pydantic-ai/issues/6432 (fixed by
  https://github.com/pydantic/pydantic-ai/pull/6485) made the parts manager's assembly linear
  and left it. Canary: tests/shims/test_openai_stream_text.py.
- openai_transform.py: the openai SDK transforms a request's body against every member of a
  union, six per chat message (0.2 ms a message: 13 ms of the event loop for a 31st turn);
  the shim copies plain JSON once where no type under the union renames or formats. Upstream:
  https://github.com/openai/openai-python/pull/3616 (open; the walk once per union member,
  fixed there for `parse()` only); the same code in Anthropic's SDK:
  https://github.com/anthropics/anthropic-sdk-python/issues/1195. Canary:
  tests/shims/test_openai_transform.py.
- textual_layout_echo.py: in Textual a layout pass that resizes a widget asks for a second,
  idle full pass (89 passes for a 20,000-chunk answer where 47 do); the shim lays out once.
  Upstream: no upstream issue filed. Canary: tests/shims/test_layout_echo.py.
- textual_styles_cache.py: Textual's `StylesCache.get_inner_outer` is lru-cached with the
  cache itself in its key, keeping up to 1,024 widgets' painted lines after the widgets are
  gone (+0.2 MB a turn); the shim keys it by the two colours. Upstream:
  https://github.com/Textualize/textual/issues/6665 (open). Canary:
  tests/shims/test_styles_cache.py.

The paths around (subclasses the client co-tui builds uses; nothing to install):

- openai_chunks.py: `ValidatingOpenAI` validates a streamed chunk with pydantic's compiled
  validator instead of the SDK's Python `construct_type` (2.3 µs against 50 µs a chunk).
  Upstream: no upstream issue filed. Canary: tests/shims/test_openai_chunks.py.
- openai_sse.py: `CoalescingSSEDecoder` joins the text chunks of one network read (85% of the
  streaming time went to pydantic-ai's per-chunk machinery). Upstream: no upstream issue
  filed. Canary: tests/shims/test_openai_sse.py.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from co_tui.shims.openai_import import skip_openai_aiohttp_transport

if TYPE_CHECKING:
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec


def install_shims() -> None:
    """Install every patch, for the whole process. Idempotent. Call it at a process's entry,
    before anything imports openai (the aiohttp skip must come first). Nothing here imports
    a dependency: each other patch is installed when its module has been imported, at once
    if it already has been, so the bare app's first frame still comes before pydantic-ai."""
    skip_openai_aiohttp_transport()
    _after_import("openai", _install_union_shortcut)
    _after_import("pydantic_ai.models.openai", _install_linear_stream_text)
    _after_import("textual.widget", _install_single_layout_pass)
    _after_import("textual._styles_cache", _install_colour_keyed_inner_outer)


def _install_union_shortcut() -> None:
    from co_tui.shims.openai_transform import install_union_shortcut

    install_union_shortcut()


def _install_linear_stream_text() -> None:
    from co_tui.shims.openai_stream_text import install_linear_stream_text

    install_linear_stream_text()


def _install_single_layout_pass() -> None:
    from co_tui.shims.textual_layout_echo import install_single_layout_pass

    install_single_layout_pass()


def _install_colour_keyed_inner_outer() -> None:
    from co_tui.shims.textual_styles_cache import install_colour_keyed_inner_outer

    install_colour_keyed_inner_outer()


def _after_import(name: str, install: Callable[[], None]) -> None:
    """`install()` now if module `name` is imported, else right after its first import."""
    if name in sys.modules:
        install()
        return
    _HOOK.waiting[name] = install
    if _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)


class _AfterImport:
    """A meta path finder that finds nothing itself: for a module that a patch waits for, it
    asks the finders after it and wraps the loader they give, to install the patch once the
    module has run."""

    def __init__(self) -> None:
        self.waiting: dict[str, Callable[[], None]] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in self.waiting:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec: ModuleSpec | None = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = cast("Loader", _ThenInstall(spec.loader, self))
        return spec

    def installed(self, name: str) -> None:
        install = self.waiting.pop(name, None)
        if not self.waiting and self in sys.meta_path:
            sys.meta_path.remove(self)
        if install is not None:
            install()


class _ThenInstall:
    """The module's own loader, then its patch. The module keeps its own loader (resource
    readers and `inspect` ask it)."""

    def __init__(self, loader: Any, hook: _AfterImport) -> None:
        self.loader = loader
        self.hook = hook

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self.loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        self.hook.installed(module.__name__)


_HOOK = _AfterImport()
