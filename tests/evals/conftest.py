"""Eval tests marked `llm` run the real embedded model: the same skip-or-fail rule as
tests/llm/ (skip locally without the `local` extra, fail under CI)."""

from tests.llm.conftest import pytest_runtest_setup

__all__ = ["pytest_runtest_setup"]
