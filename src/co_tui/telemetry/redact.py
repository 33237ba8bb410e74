"""Redaction of span data: the one redactor co-tui uses everywhere (co_tui.redaction)."""

from co_tui.redaction import REDACTED, SHAPES, Redactor

__all__ = ["REDACTED", "SHAPES", "Redactor"]
