"""Resume and /find over a long stored session, in a real terminal (tmux 120x40): part of
`make bench-long`. A session of RESUME_TURNS turns (prompts, Markdown answers, a tool call
every third turn) is written through the real store into a fresh data folder; then

- resume at launch: `co-tui --continue` started -> the last answer's last word on screen,
  and RSS then (this includes the app's own start);
- find: Ctrl+F, a word only turn 3 has typed -> that turn's prompt on screen, and RSS then;
- resume in the app: a started app (one turn answered), `/resume ID` typed, Enter -> the
  last answer's last word on screen (what resuming costs a user already in the app), and
  RSS then.

The baseline is the same measure of a BASE_TURNS-turn session in the same run. Each measure
RUNS times (min / median / max).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from tests.servers.fake_openai import FakeOpenAIServer, serve

from bench.p8_terminal import PLACEHOLDER, Session, environment, fmt
from bench.terminal import Terminal

RESUME_TURNS = int(os.environ.get("BENCH_RESUME_TURNS", "1000"))
BASE_TURNS = 20
RUNS = int(os.environ.get("BENCH_RESUME_RUNS", "3"))
FIND_TURN = 3
SESSION_ID = "bench-resume"
SETTLE_S = 2.0
ANSWER = (
    "## Notes on step {n}\n\nThe change touches **three** modules; `parse()` keeps its "
    "contract and the caller in *cli.py* needs one more argument.\n\n- read the config\n"
    "- validate the input, naming the field that is wrong\n- write the result atomically\n\n"
    "```python\ndef step_{n}(value: int) -> int:\n    return value * {n}\n```\n\n"
    "That is all for step {n}; the tests cover the edge cases listed above.\n"
)


def prompt(n: int) -> str:
    word = "zanzibarquux" if n == FIND_TURN else "question"
    return f"{word} {n}: what should step {n} change in the parser, and why?"


def turn(n: int, last: int) -> list[ModelMessage]:
    answer = ANSWER.format(n=n)
    if n == last:
        answer += "\nLASTRESUMEWORD\n"
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content=prompt(n))])]
    if n % 3 == 0:
        call = f"call-{n}"
        messages += [
            ModelResponse(
                parts=[ToolCallPart("shell", {"command": f"grep -n step_{n} src"}, call)]
            ),
            ModelRequest(parts=[ToolReturnPart("shell", f"src/p.py:{n}: step_{n}\n" * 8, call)]),
        ]
    messages.append(ModelResponse(parts=[TextPart(content=answer)]))
    return messages


def write_session(home: Path, turns: int) -> None:
    """A stored session of `turns` turns in `home`'s data folder, for its workspace."""
    os.environ["XDG_DATA_HOME"] = str(home / "data")
    from co_tui.store.session_store import SessionStore

    store = SessionStore(home / "data" / "co-tui" / "sessions.db")
    history = [m for n in range(1, turns + 1) for m in turn(n, turns)]
    store.save(SESSION_ID, history, title="a long session", cwd=str(home / "ws"), turns=turns)
    store.close()


def measure(
    values: dict[str, list[float]],
    term: Terminal,
    server: FakeOpenAIServer,
    home: Path,
    co_tui: str,
) -> None:
    term.start([co_tui, "--continue"], environment(home, server.url), home / "ws")
    shown = term.wait_for(lambda s: "LASTRESUMEWORD" in s, "the last answer", timeout=120)
    values.setdefault("resume: launch -> last answer on screen (s)", []).append(
        shown - term.started
    )
    time.sleep(SETTLE_S)
    values.setdefault("resume: RSS (MB)", []).append(term.rss_mb())
    term.wait_for(lambda s: PLACEHOLDER in s, "the prompt")
    term.press("C-f")
    term.wait_for(lambda s: "Find in the conversation" in s, "the find bar")
    started = time.monotonic()
    term.type("zanzibarquux")
    found = term.wait_for(lambda s: "zanzibarquux 3:" in s, "turn 3's prompt", timeout=120)
    values.setdefault("find turn 3: typed -> match on screen (s)", []).append(found - started)
    time.sleep(SETTLE_S)
    values.setdefault("find: RSS (MB)", []).append(term.rss_mb())
    term.close()

    term.start([co_tui], environment(home, server.url), home / "ws")
    term.wait_for(lambda s: PLACEHOLDER in s, "the prompt")
    Session(term, server).turn(20)  # a started app: its start-up is not what is measured
    time.sleep(SETTLE_S)
    term.type(f"/resume {SESSION_ID}")
    term.wait_for(lambda s: f"/resume {SESSION_ID}" in s, "the typed command")
    started = time.monotonic()
    term.press("Enter")
    shown = term.wait_for(lambda s: "LASTRESUMEWORD" in s, "the last answer", timeout=120)
    values.setdefault("resume in the app: Enter -> last answer on screen (s)", []).append(
        shown - started
    )
    time.sleep(SETTLE_S)
    values.setdefault("resume in the app: RSS (MB)", []).append(term.rss_mb())
    term.close()


def main() -> None:
    co_tui = str(Path(sys.executable).with_name("co-tui"))
    results: dict[int, dict[str, list[float]]] = {RESUME_TURNS: {}, BASE_TURNS: {}}
    term = Terminal(f"bench-resume-{os.getpid()}")
    try:
        with serve() as server, tempfile.TemporaryDirectory() as tmp:
            for run in range(RUNS):
                for turns, values in results.items():
                    home = Path(tmp) / f"{turns}-{run}"
                    (home / "ws").mkdir(parents=True)
                    write_session(home, turns)
                    measure(values, term, server, home, co_tui)
    finally:
        term.close()
    print(
        f"Resume and find over {RESUME_TURNS} turns (tmux 120x40), beside the same over "
        f"{BASE_TURNS} turns; {RUNS} runs each"
    )
    print(
        f"| measure | {RESUME_TURNS} turns min / median / max | {BASE_TURNS} turns median | ratio |"
    )
    print("|---|---|---|---|")
    long, short = results[RESUME_TURNS], results[BASE_TURNS]
    for name, got in long.items():
        base = statistics.median(short[name])
        print(f"| {name} | {fmt(got)} | {base:.3f} | {statistics.median(got) / base:.2f} |")


if __name__ == "__main__":
    main()
