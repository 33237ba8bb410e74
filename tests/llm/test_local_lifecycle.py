"""The server's life: lazy start, shutdown, no orphan when the parent dies, and `co-tui -p`."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from co_tui.config.settings import LocalEngineName as EngineName
from co_tui.config.settings import Settings
from co_tui.llm.local import provider as local
from co_tui.llm.local import server as local_server
from co_tui.llm.local.engines import ENGINES
from tests.llm.conftest import local_settings, process_gone

pytestmark = pytest.mark.llm

# A co-tui process in miniature: starts the shared server, says its pid, then waits.
# With FROM_THREAD the start happens off the main thread, where PR_SET_PDEATHSIG is not
# used: then the watchdog inside the server must notice the parent's death on its own.
# Ctrl-C reaches co-tui from an interactive shell; a suite started as a background job of a
# script inherits SIGINT ignored, so the child takes Python's own handler back.
CHILD = """
import asyncio, signal, sys, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from co_tui.config.settings import Settings
from co_tui.llm.local import provider as local, server as local_server
start = lambda: asyncio.run(local_server.ensure_started(local.local_spec(Settings())))
if sys.argv[1] == "thread":
    box = []
    worker = threading.Thread(target=lambda: box.append(start()))
    worker.start()
    worker.join()
    endpoint = box[0]
else:
    endpoint = start()
