"""One turn of the conversation, from a prompt to a `TurnResult`.

`runner.run_turn` streams the agent's run as typed events (protocol/events.py, via
`stream.EventStream`) to a frontend (protocol/frontend.py) and asks it about deferred calls;
`replay` rebuilds the events of a stored history; `subagents` runs a fresh agent inside a
parent's tool call. This package imports nothing itself.
"""
