"""P8: co-tui as a user sees it, in a real terminal (tmux, 120x40), against the fake OpenAI
server: launch -> prompt, first key echoed, CPU in the first 10 s, idle CPU, 2k- and
20k-token answers (Enter -> last word on screen, and CPU), the CPU in the 2 s after an
answer, turn 31 of a session (and the median of turns 21-31, one turn being a noisy sample on
a busy machine), memory after 31 turns.

Each measure is taken RUNS times (min / median / max). The baseline, measured in the same
run the same way, is a minimal Textual chat app (bench/minimal_chat.py) streaming from the
same server. The peers' figures are the issue's, measured on the reference machine (Codex
CLI 0.169, Gemini CLI 0.61, 2 cores): a ratio to them is a guide, not a same-run result.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.servers.fake_openai import FakeOpenAIServer, serve, text

from bench.terminal import Terminal

RUNS = int(os.environ.get("BENCH_RUNS", "5"))
PLACEHOLDER = "Ask anything"
SAMPLE = (
    "## Section\n\nSome text with **bold** and `code` in a paragraph that runs on for a "
    "while, as answers do.\n\n- a list item\n- another item with *emphasis*\n\n"
    "```python\ndef f(x):\n    return x * 2\n```\n\n1. first\n2. second\n\n"
)
CHARS_PER_TOKEN = 4
IDLE_FROM_S, IDLE_WINDOW_S = 13.0, 5.0  # after launch: once the cursor has stopped blinking
AFTER_ANSWER_S = 2.0
SESSION_TURNS = 31
LATE_FROM = 21
LATE_WALL = f"turns {LATE_FROM}-{SESSION_TURNS}, median: wall (s)"
LATE_CPU = f"turns {LATE_FROM}-{SESSION_TURNS}, median: CPU (s)"

# The table: the best peer's figure for each measure (seconds, or MB for memory).
PEERS = {
    "launch -> prompt (s)": 0.53,
    "launch -> first key echoed (s)": 0.56,
    "CPU in the first 10 s (s)": 0.43,
    "CPU idle, 5 s steady state (s)": 0.0,
    "CPU in the 2 s after an answer (s)": 0.0,
    "2k answer: Enter -> last word (s)": 0.57,
    "20k answer: Enter -> last word (s)": 3.46,
    "20k answer: CPU (s)": 4.46,
    "turn 31 (200 tokens): wall (s)": 0.11,
    "turn 31 (200 tokens): CPU (s)": 0.13,
    LATE_WALL: 0.11,  # the peer's turn 31: the median is a steadier estimate of ours
    LATE_CPU: 0.13,
    "RSS after 31 turns (MB)": 351.0,
}


@dataclass
class Samples:
    values: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, value: float) -> None:
        self.values.setdefault(name, []).append(value)


def answer(tokens: int, last_word: str) -> str:
    body = SAMPLE * (tokens * CHARS_PER_TOKEN // len(SAMPLE) + 1)
    return f"{body[: tokens * CHARS_PER_TOKEN]}\n\n{last_word}\n"


class Session:
    """One program in the terminal and the server it talks to."""

    def __init__(self, term: Terminal, server: FakeOpenAIServer) -> None:
        self.term = term
        self.server = server
        self.turns = 0

    def turn(self, tokens: int) -> tuple[float, float]:
        """Send a prompt; (Enter -> its answer's last word on screen, CPU meanwhile)."""
        self.turns += 1
        last_word = f"LASTWORD{self.turns}X"
        self.server.default = text(answer(tokens, last_word), chunks=tokens)
        self.term.type(f"question {self.turns}")
        self.term.wait_for(lambda s: f"question {self.turns}" in s, "the typed prompt")
        cpu, started = self.term.cpu(), time.monotonic()
        self.term.press("Enter")
        shown = self.term.wait_for(lambda s: last_word in s, f"the last word {last_word}")
        return shown - started, self.term.cpu() - cpu


def measure(
    samples: Samples, term: Terminal, server: FakeOpenAIServer, argv: list[str], home: Path
) -> None:
    term.start(argv, environment(home, server.url), home / "ws")
    launched = term.started
    prompt_at = term.wait_for(lambda s: PLACEHOLDER in s, "the prompt")
    samples.add("launch -> prompt (s)", prompt_at - launched)
    term.type("x")
    echoed = term.wait_for(lambda s: PLACEHOLDER not in s, "the first key echoed")
    samples.add("launch -> first key echoed (s)", echoed - launched)
    time.sleep(max(0.0, launched + 10 - time.monotonic()))
    samples.add("CPU in the first 10 s (s)", term.cpu())
    time.sleep(max(0.0, launched + IDLE_FROM_S - time.monotonic()))
    before = term.cpu()
    time.sleep(IDLE_WINDOW_S)
    samples.add("CPU idle, 5 s steady state (s)", term.cpu() - before)
    term.press("BSpace")
    session = Session(term, server)
    wall, cpu = session.turn(2_000)
    samples.add("2k answer: Enter -> last word (s)", wall)
    samples.add("2k answer: CPU (s)", cpu)
    before = term.cpu()
    time.sleep(AFTER_ANSWER_S)
    samples.add("CPU in the 2 s after an answer (s)", term.cpu() - before)
    wall, cpu = session.turn(20_000)
    samples.add("20k answer: Enter -> last word (s)", wall)
    samples.add("20k answer: CPU (s)", cpu)
    late: list[tuple[float, float]] = []  # turns LATE_FROM..31: one turn is a noisy sample
    while session.turns < SESSION_TURNS - 1:
        measured = session.turn(200)
        if session.turns >= LATE_FROM:
            late.append(measured)
        time.sleep(0.3)  # the answer's end settles before the next prompt is typed
    wall, cpu = session.turn(200)
    late.append((wall, cpu))
    samples.add("turn 31 (200 tokens): wall (s)", wall)
    samples.add("turn 31 (200 tokens): CPU (s)", cpu)
    samples.add(LATE_WALL, statistics.median(w for w, _ in late))
    samples.add(LATE_CPU, statistics.median(c for _, c in late))
    samples.add("RSS after 31 turns (MB)", term.rss_mb())
    term.close()


def environment(home: Path, url: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "LLM_PROVIDER": "openai",
        "OPENAI_BASE_URL": f"{url}/v1",
        "OPENAI_API_KEY": "sk-bench",
        "CO_TUI_OPENAI_MODEL": "fake",
        "CO_TUI_SANDBOX_BACKEND": "subprocess",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }


def fmt(values: list[float]) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def ratio(value: float, reference: float) -> str:
    if reference == 0:
        return "0 = 0" if value < 0.005 else "∞"
    return f"{value / reference:.2f}"


def table(app: Samples, base: Samples) -> list[str]:
    rows = [
        "| measure | co-tui min / median / max | baseline median | co-tui / baseline "
        "| best peer (issue) | co-tui / peer |",
        "|---|---|---|---|---|---|",
    ]
    for name, values in app.values.items():
        median = statistics.median(values)
        base_median = statistics.median(base.values[name])
        peer = PEERS.get(name)
        peer_cells = f"{peer:g} | {ratio(median, peer)}" if peer is not None else "- | -"
        rows.append(
            f"| {name} | {fmt(values)} | {base_median:.3f} | {ratio(median, base_median)} "
            f"| {peer_cells} |"
        )
    return rows


def main() -> None:
    python = sys.executable
    co_tui = str(Path(python).with_name("co-tui"))
    minimal = str(Path(__file__).with_name("minimal_chat.py"))
    app, base = Samples(), Samples()
    term = Terminal(f"bench-p8-{os.getpid()}")
    try:
        with serve() as server, tempfile.TemporaryDirectory() as tmp:
            for run in range(RUNS):  # interleaved, so the machine's load hits both alike
                for name, samples, argv in (
                    ("app", app, [co_tui]),
                    ("baseline", base, [python, minimal, f"{server.url}/v1"]),
                ):
                    home = Path(tmp) / f"{name}{run}"
                    (home / "ws").mkdir(parents=True)
                    measure(samples, term, server, argv, home)
    finally:
        term.close()
    print(f"P8 in a real terminal (tmux 120x40, fake OpenAI server, {RUNS} runs each)")
    for row in table(app, base):
        print(row)


if __name__ == "__main__":
    main()
