"""/setup's embedded-model catalog: a larger model chosen in the app is downloaded through the
real download code (httpx) from a file host on 127.0.0.1 that serves the SmolLM2 GGUF, shown
with a progress bar, verified, saved as `local_model` in the user's credentials file, and
used. A licence that is not permissive is shown before any byte is asked for; Escape stops a
download and keeps what arrived, and the next Enter resumes it; a wrong file is refused and
nothing is saved; a project's settings cannot choose where the bytes come from."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.widgets import OptionList, ProgressBar, Static

from co_tui.config.paths import models_dir, user_credentials_path
from co_tui.config.settings import Settings
from co_tui.llm.local.catalog import CATALOG, catalog_model
from co_tui.llm.local.download import part_path
from co_tui.tui.screens.setup import SetupDone, SetupScreen
from co_tui.tui.widgets.model_download import ModelDownload
from tests.servers.file_host import Behaviour, FileHostServer, smollm2_file
from tests.tui.helpers import make_app, rendered, text_stream, wait_until

SMOL = catalog_model("smollm2-135m")
SMOL_FILE = smollm2_file()
NOT_SET = object()


class SetupHost(App[None]):
    """The dialog alone, its result kept (the app's switch after it is tested elsewhere)."""

    def __init__(self) -> None:
        super().__init__()
        self.result: object = NOT_SET

    def on_mount(self) -> None:
        self.open()

    def open(self) -> None:
        self.result = NOT_SET
        self.push_screen(SetupScreen(Settings()), self._done)

    def _done(self, result: SetupDone | None) -> None:
        self.result = result


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch) -> Iterator[FileHostServer]:
    """The file host, as the user's mirror (the environment is a user layer)."""
    server = FileHostServer(SMOL_FILE, Behaviour(chunk=1 << 20)).start()
    monkeypatch.setenv("CO_TUI_LOCAL_MODEL_MIRROR", server.url)
    yield server
    server.stop()


HELD_AT = 3 << 20  # the held host sends this many bytes, then waits for `released`


@pytest.fixture
def held_host(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FileHostServer, Behaviour]]:
    """The user's mirror, holding back all after HELD_AT bytes until released: a download
    is stopped mid-way whatever the machine's speed."""
    held = Behaviour(chunk=1 << 20, hold_after=HELD_AT)
    server = FileHostServer(SMOL_FILE, held).start()
    monkeypatch.setenv("CO_TUI_LOCAL_MODEL_MIRROR", server.url)
    yield server, held
    held.released.set()
    server.stop()


async def download_until_held(pilot: Any, app: SetupHost) -> SetupScreen:
    """/setup's catalog, Enter on SmolLM2, and its download started up to the hold."""
    part = part_path(models_dir(), SMOL)
    screen = await choose_local(pilot, app, SMOL.name)
    await pilot.press("enter")
    await wait_until(
        pilot,
        lambda: part.is_file() and part.stat().st_size >= HELD_AT,
        "the first bytes",
        timeout=60,
    )
    return screen


def unlocked(part: Path) -> bool:
    """Whether no download holds `part` (its lock is free: the download closed it)."""
    fd = os.open(part, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def catalog(screen: SetupScreen) -> ModelDownload:
    return screen.query_one("#setup-local", ModelDownload)


def status(screen: SetupScreen) -> str:
    return " ".join(rendered(screen.query_one("#model-download-status", Static)).split())


async def choose_local(pilot: Any, app: SetupHost, model: str) -> SetupScreen:
    """Down to the embedded model, Enter into its catalog, down to `model`."""
    await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), "the setup dialog")
    screen = app.screen
    assert isinstance(screen, SetupScreen)
    await pilot.press("down", "down", "down")
    assert screen.provider == "local"
    await pilot.press("enter")  # into the catalog, on its first row
    listing = catalog(screen).query_one(OptionList)
    await wait_until(pilot, lambda: listing.has_focus, "the catalog's focus")
    while listing.get_option_at_index(listing.highlighted or 0).id != model:
        await pilot.press("down")
    return screen


async def test_a_chosen_model_is_downloaded_verified_saved_and_chosen(
    host: FileHostServer,
) -> None:
    app = SetupHost()
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await choose_local(pilot, app, SMOL.name)
        seen: list[float] = []
        bar = catalog(screen).query_one(ProgressBar)
        await pilot.press("enter")

        def finished() -> bool:
            seen.append(bar.progress)  # the bar at each look, to check that it moved
            return app.result is not NOT_SET

        await wait_until(pilot, finished, "the download's end", timeout=60)
    result = app.result
    assert isinstance(result, SetupDone), result
    assert result.choice == f"local:{SMOL.name}"
    assert (result.settings.llm_provider, result.settings.local_model) == ("local", SMOL.name)
    saved = models_dir() / SMOL.file
    assert saved.read_bytes() == SMOL_FILE.read_bytes()
    assert not part_path(models_dir(), SMOL).exists()
    assert json.loads(user_credentials_path().read_text()) == {
        "llm_provider": "local",
        "local_model": SMOL.name,
    }
    assert [r.path for r in host.requests] == [f"/{SMOL.url.split('/', 3)[3]}"]
    assert 0 < max(seen) <= SMOL_FILE.stat().st_size  # the bar moved with the bytes


