"""The `-p` runner: one prompt answered without the app, callable in this process.

`co-tui -p PROMPT` parses its command line (cli.py) and hands the loaded settings here;
`run_print` opens or resumes the session, starts what it needs (a sandbox that does not
work stops it before anything runs), runs the one turn through `HeadlessFrontend`, and
returns the exit code: 0, EXIT_ERROR, EXIT_USAGE, EXIT_NOT_SAVED, or 128 + the signal that
stopped it.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from co_tui.safety.visible import json_text, visible

if TYPE_CHECKING:
    from co_tui.config.trust import LoadedSettings
    from co_tui.headless.frontend import HeadlessFrontend
    from co_tui.session.chat import ChatSession

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_NOT_SAVED = 3  # the turn ran but could not be stored in the session database
EXIT_INTERRUPTED = 130  # SIGTERM and SIGHUP exit with 128 + their number (co_tui/safety/signals.py)


def say(message: str) -> None:
    """`co-tui: message` on stderr, its hidden characters made visible: messages quote
    servers, files and the model."""
    shown = visible(message, keep="\n\t")
    print(f"co-tui: {shown}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class PrintOptions:
    """How `-p` answers: its output, and what it approves."""

    output_format: str = "text"
    yes: bool = False
    allow_private_data_out: bool = False
    verbose: bool = False
    raw: bool = False


async def run_print(
    loaded: LoadedSettings,
    prompt: str,
    options: PrintOptions,
    continue_: bool = False,
    resume: str | None = None,
) -> int:
    """One `-p` answer, in this process: what `co-tui -p PROMPT` does after parsing its
    command line. Returns the exit code; writes the answer to stdout, messages to stderr."""
    from co_tui.headless.frontend import HeadlessFrontend
    from co_tui.safety.signals import cancelled_by_stop_signals
    from co_tui.session.chat import ChatSession

    if not prompt.strip():
        say("the prompt is empty")
        return EXIT_USAGE
    if resume == "":
        say("with -p, --resume needs a session id (co-tui sessions)")
        return EXIT_USAGE
    frontend = HeadlessFrontend(
        options.output_format,  # type: ignore[arg-type]
        approve_all=options.yes,
        verbose=options.verbose,
        raw=options.raw,
        allow_private_data_out=options.allow_private_data_out,
    )
    session = ChatSession(loaded.settings, frontend=frontend, headless=True, project=loaded.view)
    # SIGTERM/SIGHUP cancel the turn as Ctrl+C does (saved, commands killed), then exit 128+n.
    code = EXIT_INTERRUPTED
    async with cancelled_by_stop_signals() as stop:
        try:
            code = await _headless_turn(session, frontend, prompt, continue_, resume)
        finally:
            stop.disarm()  # closing the sandbox and the store must finish
            await session.aclose()
    if stop.exit_code is not None:
        with contextlib.suppress(OSError):  # SIGHUP: the terminal may be gone
            say(f"stopped by {stop.name}")
        return stop.exit_code
    return code


async def _headless_turn(
    session: ChatSession,
    frontend: HeadlessFrontend,
    prompt: str,
    continue_: bool,
    resume: str | None,
) -> int:
    from co_tui.llm import ProviderError
    from co_tui.llm.local.provider import LocalServerError, headless_progress
    from co_tui.protocol import events as ev
    from co_tui.sandbox import SandboxUnavailable
    from co_tui.store.errors import SessionError

    try:
        loaded = session.open_stored(continue_latest=continue_, resume=resume, ask_pending=False)
    except SessionError as exc:
        say(str(exc))
        return EXIT_ERROR
    if loaded is not None and (notice := loaded.unfinished_notice()):
        frontend.emit(ev.Status(session_id=loaded.info.id, message=notice, level="warning"))
    try:  # before anything starts: a configured sandbox that does not work stops here
        await session.start(headless_progress(sys.stderr))
    except SandboxUnavailable as exc:
        say(str(exc))
        return EXIT_USAGE
    except (ProviderError, LocalServerError) as exc:
        say(str(exc))
        return EXIT_ERROR
    if session.telemetry_off:
        say(session.telemetry_off)
    if session.mcp is not None:
        for failure in session.mcp.failures:
            say(f"MCP server '{failure.server}': {failure.message}")
    result = await session.run(prompt)
    frontend.flush()  # a tool's last lines still waiting (a turn cut short after them)
    if frontend.output_format == "json":
        summary = frontend.summary(
            session.session_id,
            text=result.output if result.output is not None else result.streamed_text,
            interrupted=result.interrupted,
            error=result.error,
            model=session.model_label(),
            save_error=result.save_error,
        )
        print(json_text(summary), flush=True)
    if result.save_error:  # the turn happened but --continue would not find it
        say(result.save_error)
        return EXIT_NOT_SAVED
    if result.interrupted:
        return EXIT_INTERRUPTED
    if result.error:
        if frontend.output_format != "text":
            say(result.error)
        return EXIT_ERROR
    return 0
