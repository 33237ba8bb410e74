"""The embedded llama.cpp server: one child process per co-tui process, started on demand.

`ensure_started(spec)` spawns the spec's engine (engines.py) on a free loopback port (with a
random API key, so other local users cannot use it) and waits until `/v1/models` answers.
Every session of the process shares that one server. It is stopped at exit (atexit, SIGTERM,
SIGHUP), and it never outlives its parent: on Linux the kernel sends it SIGTERM when the
parent dies (PR_SET_PDEATHSIG), and everywhere a watchdog thread in the child exits as soon
as its parent process changes (also after SIGKILL).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import httpx

from co_tui.config.paths import user_data_dir
from co_tui.llm.local.engine_child import KEY_VARIABLE
from co_tui.llm.local.engines import CHILD_SCRIPT, ENGINES, EngineName
from co_tui.safety.private_files import open_private
from co_tui.safety.visible import visible

HOST = "127.0.0.1"
START_TIMEOUT_S = 180.0
POLL_INTERVAL_S = 0.1
PROGRESS_INTERVAL_S = 0.5


class LocalServerError(Exception):
    """The local model server could not be started; the message says why and what to do."""


@dataclass(frozen=True)
class LocalServerSpec:
    model_path: Path
    alias: str  # the model name clients send, e.g. "SmolLM2-135M-Instruct"
    n_ctx: int = 4096
    n_threads: int = 2
    engine: EngineName = "xllamacpp"


@dataclass(frozen=True)
class Endpoint:
    base_url: str  # http://127.0.0.1:PORT/v1
    api_key: str
    pid: int


@dataclass(frozen=True)
class StartProgress:
    """What a frontend shows while the model loads: a message, seconds elapsed, and done."""

    message: str
    elapsed_s: float
    done: bool = False


ProgressCallback = Callable[[StartProgress], None]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _pdeathsig_preexec() -> Callable[[], None] | None:
    """A preexec_fn asking the kernel for SIGTERM when the parent dies (Linux only).

    libc is loaded here, in the parent: between fork and exec only the call itself runs.
    """
    if sys.platform != "linux":
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def die_with_parent() -> None:
        prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG

    return die_with_parent


# The child gets only what a process needs, and the API key in its environment rather than
# on the command line, where `ps` would show it.
_PASS_ENV = (
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "PYTHONPATH",
    "PYTHONHOME",
    "VIRTUAL_ENV",
    "SYSTEMROOT",
)


def _child_env(api_key: str) -> dict[str, str]:
    env = {name: os.environ[name] for name in _PASS_ENV if name in os.environ}
    env[KEY_VARIABLE] = api_key
    return env


def log_path() -> Path:
    return user_data_dir() / "local-model.log"


# llama.cpp's log lines: "0.00.007.521 E srv    load_model: failed to load model, 'x.gguf'".
_ENGINE_ERROR = re.compile(r"^[\d.]+ E (.*)$")
_FOLLOW_UPS = ("exiting due to", "co-tui: the engine stopped")


def _reason(tail: str) -> str:
    """The first error llama.cpp logged (what went wrong, not "exiting"), else the last line."""
    lines = tail.splitlines()
    for line in lines:
        match = _ENGINE_ERROR.match(line.strip())
        if match and not any(follow in line for follow in _FOLLOW_UPS):
            return " ".join(match[1].split())
    return lines[-1] if lines else ""


def _log_tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


class _Server:
    def __init__(self, spec: LocalServerSpec) -> None:
        self.spec = spec
        self.port = _free_port()
        self.api_key = secrets.token_urlsafe(24)
        self.ready = False
        self.started_at = time.monotonic()
        self.log = log_path()
        args = [
            sys.executable,
            "-P",  # not the script's folder on sys.path: its siblings are co-tui's modules
            str(CHILD_SCRIPT),
            spec.engine,
            str(os.getpid()),
            str(spec.model_path),
            spec.alias,
            HOST,
            str(self.port),
            str(spec.n_ctx),
            str(spec.n_threads),
        ]
        # PDEATHSIG follows the spawning *thread*: from another thread the child would die
        # with that thread, so there only the watchdog in the child applies.
        on_main = threading.current_thread() is threading.main_thread()
        preexec = _pdeathsig_preexec() if on_main else None
        with open_private(self.log, "w") as log:
            self.proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # the terminal's Ctrl+C is the parent's to handle
                preexec_fn=preexec,
                env=_child_env(self.api_key),
            )

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(f"http://{HOST}:{self.port}/v1", self.api_key, self.proc.pid)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 5.0) -> None:
        if self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            self.proc.wait(timeout)

    def failure(self) -> LocalServerError:
        last = _reason(_log_tail(self.log, 40)) or f"exit code {self.proc.returncode}"
        # The path and the engine's words may hold escape sequences (a file name, a hostile
        # GGUF's strings): shown as escapes, never sent to the terminal as they are.
        return LocalServerError(
            visible(
                f"the local model server could not load {self.spec.model_path}: {last} "
                f"(full log: {self.log})",
                keep="",
            )
        )

    async def wait_ready(self, progress: ProgressCallback | None) -> None:
        url = f"http://{HOST}:{self.port}/v1/models"
        headers = {"Authorization": f"Bearer {self.api_key}"}
        next_report = 0.0
        async with httpx.AsyncClient(timeout=2.0) as client:
            while not self.ready:
                elapsed = time.monotonic() - self.started_at
                if not self.alive():
                    raise self.failure()
                if elapsed > START_TIMEOUT_S:
                    self.stop()
                    raise LocalServerError(
                        f"the local model did not answer within {START_TIMEOUT_S:.0f}s; "
                        f"see {self.log}"
                    )
                if progress is not None and elapsed >= next_report:
                    progress(StartProgress(self.starting_message(), elapsed))
                    next_report = elapsed + PROGRESS_INTERVAL_S
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(url, headers=headers)).status_code == 200:
                        self.ready = True
                        break
                await asyncio.sleep(POLL_INTERVAL_S)
        if progress is not None:
            elapsed = time.monotonic() - self.started_at
            progress(StartProgress(f"local model ready ({elapsed:.1f}s)", elapsed, done=True))

    def starting_message(self) -> str:
        return f"starting the local model ({self.spec.alias})…"


_lock = threading.Lock()
_server: _Server | None = None
_hooks_installed = False


def _port_taken(server: _Server) -> bool:
    tail = _log_tail(server.log, 20).lower()
    return any(mark in tail for mark in ENGINES[server.spec.engine].port_taken_marks)


async def ensure_started(
    spec: LocalServerSpec, progress: ProgressCallback | None = None
) -> Endpoint:
    """Start the shared server if it is not running (or runs another spec); wait until ready.

    Safe to call from any number of sessions: the first caller spawns, every caller waits.
    A server that died (crash, OOM) is started again.
    """
    global _server
    for _attempt in range(3):
        with _lock:
            server = _server
            if server is None or server.spec != spec or not server.alive():
                if server is not None:
                    server.stop()
                server = _server = _Server(spec)
                _install_exit_hooks()
        if server.ready:
            return server.endpoint
        try:
            await server.wait_ready(progress)
        except LocalServerError:
            if _port_taken(server):  # lost the race for the free port: try another
                continue
            raise
        return server.endpoint
    raise LocalServerError("the local model server could not bind a free port on 127.0.0.1")


def running_endpoint() -> Endpoint | None:
    """The endpoint of a ready server, if one is running; never starts one."""
    server = _server
    if server is not None and server.ready and server.alive():
        return server.endpoint
    return None


def shutdown() -> None:
    """Stop the shared server (idempotent). Called at exit; tests call it directly."""
    global _server
    with _lock:
        server, _server = _server, None
    if server is not None:
        server.stop()


def _on_fatal_signal(signum: int, frame: FrameType | None) -> None:
    shutdown()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_exit_hooks() -> None:
    global _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    atexit.register(shutdown)
    if threading.current_thread() is not threading.main_thread():
        return
    # Only where nobody else handles the signal; SIGINT is KeyboardInterrupt -> atexit.
    for signum in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(signum) is signal.SIG_DFL:
                signal.signal(signum, _on_fatal_signal)
