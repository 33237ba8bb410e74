"""The `co-tui` command: the app (default), -p headless, status, and sub-commands."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from co_tui import __version__
from co_tui.config.settings import Settings, SettingsError
from co_tui.daemon.commands import daemon_app, inbox_app, jobs_app
from co_tui.headless.runner import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    PrintOptions,
    run_print,
    say,
)
from co_tui.safety.visible import visible
from co_tui.sandbox.build import sandbox_app

if TYPE_CHECKING:
    from co_tui.config.trust import LoadedSettings

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    invoke_without_command=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="co-tui: a privacy-first personal assistant in your terminal.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def fail(message: str, code: int = EXIT_ERROR) -> typer.Exit:
    say(message)
    return typer.Exit(code)


def print_as_is(text: str) -> None:
    """`text` on stdout unchanged (typer.echo strips CSI sequences, but only off a terminal)."""
    sys.stdout.write(text)
    sys.stdout.flush()


def settings_or_exit(overrides: dict[str, Any] | None = None) -> Settings:
    from co_tui.config.trust import load_settings

    try:
        return load_settings(Path.cwd(), overrides=overrides)
    except SettingsError as exc:
        raise fail(str(exc), EXIT_USAGE) from None


def loaded_or_exit(overrides: dict[str, Any], trust_project: bool) -> LoadedSettings:
    """Settings with what the project would widen, if the user trusts it (`--trust-project`
    trusts it for this run and stores that)."""
    from co_tui.config.trust import load_project_settings

    try:
        loaded = load_project_settings(Path.cwd(), overrides=overrides, trust_project=trust_project)
    except SettingsError as exc:
        raise fail(str(exc), EXIT_USAGE) from None
    if trust_project and loaded.project is not None:
        try:
            loaded.project.remember()
        except OSError as exc:
            say(f"trusted for this run only, not stored: {exc}")
    from co_tui.config.data_at_rest import protect_data_at_rest

    protect_data_at_rest(loaded.settings)  # data folder 0700, files 0600; secrets remembered
    return loaded


def _version(value: bool) -> None:
    if value:
        typer.echo(f"co-tui {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    ctx: typer.Context,
    prompt: Annotated[
        str | None,
        typer.Option("-p", "--print", help="Answer one prompt and exit ('-' reads stdin)."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="A pydantic-ai model string, e.g. 'test'.")
    ] = None,
    output_format: Annotated[
        str | None, typer.Option("--output-format", help="text | json | stream-json (with -p).")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Approve every side-effectful call (with -p).")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show thinking.")] = False,
    raw: Annotated[
        bool,
        typer.Option("--raw", help="The answer as it is, escape sequences included (with -p)."),
    ] = False,
    allow_private_data_out: Annotated[
        bool,
        typer.Option(
            "--allow-private-data-out",
            help="With --yes, approve outbound calls the egress guard holds too: ones that may "
            "follow untrusted content, or that carry your private text.",
        ),
    ] = False,
    continue_: Annotated[
        bool, typer.Option("--continue", "-c", help="Continue this directory's latest session.")
    ] = False,
    resume: Annotated[
        str | None,
        typer.Option("--resume", "-r", help="Resume a session by id (alone: choose from a list)."),
    ] = None,
    trust_project: Annotated[
        bool,
        typer.Option(
            "--trust-project",
            help="Trust this project's files for co-tui: settings, instructions, commands, "
            "skills (stored; asked again when they change).",
        ),
    ] = False,
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = None,
) -> None:
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"model": model}
        if trust_project:  # stored: the sub-command loads the settings it trusts
            loaded_or_exit({}, trust_project=True)
        return
    overrides = {"model": model, "verbose": verbose or None}
    if prompt is None:
        reject_print_only_flags(
            yes=yes, output_format=output_format, raw=raw, private=allow_private_data_out
        )
    if prompt is not None:
        output_format = output_format or "text"
        if output_format not in ("text", "json", "stream-json"):
            raise fail(
                f"--output-format must be text, json or stream-json, not {output_format!r}",
                EXIT_USAGE,
            )
        if raw and output_format != "text":
            raise fail("--raw is for text output: JSON holds the exact text already", EXIT_USAGE)
        if allow_private_data_out and not yes:
            raise fail(
                "--allow-private-data-out goes with --yes: it widens what --yes approves",
                EXIT_USAGE,
            )
        if prompt == "-":
            prompt = sys.stdin.read()
        from co_tui.config.trust import untrusted_notice

        loaded = loaded_or_exit(overrides, trust_project)
        if notice := untrusted_notice(loaded.project):  # one line; the run goes on without it
            typer.echo(f"co-tui: {visible(notice, keep='')}", err=True)
        for problem in loaded.problems:
            say(problem)
        options = PrintOptions(output_format, yes, allow_private_data_out, verbose, raw)
        code = asyncio.run(run_print(loaded, prompt, options, continue_, resume))
        raise typer.Exit(code)
    loaded = loaded_or_exit(overrides, trust_project)
    from co_tui.tui.launch import launch_app

    raise typer.Exit(launch_app(loaded, continue_latest=continue_, resume=resume))


def reject_print_only_flags(
    *, yes: bool, output_format: str | None, raw: bool, private: bool = False
) -> None:
    """`--yes`, `--output-format`, `--raw` and `--allow-private-data-out` only mean something
    for one -p answer: given to the app, they would be silently ignored, so the command line
    is refused instead."""
    flags = (
        ("--yes", yes),
        ("--output-format", output_format),
        ("--raw", raw),
        ("--allow-private-data-out", private),
    )
    given = [flag for flag, on in flags if on]
    if given:
        verb = "need" if len(given) > 1 else "needs"
        raise fail(f"{' and '.join(given)} {verb} -p PROMPT (one answer, then exit)", EXIT_USAGE)


@app.command()
def status() -> None:
    """Show the provider, model, sandbox, integrations and paths."""
    from rich.console import Console

    from co_tui.context.deps import create_deps
    from co_tui.session.health import gather_status, render_status_table

    settings = settings_or_exit()
    from co_tui.sandbox import SandboxChoice, SandboxUnavailable

    try:
        deps = create_deps(settings)
    except SandboxUnavailable as exc:  # shown as the sandbox's error row
        Console().print(render_status_table(gather_status(settings, Path.cwd(), exc)))
        return
    choice = SandboxChoice(
        deps.sandbox, deps.sandbox_reason, deps.sandbox_skipped, deps.sandbox_warning
    )
    rows = gather_status(settings, Path.cwd(), choice)
    Console().print(render_status_table(rows))
    asyncio.run(deps.sandbox.cleanup())


@app.command()
def trust(
    show: Annotated[
        bool, typer.Option("--show", help="Show what it would trust, its files' text too.")
    ] = False,
    revoke: Annotated[bool, typer.Option("--revoke", help="Do not trust it (stored).")] = False,
) -> None:
    """Trust this project's files for co-tui: its settings, instructions, commands and skills
    (the decision is stored for these exact files; a change asks again)."""
    from co_tui.config.trust import load_project_settings
    from co_tui.config.trust.project import trust_summary

    try:
        project = load_project_settings(Path.cwd()).project
    except SettingsError as exc:
        raise fail(str(exc)) from None
    if project is None:
        typer.echo("this project ships nothing for co-tui that needs your trust")
        return
    for line in trust_summary(project, texts=show):
        print_as_is(visible(line, keep="\n\t") + "\n")
    if show:
        return
    decided = project.decide("declined" if revoke else "trusted")
    try:
        decided.remember()
    except OSError as exc:
        raise fail(f"cannot store the decision: {exc}") from None
    typer.echo("not trusted (stored)" if revoke else "trusted (stored): it applies in full")


sessions_app = typer.Typer(help="Stored sessions: list (the default) and export.")
app.add_typer(sessions_app, name="sessions")


@sessions_app.callback(invoke_without_command=True)
def sessions_command(
    ctx: typer.Context,
    all_dirs: Annotated[
        bool,
        typer.Option("--all", "-a", help="Every directory's, and the -p runs' (marked -p)."),
    ] = False,
    move_aside: Annotated[
        bool,
        typer.Option(
            "--move-aside",
            help="Move a damaged sessions.db aside (kept as sessions.db.corrupt-<time>) and "
            "start a new one; refused when it can be read.",
        ),
    ] = False,
) -> None:
    """List stored sessions, newest first (resume one with --resume ID)."""
    from co_tui.store.errors import SessionError
    from co_tui.store.session_store import SessionStore

    if ctx.invoked_subcommand is not None:
        return
    if move_aside:
        typer.echo(visible(_move_sessions_aside(), keep=""))
        return
    store = SessionStore()
    try:
        found = store.list(
            cwd=None if all_dirs else str(Path.cwd().resolve()), include_headless=all_dirs
        )
    except SessionError as exc:
        raise fail(str(exc)) from None
    finally:
        store.close()
    for info in found:
        flags = " (-p)" if info.headless else ""
        flags += " (waiting for approval)" if info.has_pending else ""
        if info.forked_from:
            flags += f" (fork of {info.forked_from[:8]})"
        where = f"  {visible(info.cwd, keep='')}" if all_dirs else ""
        title = visible(info.title, keep="")
        line = f"{info.id[:8]}  {info.age():>9}  {info.turns:>4} turns  {title}"
        typer.echo(line + flags + where)
    if not found:
        elsewhere = " in this directory (--all: every directory's, and -p runs)"
        typer.echo("no sessions" + ("" if all_dirs else elsewhere))


@sessions_app.command("export")
def sessions_export(
    session_id: Annotated[str, typer.Argument(help="The session's id or its first characters.")],
    file: Annotated[
        Path | None, typer.Argument(help="Write here (never over an existing file); else stdout.")
    ] = None,
    raw: Annotated[
        bool, typer.Option("--raw", help="The text as it is, escape sequences included.")
    ] = False,
) -> None:
    """A stored session as Markdown: prompts, answers, tool calls, decisions and results."""
    from co_tui.session.export import ExportError, stored_session_markdown, write_new
    from co_tui.store.errors import SessionError
    from co_tui.store.session_store import SessionStore

    store = SessionStore(secrets=settings_or_exit().secret_values())
    try:
        _, text = stored_session_markdown(store, session_id)
    except SessionError as exc:
        raise fail(str(exc)) from None
    finally:
        store.close()
    if not raw:  # a file too: `cat` shows it on a terminal
        text = visible(text, keep="\n\t")
    if file is None:
        print_as_is(text)
        return
    try:
        written = write_new(file, text)
    except ExportError as exc:
        raise fail(str(exc)) from None
    shown = visible(f"exported session {session_id} to {written}", keep="")
    typer.echo(shown, err=True)


def _move_sessions_aside() -> str:
    """`co-tui sessions --move-aside`: a damaged database, and only that, is renamed with its
    -wal and -shm; returns the line to print. Raises typer.Exit saying why it refuses."""
    from co_tui.store.database_file import SIDE_FILES, holders, move_aside, side_file
    from co_tui.store.errors import SessionDatabaseCorrupt, SessionError
    from co_tui.store.session_store import SessionStore

    store = SessionStore()
    path = store.path
    try:
        path.stat()
    except FileNotFoundError:
        raise fail(f"{path} does not exist: there is nothing to move aside") from None
    except OSError:
        pass  # the check below says why
    if found := holders(path):
        users = ", ".join(h.label() for h in found)
        raise fail(f"{path} is open in {users}: close it first; nothing was moved")
    try:
        problem = store.integrity_check()
    except SessionDatabaseCorrupt as exc:
        problem = str(exc)
    except SessionError as exc:
        raise fail(f"{exc}; nothing was moved") from None
    finally:
        store.close()
    if problem == "ok":
        raise fail(
            f"{path} can be read (no damage found): nothing was moved. --move-aside only "
            "moves a damaged database"
        )
    try:
        backup = move_aside(path)
    except OSError as exc:
        raise fail(f"cannot move {path} aside: {exc.strerror or exc}") from None
    moved = [s for s in SIDE_FILES if side_file(backup, s).exists()]
    along = f" (with its {' and '.join(moved)})" if moved else ""
    return f"moved {path} to {backup}{along}; the next conversation starts a new {path.name}"


@app.command()
def init(
    provider: Annotated[str, typer.Argument(help="gemini, openai or ollama.")],
    url: Annotated[
        str, typer.Option("--url", help="The server's URL (openai-compatible, ollama).")
    ] = "",
    model: Annotated[str, typer.Option("--model", help="The model to use.")] = "",
    no_check: Annotated[
        bool,
        typer.Option("--no-check", help="Save without asking the provider first (offline)."),
    ] = False,
) -> None:
    """Save a provider's key (read from standard input: never an argument, which the shell
    keeps), URL and model in a private file in your config folder, and use that provider.
    The provider is asked for its models first: nothing is saved when it does not answer."""
    from co_tui.config.credentials import (
        PROVIDER_FIELDS,
        credential_values,
        save_credentials,
        with_credentials,
    )
    from co_tui.llm.connection_check import checked_model
    from co_tui.llm.model_list import ModelListUnavailable

    key = ""
    if PROVIDER_FIELDS.get(provider, ("",))[0]:
        if sys.stdin.isatty():
            key = typer.prompt(f"{provider} key (empty for none)", default="", hide_input=True)
        else:
            key = sys.stdin.readline().strip()
    served = ""
    try:
        values = credential_values(provider, key.strip(), url.strip(), model.strip())
        if not no_check:
            # The defaults and what was given, nothing else (no project's URL): the test is
            # of these values, and the key goes nowhere else.
            candidate = with_credentials(Settings(), values)
            model_field = PROVIDER_FIELDS[provider][2]
            values[model_field] = asyncio.run(
                checked_model(candidate, provider, values.get(model_field, ""))
            )
            served = f"; it serves {values[model_field]}"
        path = save_credentials(values)
    except ModelListUnavailable as exc:
        why = visible(str(exc), keep="")
        raise fail(f"nothing saved: {why} (--no-check saves without asking)", EXIT_USAGE) from None
    except (SettingsError, OSError) as exc:
        raise fail(f"nothing saved: {exc}", EXIT_USAGE) from None
    typer.echo(
        visible(f"saved {provider} in {path} (readable by you only{served}); ", keep="")
        + "`co-tui status` shows it"
    )


@app.command()
def traces(
    trace: Annotated[str | None, typer.Option("--trace", help="Trace id (or prefix).")] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="HTML file to write ('-': stdout).")
    ] = None,
) -> None:
    """Write a trace (default: the newest) as a static HTML page with its span tree."""
    from co_tui.telemetry import default_db_path
    from co_tui.telemetry.commands import write_trace_page

    raise typer.Exit(write_trace_page(default_db_path(), trace, output, typer.echo))


@app.command()
def logs(
    port: Annotated[int, typer.Option("--port", help="Loopback port.")] = 8001,
    open_browser: Annotated[bool, typer.Option("--open", help="Open a browser.")] = False,
) -> None:
    """Browse every span with datasette on 127.0.0.1 (the optional `logs` extra)."""
    from co_tui.telemetry import default_db_path
    from co_tui.telemetry.commands import serve_logs

    raise typer.Exit(serve_logs(default_db_path(), port, open_browser, typer.echo))


@app.command("eval")
def eval_command(
    ctx: typer.Context,
    cases: Annotated[
        str | None, typer.Option("--cases", help="Case ids, globs or substrings (comma-separated).")
    ] = None,
    repeat: Annotated[int, typer.Option("--repeat", help="Runs per case (mean and spread).")] = 1,
    max_degradation: Annotated[
        float, typer.Option("--max-degradation", help="Fail when a dimension drops more points.")
    ] = 10.0,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="A pydantic-ai model string.")
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per case.")] = 120.0,
    cases_file: Annotated[
        Path, typer.Option("--cases-file", help="Golden cases; baselines sit beside it.")
    ] = Path("evals/tool_calling.jsonl"),
    results_dir: Annotated[
        Path | None, typer.Option("--results-dir", help="Where results-<model>.json goes.")
    ] = None,
    save_baseline: Annotated[
        bool, typer.Option("--save-baseline", help="Keep this run as the model's baseline.")
    ] = False,
) -> None:
    """Tool-calling evals on golden cases (no tool executes); gate against the baseline."""
    from co_tui.evals.command import EvalOptions, run_eval

    chosen = model or (ctx.obj or {}).get("model")
    options = EvalOptions(
        cases_file=cases_file, patterns=cases, repeat=repeat, max_degradation=max_degradation,
        timeout=timeout, results_dir=results_dir, save_baseline=save_baseline,
    )  # fmt: skip
    raise typer.Exit(asyncio.run(run_eval(settings_or_exit({"model": chosen}), options)))


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback by default).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    public_url: Annotated[
        str | None, typer.Option("--public-url", help="The address browsers use, if different.")
    ] = None,
) -> None:
    """Serve the app in a browser (textual-serve), behind a one-time access token."""
    from co_tui.serve.server import serve_command

    model = (ctx.obj or {}).get("model")
    raise typer.Exit(serve_command(host, port, public_url, model, typer.echo))


model_app = typer.Typer(help="Local GGUF models: list the catalog, pull one.", no_args_is_help=True)
app.add_typer(model_app, name="model")


def user_settings_or_exit() -> Settings:
    """The user's own settings and environment, never a project's: a repository must not
    choose where a download comes from."""
    from co_tui.config.settings import user_settings

    try:
        return user_settings()
    except SettingsError as exc:
        raise fail(str(exc), EXIT_USAGE) from None


@model_app.command("list")
def model_list() -> None:
    """The catalog: sizes, licences, hashes, what is downloaded and what is in use."""
    from co_tui.config.paths import models_dir
    from co_tui.llm.local.model_commands import list_lines

    for line in list_lines(settings_or_exit(), models_dir()):
        typer.echo(line)


@model_app.command("pull")
def model_pull(
    name: Annotated[str, typer.Argument(help="A catalog name (co-tui model list).")],
    accept_licence: Annotated[
        bool,
        typer.Option("--accept-licence", help="Accept a licence that is not Apache/MIT."),
    ] = False,
    sha256: Annotated[
        str | None,
        typer.Option("--sha256", help="The file's SHA-256, for a row without a pinned one."),
    ] = None,
) -> None:
    """Download a catalog model, resumable, verified against its SHA-256."""
    from rich.console import Console

    from co_tui.config.paths import models_dir
    from co_tui.llm.local.model_commands import run_pull

    confirm = (lambda q: typer.confirm(q, default=False)) if sys.stdin.isatty() else None
    code = run_pull(
        name,
        settings=user_settings_or_exit(),
        folder=models_dir(),
        accept_licence=accept_licence,
        sha256=sha256,
        echo=typer.echo,
        confirm=confirm,
        console=Console(stderr=True),
    )
    raise typer.Exit(code)


auth_app = typer.Typer(help="Sign in to services.", no_args_is_help=True)
app.add_typer(auth_app, name="auth")
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(jobs_app, name="jobs")
app.add_typer(inbox_app, name="inbox")
app.add_typer(daemon_app, name="daemon")


@auth_app.command("google")
def auth_google(
    client_secrets: Annotated[
        Path | None,
        typer.Option("--client-secrets", help="OAuth client JSON (else GOOGLE_CREDENTIALS_PATH)."),
    ] = None,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the sign-in address; open no browser.")
    ] = False,
) -> None:
    """Sign in to Google (Drive, Gmail, Calendar); the token is stored 0600 in the config dir."""
    from co_tui.integrations.google_auth import sign_in_command

    code = sign_in_command(settings_or_exit(), client_secrets, open_browser=not no_browser)
    raise typer.Exit(code)


def with_bare_resume(argv: list[str]) -> list[str]:
    """Click options need a value: a bare `--resume` becomes `--resume ""` (choose from a list)."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        out.append(arg)
        if arg in ("--resume", "-r") and (i + 1 == len(argv) or argv[i + 1].startswith("-")):
            out.append("")
    return out


def main() -> None:
    try:
        app(args=with_bare_resume(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:
        if os.environ.get("CO_TUI_DEBUG"):
            raise
        say(
            f"internal error: {type(exc).__name__}: {exc} (set CO_TUI_DEBUG=1 to see the traceback)"
        )
        sys.exit(EXIT_ERROR)


if __name__ == "__main__":
    from co_tui.shims import install_shims

    install_shims()
    main()
