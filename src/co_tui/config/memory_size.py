"""A memory limit in Docker's notation ("512m", "1g"): the sandbox settings are written in it,
and both sandboxes and the trust check read it the same way."""

from __future__ import annotations

import re


def docker_memory_bytes(limit: str) -> int:
    """'512m', '1g', '1.5g', '1073741824' -> bytes (docker's own units: 1024-based)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bkmg]?)b?\s*", limit.lower())
    if not match:
        raise ValueError(f"not a memory size: {limit!r} (expected e.g. 512m or 1g)")
    factor = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[match.group(2)]
    return int(float(match.group(1)) * factor)
