"""Write the parts of docs/ that are generated from the code, or check that they are current.

    .venv/bin/python scripts/gen_docs.py           # rewrite the generated regions
    .venv/bin/python scripts/gen_docs.py --check   # exit 1 naming each stale page

Two regions, each between `<!-- generated: NAME -->` and `<!-- end generated -->`:
- `settings` in docs/configuration.md: every field of co_tui.config.settings.Settings (and of
  the models nested in it), with its environment variables, type, default, whether an
  untrusted project may set it (co_tui.config.trust.allowlist.UNTRUSTED_MAY_SET) and its
  description: the field's `description`, else the comment the code writes on the field's
  own line or in the block of comment lines directly above it;
- `events` in docs/events.md: every event of a turn in co_tui.protocol.events (the members
  of its `TurnEvent` union), with its fields and the first line of its docstring.

tests/test_docs.py calls the same functions, so a region that drifts from the code fails.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import io
import json
import re
import sys
import tokenize
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, to_jsonable_python

ROOT = Path(__file__).resolve().parent.parent
END_MARKER = "<!-- end generated -->"
SECTION_HEADER = re.compile(r"^-{3,}\s*(?P<name>.*?)\s*-{3,}$")  # `# --- LLM ---`


def start_marker(name: str) -> str:
    return f"<!-- generated: {name} -->"


# --- comments in the source --------------------------------------------------------------


@dataclass(frozen=True)
class FieldNotes:
    """What the source says around one field of a class: its comment, its section."""

    comment: str = ""
    section: str = ""


def _comment_lines(source: str) -> dict[int, str]:
    """Line number -> the text of the comment on that line, without `#`."""
    found: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string.lstrip("#").strip()
    return found


def class_field_notes(cls: type) -> dict[str, FieldNotes]:
    """Each annotated field of `cls` -> the comment the code writes for it and the section
    (`# --- Name ---`) it sits under. A field's comment is the one at the end of its own
    line(s), else the block of comment lines directly above it (no blank line between);
    a section header is never a field's comment."""
    source = _dedent("".join(inspect.getsourcelines(cls)[0]))
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef)
    comments = _comment_lines(source)
    lines = source.splitlines()
    headers = sorted(
        (number, match.group("name"))
        for number, text in comments.items()
        if (match := SECTION_HEADER.match(text))
    )
    notes: dict[str, FieldNotes] = {}
    for statement in node.body:
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        end = statement.end_lineno or statement.lineno
        trailing = [comments[n] for n in range(statement.lineno, end + 1) if n in comments]
        above: list[str] = []
        number = statement.lineno - 1
        while number in comments and lines[number - 1].lstrip().startswith("#"):
            if SECTION_HEADER.match(comments[number]):
                break
            above.insert(0, comments[number])
            number -= 1
        section = next((name for n, name in reversed(headers) if n < statement.lineno), "")
        notes[statement.target.id] = FieldNotes(" ".join(trailing or above), section)
    return notes


def _dedent(source: str) -> str:
    """A class's source, moved left so that it parses on its own."""
    lines = source.splitlines(keepends=True)
    indent = len(lines[0]) - len(lines[0].lstrip())
    return "".join(line[indent:] if line[:indent].isspace() else line for line in lines)


# --- types and values as text --------------------------------------------------------------


def type_text(tp: Any) -> str:
    """A type as a reader writes it: `str | None`, `"auto" | "docker"`, `list[str]`."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return type_text(args[0])
    if origin is Literal:
        return " | ".join(json.dumps(arg) for arg in args)
    if origin in (Union, types.UnionType):
        return " | ".join(type_text(arg) for arg in args)
    if origin in (list, dict, tuple, set):
        return f"{origin.__name__}[{', '.join(type_text(arg) for arg in args)}]"
    if tp is type(None):
        return "None"
    if tp is Ellipsis:  # tuple[str, ...]
        return "..."
    if tp is Any:
        return "Any"
    if isinstance(tp, type):
        return tp.__name__
    return str(tp)


_BOUNDS: tuple[tuple[type, str, str], ...] = (
    (annotated_types.Ge, "ge", "≥"),
    (annotated_types.Gt, "gt", ">"),
    (annotated_types.Le, "le", "≤"),
    (annotated_types.Lt, "lt", "<"),
)


def bounds_text(info: FieldInfo) -> str:
    """The field's numeric bounds, e.g. `≥ 0, ≤ 100`."""
    parts = []
    for item in info.metadata:
        for kind, attribute, sign in _BOUNDS:
            if isinstance(item, kind):
                parts.append(f"{sign} {getattr(item, attribute)}")
    return ", ".join(parts)