async def test_a_licence_is_shown_before_any_byte_and_a_wrong_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Llama 3.2's licence needs accepting: the first Enter shows it and asks nothing of the
    host; the second downloads. The host serves other bytes than the pinned hash under the
    file's name: refused, deleted, nothing saved, the dialog stays open."""
    llama = catalog_model("llama3.2-1b")
    impostor = tmp_path / llama.file
    impostor.write_bytes(b"GGUF" + os.urandom(300_000))
    host = FileHostServer(impostor).start()
    monkeypatch.setenv("CO_TUI_LOCAL_MODEL_MIRROR", host.url)
    app = SetupHost()
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await choose_local(pilot, app, llama.name)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "licence" in status(screen), "the licence")
        assert "Llama-3.2-Community" in status(screen)
        assert llama.licence.url in status(screen).replace(" ", "")  # wrapped at any character
        assert host.requests == []
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: "Not downloaded" in status(screen), "the refusal", timeout=60
        )
        assert "checksum mismatch" in status(screen)
        assert catalog(screen).failed and app.result is NOT_SET
        assert isinstance(app.screen, SetupScreen)
    assert not (models_dir() / llama.file).exists()
    assert not part_path(models_dir(), llama).exists()
    assert not user_credentials_path().exists()
    host.stop()


async def test_escape_stops_a_download_keeps_its_part_and_enter_resumes_it(
    held_host: tuple[FileHostServer, Behaviour],
) -> None:
    server, held = held_host
    part = part_path(models_dir(), SMOL)
    app = SetupHost()
    async with app.run_test(size=(100, 34)) as pilot:
        await download_until_held(pilot, app)
        await pilot.press("escape")
        assert app.result is None
        held.released.set()  # the next chunk arrives: the download stops there
        await wait_until(pilot, lambda: unlocked(part), "the stopped download", timeout=60)
        kept = part.stat().st_size
        assert 0 < kept < SMOL_FILE.stat().st_size
        assert not (models_dir() / SMOL.file).exists()

        app.open()
        screen = await choose_local(pilot, app, SMOL.name)
        listing = catalog(screen).query_one(OptionList)
        row = str(listing.get_option(SMOL.name).prompt)
        assert "partly downloaded" in row
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: isinstance(app.result, SetupDone), "the resumed download", timeout=60
        )
    assert server.requests[-1].range == f"bytes={kept}-"
    assert (models_dir() / SMOL.file).read_bytes() == SMOL_FILE.read_bytes()


async def test_a_project_cannot_choose_where_the_bytes_come_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: FileHostServer
) -> None:
    """A cloned repository's settings name an attacker's mirror: the download still comes
    from the user's own (the project's file is not read for it, trusted or not)."""
    attacker = FileHostServer(SMOL_FILE).start()
    try:
        project = tmp_path / "repo"
        (project / ".co-tui").mkdir(parents=True)
        (project / ".co-tui" / "settings.json").write_text(
            json.dumps({"local_model_mirror": attacker.url})
        )
        monkeypatch.chdir(project)
        app = SetupHost()
        async with app.run_test(size=(100, 34)) as pilot:
            await choose_local(pilot, app, SMOL.name)
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.result is not NOT_SET, "the download", timeout=60)
        assert isinstance(app.result, SetupDone)
        assert attacker.requests == [] and len(host.requests) == 1
    finally:
        attacker.stop()


async def test_rows_without_a_pinned_hash_cannot_be_downloaded_here() -> None:
    app = SetupHost()
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await choose_local(pilot, app, SMOL.name)
        listing = catalog(screen).query_one(OptionList)
        unpinned = [m.name for m in CATALOG if not m.pinned]
        assert unpinned, "the catalog has no row without a hash to test this with"
        for name in unpinned:
            option = listing.get_option(name)
            assert option.disabled
            assert "needs a SHA-256" in str(option.prompt)


def test_the_embedded_model_catalog_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)

    async def run_before(pilot: Any) -> None:
        pilot.app.chat.prompt.cursor_blink = False
        pilot.app.chat.prompt.text = "/setup"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SetupScreen), "setup")
        await pilot.press("down", "down", "down", "enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


async def test_choosing_another_provider_stops_the_download_and_saves_nothing(
    held_host: tuple[FileHostServer, Behaviour],
) -> None:
    _, held = held_host
    part = part_path(models_dir(), SMOL)
    app = SetupHost()
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await download_until_held(pilot, app)
        screen.query_one("#setup-providers", OptionList).focus()
        await pilot.press("up")
        assert screen.provider == "ollama"
        held.released.set()
        stopped = lambda: "Stopped" in catalog(screen).status  # noqa: E731 - hidden now
        await wait_until(pilot, stopped, "the stop", timeout=60)
        await wait_until(pilot, lambda: unlocked(part), "the closed part", timeout=60)
        assert app.result is NOT_SET and isinstance(app.screen, SetupScreen)
    assert not (models_dir() / SMOL.file).exists()
    assert not user_credentials_path().exists()
