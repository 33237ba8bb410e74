"""The gate on the embedded local model: `co-tui eval --max-degradation 10` must exit 0.

A real run of every golden case against the committed
`evals/baseline-local-SmolLM2-135M-Instruct.json`, on two threads: the `llm` tier runs alone
after the others (`make test`), so both cores are free (5 m 15 s here, against 9 m 0 s on one
thread). Decoding is greedy with a fixed seed, so identical runs give identical answers; a
timeout on a busy machine is retried once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.llm, pytest.mark.timeout(2400)]

BASELINE = ROOT / "evals" / "baseline-local-SmolLM2-135M-Instruct.json"


def test_local_model_does_not_degrade_against_its_baseline(tmp_path: Path) -> None:
    assert BASELINE.is_file(), "the committed baseline of the local model is missing"
    env = dict(os.environ)  # conftest scrubbed the provider settings: the local model is chosen
    env["COLUMNS"] = "160"
    # The baseline was saved with two threads: llama.cpp's sums (and so a greedy answer) can
    # differ with the thread count.
    env["CO_TUI_LOCAL_THREADS"] = "2"
    proc = subprocess.run(
        [sys.executable, "-m", "co_tui.cli", "eval", "--max-degradation", "10",
         "--results-dir", str(tmp_path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=2300,
    )  # fmt: skip
    report = f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.returncode == 0, report
    assert "gate: passed" in proc.stdout, report
    assert (tmp_path / "results-local-SmolLM2-135M-Instruct.json").is_file()
