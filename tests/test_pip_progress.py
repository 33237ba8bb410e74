"""scripts/pip_progress.py on fake pip commands: progress lines, the exit status, the log."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "pip_progress.py"

FAKE_BUILD = """
import sys
print("Obtaining file:///work/co-tui")
print("Collecting httpx>=0.27")
print("  Downloading httpx-0.28.1-py3-none-any.whl (73 kB)")
print("Building wheel for llama-cpp-python (pyproject.toml): started")
print("  -- Configuring done (2.1s)")
for i in range(1, 5):
    print(f"  [{i}/4] Building C object vendor/llama.cpp/ggml/src/ggml.c.o")
print("Installing collected packages: httpx, llama-cpp-python")
print("Successfully installed httpx-0.28.1 llama-cpp-python-0.3.9")
"""

FAKE_FAILURE = """
import sys
print("Building wheel for llama-cpp-python (pyproject.toml): started")
print("  [ 45%] Building CXX object vendor/llama.cpp/src/llama.cpp.o")
print("  error: cc1plus: out of memory allocating 65536 bytes")
sys.exit(3)
"""


def run(code: str, log: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SCRIPT), "--log", str(log), *extra, "--"]
    return subprocess.run(
        [*command, sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )


def test_not_a_terminal_says_what_it_does_and_the_steps_done_of_total(tmp_path: Path) -> None:
    log = tmp_path / "pip.log"
    proc = run(FAKE_BUILD, log, "--every", "0")
    assert proc.returncode == 0, proc.stdout
    lines = proc.stdout.splitlines()
    assert any("about 16 minutes on 2 cores the first time" in line for line in lines)
    assert any("step 4 of 4 (100%)" in line for line in lines)
    assert lines[-1].endswith(" · done")
    assert "Successfully installed" in log.read_text()  # everything pip said is in the log
    assert "\r" not in proc.stdout


def test_every_limits_the_lines_in_a_ci_log(tmp_path: Path) -> None:
    proc = run(FAKE_BUILD, tmp_path / "pip.log", "--every", "3600")
    assert not any("step" in line for line in proc.stdout.splitlines())  # only phase changes


def test_a_failure_shows_the_last_lines_and_where_the_log_is(tmp_path: Path) -> None:
    log = tmp_path / "pip.log"
    proc = run(FAKE_FAILURE, log)
    assert proc.returncode == 3
    assert "pip failed (exit code 3)" in proc.stdout
    assert "out of memory" in proc.stdout
    assert f"the full log: {log}" in proc.stdout


@pytest.mark.e2e
def test_on_a_terminal_one_line_is_rewritten_in_place(tmp_path: Path) -> None:
    main, child = pty.openpty()
    command = [sys.executable, str(SCRIPT), "--log", str(tmp_path / "pip.log"), "--"]
    proc = subprocess.Popen([*command, sys.executable, "-c", FAKE_BUILD], stdout=child)
    os.close(child)
    output = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the child side closed
            break
        if not chunk:
            break
        output += chunk
    assert proc.wait(timeout=60) == 0
    os.close(main)
    text = output.decode()
    assert text.count("\n") <= 2  # one line, rewritten with \r, then the final newline
    assert "\r" in text and " · done" in text
