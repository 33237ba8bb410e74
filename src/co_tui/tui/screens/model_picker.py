"""The model picker (/model): the models of every configured provider in one list. Typing
filters it; Up/Down move; Enter dismisses with "provider:model"; Escape with None.

The lists are fetched in a worker once the screen is up, so the screen answers keys while a
slow server is asked; a provider that could not be listed gets one line saying why."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from co_tui.config.settings import Settings
from co_tui.llm.model_list import ProviderModels, catalogue
from co_tui.safety.visible import visible
from co_tui.tui.widgets.keys_footer import KeysFooter

# The entry after the models that opens /setup; its id holds no ":", unlike a model's.
ADD_PROVIDER = "add-provider"


def _add_provider_option() -> Option:
    return Option(Text("add a provider…", style="italic"), id=ADD_PROVIDER)


def _matches(query: str, provider: str, name: str) -> bool:
    return all(word in f"{provider} {name}".lower() for word in query.lower().split())


class ModelPickerScreen(ModalScreen[str | None]):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("escape", "cancel", "Cancel"),
        # Enter is the filter's Submitted (below), not a priority binding: that ran before
        # the filter had taken the keys typed just before it, and chose from the unfiltered
        # list. Here for the key bar; the filter's own Enter comes first.
        Binding("enter", "choose", "Switch"),
        Binding("down", "move(1)", "Next", show=False, priority=True),
        Binding("up", "move(-1)", "Previous", show=False, priority=True),
    ]
    DEFAULT_CSS = """
    ModelPickerScreen { align: center middle; background: $background 60%; }
    #model-dialog {
        width: 72; max-width: 95%; height: 80%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    #model-options { height: 1fr; border: none; }
    #model-status { color: $text-muted; height: auto; }
    #model-failures { color: $warning; height: auto; }
    """

    listed: reactive[tuple[ProviderModels, ...] | None] = reactive(None)
    filter_text: reactive[str] = reactive("")

    def __init__(self, settings: Settings, current: str) -> None:
        """`current` is the "provider:model" in use ("" when unknown)."""
        super().__init__(classes="model-picker-screen")
        self.settings = settings
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="model-dialog") as dialog:
            dialog.border_title = "Switch model"
            yield Input(placeholder="type to filter…", id="model-filter")
            yield OptionList(_add_provider_option(), id="model-options")
            yield Static("Asking the providers for their models…", id="model-status")
            yield Static("", id="model-failures")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#model-filter", Input).focus()
        self._fetch()

    @work(exclusive=True, exit_on_error=False)
    async def _fetch(self) -> None:
        self.listed = tuple(await catalogue(self.settings))

    @on(Input.Changed, "#model-filter")
    def _filter(self, event: Input.Changed) -> None:
        self.filter_text = event.value

    def watch_listed(self) -> None:
        self._show()

    def watch_filter_text(self) -> None:
        self._show()

    def _show(self) -> None:
        if self.listed is None or not self.is_mounted:
            return
        options = self.query_one("#model-options", OptionList)
        options.clear_options()
        shown = 0
        for group in self.listed:
            for name in group.names:
                if not _matches(self.filter_text, group.provider, name):
                    continue
                key = f"{group.provider}:{name}"
                prompt = Text(visible(name, keep=""))
                prompt.append(f"  {group.provider}", style="dim")
                if key == self.current:
                    prompt.append("  in use", style="bold green")
                options.add_option(Option(prompt, id=key))
                shown += 1
        options.add_option(_add_provider_option())
        if shown:
            in_use = options.get_option_index(self.current) if self._has(self.current) else 0
            options.highlighted = in_use
        else:
            options.highlighted = 0
        status = self.query_one("#model-status", Static)
        total = sum(len(group.names) for group in self.listed)
        if not total:
            status.update("No provider listed any model.")
        elif not shown:
            status.update(f"No model matches {self.filter_text!r}.")
        else:
            status.update(f"{shown} of {total} models. Enter switches, Esc keeps the current one.")
        failures = [
            f"{group.provider}: {visible(group.error, keep='')}"
            for group in self.listed
            if group.error
        ]
        self.query_one("#model-failures", Static).update(Text("\n".join(failures)))

    def _has(self, option_id: str) -> bool:
        options = self.query_one("#model-options", OptionList)
        return any(option.id == option_id for option in options.options)

    def action_move(self, step: int) -> None:
        options = self.query_one("#model-options", OptionList)
        if step > 0:
            options.action_cursor_down()
        else:
            options.action_cursor_up()

    @on(Input.Submitted, "#model-filter")
    def action_choose(self) -> None:
        options = self.query_one("#model-options", OptionList)
        if options.highlighted is None or not options.option_count:
            return
        self.dismiss(options.get_option_at_index(options.highlighted).id)

    @on(OptionList.OptionSelected, "#model-options")
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
