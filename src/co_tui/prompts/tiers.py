"""Model tiers: how much prompt a model can use well, guessed from its name and provider.

Tier 1: tiny local models (<= 2B parameters): the essential aspects only, no personality.
Tier 2: mid-size local models (<= 14B): most aspects, personality style only.
Tier 3: hosted frontier models and large local ones: everything.
"""

from __future__ import annotations

import re

TIER_TINY, TIER_MID, TIER_FULL = 1, 2, 3
LOCAL_PROVIDERS = frozenset({"local", "ollama"})
_TINY_NAMES = ("smollm", "tinyllama", "qwen2.5-0.5b", "gemma-2b", "phi-1")
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([bm])(?![a-z])")


def parameter_billions(model_name: str) -> float | None:
    """The parameter count in a name like `qwen3:4b` or `SmolLM2-135M`, in billions."""
    sizes = [
        float(num) / (1000 if unit == "m" else 1) for num, unit in _SIZE.findall(model_name.lower())
    ]
    return max(sizes) if sizes else None


def model_tier(model_name: str, provider: str = "") -> int:
    name = model_name.lower()
    if any(tiny in name for tiny in _TINY_NAMES):
        return TIER_TINY
    size = parameter_billions(name)
    if size is not None:
        if size <= 2:
            return TIER_TINY
        return TIER_MID if size <= 14 else TIER_FULL
    if provider.lower() == "local":
        return TIER_TINY
    if provider.lower() in LOCAL_PROVIDERS:
        return TIER_MID
    return TIER_FULL
