"""`co-tui traces`: a static HTML page holding every span of the trace; `co-tui logs`:
datasette on loopback answering a JSON query."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from co_tui.cli import app
from co_tui.telemetry import default_db_path
from co_tui.telemetry.commands import datasette_available
from tests.telemetry.spandata import BASE_NS, turn_trace, write


class SpanPage(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.span_ids: list[str] = []
        self.external: list[str] = []
        self.open_tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("data-span-id"):
            self.span_ids.append(str(values["data-span-id"]))
        for name in ("src", "href"):
            if values.get(name):
                self.external.append(str(values[name]))
        if tag == "details":
            self.open_tags.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            assert self.open_tags.pop() == "details"

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(page: str) -> SpanPage:
    parser = SpanPage()
    parser.feed(page)
    parser.close()
    assert parser.open_tags == []  # every <details> closed: the tree is well nested
    return parser


def _ids(spans: list) -> set[str]:
    return {format(s.get_span_context().span_id, "016x") for s in spans}


def test_traces_writes_the_newest_trace(tmp_path: Path) -> None:
    db = default_db_path()
    old, new = turn_trace(1), turn_trace(2, base_ns=BASE_NS + 9_000_000_000, tool_error=True)
    write(db, old + new)
    out = tmp_path / "trace.html"
    result = CliRunner().invoke(app, ["traces", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "8 spans" in result.output
    page = _parse(out.read_text())
    assert set(page.span_ids) == _ids(new)  # every span of the newest trace, no other
    assert page.external == []  # nothing fetched: opens from disk
    text = " ".join(page.text)
    assert "sandbox_command" in text and "error exit 2" in text
    assert '"cmd": "ls -la"' in text  # JSON-in-a-string attributes shown as structure


def test_traces_by_id_prefix_and_default_location() -> None:
    db = default_db_path()
    old, new = turn_trace(1), turn_trace(2, base_ns=BASE_NS + 9_000_000_000)
    write(db, old + new)
    trace_id = format(old[0].get_span_context().trace_id, "032x")
    runner = CliRunner()
    result = runner.invoke(app, ["traces", "--trace", trace_id[:-1] + "1"])
    assert result.exit_code == 0, result.output
    written = db.parent / "traces" / f"trace-{trace_id[:16]}.html"
    assert str(written) in result.output
    assert set(_parse(written.read_text()).span_ids) == _ids(old)
    ambiguous = runner.invoke(app, ["traces", "--trace", trace_id[:8]])
    assert ambiguous.exit_code == 1 and "more than one trace" in ambiguous.output
    assert runner.invoke(app, ["traces", "--trace", "ffff"]).exit_code == 1


def test_traces_without_a_database() -> None:
    result = CliRunner().invoke(app, ["traces"])
    assert result.exit_code == 1 and "no spans recorded yet" in result.output
    assert not default_db_path().exists()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.e2e
@pytest.mark.skipif(not datasette_available(), reason="datasette (the `logs` extra) not installed")
def test_logs_serves_json_on_loopback() -> None:
    db = default_db_path()
    write(db, turn_trace(1))
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "co_tui.cli", "logs", "--port", str(port)],
        env=os.environ.copy(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/co-tui.json?sql=select+count(*)+as+n+from+spans&_shape=array"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    body = json.loads(response.read())
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    output = proc.stdout.read().decode() if proc.stdout else ""
                    pytest.fail(f"datasette did not answer: {output}")
                time.sleep(0.2)
        assert body == [{"n": 8}]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def test_logs_without_a_database() -> None:
    result = CliRunner().invoke(app, ["logs"])
    assert result.exit_code == 1
    assert "no spans recorded yet" in result.output or "datasette" in result.output


def test_logs_says_how_to_install_datasette(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "datasette" else real(name, *a),
    )
    result = CliRunner().invoke(app, ["logs"])
    assert result.exit_code == 1
    assert "pip install 'co-tui[logs]'" in result.output
