"""Redaction of secrets from span data before it is stored or sent anywhere.

Configured secrets (Settings.secret_values()) are replaced wherever they occur, and so are
strings shaped like well-known credentials. Strings that hold JSON (pydantic-ai stores
messages and tool arguments as JSON text, sometimes JSON inside JSON) are parsed and
redacted leaf by leaf, so a secret escaped by JSON encoding is still found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[REDACTED]"

# Shapes of credentials that must never be stored even when not configured here.
SECRET_PATTERNS: tuple[str, ...] = (
    r"sk-[A-Za-z0-9_\-]{16,}",  # OpenAI and compatible (sk-..., sk-proj-...)
    r"AIza[0-9A-Za-z_\-]{30,}",  # Google API keys
    r"xox[abprse]-[A-Za-z0-9\-]{8,}",  # Slack tokens
    r"gh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"ya29\.[0-9A-Za-z_\-]{20,}",  # Google OAuth access tokens
    r"(?i)(?<=bearer )[A-Za-z0-9._~+/=\-]{8,}",  # the credential after "Bearer "
)
_MAX_JSON_DEPTH = 6


def _escaped_forms(secret: str) -> set[str]:
    """The secret as written and as repr writes it (error messages), each as JSON escapes
    it once and twice (tool arguments inside messages)."""
    forms: set[str] = set()
    for base in (secret, repr(secret)[1:-1], secret.encode("unicode_escape").decode("ascii")):
        once = json.dumps(base)[1:-1]
        forms |= {base, once, json.dumps(once)[1:-1], json.dumps(base, ensure_ascii=False)[1:-1]}
    return forms


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        literal = sorted(
            {v for s in secrets if s and len(s) >= 4 for v in _escaped_forms(s)},
            key=len,
            reverse=True,
        )
        parts = [re.escape(s) for s in literal] + list(SECRET_PATTERNS)
        # Inline flags must lead the whole pattern; keep the case-insensitive one separate.
        plain = [p for p in parts if not p.startswith("(?i)")]
        folded = [p[4:] for p in parts if p.startswith("(?i)")]
        self._plain = re.compile("|".join(plain))
        self._folded = re.compile("|".join(folded), re.IGNORECASE) if folded else None

    def text(self, value: str) -> str:
        out = self._plain.sub(REDACTED, value)
        if self._folded is not None:
            out = self._folded.sub(REDACTED, out)
        return out

    def value(self, value: Any, depth: int = 0) -> Any:
        """Redact any JSON-like value; strings holding JSON are redacted inside and re-encoded."""
        if isinstance(value, str):
            return self._string(value, depth)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v, depth) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v, depth) for v in value]
        return value

    def _hit(self, value: str) -> bool:
        return bool(self._plain.search(value)) or bool(
            self._folded is not None and self._folded.search(value)
        )

    def _string(self, value: str, depth: int) -> str:
        # Fast path: every form a secret can take in JSON text (as written, escaped once or
        # twice) is in the patterns, so a string without a hit needs no parsing.
        if not self._hit(value):
            return value
        stripped = value.lstrip()
        if depth < _MAX_JSON_DEPTH and stripped[:1] in ("{", "[", '"'):
            try:
                parsed = json.loads(value)
            except (ValueError, RecursionError):
                parsed = None
            else:
                if isinstance(parsed, dict | list) or (isinstance(parsed, str) and parsed != value):
                    redacted = self.value(parsed, depth + 1)
                    if redacted != parsed:
                        return json.dumps(redacted, ensure_ascii=False)
        return self.text(value)
