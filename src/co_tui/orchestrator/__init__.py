"""The orchestrator: one turn of the conversation, from a prompt to a `TurnResult`.

`turn.run_turn` streams the agent's run as typed events (`events`, via `stream.EventStream`)
to a frontend (`frontend.FrontendProtocol`) and asks it about deferred calls; `replay`
rebuilds the events of a stored history. This package imports nothing itself: the app loads
`events` before its first frame, without pydantic-ai.
"""
