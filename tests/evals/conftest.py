"""Eval tests. Those marked `llm` run the real embedded model: without the `local` extra they
skip locally and fail under CI (CO_TUI_CI=1), exactly like tests/llm/."""

from __future__ import annotations

import os

import pytest

from tests.llm.conftest import missing_extra_reason


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("llm") is None:
        return
    reason = missing_extra_reason()
    if reason is None:
        return
    if os.environ.get("CO_TUI_CI") == "1":
        pytest.fail(f"CO_TUI_CI=1 and {reason}", pytrace=False)
    pytest.skip(reason)