print(endpoint.pid, flush=True)
time.sleep(120)
"""


def wait_gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process_gone(pid):
            return True
        time.sleep(0.1)
    return False


def test_status_resolves_local_without_starting_a_server(tmp_path: Path) -> None:
    from co_tui.session.health import model_rows

    local_server.shutdown()
    started = time.perf_counter()
    rows = {row.name: row.value for row in model_rows(local_settings(tmp_path))}
    assert time.perf_counter() - started < 2.0
    assert rows["Provider"] == "local (automatic)"
    assert rows["Model"] == "local:SmolLM2-135M-Instruct"
    assert rows["Model file"].endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert rows["API key"] == "not needed"
    assert local_server.running_endpoint() is None


@pytest.mark.parametrize("engine", list(ENGINES))
def test_server_is_gone_after_shutdown(engine: EngineName, tmp_path: Path) -> None:
    if engine != Settings().local_engine and ENGINES[engine].missing_modules():
        pytest.skip(f"the optional engine {engine} is not installed (docs/local-model.md)")
    spec = local.local_spec(local_settings(tmp_path, local_engine=engine))
    endpoint = asyncio.run(local_server.ensure_started(spec))
    again = asyncio.run(local_server.ensure_started(spec))
    assert again == endpoint, "one server per process"
    assert not process_gone(endpoint.pid)
    assert endpoint.base_url.startswith("http://127.0.0.1:")
    models = f"{endpoint.base_url}/models"
    assert httpx.get(models).status_code == 401, "other local users must not use the server"
    key = {"Authorization": f"Bearer {endpoint.api_key}"}
    assert httpx.get(models, headers=key).status_code == 200
    assert endpoint.api_key not in Path(f"/proc/{endpoint.pid}/cmdline").read_text()
    chat = {"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 8}
    reply = httpx.post(f"{endpoint.base_url}/chat/completions", json=chat, headers=key, timeout=60)
    assert reply.json()["choices"][0]["message"]["content"].strip()

    local_server.shutdown()

    assert process_gone(endpoint.pid)
    assert local_server.running_endpoint() is None


@pytest.mark.parametrize(
    ("signum", "started_from"),
    [
        (signal.SIGKILL, "main"),
        (signal.SIGKILL, "thread"),
        (signal.SIGTERM, "main"),
        (signal.SIGINT, "main"),
    ],
)
def test_no_orphan_when_the_parent_dies(signum: int, started_from: str, tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, started_from], stdout=subprocess.PIPE,
        stderr=(tmp_path / "child.err").open("w"), cwd=tmp_path, text=True,
        env={**os.environ, "XDG_DATA_HOME": str(tmp_path)},
    )  # fmt: skip
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.strip().isdigit():
            child.wait(timeout=30)
            err = (tmp_path / "child.err").read_text()[-2000:]
            log = local_server._log_tail(tmp_path / "co-tui" / "local-model.log", 20)
            pytest.fail(f"the child did not start a server: {line!r}\n{err}\n{log}")
        server_pid = int(line)
        assert not process_gone(server_pid)

        child.send_signal(signum)
        child.wait(timeout=15)

        assert wait_gone(server_pid), f"llama server {server_pid} outlived its parent ({signum})"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def _llm_free_env(tmp_path: Path) -> dict[str, str]:
    scrub = ("LLM_PROVIDER", "GEMINI_API_KEY", "OLLAMA_HOST", "OPENAI_API_KEY", "OPENAI_BASE_URL")
    env = {k: v for k, v in os.environ.items() if k not in scrub and not k.startswith("CO_TUI_")}
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        env[name] = str(tmp_path / name.lower())
    env["HOME"] = str(tmp_path)
    env["CO_TUI_SANDBOX_BACKEND"] = "subprocess"
    return env


def test_headless_answers_with_no_provider_configured(tmp_path: Path) -> None:
    co_tui = Path(sys.executable).with_name("co-tui")
    proc = subprocess.run(
        [str(co_tui), "-p", "What colour is the sky?"], cwd=tmp_path,
        env=_llm_free_env(tmp_path), capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), proc.stderr
    assert "starting the local model (SmolLM2-135M-Instruct)…" in proc.stderr
    log = tmp_path / "xdg_data_home" / "co-tui" / "local-model.log"
    assert log.is_file()


def test_a_model_that_fails_to_load_is_reported(tmp_path: Path) -> None:
    default = local.default_model_path()
    assert default is not None
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(default.read_bytes()[:2_000_000])  # a GGUF header, then nothing
    spec = local.local_spec(local_settings(tmp_path, local_model_path=str(broken)))

    refused = pytest.raises(local_server.LocalServerError, match=r"could not load .*broken\.gguf")
    with refused as info:
        asyncio.run(local_server.ensure_started(spec))
    # What llama.cpp said went wrong, not its last words ("exiting due to ...").
    assert "corrupted or incomplete" in str(info.value)
    assert "exiting" not in str(info.value)
    assert local_server.running_endpoint() is None
    local_server.shutdown()


def test_a_hostile_model_file_name_reaches_no_terminal_as_escape_codes(tmp_path: Path) -> None:
    broken = tmp_path / "evil\x1b]0;owned\x07\x1b[2J.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 64)  # a GGUF header and nothing after it
    spec = local.local_spec(local_settings(tmp_path, local_model_path=str(broken)))

    with pytest.raises(local_server.LocalServerError) as info:
        asyncio.run(local_server.ensure_started(spec))
    message = str(info.value)
    assert "\x1b" not in message and "\x07" not in message
    assert "evil\\x1b]0;owned" in message  # shown, escaped: the user can still tell which file
    local_server.shutdown()


HOSTILE_MODULES = ("threading", "runpy", "xllamacpp", "llama_cpp", "time")


@pytest.mark.parametrize("engine", list(ENGINES))
def test_a_repository_cannot_plant_modules_in_the_server(
    engine: EngineName, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """co-tui runs in the user's workspace, often a cloned repository: a module file there
    with the name of one the server imports must never run in it."""
    if engine != Settings().local_engine and ENGINES[engine].missing_modules():
        pytest.skip(f"the optional engine {engine} is not installed (docs/local-model.md)")
    repo = tmp_path / "cloned-repo"
    repo.mkdir()
    marker = tmp_path / "planted-code-ran"
    for name in HOSTILE_MODULES:
        (repo / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    monkeypatch.chdir(repo)
    spec = local.local_spec(local_settings(tmp_path, local_engine=engine))
    try:
        endpoint = asyncio.run(local_server.ensure_started(spec))
        key = {"Authorization": f"Bearer {endpoint.api_key}"}
        assert httpx.get(f"{endpoint.base_url}/models", headers=key).status_code == 200
    finally:
        local_server.shutdown()
    assert not marker.exists(), marker.read_text()
