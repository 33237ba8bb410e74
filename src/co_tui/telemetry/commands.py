"""What `co-tui traces` and `co-tui logs` do (cli.py only parses their options)."""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable
from pathlib import Path

from co_tui.telemetry.store import open_for_reading

Echo = Callable[[str], None]
LOGS_INSTALL_HINT = "pip install 'co-tui[logs]'  (or: pip install datasette)"


def write_trace_page(db_path: Path, trace: str | None, output: Path | None, echo: Echo) -> int:
    """Write one trace (default: the newest) as HTML; `output` '-' means stdout."""
    from co_tui.telemetry.html import render_trace_html
    from co_tui.telemetry.queries import newest_trace_id, resolve_trace_id, trace_spans

    conn = open_for_reading(db_path)
    if conn is None:
        echo(f"co-tui: no spans recorded yet ({db_path} does not exist; is telemetry on?)")
        return 1
    trace_id: str | None
    try:
        if trace:
            matches = resolve_trace_id(conn, trace)
            if len(matches) != 1:
                what = "no trace" if not matches else "more than one trace"
                echo(f"co-tui: {what} matches {trace!r}")
                return 1
            trace_id = matches[0]
        else:
            trace_id = newest_trace_id(conn)
            if trace_id is None:
                echo(f"co-tui: no spans recorded yet in {db_path}")
                return 1
        spans = trace_spans(conn, trace_id)
    finally:
        conn.close()
    page = render_trace_html(trace_id, spans)
    if output is not None and str(output) == "-":
        print(page, end="")
        return 0
    target = output or db_path.parent / "traces" / f"trace-{trace_id[:16]}.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    echo(f"{target}  ({len(spans)} spans, trace {trace_id})")
    return 0


def datasette_available() -> bool:
    return importlib.util.find_spec("datasette") is not None


def datasette_args(db_path: Path, port: int, open_browser: bool = False) -> list[str]:
    # Not `-i` (immutable): the app may be writing to this WAL database right now.
    args = ["serve", str(db_path), "--host", "127.0.0.1", "--port", str(port)]
    args += ["--setting", "sql_time_limit_ms", "5000"]
    return [*args, "--open"] if open_browser else args


def serve_logs(db_path: Path, port: int, open_browser: bool, echo: Echo) -> int:
    """Serve the spans database with datasette on loopback until Ctrl+C."""
    if not datasette_available():
        echo(f"co-tui: `co-tui logs` needs datasette, an optional extra: {LOGS_INSTALL_HINT}")
        return 1
    if not db_path.is_file():
        echo(f"co-tui: no spans recorded yet ({db_path} does not exist; is telemetry on?)")
        return 1
    from datasette.cli import cli as datasette_cli

    echo(f"serving {db_path} on http://127.0.0.1:{port}/ (Ctrl+C stops)")
    with contextlib.suppress(KeyboardInterrupt):
        datasette_cli.main(
            args=datasette_args(db_path, port, open_browser),
            prog_name="datasette",
            standalone_mode=False,
        )
    return 0
