"""Run every benchmark module bench/p*.py (its main()), in name order, and keep what they
print in bench/results/latest.md."""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "latest.md"


class Tee(io.TextIOBase):
    def __init__(self, *streams: io.TextIOBase) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


def main(argv: list[str]) -> None:
    names = sorted(p.stem for p in Path(__file__).parent.glob("p*.py"))
    wanted = [n for n in names if not argv or any(n.startswith(a) for a in argv)]
    sections = []
    for name in wanted:
        captured = io.StringIO()
        with contextlib.redirect_stdout(Tee(sys.stdout, captured)):  # type: ignore[arg-type]
            importlib.import_module(f"bench.{name}").main()
        sections.append((name, captured.getvalue()))
    if argv:
        return  # a partial run does not replace the full results
    RESULTS.parent.mkdir(exist_ok=True)
    lines = [f"# co-tui benchmarks ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)", ""]
    for name, output in sections:
        table = all(line.startswith("|") for line in output.splitlines()[1:] if line)
        lines += [f"## {name}", ""]
        lines += [output.rstrip(), ""] if table else ["```", output.rstrip(), "```", ""]
    RESULTS.write_text("\n".join(lines))
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main(sys.argv[1:])
