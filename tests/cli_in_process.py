"""`co-tui ARGS` run inside the test process, as a subprocess would see it.

The command line the console script parses (co_tui.cli.app, with the same bare `--resume`
handling), in `cwd`, with `env` as the whole environment and `stdin` as standard input;
afterwards what the end of a process does (telemetry flushed and closed). What a process
adds on top (the console script's fast path for the bare app, exit by signal, a terminal) is
left to the e2e cases, which still spawn co-tui.

Spawning co-tui costs about 2 s of CPU a run, nearly all of it importing pydantic-ai: the
cases that only read what `-p` prints and the exit code run here instead.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Ran:
    """What subprocess.run would have returned: the exit code, stdout and stderr as text."""

    returncode: int
    stdout: str
    stderr: str
    args: tuple[str, ...] = ()
    stdout_bytes: bytes = b""
    stderr_bytes: bytes = b""


def run_co_tui(
    args: Sequence[str], cwd: Path, env: Mapping[str, str], stdin: str | None = None
) -> Ran:
    from pydantic_ai import models
    from typer.testing import CliRunner

    from co_tui.cli import app, with_bare_resume
    from co_tui.telemetry import shutdown_telemetry

    # The environment is replaced, not added to: what the caller leaves out is unset.
    unset: dict[str, str | None] = dict.fromkeys(os.environ)
    runner = CliRunner(env={**unset, **env})
    # As in a subprocess, the provider the environment names is called (a server the test
    # started on 127.0.0.1, or TestModel): conftest.py forbids requests otherwise.
    allowed, models.ALLOW_MODEL_REQUESTS = models.ALLOW_MODEL_REQUESTS, True
    with contextlib.chdir(cwd):
        try:
            result = runner.invoke(
                app, with_bare_resume(list(args)), input=stdin, catch_exceptions=False
            )
        finally:
            shutdown_telemetry()
            models.ALLOW_MODEL_REQUESTS = allowed
    return Ran(
        result.exit_code,
        result.stdout,
        result.stderr,
        tuple(args),
        result.stdout_bytes,
        result.stderr_bytes,
    )
