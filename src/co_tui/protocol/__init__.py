"""What every layer agrees on, importing nothing else of co-tui: the typed events of a turn
(`events`), the frontend protocol (`frontend`), a frontend that records (`recording`), a
tool described as data (`tool_spec`) and what a tool call shows the user (`tool_display`).
The app loads `events` before its first frame, without pydantic-ai, so this package's
`__init__` imports nothing itself.
"""
