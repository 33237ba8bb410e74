"""`co-tui model list` and `co-tui model pull NAME`: the catalog with what is downloaded and
selected, and a download with a progress bar (llm/local/download.py does the work)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from co_tui.config.settings import Settings
from co_tui.llm.local.catalog import (
    CATALOG,
    CatalogModel,
    UnknownModel,
    catalog_model,
    size_text,
)
from co_tui.llm.local.download import (
    LicenceNotAccepted,
    Pull,
    PullError,
    part_path,
    plan_pull,
    pull,
)
from co_tui.safety.visible import visible

OK, FAILED, USAGE, INTERRUPTED = 0, 1, 2, 130

Echo = Callable[[str], None]
Confirm = Callable[[str], bool]


def _hash_state(model: CatalogModel) -> str:
    if not model.pinned:
        return "needs --sha256"
    return "measured" if model.measured_here else "pinned"


def _state(model: CatalogModel, settings: Settings, folder: Path) -> str:
    states: list[str] = []
    if (folder / model.file).is_file():
        states.append("downloaded")
    else:
        part = part_path(folder, model)
        have = part.stat().st_size if part.is_file() and not part.is_symlink() else 0
        if have:
            states.append(f"partial {have / 1_000_000:.0f} MB")
    if settings.local_model and catalog_key(settings.local_model) == model.name:
        states.append("selected" if not settings.local_model_path else "named (path wins)")
    elif model.measured_here and not settings.local_model and not settings.local_model_path:
        states.append("in use, built in")
    return ", ".join(states) or "-"


def catalog_key(name: str) -> str:
    return name.strip().lower()


def list_lines(settings: Settings, folder: Path) -> list[str]:
    """The catalog as `co-tui model list` prints it, then what is selected and where."""
    rows = [("NAME", "SIZE", "LICENCE", "SHA-256", "HERE")]
    for model in CATALOG:
        licence = model.licence.id + (" *" if model.licence.needs_acceptance else "")
        state = _state(model, settings, folder)
        rows.append((model.name, size_text(model), licence, _hash_state(model), state))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True))
        + "  "
        + row[4]
        for row in rows
    ]
    lines.append("")
    lines.append("measured: hashed here; pinned: the hash its page shows (sources: docs)")
    if any(not m.pinned for m in CATALOG):
        lines.append("needs --sha256: no hash was found; give the one its page shows")
    if any(m.licence.needs_acceptance for m in CATALOG):
        lines.append("*: not a permissive licence; shown and accepted at pull")
    lines.append(f"models folder: {folder}")
    lines.extend(_selection(settings))
    return [visible(line, keep="") for line in lines]


def _selection(settings: Settings) -> list[str]:
    if settings.local_model_path:
        return [f"in use: local_model_path {settings.local_model_path} (wins over local_model)"]
    if settings.local_model:
        return [f"in use: local_model {settings.local_model}"]
    return [
        "in use: the embedded SmolLM2; another: co-tui model pull NAME, then",
        "set local_model to NAME (CO_TUI_LOCAL_MODEL=NAME)",
    ]


def run_pull(
    name: str,
    *,
    settings: Settings,
    folder: Path,
    accept_licence: bool,
    sha256: str | None,
    echo: Echo,
    confirm: Confirm | None,
    console: Console,
) -> int:
    """`co-tui model pull NAME`; returns the exit code. `settings` must be the user's own
    (never a project's: the mirror decides where bytes come from). `confirm` asks a yes/no
    question on a terminal; None off one."""
    try:
        model = catalog_model(name)
    except UnknownModel as exc:
        echo(visible(f"co-tui: {exc}", keep=""))
        return USAGE
    try:
        plan = _planned(model, settings, accept_licence, sha256, echo, confirm)
    except PullError as exc:
        echo(visible(f"co-tui: {exc}", keep=""))
        return USAGE
    if plan is None:
        echo(f"co-tui: {model.name} not downloaded: its licence was not accepted")
        return USAGE
    echo(visible(f"downloading {model.name} ({size_text(model)}) from {plan.url}", keep=""))
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task(model.name, total=None)
            path = pull(plan, folder, _reporter(progress, task))
    except PullError as exc:
        echo(visible(f"co-tui: {exc}", keep=""))
        return FAILED
    except KeyboardInterrupt:
        echo(
            f"co-tui: stopped; what was downloaded is kept in {part_path(folder, model)}: "
            f"run co-tui model pull {model.name} again to resume"
        )
        return INTERRUPTED
    echo(f"verified {plan.sha256}")
    echo(visible(f"saved as {path}", keep=""))
    if catalog_key(settings.local_model or "") != model.name:
        echo(f"use it: set local_model to {model.name} (CO_TUI_LOCAL_MODEL={model.name})")
    return OK


def _planned(
    model: CatalogModel,
    settings: Settings,
    accept_licence: bool,
    sha256: str | None,
    echo: Echo,
    confirm: Confirm | None,
) -> Pull | None:
    mirror = settings.local_model_mirror
    try:
        return plan_pull(model, sha256=sha256, accepted_licence=accept_licence, mirror=mirror)
    except LicenceNotAccepted as exc:
        if confirm is None:
            raise
        echo(visible(str(exc).partition(": read it")[0], keep=""))
        if not confirm(f"Accept the {model.licence.id} licence?"):
            return None
    return plan_pull(model, sha256=sha256, accepted_licence=True, mirror=mirror)


def _reporter(progress: Progress, task: TaskID) -> Callable[[int, int | None], None]:
    def report(done: int, total: int | None) -> None:
        progress.update(task, completed=done, total=total)

    return report
