"""The real `co-tui` on a pseudo-terminal: quitting while /setup's model download waits on a
server that has stopped sending ends the app at once. (Run in a thread worker, the stalled
read held the exit until the download's read timeout, about a minute.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from co_tui.config.paths import models_dir
from co_tui.llm.local.catalog import catalog_model
from co_tui.llm.local.download import part_path
from tests.helpers import wait_for
from tests.servers.fake_openai import serve, text
from tests.servers.file_host import Behaviour, FileHostServer, smollm2_file
from tests.test_peers_pty import co_tui
from tests.test_signals import env_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")

DOWN = b"\x1b[B"
CTRL_Q = b"\x11"
HELD_AT = 3 << 20
# Half the download's read timeout (download.READ_TIMEOUT, 60 s): an exit that waits for the
# stalled read cannot come in time.
EXIT_WITHIN_S = 30


@pytest.mark.e2e
def test_quitting_during_a_stalled_download_ends_the_app_at_once(
    tmp_path: Path, isolated_env: Path
) -> None:
    held = Behaviour(chunk=1 << 20, hold_after=HELD_AT)  # then nothing, for up to a minute
    mirror = FileHostServer(smollm2_file(), held).start()
    part = part_path(models_dir(), catalog_model("smollm2-135m"))
    try:
        with serve([text("unused")]) as srv:
            env = env_for(srv.url, CO_TUI_LOCAL_MODEL_MIRROR=mirror.url)
            with co_tui(tmp_path, env) as term:
                term.type(b"/setup\r")
                term.shows(b"Set up a provider", "the setup dialog")
                term.type(DOWN * 3)
                term.type(b"\r")
                term.shows(b"smollm2-135m", "the catalog")
                term.type(b"\r")
                wait_for(
                    lambda: part.is_file() and part.stat().st_size >= HELD_AT,
                    "the first bytes",
                    term.proc,
                )
                term.type(CTRL_Q)
                wait_for(term.ended, "the app to exit", timeout=EXIT_WITHIN_S)
            assert term.proc.returncode == 0
        assert part.stat().st_size >= HELD_AT  # what arrived is kept for a resume
    finally:
        held.released.set()
        mirror.stop()
