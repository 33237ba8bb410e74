"""The embedded model's catalog inside /setup: a larger model chosen, downloaded with a
progress bar and used, as `co-tui model pull NAME` does on the command line.

Enter on a model downloads it into the models folder (resumable, verified against the
catalog's pinned SHA-256, never more bytes than the catalog allows; llm/local/download.py
does the work) and posts `Ready` once the file is verified. A model under a licence that is
not permissive shows its licence first; a second Enter accepts it. A row without a pinned
hash cannot be downloaded from here (the command line takes `--sha256`). `stop()` ends a
download at its next chunk and keeps what arrived, so the next try resumes it; a download that
waits on a stalled server never holds up the app's exit.

Where the bytes come from (`local_model_mirror`) is read from the user's own settings, never a
project's: a repository must not choose it."""

from __future__ import annotations

import contextlib
import contextvars
import threading
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from co_tui.config.settings import SettingsError, user_settings
from co_tui.llm.local.catalog import CATALOG, CatalogModel, catalog_model, size_text
from co_tui.llm.local.download import PullError, part_path, plan_pull, pull
from co_tui.safety.visible import visible

HINT = "Enter downloads the model and switches to it · Esc cancels"


class DownloadStopped(Exception):
    """The user stopped the download; what arrived stays for the next try."""


def _row(model: CatalogModel, folder: Path) -> Text:
    if (folder / model.file).is_file():
        state = "downloaded"
    elif part_path(folder, model).is_file():
        state = "partly downloaded"
    elif not model.pinned:
        state = "needs a SHA-256: co-tui model pull"
    else:
        state = size_text(model)
    licence = model.licence.id + (" (accept at download)" if model.licence.needs_acceptance else "")
    row = Text(f"{model.name:<14}", style="bold")
    row.append(f" {state} · {licence}\n", style="dim")
    row.append(f"  {model.about}", style="dim")
    return row


class ModelDownload(Vertical):
    """The catalog as a list; Enter downloads the highlighted model and posts `Ready`."""

    DEFAULT_CSS = """
    ModelDownload { height: auto; }
    #model-download-list { height: auto; max-height: 40vh; border: none; padding: 0; }
    ModelDownload > ProgressBar { margin-top: 1; }
    ModelDownload > #model-download-status { height: auto; margin-top: 1; color: $text-muted; }
    ModelDownload > #model-download-status.-failed { color: $error; }
    """

    @dataclass
    class Ready(Message):
        """The chosen model is downloaded and verified: `name` is its catalog name."""

        name: str

    downloading: reactive[bool] = reactive(False)
    licence_shown: reactive[str] = reactive("")  # the model whose licence awaits Enter
    status: reactive[str] = reactive(HINT)
    failed: reactive[bool] = reactive(False)

    def __init__(self, models_folder: Path, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.models_folder = models_folder
        self._stop = threading.Event()

    def compose(self) -> ComposeResult:
        yield OptionList(
            *(
                Option(_row(model, self.models_folder), id=model.name, disabled=not model.pinned)
                for model in CATALOG
            ),
            id="model-download-list",
        )
        bar = ProgressBar(show_eta=True, id="model-download-progress")
        bar.display = False
        yield bar
        yield Static(HINT, id="model-download-status", markup=False)

    def enter(self) -> None:
        """Enter from the dialog: into the list first, then the highlighted model's download
        (or its licence)."""
        listing = self.query_one(OptionList)
        if not listing.has_focus:
            if listing.highlighted is None:
                listing.highlighted = 0
            listing.focus()
            return
        if listing.highlighted is not None:
            option = listing.get_option_at_index(listing.highlighted)
            if option.id and not option.disabled:
                self._start(option.id)

    def stop(self) -> None:
        """End a running download at its next chunk; the part stays for a resume."""
        self._stop.set()

    @on(OptionList.OptionSelected, "#model-download-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self._start(event.option.id)

    @on(OptionList.OptionHighlighted, "#model-download-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if not self.downloading and event.option.id != self.licence_shown:
            self.licence_shown = ""
            self.say(HINT)

    def _start(self, name: str) -> None:
        if self.downloading:
            return
        model = catalog_model(name)
        if model.licence.needs_acceptance and self.licence_shown != name:
            self.licence_shown = name
            self.say(
                f"{model.name} is under the {model.licence.id} licence: {model.licence.url} "
                "· Enter again accepts it and downloads"
            )
            return
        self._stop.clear()
        self.downloading = True
        self.say(f"Downloading {model.name}… (Esc stops; what arrived is kept)")
        self._spawn(model, accepted=self.licence_shown == name)

    def _spawn(self, model: CatalogModel, accepted: bool) -> None:
        # A daemon thread, not a thread worker: a read stalled by the server (up to a minute)
        # must not hold up the app's exit, which joins the workers' threads.
        context = contextvars.copy_context()  # the active app, for post_message
        worker = threading.Thread(
            target=context.run,
            args=(self._download, model, accepted),
            name=f"model-download-{model.name}",
            daemon=True,
        )
        worker.start()

    def _download(self, model: CatalogModel, accepted: bool) -> None:
        """The download, in its own thread; it reports through messages."""
        try:
            mirror = user_settings().local_model_mirror
            plan = plan_pull(model, sha256=None, accepted_licence=accepted, mirror=mirror)
            pull(plan, self.models_folder, self._progress)
        except DownloadStopped:
            self._post(self._Ended("Stopped; Enter resumes the download.", True))
            return
        except (PullError, SettingsError, OSError) as exc:
            self._post(self._Ended(f"Not downloaded: {exc}", True))
            return
        except Exception as exc:  # a thread of its own: nothing else would report it
            self._post(self._Ended(f"Not downloaded: {type(exc).__name__}: {exc}", True))
            return
        self._post(self._Ended(f"{model.name} downloaded and verified.", False))
        self._post(self.Ready(model.name))

    def _post(self, message: Message) -> None:
        with contextlib.suppress(RuntimeError):  # the app ended while the network was slow
            self.post_message(message)

    def _progress(self, done: int, total: int | None) -> None:
        """Called by the download (its thread) after each chunk."""
        if self._stop.is_set():
            raise DownloadStopped
        self._post(self._Progress(done, total))

    @dataclass
    class _Progress(Message):
        done: int
        total: int | None

    @dataclass
    class _Ended(Message):
        message: str
        failed: bool

    @on(_Progress)
    def _show_progress(self, event: _Progress) -> None:
        event.stop()
        bar = self.query_one(ProgressBar)
        bar.display = True
        bar.update(total=event.total, progress=event.done)

    @on(_Ended)
    def _on_ended(self, event: _Ended) -> None:
        event.stop()
        self._ended(event.message, event.failed)

    def _ended(self, message: str, failed: bool) -> None:
        self.downloading = False
        self.licence_shown = ""
        self.query_one(ProgressBar).display = not failed
        self.say(message, failed=failed)
        listing = self.query_one(OptionList)
        for model in CATALOG:  # a finished or partial download shows in its row
            listing.replace_option_prompt(model.name, _row(model, self.models_folder))

    def say(self, message: str, *, failed: bool = False) -> None:
        self.failed = failed
        self.status = message

    def watch_status(self) -> None:
        self._show_status()

    def watch_failed(self) -> None:
        self._show_status()

    def _show_status(self) -> None:
        if not self.is_mounted:
            return
        status = self.query_one("#model-download-status", Static)
        status.set_class(self.failed, "-failed")
        status.update(Text(visible(self.status, keep="")))
