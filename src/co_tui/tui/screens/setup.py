"""/setup: a provider set up from inside the app. Up/Down choose Gemini, an OpenAI-compatible
server, Ollama or a larger embedded model; Tab reaches its fields (the key is never shown);
Enter tests the connection by listing the provider's models and, when that works, saves the
values in the user's private credentials file (0600, never in the project) and dismisses with
what to switch to. A failed test shows one line saying why and saves nothing; Escape cancels,
test and all. The embedded model's catalog (widgets/model_download.py) downloads the chosen
model first, and saves it as `local_model` once the file is verified.

The test runs in a worker, so the screen answers keys while a slow server is asked."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from co_tui.config.credentials import (
    PROVIDER_FIELDS,
    credential_values,
    save_credentials,
    with_credentials,
)
from co_tui.config.paths import models_dir, user_credentials_path
from co_tui.config.settings import Settings, SettingsError
from co_tui.llm.connection_check import checked_model
from co_tui.llm.model_list import ModelListUnavailable
from co_tui.safety.visible import visible
from co_tui.tui.widgets.keys_footer import KeysFooter
from co_tui.tui.widgets.model_download import ModelDownload

PROVIDERS = (
    ("gemini", "Gemini (Google AI Studio key)"),
    ("openai", "OpenAI-compatible server (OpenAI, llama.cpp, vLLM, LM Studio…)"),
    ("ollama", "Ollama"),
    ("local", "Embedded model: download a larger one (runs offline)"),
)
# Which fields each provider shows: key, URL, model (the embedded model: its catalog instead).
FIELDS: dict[str, tuple[str, ...]] = {
    "gemini": ("key",),
    "openai": ("url", "key", "model"),
    "ollama": ("url", "model"),
    "local": (),
}
URL_PLACEHOLDERS = {"openai": "https://api.openai.com/v1", "ollama": "http://localhost:11434"}
KEY_PLACEHOLDERS = {"gemini": "your key (required)", "openai": "optional for a local server"}
IDLE = "Enter tests the connection and saves · Esc cancels"


@dataclass(frozen=True)
class SetupDone:
    """What was set up: the "provider:model" to switch to, and the settings with the saved
    credentials applied (this session does not read the file again)."""

    choice: str
    settings: Settings


class SetupScreen(ModalScreen[SetupDone | None]):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("escape", "cancel", "Cancel"),
        # Enter is a field's Submitted or the list's OptionSelected (below), not a priority
        # binding: that ran before the field had taken the keys typed just before it (a
        # pasted URL and Enter tested an empty field). Here for the key bar.
        Binding("enter", "test_and_save", "Test and save"),
    ]
    DEFAULT_CSS = """
    SetupScreen { align: center middle; background: $background 60%; }
    #setup-dialog {
        width: 76; max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    #setup-providers { height: auto; border: none; margin-bottom: 1; }
    .setup-field { height: 1; margin-bottom: 1; }
    .setup-field Label { width: 7; color: $text-muted; }
    .setup-field Input { width: 1fr; }
    #setup-status { height: auto; margin-top: 1; color: $text-muted; }
    #setup-status.-failed { color: $error; }
    #setup-where { height: auto; color: $text-muted; }
    """

    provider: reactive[str] = reactive("gemini")
    testing: reactive[bool] = reactive(False)
    failure: reactive[str] = reactive("")

    def __init__(self, settings: Settings) -> None:
        super().__init__(classes="setup-screen")
        self.settings = settings

    def compose(self) -> ComposeResult:
        with Vertical(id="setup-dialog") as dialog:
            dialog.border_title = "Set up a provider"
            yield OptionList(
                *(Option(label, id=name) for name, label in PROVIDERS), id="setup-providers"
            )
            for field, label in (("url", "URL"), ("key", "Key"), ("model", "Model")):
                with Horizontal(id=f"setup-{field}-row", classes="setup-field"):
                    yield Label(label)
                    yield Input(id=f"setup-{field}", password=field == "key", compact=True)
            yield ModelDownload(models_dir(), id="setup-local")
            yield Static(IDLE, id="setup-status")
            yield Static(
                f"Saved in {_as_typed(user_credentials_path())}, readable by you only; "
                "never in the project.",
                id="setup-where",
                markup=False,
            )
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#setup-providers", OptionList).highlighted = 0
        self.query_one("#setup-providers", OptionList).focus()
        self._show_fields()

    @on(OptionList.OptionHighlighted, "#setup-providers")
    def _chosen(self, event: OptionList.OptionHighlighted) -> None:
        self.provider = event.option.id or "gemini"

    @on(OptionList.OptionSelected, "#setup-providers")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.provider = event.option.id or "gemini"
        self.action_test_and_save()

    def watch_provider(self) -> None:
        self.failure = ""
        if self.is_mounted:
            self._show_fields()
            if self.provider != "local":  # a download is for the catalog's choice only
                self.query_one("#setup-local", ModelDownload).stop()

    def _show_fields(self) -> None:
        shown = FIELDS[self.provider]
        for field in ("url", "key", "model"):
            self.query_one(f"#setup-{field}-row").display = field in shown
        local = self.provider == "local"
        self.query_one("#setup-local", ModelDownload).display = local
        self.query_one("#setup-status", Static).display = not local
        url = self.query_one("#setup-url", Input)
        url.placeholder = URL_PLACEHOLDERS.get(self.provider, "")
        if self.provider == "ollama":
            url.placeholder = self.settings.ollama_host
        self.query_one("#setup-key", Input).placeholder = KEY_PLACEHOLDERS.get(self.provider, "")
        self.query_one("#setup-model", Input).placeholder = "empty: the first the server lists"

    def watch_testing(self) -> None:
        self._show_status()

    def watch_failure(self) -> None:
        self._show_status()

    def _show_status(self) -> None:
        if not self.is_mounted:
            return
        status = self.query_one("#setup-status", Static)
        status.set_class(bool(self.failure), "-failed")
        if self.failure:
            status.update(Text(f"Not saved: {visible(self.failure, keep='')}"))
        elif self.testing:
            status.update("Testing the connection… (Esc cancels)")
        else:
            status.update(IDLE)

    def _field(self, name: str) -> str:
        if name not in FIELDS[self.provider]:
            return ""
        return self.query_one(f"#setup-{name}", Input).value.strip()

    @on(Input.Submitted)
    def action_test_and_save(self) -> None:
        if self.provider == "local":  # Enter on the provider list goes into the catalog
            self.query_one("#setup-local", ModelDownload).enter()
            return
        if self.testing:
            return
        self.failure = ""
        url = self._field("url")
        if self.provider == "ollama" and not url:
            url = self.settings.ollama_host
        try:
            values = credential_values(self.provider, self._field("key"), url, self._field("model"))
            candidate = with_credentials(self.settings, values)
        except SettingsError as exc:
            self.failure = str(exc)
            return
        self.testing = True
        self._test_and_save(values, candidate)

    @work(exclusive=True, exit_on_error=False, group="setup-test")
    async def _test_and_save(self, values: dict[str, str], candidate: Settings) -> None:
        provider = values["llm_provider"]
        model_field = PROVIDER_FIELDS[provider][2]
        try:
            model = await checked_model(candidate, provider, values.get(model_field, ""))
            values[model_field] = model
            save_credentials(values)
        except (ModelListUnavailable, SettingsError, OSError) as exc:
            self.failure = str(exc)
            return
        finally:
            self.testing = False
        self.dismiss(SetupDone(f"{provider}:{model}", with_credentials(candidate, values)))

    @on(ModelDownload.Ready)
    def _downloaded(self, event: ModelDownload.Ready) -> None:
        if self.provider != "local":  # another provider was chosen as the last bytes came
            return
        values = {"llm_provider": "local", "local_model": event.name}
        try:
            save_credentials(values)
            chosen = with_credentials(self.settings, values)
        except (SettingsError, OSError) as exc:
            self.query_one("#setup-local", ModelDownload).say(f"Not saved: {exc}", failed=True)
            return
        self.dismiss(SetupDone(f"local:{event.name}", chosen))

    def action_cancel(self) -> None:
        self.workers.cancel_group(self, "setup-test")
        self.query_one("#setup-local", ModelDownload).stop()
        self.dismiss(None)


def _as_typed(path: Path) -> str:
    """The path as the user would type it: under $XDG_CONFIG_HOME or ~ when it is."""
    for base, label in (
        (os.environ.get("XDG_CONFIG_HOME"), "$XDG_CONFIG_HOME"),
        (Path.home(), "~"),
    ):
        if base and path.is_relative_to(base):
            return f"{label}/{path.relative_to(base)}"
    return str(path)