def value_text(value: Any) -> str:
    """A default as it would be written in settings.json."""
    return json.dumps(to_jsonable_python(value), ensure_ascii=False)


def _cell(text: str) -> str:
    """Text for a Markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


# --- the settings table --------------------------------------------------------------------


def _untrusted_text(name: str) -> str:
    from co_tui.config.trust.allowlist import UNTRUSTED_MAY_SET, Inert, MayNarrow

    rule = UNTRUSTED_MAY_SET.get(name)
    if isinstance(rule, MayNarrow):
        return f"narrowing only: {rule.reason}"
    if isinstance(rule, Inert):
        return f"yes: {rule.reason}"
    return "no: waits for trust"


def _nested_model(info: FieldInfo) -> tuple[type[BaseModel], str] | None:
    """The model a setting's value is made of, and how its fields are named under it:
    `web_policy` -> (WebPolicy, "web_policy."), `mcp_servers` -> (MCPServerConfig,
    "mcp_servers.<name>.")."""
    tp = info.annotation
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp, ""
    if get_origin(tp) is dict:
        value = get_args(tp)[1]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return value, "<name>."
    return None


def _model_summary(info: FieldInfo) -> str:
    """The first line of the docstring of the model a setting's value is made of."""
    nested = _nested_model(info)
    return _first_doc_line(nested[0]) if nested else ""


@dataclass(frozen=True)
class SettingRow:
    key: str
    env: tuple[str, ...]
    type: str
    default: str
    untrusted: str
    description: str


def _default_text(info: FieldInfo) -> str:
    if info.default is PydanticUndefined and info.default_factory is None:
        return "required"
    if info.default_factory is not None:
        return value_text(info.get_default(call_default_factory=True))
    return value_text(info.default)


def _row_type(info: FieldInfo) -> str:
    text = _code(type_text(info.annotation))
    bounds = bounds_text(info)
    return f"{text} {bounds}" if bounds else text


def setting_rows() -> list[tuple[str, list[SettingRow]]]:
    """The settings by the code's sections, each setting followed by the fields of the
    model its value is made of."""
    from co_tui.config.settings import Settings, env_names

    notes = class_field_notes(Settings)
    sections: dict[str, list[SettingRow]] = {}
    for name, info in Settings.model_fields.items():
        note = notes.get(name, FieldNotes())
        rows = sections.setdefault(note.section or "Other", [])
        rows.append(
            SettingRow(
                key=name,
                env=tuple(env_names(name)),
                type=_row_type(info),
                default=_default_text(info),
                untrusted=_untrusted_text(name),
                description=info.description or note.comment or _model_summary(info),
            )
        )
        nested = _nested_model(info)
        if nested is None:
            continue
        model, infix = nested
        model_notes = class_field_notes(model)
        for sub_name, sub_info in model.model_fields.items():
            rows.append(
                SettingRow(
                    key=f"{name}.{infix}{sub_name}",
                    env=(),
                    type=_row_type(sub_info),
                    default=_default_text(sub_info),
                    untrusted=f"as `{name}`",
                    description=sub_info.description
                    or model_notes.get(sub_name, FieldNotes()).comment,
                )
            )
    return list(sections.items())


def undescribed_settings() -> list[str]:
    """The settings (and nested fields) that have neither a description nor a comment."""
    return [row.key for _, rows in setting_rows() for row in rows if not row.description]


