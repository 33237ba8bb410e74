"""The embedded llama.cpp server: one child process per co-tui process, started on demand.

`ensure_started(spec)` spawns `python -m llama_cpp.server` on a free loopback port (with a
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
from co_tui.safety.private_files import open_private

HOST = "127.0.0.1"
START_TIMEOUT_S = 180.0
POLL_INTERVAL_S = 0.1
PROGRESS_INTERVAL_S = 0.5

# Runs in the child: exit when the parent pid changes (parent died, we were re-parented),
# then hand over to llama_cpp.server exactly as `python -m llama_cpp.server ARGS` would.
_LAUNCHER = """\
import os, runpy, sys, threading, time
parent = int(sys.argv[1])
def watch():
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
sys.argv = [sys.argv[2], *sys.argv[3:]]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


class LocalServerError(Exception):
    """The local model server could not be started; the message says why and what to do."""


@dataclass(frozen=True)
class LocalServerSpec:
    model_path: Path
    alias: str  # the model name clients send, e.g. "SmolLM2-135M-Instruct"
    n_ctx: int = 4096
    n_threads: int = 2


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


# llama_cpp.server reads every unset setting from an environment variable of the same name
# (HOST, PORT, MODEL, VERBOSE, CACHE, ...): the child gets only what a process needs, and
# the API key there rather than on the command line, where `ps` would show it.
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
    env["API_KEY"] = api_key
    return env


def log_path() -> Path:
    return user_data_dir() / "local-model.log"


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
        options = {
            "--model": str(spec.model_path),
            "--model_alias": spec.alias,
            "--host": HOST,
            "--port": str(self.port),
            "--n_ctx": str(spec.n_ctx),
            "--n_threads": str(spec.n_threads),
            "--n_threads_batch": str(spec.n_threads),
            # The server's default computes logits for every prompt token (for logprobs, which
            # co-tui never asks for): that made a 700-token prompt take ~5 s instead of ~1 s.
            "--logits_all": "false",
        }
        launcher = [sys.executable, "-c", _LAUNCHER, str(os.getpid()), "llama_cpp.server"]
        args = [*launcher, *(word for option in options.items() for word in option)]
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
        last = _log_tail(self.log, 1) or f"exit code {self.proc.returncode}"
        return LocalServerError(
            f"the local model server could not load {self.spec.model_path}: {last} "
            f"(full log: {self.log})"
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
    return "address already in use" in tail or "errno 98" in tail


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
