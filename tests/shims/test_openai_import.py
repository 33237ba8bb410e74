"""openai is used without importing its aiohttp transport once install_shims() has run
(co_tui/shims/openai_import.py), and the shim is still needed: openai still imports that
transport eagerly."""

from __future__ import annotations

import pytest

from tests.helpers import run_python
from tests.servers.fake_openai import serve, text

ANSWER_THROUGH_OPENAI = """
import sys
from co_tui.shims import install_shims
install_shims()
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

model = OpenAIChatModel("fake", provider=OpenAIProvider(base_url=sys.argv[1], api_key="x"))
print(Agent(model).run_sync("hi").output)
print("aiohttp imported:", "aiohttp" in sys.modules)
"""


@pytest.mark.slow
def test_openai_answers_without_importing_aiohttp() -> None:
    with serve([text("Hello from the fake.")]) as server:
        lines = run_python(ANSWER_THROUGH_OPENAI, f"{server.url}/v1")
    assert lines == ["Hello from the fake.", "aiohttp imported: False"]


def test_openai_still_imports_its_aiohttp_transport_eagerly() -> None:
    # When this fails, openai imports the transport lazily: delete co_tui/shims/openai_import.py
    # and its line in co_tui/shims/__init__.py.
    lines = run_python("import sys, openai; print('aiohttp' in sys.modules)")
    assert lines == ["True"]