def render_settings() -> str:
    out = [
        "<!-- Written by scripts/gen_docs.py from co_tui.config.settings.Settings and",
        "     co_tui.config.trust.allowlist; edit the code, then run the script. -->",
        "",
        "A nested field (`web_policy.fetch`) is set inside its setting's JSON object; its",
        'environment variable is the setting\'s, holding JSON. "Untrusted project" says whether',
        "a project's `.co-tui/settings.json` applies before you trust the project.",
    ]
    for section, rows in setting_rows():
        out += [
            "",
            f"### {section}",
            "",
            "| Setting | Environment | Type | Default | Untrusted project | Description |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for row in rows:
            env = ", ".join(_code(name) for name in row.env) or "—"
            cells = [
                _code(row.key),
                env,
                row.type,
                _code(row.default),
                row.untrusted,
                row.description,
            ]
            out.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(out) + "\n"


# --- the event list ------------------------------------------------------------------------


def event_classes() -> list[type]:
    from co_tui.protocol.events import TurnEvent

    return list(get_args(TurnEvent))


def _first_doc_line(cls: type) -> str:
    doc = cls.__dict__.get("__doc__") or ""
    # dataclasses write a signature as the docstring of a class that has none
    if not doc or doc.startswith(f"{cls.__name__}("):
        return ""
    return inspect.cleandoc(doc).split("\n\n")[0].replace("\n", " ").strip()


def render_events() -> str:
    out = [
        "<!-- Written by scripts/gen_docs.py from co_tui.protocol.events (the TurnEvent union);",
        "     edit the code, then run the script. -->",
    ]
    for cls in event_classes():
        module = sys.modules[cls.__module__]
        hints = get_type_hints(cls, vars(module))
        notes = class_field_notes(cls)
        out += ["", f"### `{cls.type}` ({cls.__name__})", ""]  # type: ignore[attr-defined]
        summary = _first_doc_line(cls)
        if summary:
            out += [summary, ""]
        for field in dataclasses.fields(cls):
            text = f"- `{field.name}`: `{type_text(hints[field.name])}`"
            if field.default is not dataclasses.MISSING:
                text += f", default `{value_text(field.default)}`"
            comment = notes.get(field.name, FieldNotes()).comment
            if comment:
                text += f": {comment}"
            out.append(text)
    return "\n".join(out) + "\n"


# --- the pages -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Region:
    page: str  # relative to the repository root
    name: str
    render: Callable[[], str]


REGIONS: tuple[Region, ...] = (
    Region("docs/configuration.md", "settings", render_settings),
    Region("docs/events.md", "events", render_events),
)


class MarkersMissing(Exception):
    """A page lacks the markers of a region it should hold."""


def replace_region(text: str, name: str, body: str) -> str:
    """`text` with what lies between the region's markers replaced by `body`."""
    start = start_marker(name)
    begin = text.find(start)
    if begin < 0:
        raise MarkersMissing(f"no {start} marker")
    inner = begin + len(start)
    end = text.find(END_MARKER, inner)
    if end < 0:
        raise MarkersMissing(f"no {END_MARKER} after {start}")
    return f"{text[:inner]}\n{body}{text[end:]}"


def updated_pages(root: Path = ROOT) -> dict[str, tuple[str, str]]:
    """Page -> (its text now, its text with every region generated afresh)."""
    pages: dict[str, tuple[str, str]] = {}
    for region in REGIONS:
        if region.page not in pages:
            text = (root / region.page).read_text(encoding="utf-8")
            pages[region.page] = (text, text)
        now, fresh = pages[region.page]
        try:
            fresh = replace_region(fresh, region.name, region.render())
        except MarkersMissing as exc:
            raise MarkersMissing(f"{region.page}: {exc}") from None
        pages[region.page] = (now, fresh)
    return pages


def stale_pages(root: Path = ROOT) -> list[str]:
    """The pages whose generated regions differ from what the code generates."""
    return [page for page, (now, fresh) in updated_pages(root).items() if now != fresh]


def write_pages(root: Path = ROOT) -> list[str]:
    """Rewrite the stale pages; the ones written."""
    written = []
    for page, (now, fresh) in updated_pages(root).items():
        if now != fresh:
            (root / page).write_text(fresh, encoding="utf-8")
            written.append(page)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 when a page is stale"
    )
    args = parser.parse_args(argv)
    try:
        if args.check:
            stale = stale_pages()
            for page in stale:
                print(f"stale: {page} (run .venv/bin/python scripts/gen_docs.py)", file=sys.stderr)
            return 1 if stale else 0
        for page in write_pages():
            print(f"wrote {page}")
    except MarkersMissing as exc:
        print(f"gen_docs: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
