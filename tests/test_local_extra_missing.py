"""Without the embedded engine (xllamacpp cannot be imported: a sitecustomize in a temporary
folder hides it from a fresh interpreter), co-tui says so in one short line naming the fix,
not the engine's build flags."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_missing_engine_is_one_short_line_naming_the_fix(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['xllamacpp'] = None\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "src")]),
        "CO_TUI_SANDBOX_BACKEND": "subprocess",
    }
    done = subprocess.run(
        [sys.executable, "-m", "co_tui.cli", "-p", "hello"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode != 0
    error = done.stderr.strip()
    assert "missing: xllamacpp" in error
    assert "make install" in error and "docs/local-model.md" in error
    assert "CMAKE" not in error and "-DGGML" not in error
    assert len(error.splitlines()) == 1
