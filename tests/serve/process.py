"""`co-tui serve` as a real process on a free loopback port, its app configured (through the
environment, as a user configures co-tui) to use a fake OpenAI server that answers from a
script. Its runtime folder (XDG_RUNTIME_DIR, where the socket for /serve link goes) is a
fresh one, short enough for a Unix socket's path."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.servers.fake_openai import FakeOpenAIServer, Reply
from tests.test_signals import env_for


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServeProcess:
    """`co-tui serve` in its own process group (it starts one app process per browser), and
    the fake OpenAI server its apps ask, answering with `script` (then "ok")."""

    def __init__(self, workspace: Path, port: int, script: list[Reply] | None = None) -> None:
        self.model_server = FakeOpenAIServer(script).start()
        self.runtime_dir = Path(tempfile.mkdtemp(prefix="co-rt-"))
        env = env_for(
            self.model_server.url,
            PYDANTIC_AI_NO_BANNER="1",
            XDG_RUNTIME_DIR=str(self.runtime_dir),
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "co_tui.cli", "serve", "--port", str(port)],
            cwd=workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._url = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if "token=" in line:
                self._url.set()

    def url(self, timeout: float = 30) -> str:
        if not self._url.wait(timeout):
            raise AssertionError("co-tui serve printed no address:\n" + "".join(self.lines))
        line = next(line for line in self.lines if "token=" in line)
        url = line.split("served at ", 1)[1].strip()
        port = int(url.split("?", 1)[0].rstrip("/").rsplit(":", 1)[1])
        deadline = time.monotonic() + timeout
        while True:  # the address is printed just before the server listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return url
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    output = "".join(self.lines)
                    raise AssertionError(f"co-tui serve is not listening:\n{output}") from None
                time.sleep(0.1)

    def links_socket(self, timeout: float = 30) -> Path:
        """The socket where the served apps ask for a link (the server opens it at start)."""
        deadline = time.monotonic() + timeout
        while not (found := sorted(self.runtime_dir.glob("co-tui-serve-*/links.sock"))):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                output = "".join(self.lines)
                raise AssertionError(f"co-tui serve opened no link socket:\n{output}")
            time.sleep(0.1)
        return found[0]

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it ended already, and everything it started with it
        finally:
            self.model_server.stop()
            shutil.rmtree(self.runtime_dir, ignore_errors=True)
