"""One trace as a self-contained HTML page: what left this machine in it (one row per
outbound call), a span tree with a timing bar per span, and each span's attributes and
events. Inline CSS and JS only; nothing is fetched; opens from disk."""

from __future__ import annotations

import json
from datetime import datetime
from html import escape

from co_tui.telemetry.queries import EGRESS_PREFIX, SpanDetail, build_tree, expand_json

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem; color: #1d1f21; background: #fafafa; }
h1 { font-size: 1.2rem; margin: 0 0 .25rem; } .meta { color: #666; margin-bottom: 1rem; }
.span { margin-left: 1.2rem; } .root > .span { margin-left: 0; }
summary { cursor: pointer; list-style: none; display: flex; gap: .6rem; align-items: center; }
summary::-webkit-details-marker { display: none; }
summary::before { content: "▸"; width: 1ch; color: #888; }
details[open] > summary::before { content: "▾"; }
details.leaf > summary::before { content: "·"; }
.name { font-weight: 600; min-width: 22rem; } .error .name { color: #c0392b; }
.dur { font-variant-numeric: tabular-nums; color: #2c7be5; min-width: 6rem; text-align: right; }
.status { color: #c0392b; font-weight: 600; }
.lane { position: relative; flex: 1; height: .7rem; background: #eee; border-radius: 2px; }
.bar { position: absolute; top: 0; bottom: 0; background: #2c7be5; border-radius: 2px;
       min-width: 2px; } .error .bar { background: #c0392b; }
.attrs { margin: .2rem 0 .4rem 2.4rem; } .attrs > summary { color: #666; font-size: .85rem; }
pre { background: #fff; border: 1px solid #ddd; padding: .5rem; overflow-x: auto;
      font-size: 12px; max-height: 28rem; }
button { margin-right: .5rem; }
table.egress { border-collapse: collapse; margin: .5rem 0 1rem; }
table.egress th, table.egress td { text-align: left; padding: .2rem .6rem;
      border-bottom: 1px solid #ddd; vertical-align: top; }
table.egress td.bytes { text-align: right; font-variant-numeric: tabular-nums; }
"""

JS = """
function setAll(open) {
  document.querySelectorAll('details.span').forEach(d => { d.open = open; });
}
"""


def _ms(ms: float | None) -> str:
    if ms is None:
        return "…"
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _span_html(span: SpanDetail, t0: int, total_ns: int, out: list[str]) -> None:
    start = (span.start_time - t0) / total_ns * 100
    width = ((span.end_time or span.start_time) - span.start_time) / total_ns * 100
    classes = ["span"]
    if span.status_code == "ERROR":
        classes.append("error")
    if not span.children:
        classes.append("leaf")
    status = ""
    if span.status_code == "ERROR":
        status = f'<span class="status">error {escape(span.status_description or "")}</span>'
    out.append(
        f'<details class="{" ".join(classes)}" open id="span-{escape(span.id)}" '
        f'data-span-id="{escape(span.id)}">'
        f'<summary><span class="name">{escape(span.name)}</span>'
        f'<span class="dur">{_ms(span.duration_ms)}</span>{status}'
        f'<span class="lane"><span class="bar" style="left:{start:.3f}%;width:{width:.3f}%">'
        "</span></span></summary>"
    )
    attributes = {k: expand_json(v) for k, v in sorted(span.attributes.items())}
    detail: dict[str, object] = {
        "span_id": span.id,
        "parent_id": span.parent_id,
        "kind": span.kind,
        "status": span.status_code,
        "attributes": attributes,
    }
    if span.events:
        detail["events"] = span.events
    out.append(
        f'<details class="attrs"><summary>details</summary><pre>{escape(_json(detail))}</pre>'
        "</details>"
    )
    for child in span.children:
        _span_html(child, t0, total_ns, out)
    out.append("</details>")


def _egress_html(spans: list[SpanDetail]) -> str:
    """The "left this machine" table: one row per egress span of the trace, in order."""
    rows: list[str] = []
    for span in sorted(spans, key=lambda s: s.start_time):
        if not span.name.startswith(EGRESS_PREFIX):
            continue
        a = span.attributes
        where = a.get("co.egress.destinations") or [a.get("co.egress.destination", "")]
        sources = a.get("co.egress.sources") or []
        outcome = a.get("co.egress.outcome", "sent")
        size = f"{int(a.get('co.egress.bytes', 0) or 0):,} B"
        if outcome != "sent":
            size += f" ({escape(str(outcome))})"
        rows.append(
            f'<tr><td><a href="#span-{escape(span.id)}">{escape(str(a.get("co.egress.tool")))}'
            f"</a></td><td>{escape(', '.join(map(str, where)))}</td>"
            f'<td class="bytes">{size}</td>'
            f"<td>{escape('; '.join(map(str, sources))) or 'none'}</td></tr>"
        )
    if not rows:
        return "<h2>Left this machine</h2><p>nothing: no outbound calls in this trace</p>"
    return (
        '<h2>Left this machine</h2><table class="egress"><tr><th>tool</th><th>destination</th>'
        "<th>sent</th><th>private or untrusted sources in the conversation</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def render_trace_html(trace_id: str, spans: list[SpanDetail]) -> str:
    roots = build_tree(spans)
    t0 = min((s.start_time for s in spans), default=0)
    t1 = max((s.end_time or s.start_time for s in spans), default=0)
    total_ns = max(t1 - t0, 1)
    when = datetime.fromtimestamp(t0 / 1e9).strftime("%Y-%m-%d %H:%M:%S") if spans else ""
    body: list[str] = []
    for root in roots:
        _span_html(root, t0, total_ns, body)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>co-tui trace {escape(trace_id[:16])}</title><style>{CSS}</style>"
        f"<script>{JS}</script></head><body>"
        f"<h1>co-tui trace <code>{escape(trace_id)}</code></h1>"
        f'<div class="meta">{escape(when)} · {len(spans)} spans · {_ms(total_ns / 1e6)}</div>'
        f"{_egress_html(spans)}"
        '<p><button onclick="setAll(true)">expand all</button>'
        '<button onclick="setAll(false)">collapse all</button></p>'
        f'<div class="root">{"".join(body)}</div>'
        "</body></html>\n"
    )
