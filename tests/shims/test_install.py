"""install_shims() is the one place the patches of dependencies are installed: importing
co-tui's modules, or building a model, installs none of them; install_shims() installs each
once, whether the module it patches is imported before it or after, however often it is
called; and it imports none of those modules itself."""

from __future__ import annotations

import json

import pytest
from openai._utils import _transform
from pydantic_ai.models.openai import OpenAIStreamedResponse
from textual._styles_cache import StylesCache
from textual.widget import Widget

from co_tui.shims import install_shims
from co_tui.shims.textual_layout_echo import size_updated_once
from co_tui.shims.textual_styles_cache import get_inner_outer
from tests.helpers import run_python

# Prints, as JSON, which patches are in place (imports what they patch to look).
PATCHES = """
def patches():
    import json, sys
    from openai._utils import _transform
    from pydantic_ai.models.openai import OpenAIStreamedResponse
    from textual.widget import Widget
    from textual._styles_cache import StylesCache
    transform = _transform._transform_recursive
    return {
        "aiohttp skip": sys.modules["openai._vendor.httpx_aiohttp"] is None,
        "union shortcut": hasattr(transform, "co_tui_original"),
        "wrapped once": not hasattr(getattr(transform, "co_tui_original", None), "co_tui_original"),
        "linear stream text": OpenAIStreamedResponse.__dict__["_raw_text_content"] != "",
        "single layout pass": Widget._size_updated.__module__ != "textual.widget",
        "colour-keyed inner outer": (
            StylesCache.get_inner_outer.__module__ != "textual._styles_cache"
        ),
    }
"""
ALL_PATCHED = {
    "aiohttp skip": True,
    "union shortcut": True,
    "wrapped once": True,
    "linear stream text": True,
    "single layout pass": True,
    "colour-keyed inner outer": True,
}
NONE_PATCHED = {**{name: False for name in ALL_PATCHED}, "wrapped once": True}


def patches_in(code: str) -> list[dict[str, bool]]:
    return [json.loads(line) for line in run_python(PATCHES + code)]


@pytest.mark.slow
def test_importing_co_tui_and_building_a_model_installs_nothing() -> None:
    (before, after) = patches_in("""
import json, sys
import co_tui.cli, co_tui.entry, co_tui.llm, co_tui.llm.local.provider, co_tui.serve.server
import co_tui.shims.openai_chunks, co_tui.shims.openai_import, co_tui.shims.openai_sse
import co_tui.shims.openai_stream_text, co_tui.shims.openai_transform
import co_tui.shims.textual_layout_echo, co_tui.shims.textual_styles_cache, co_tui.tui.app
from co_tui.config.settings import Settings
from co_tui.llm import resolve_model

settings = Settings(llm_provider="openai", openai_base_url="http://127.0.0.1:9/v1")
resolve_model(settings).model
print(json.dumps(patches()))
from co_tui.shims import install_shims
install_shims()
print(json.dumps(patches()))
""")
    assert before == NONE_PATCHED
    # openai was imported before install_shims(): too late to skip its aiohttp transport,
    # which is why each entry calls install_shims() first.
    assert after == {**ALL_PATCHED, "aiohttp skip": False}


def test_install_shims_imports_none_of_what_it_patches() -> None:
    (loaded,) = run_python("""
import sys
from co_tui.shims import install_shims
install_shims()
loaded = {name.split(".")[0] for name, module in sys.modules.items() if module is not None}
print(sorted(loaded & {"openai", "pydantic_ai", "textual"}))
""")
    assert loaded == "[]"


@pytest.mark.slow
def test_installed_twice_before_the_imports_patches_once() -> None:
    (patched,) = patches_in("""
import json, sys
from co_tui.shims import install_shims
install_shims()
install_shims()
print(json.dumps(patches()))
""")
    assert patched == ALL_PATCHED


def test_installed_again_once_imported_the_patches_are_the_same_objects() -> None:
    install_shims()  # tests/conftest.py installed them already: this changes nothing
    transform = _transform._transform_recursive
    text_so_far = OpenAIStreamedResponse.__dict__["_raw_text_content"]
    install_shims()
    assert _transform._transform_recursive is transform
    assert not hasattr(transform.co_tui_original, "co_tui_original")  # type: ignore[attr-defined]
    assert OpenAIStreamedResponse.__dict__["_raw_text_content"] is text_so_far
    assert Widget._size_updated is size_updated_once
    assert StylesCache.__dict__["get_inner_outer"] is get_inner_outer
