"""The baseline for p8: the least a Textual chat app does. A prompt, a transcript of Static
lines, and answers streamed from the same OpenAI-compatible server with httpx. Run as a
program: `python bench/minimal_chat.py BASE_URL`."""

from __future__ import annotations

import json
import sys
import time

import httpx
from textual import work
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Static

UPDATE_S = 0.1


class MinimalChat(App[None]):
    CSS = "VerticalScroll { height: 1fr; } Input { dock: bottom; }"
    AUTO_FOCUS = "Input"

    def __init__(self, base_url: str) -> None:
        super().__init__()
        self.base_url = base_url

    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="transcript")
        yield Input(placeholder="Ask anything")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.input.value = ""
        transcript = self.query_one("#transcript", VerticalScroll)
        transcript.mount(Static(f"> {event.value}"))
        answer = Static("")
        transcript.mount(answer)
        self.stream(event.value, answer)

    @work(exclusive=True)
    async def stream(self, prompt: str, answer: Static) -> None:
        body = {"model": "fake", "stream": True, "messages": [{"role": "user", "content": prompt}]}
        text = ""
        last = 0.0
        async with httpx.AsyncClient(timeout=60) as client:
            url = f"{self.base_url}/chat/completions"
            async with client.stream("POST", url, json=body) as response:
                async for line in response.aiter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    choices = json.loads(line[6:]).get("choices") or [{}]
                    text += choices[0].get("delta", {}).get("content") or ""
                    now = time.monotonic()
                    if now - last > UPDATE_S:
                        last = now
                        self.show(answer, text)
        self.show(answer, text)

    def show(self, answer: Static, text: str) -> None:
        answer.update(text)
        transcript = self.query_one("#transcript", VerticalScroll)
        self.call_after_refresh(transcript.scroll_end, animate=False)


if __name__ == "__main__":
    MinimalChat(sys.argv[1]).run()
