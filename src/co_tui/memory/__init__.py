"""Long-term memories: one Markdown file per memory, deduplicated and decayed on save.

config/settings.py (MemoryConfig), store.py (files), lifecycle.py (save: dedup + decay),
recall.py (ranking). Kept import-light: import the submodule you need.
"""
