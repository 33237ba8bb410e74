"""The welcome above the transcript: in full on the first launch, one line afterwards.

The first launch is the one that finds no marker file in the user data folder; the app writes
it (0600) once the welcome is shown. The model and sandbox lines follow the chat screen's
status (bound to its `SessionStatus`), so they change from "loading model…" to the model once
the agent is built.
The welcome is not part of the conversation: the chat screen hides it when the first turn,
command or restored session arrives.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Group, RenderableType
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from co_tui.safety.private_files import open_private
from co_tui.session.status import SessionStatus

MARKER_NAME = "welcomed"

EXAMPLE_PROMPTS = (
    "What is in this folder? Summarise the README for me.",
    "!git status   (a leading ! runs the command yourself, in the sandbox)",
    "Draft a short, polite reply declining Thursday's meeting.",
)
# What the embedded 135M model handles (tried on it in the app: retrieval shortlists no tool
# for these, and it answers them), and the command you run yourself. It cannot summarise files
# or draft mail reliably, or translate; "a fun fact" made retrieval pick save_memory.
LOCAL_EXAMPLE_PROMPTS = (
    "Why is the sea salty?",
    "!ls   (a leading ! runs the command yourself, in the sandbox)",
    "Which is the largest ocean on Earth?",
)

KEYS = (
    ("Enter", "send"),
    ("Ctrl+J", "new line"),
    ("Esc", "cancel the turn"),
    ("Ctrl+P", "commands"),
    ("Ctrl+C twice", "quit"),
)


def first_launch(data_dir: Path) -> bool:
    return not (data_dir / MARKER_NAME).exists()


def remember_launch(data_dir: Path) -> None:
    """The next launch shows one line. A marker that cannot be written only means the full
    welcome again next time."""
    try:
        with open_private(data_dir / MARKER_NAME, "w") as fh:
            fh.write("co-tui has welcomed you; delete this file to see the welcome again\n")
    except OSError:
        pass


class Welcome(Widget):
    """What co-tui is running with and how to begin; one line after the first launch."""

    DEFAULT_CSS = """
    Welcome {
        height: auto;
        padding: 0 1;
        margin: 0 0 1 0;
        color: $text-muted;
    }
    Welcome.-first {
        border: round $primary 60%;
        color: $text;
    }
    """

    status: reactive[SessionStatus] = reactive(SessionStatus(), repaint=False)

    def __init__(self, *, first: bool, id: str | None = None) -> None:
        super().__init__(id=id)
        self.first = first
        self.set_class(first, "-first")

    def watch_status(self, old: SessionStatus, new: SessionStatus) -> None:
        """Laid out again when what it shows changes (the tokens and notes do not show here)."""
        if _shown(old) != _shown(new):
            self.refresh(layout=True)

    def render(self) -> RenderableType:
        status = self.status
        if not self.first:
            return Text.assemble(
                ("co-tui", "bold"),
                f" · {status.model} · sandbox: {status.sandbox} · ",
                ("/help", "bold"),
                " for commands",
            )
        return self._full()

    def _full(self) -> RenderableType:
        status = self.status
        title = Text("Welcome to co-tui: a private assistant in your terminal.", style="bold")
        running = Text.assemble(
            ("Model ", "bold"), status.model, "  ·  ", ("Sandbox ", "bold"), status.sandbox
        )
        examples = Text("Try one:", style="bold")
        for prompt in LOCAL_EXAMPLE_PROMPTS if status.local_model else EXAMPLE_PROMPTS:
            examples.append(f"\n  {prompt}", style="not bold")
        keys = Text("Keys ", style="bold")
        for i, (key, what) in enumerate(KEYS):
            keys.append(" · " if i else " ", style="not bold")
            keys.append(key, style="bold")
            keys.append(f" {what}", style="not bold")
        if status.local_model:
            provider = Text.assemble(
                "The embedded local model answers, offline. ",
                ("/setup", "bold"),
                " to use Gemini, an OpenAI-compatible server, Ollama or a larger local model.",
            )
        else:
            provider = Text.assemble(
                ("Another model? ", "bold"),
                ("/setup", "bold"),
                " adds Gemini, an OpenAI-compatible server or Ollama; ",
                ("/model", "bold"),
                " switches.",
            )
        return Group(title, running, examples, keys, provider)


def _shown(status: SessionStatus) -> tuple[str, str, bool]:
    return status.model, status.sandbox, status.local_model
