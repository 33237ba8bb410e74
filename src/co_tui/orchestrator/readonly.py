"""Which shell commands may run without asking (placeholder: to be replaced by the
argument-aware classifier)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SHELL_OPERATORS = (";", "&", "|", ">", "<", "`", "$(", "\n", "\r")


@dataclass(frozen=True)
class ReadOnlyVerdict:
    safe: bool
    # Safe: what makes it so. Unsafe: why not, naming the option or operator; "" when the
    # program is simply not a read-only one (nothing worth telling the user).
    reason: str


def classify_read_only(cmd: str, safe_commands: Sequence[str]) -> ReadOnlyVerdict:
    stripped = cmd.strip()
    if not stripped:
        return ReadOnlyVerdict(False, "")
    for prefix in safe_commands:
        prefix = prefix.strip()
        if prefix and (stripped == prefix or stripped.startswith(prefix + " ")):
            if any(op in cmd for op in SHELL_OPERATORS):
                return ReadOnlyVerdict(False, "the command has a shell operator")
            return ReadOnlyVerdict(True, f"read-only command ({prefix})")
    return ReadOnlyVerdict(False, "")
