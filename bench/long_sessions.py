"""`make bench-long`: what an hours-long session costs, in a real terminal (tmux, 120x40),
against the fake OpenAI server, co-tui beside the minimal Textual chat (bench/minimal_chat.py)
measured the same way in the same run. One run each: the whole takes about 15 minutes.

- A long answer: STREAM_S seconds of text at STREAM_CHARS_PER_S (about 50 tokens a second,
  a fast provider); RSS each minute, and its growth per minute after the first.
- Many turns: TURNS short turns in one session; RSS after turn EARLY_TURN and after the last.
- Idle CPU: utime + stime from /proc over 5 s, once the session has settled.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.servers.fake_openai import FakeOpenAIServer, serve, text

from bench.p8_terminal import PLACEHOLDER, Session, environment
from bench.terminal import Terminal

STREAM_S = float(os.environ.get("BENCH_STREAM_S", "180"))
STREAM_CHARS_PER_S = 200
CHUNK_S = 0.05  # a chunk every 50 ms, as providers send them
TURNS = int(os.environ.get("BENCH_TURNS", "200"))
EARLY_TURN = 20
TURN_TOKENS = 200
IDLE_WINDOW_S = 5.0
SETTLE_S = 3.0
PARAGRAPH = (
    "Some prose with `code`, **bold** and *emphasis* that runs on for a while, as an "
    "answer does when it explains something at length. "
)


@dataclass
class Figures:
    values: dict[str, float] = field(default_factory=dict)


def long_answer(seconds: float) -> tuple[str, int]:
    """(the answer, its chunk count): STREAM_CHARS_PER_S for `seconds`, in paragraphs."""
    size = int(seconds * STREAM_CHARS_PER_S)
    paragraphs = (PARAGRAPH * 3 + "\n\n") * (size // (len(PARAGRAPH) * 3) + 1)
    return f"{paragraphs[:size]}\n\nLASTWORDSTREAM\n", max(1, int(seconds / CHUNK_S))


def stream(figures: Figures, term: Terminal, server: FakeOpenAIServer, seconds: float) -> None:
    answer, chunks = long_answer(seconds)
    server.default = text(answer, chunks=chunks, delay_s=CHUNK_S)
    term.type("explain at length")
    term.wait_for(lambda s: "explain at length" in s, "the typed prompt")
    term.press("Enter")
    started = time.monotonic()
    minute = 1
    while "LASTWORDSTREAM" not in term.screen():
        if time.monotonic() - started >= 60 * minute:
            figures.values[f"stream: RSS at {minute} min (MB)"] = term.rss_mb()
            minute += 1
        if time.monotonic() - started > seconds * 2 + 60:
            raise RuntimeError("the long answer did not end")
        time.sleep(0.5)
    figures.values["stream: RSS at the end (MB)"] = term.rss_mb()
    measured = [v for k, v in figures.values.items() if k.startswith("stream: RSS at ")]
    if len(measured) >= 3:  # at 1 min, ..., the end
        spent_min = (time.monotonic() - started) / 60 - 1
        growth = (measured[-1] - measured[0]) / spent_min
        figures.values["stream: RSS growth after the first minute (MB/min)"] = growth


def many_turns(figures: Figures, term: Terminal, server: FakeOpenAIServer, turns: int) -> None:
    session = Session(term, server)
    session.turns = 1  # the long answer was the first
    early = min(EARLY_TURN, turns)
    while session.turns < turns:
        session.turn(TURN_TOKENS)
        if session.turns == early:
            time.sleep(SETTLE_S)
            figures.values[f"RSS after turn {early} (MB)"] = term.rss_mb()
    time.sleep(SETTLE_S)
    figures.values[f"RSS after turn {turns} (MB)"] = term.rss_mb()
    before = term.cpu()
    time.sleep(IDLE_WINDOW_S)
    figures.values["CPU idle, 5 s after the last turn (s)"] = term.cpu() - before


def measure(
    argv: list[str],
    server: FakeOpenAIServer,
    home: Path,
    socket: str,
    stream_s: float = STREAM_S,
    turns: int = TURNS,
) -> Figures:
    figures = Figures()
    term = Terminal(socket)
    try:
        term.start(argv, environment(home, server.url), home / "ws")
        term.wait_for(lambda s: PLACEHOLDER in s, "the prompt")
        stream(figures, term, server, stream_s)
        many_turns(figures, term, server, turns)
    finally:
        term.close()
    return figures


def main() -> None:
    python = sys.executable
    co_tui = str(Path(python).with_name("co-tui"))
    minimal = str(Path(__file__).with_name("minimal_chat.py"))
    with serve() as server, tempfile.TemporaryDirectory() as tmp:
        results = {}
        for name, argv in (
            ("co-tui", [co_tui]),
            ("baseline", [python, minimal, f"{server.url}/v1"]),
        ):
            home = Path(tmp) / name
            (home / "ws").mkdir(parents=True)
            results[name] = measure(argv, server, home, f"bench-long-{name}-{os.getpid()}")
    app, base = results["co-tui"].values, results["baseline"].values
    print(
        f"Long sessions in a real terminal (tmux 120x40, fake OpenAI server): a {STREAM_S:g} s "
        f"answer at {STREAM_CHARS_PER_S} characters a second, then {TURNS} turns of "
        f"{TURN_TOKENS} tokens; one run each"
    )
    print("| measure | co-tui | baseline | co-tui / baseline |")
    print("|---|---|---|---|")
    for name, value in app.items():
        reference = base.get(name)
        ratio = f"{value / reference:.2f}" if reference else "-"
        shown = f"{reference:.2f}" if reference is not None else "-"
        print(f"| {name} | {value:.2f} | {shown} | {ratio} |")
    early, late = (
        app.get(f"RSS after turn {EARLY_TURN} (MB)"),
        app.get(f"RSS after turn {TURNS} (MB)"),
    )
    if early and late:
        print(f"co-tui RSS after turn {TURNS} / after turn {EARLY_TURN}: {late / early:.3f}")


if __name__ == "__main__":
    main()
