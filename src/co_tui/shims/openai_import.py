"""Importing `openai` without its aiohttp transport, which co-tui never uses.

openai (3.x) imports its vendored aiohttp transport, and with it aiohttp, whenever aiohttp is
installed, and co-tui installs it (textual-serve, behind `co-tui serve`, needs it). That is
0.17 s of CPU at every start for a client pydantic-ai never makes: its OpenAI models use
httpx. Marking the vendored module as absent sends openai down its own path for a machine
without aiohttp (`DefaultAioHttpClient` then says to install the extra). textual-serve's
aiohttp is untouched. install_shims() (co_tui/shims/__init__.py) runs it first, before
anything imports openai. tests/shims/test_openai_import.py fails once openai imports the
transport lazily, and this can go.

Upstream: no upstream issue filed for the cost. The same eager import (openai/_base_client.py,
`from ._vendor.httpx_aiohttp import ...` whenever aiohttp is installed) is what broke
`import openai` with an old aiohttp: https://github.com/openai/openai-python/issues/3939.
"""

from __future__ import annotations

import sys

OPENAI_AIOHTTP_TRANSPORT = "openai._vendor.httpx_aiohttp"


def skip_openai_aiohttp_transport() -> None:
    """Before openai is imported: it will not import its aiohttp transport."""
    sys.modules.setdefault(OPENAI_AIOHTTP_TRANSPORT, None)  # type: ignore[arg-type]
