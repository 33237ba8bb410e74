"""Test isolation: every test gets its own XDG config/data dirs and a clean LLM environment,
so nothing reads or writes the developer's real ~/.config/co-tui or ~/.local/share/co-tui."""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from textual.widgets import TextArea

from co_tui.shims import install_shims
from tests.sizes import CI_EXAMPLES, DEV_EXAMPLES

# The patches the app runs with, for the whole test session (co-tui installs them at its entry).
install_shims()

ROOT = Path(__file__).resolve().parent.parent

# Environment that would change which provider or settings a test sees.
_SCRUBBED_ENV_PREFIXES = ("CO_TUI_",)
_SCRUBBED_ENV = (
    "LLM_PROVIDER",
    "GEMINI_API_KEY",
    "GEMINI_MODEL",
    "OLLAMA_HOST",
    "OLLAMA_MODEL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OBSIDIAN_VAULT_PATH",
    "SLACK_BOT_TOKEN",
    "GOOGLE_CREDENTIALS_PATH",
    "BRAVE_SEARCH_API_KEY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    # A desktop session: a daemon under test would notify it, the clipboard reach it.
    "DBUS_SESSION_BUS_ADDRESS",
    "DISPLAY",
    "WAYLAND_DISPLAY",
)

settings.register_profile("ci", max_examples=CI_EXAMPLES)
settings.register_profile("dev", max_examples=DEV_EXAMPLES)
settings.load_profile("ci" if os.environ.get("CO_TUI_CI") else "dev")

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
os.environ.pop("TEXTUAL_THEME", None)


# Longest first, so the workers finish together: the local model's cases (one worker holds
# the model), then the other tiers that wait on a machine part or a process, then the rest.
# The Docker cases share one worker too.
_FIRST = ("llm", "docker", "bwrap", "browser", "e2e", "slow")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("llm"):
            item.add_marker(pytest.mark.xdist_group("local-model"))
        elif item.get_closest_marker("docker"):
            # One worker: a sandbox removes the containers of co-tui processes that ended
            # (tests end some on purpose) and names containers after session ids.
            item.add_marker(pytest.mark.xdist_group("docker-engine"))

    def rank(item: pytest.Item) -> int:
        names = {marker.name for marker in item.iter_markers()}
        return next((i for i, name in enumerate(_FIRST) if name in names), len(_FIRST))

    items.sort(key=rank)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith(_SCRUBBED_ENV_PREFIXES) and name != "CO_TUI_CI":
            monkeypatch.delenv(name, raising=False)
    for name in _SCRUBBED_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    return home


@pytest.fixture(autouse=True)
def no_real_model_requests() -> None:
    """Real providers must never be called by accident; tests use FunctionModel/TestModel
    or a local server they start themselves (and then allow requests explicitly)."""
    from pydantic_ai import models

    previous = models.ALLOW_MODEL_REQUESTS
    models.ALLOW_MODEL_REQUESTS = False
    yield
    models.ALLOW_MODEL_REQUESTS = previous


@pytest.fixture
def allow_model_requests() -> None:
    from pydantic_ai import models

    models.ALLOW_MODEL_REQUESTS = True


@pytest.fixture(autouse=True)
def snapshots_in_top_level_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep pytest-textual-snapshot SVGs in ROOT/snapshots/<test module>/ (see NOTES-textual)."""
    try:
        import pytest_textual_snapshot as pts
    except ImportError:
        return

    class TopLevelSVG(pts.SVGImageExtension):
        @classmethod
        def dirname(cls, *, test_location) -> str:  # type: ignore[override]
            return str(ROOT / "snapshots" / Path(test_location.filepath).stem)

    monkeypatch.setattr(pts, "SVGImageExtension", TopLevelSVG)


@pytest.fixture(autouse=True)
def idle_collections_out_of_the_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """An app collects garbage 0.2 s after a turn. In one long test process that collection
    walks what every earlier test left (0.5 s here, against 8-20 ms in co-tui's own
    process), and the stall shifts when a snapshot is taken: the app tests leave it to
    tests/tui/test_idle_gc.py, which sets its own delay."""
    from co_tui.tui.terminal import idle_gc

    monkeypatch.setattr(idle_gc, "IDLE_S", 60.0)


@pytest.fixture(autouse=True)
def no_telemetry_leaks_between_tests() -> Iterator[None]:
    """Telemetry is installed once per process; an app test that starts it (with that test's
    data dir) must not hand it to the next test."""
    yield
    from co_tui.telemetry import shutdown_telemetry

    shutdown_telemetry()


@pytest.fixture
def snap_compare(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """pytest-textual-snapshot's snap_compare, with every text cursor still and the activity
    line's clock stopped (a test that wants it elsewhere gives its own). The prompt's
    cursor rests after 10 s without input and blinks again at the next key
    (tui/widgets/resting_cursor.py): on a loaded machine a test took longer than that, its
    next key started the blink again, and the screenshot caught either phase (of the screen
    in front, or of one behind a dialog, drawn last before the dialog opened). Here it never
    rests during a test, and every cursor is still when the screenshot is taken."""
    from co_tui.tui.screens.chat import ChatScreen
    from co_tui.tui.widgets import resting_cursor
    from tests.tui.helpers import StillClock

    monkeypatch.setattr(resting_cursor, "REST_AFTER_S", 3600.0)

    def compare(app: Any, *args: Any, run_before: Any = None, **kwargs: Any) -> Any:
        chat = getattr(app, "chat", None)
        if isinstance(chat, ChatScreen) and chat.activity_line.clock is time.monotonic:
            chat.activity_line.clock = StillClock()  # a still spinner and "0s"

        async def then_still(pilot: Any) -> None:
            if run_before is not None:
                result = run_before(pilot)
                if inspect.isawaitable(result):
                    await result
            for screen in pilot.app.screen_stack:
                for widget in screen.walk_children(TextArea, with_self=False):
                    widget.cursor_blink = False
            await pilot.pause()

        return snap_compare(app, *args, run_before=then_still, **kwargs)

    return compare
