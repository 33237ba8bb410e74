"""Counter-steering for known model habits: short corrections added after the aspects."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Quirk:
    pattern: str  # regex, matched case-insensitively against the model name
    name: str
    correction: str


MODEL_QUIRKS: tuple[Quirk, ...] = (
    Quirk(r"gemini", "narrates tool calls",
          "Call tools directly; do not announce that you are about to call one."),
    Quirk(r"gemini", "reformats tool output",
          "Show `display` fields exactly as returned, including line breaks and URLs."),
    Quirk(r"qwen", "leaks reasoning",
          "Keep your reasoning out of the answer: no <think> tags in the reply."),
    Quirk(r"qwen|llama|mistral", "invents results",
          "If you did not call a tool, do not present its result: call it or say you cannot."),
    Quirk(r"smollm|tinyllama", "rambles",
          "Answer in at most three sentences. Do not repeat the question."),
    Quirk(r"gpt-4o|gpt-4\.1", "asks permission for reads",
          "Do not ask before using read-only tools; approvals are handled for you."),
)  # fmt: skip


def quirks_for(model_name: str) -> list[Quirk]:
    return [q for q in MODEL_QUIRKS if re.search(q.pattern, model_name, re.IGNORECASE)]
