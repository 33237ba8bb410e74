"""Run every benchmark module bench/p*.py (its main()), in name order."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    names = sorted(p.stem for p in Path(__file__).parent.glob("p*.py"))
    wanted = [n for n in names if not argv or any(n.startswith(a) for a in argv)]
    for name in wanted:
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    main(sys.argv[1:])
