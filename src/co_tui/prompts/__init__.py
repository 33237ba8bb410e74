"""System prompt assembly. The fuller assembly (aspects, personalities, knowledge) grows here."""

from __future__ import annotations

from importlib import resources


def base_instructions() -> str:
    return resources.files("co_tui.prompts").joinpath("base.md").read_text(encoding="utf-8")


def get_system_prompt() -> str:
    return base_instructions()
