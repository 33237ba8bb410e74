"""Keys reach the prompt's text in the order they were typed, however fast they come
(co_tui/tui/widgets/prompt.py, `_run_own_binding`).

Textual inserts a printable key in the widget at once but runs a bound key (Backspace, the
arrows, Ctrl+K) once it has bubbled up to the app (textualize/textual#6605): a burst of keys,
as a loaded machine delivers them, used to send "typed at the firsttell me" for thirty
Backspaces and "tell me". The keys here are posted all at once, as such a burst arrives.
"""

from __future__ import annotations

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import TextArea

from co_tui.tui.widgets.prompt import PromptHistory, PromptInput


class PromptApp(App[None]):
    def __init__(self, field: TextArea) -> None:
        super().__init__()
        self.field = field
        self.sent: list[str] = []

    def compose(self) -> ComposeResult:
        yield self.field

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        self.sent.append(message.text)


def burst(app: App[None], keys: list[str]) -> None:
    """`keys` as the terminal delivers a burst: all queued before the first is handled."""
    for key in keys:
        character = key if len(key) == 1 else None
        app.post_message(events.Key(key, character))


async def typed(field: TextArea, keys: list[str]) -> PromptApp:
    app = PromptApp(field)
    async with app.run_test() as pilot:
        field.focus()
        await pilot.pause()
        burst(app, keys)
        await pilot.pause()
        await pilot.pause()
    return app


async def test_a_backspace_in_a_burst_deletes_the_letter_before_it() -> None:
    prompt = PromptInput(PromptHistory())
    await typed(prompt, ["b", "a", "backspace", "c", "left", "x"])
    assert prompt.text == "bxc"


async def test_what_is_sent_is_the_text_as_edited_before_enter() -> None:
    prompt = PromptInput(PromptHistory())
    app = await typed(prompt, ["h", "e", "l", "o", "backspace", "backspace", "y", "enter", "z"])
    assert app.sent == ["hey"]
    assert prompt.text == "z"


async def test_textual_still_runs_a_text_areas_bindings_out_of_order() -> None:
    """When this fails, Textual keeps the order itself: PromptInput._run_own_binding can go."""
    area = TextArea()
    await typed(area, ["b", "a", "backspace", "c"])
    assert area.text != "bc"
