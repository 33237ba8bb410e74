"""What every layer agrees on, importing nothing else of co-tui: the typed events of a turn
(`events`), the frontend protocol (`frontend`), a frontend that records (`recording`), and a
tool described as data (`tool_spec`). The app loads `events` before its first frame, without
pydantic-ai, so this package's `__init__` imports nothing itself.
"""
