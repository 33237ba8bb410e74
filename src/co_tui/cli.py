"""The `co-tui` command: the app (default), -p headless, status, and sub-commands."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from co_tui import __version__
from co_tui.config import Settings, SettingsError, load_settings
from co_tui.sandbox.build import sandbox_app

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    invoke_without_command=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="co-tui: a privacy-first personal assistant in your terminal.",
    context_settings={"help_option_names": ["-h", "--help"]},
)

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def fail(message: str, code: int = EXIT_ERROR) -> typer.Exit:
    typer.echo(f"co-tui: {message}", err=True)
    return typer.Exit(code)


def settings_or_exit(overrides: dict[str, Any] | None = None) -> Settings:
    try:
        return load_settings(Path.cwd(), overrides=overrides)
    except SettingsError as exc:
        raise fail(str(exc), EXIT_USAGE) from None


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
        str, typer.Option("--output-format", help="text | json | stream-json (with -p).")
    ] = "text",
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Approve every side-effectful call (with -p).")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show thinking.")] = False,
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = None,
) -> None:
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"model": model}
        return
    overrides = {"model": model, "verbose": verbose or None}
    if prompt is not None:
        if output_format not in ("text", "json", "stream-json"):
            raise fail(
                f"--output-format must be text, json or stream-json, not {output_format!r}",
                EXIT_USAGE,
            )
        if prompt == "-":
            prompt = sys.stdin.read()
        settings = settings_or_exit(overrides)
        code = asyncio.run(_headless(settings, prompt, output_format, yes, verbose))
        raise typer.Exit(code)
    settings = settings_or_exit(overrides)
    from co_tui.tui.launch import launch_app

    launch_app(settings)


async def _headless(
    settings: Settings, prompt: str, output_format: str, yes: bool, verbose: bool
) -> int:
    from co_tui.agent import build_agent
    from co_tui.deps import create_deps
    from co_tui.headless import HeadlessFrontend
    from co_tui.llm import ProviderError
    from co_tui.orchestrator import run_turn

    if not prompt.strip():
        typer.echo("co-tui: the prompt is empty", err=True)
        return EXIT_USAGE
    try:
        bundle = build_agent(settings)
    except ProviderError as exc:
        typer.echo(f"co-tui: {exc}", err=True)
        return EXIT_ERROR
    deps = create_deps(settings)
    frontend = HeadlessFrontend(output_format, approve_all=yes, verbose=verbose)  # type: ignore[arg-type]
    try:
        result = await run_turn(
            bundle.agent,
            prompt,
            deps=deps,
            history=[],
            frontend=frontend,
            model_settings=bundle.model_settings,
            request_limit=settings.max_request_limit,
            http_retries=settings.model_http_retries,
        )
    finally:
        await deps.sandbox.cleanup()
    label = bundle.resolved.label if bundle.resolved else settings.model
    if output_format == "json":
        summary = frontend.summary(
            deps.session_id,
            output=result.output,
            interrupted=result.interrupted,
            error=result.error,
            model=label,
        )
        typer.echo(json.dumps(summary, ensure_ascii=False, default=str))
    if result.interrupted:
        return EXIT_INTERRUPTED
    if result.error:
        if output_format != "text":
            typer.echo(f"co-tui: {result.error}", err=True)
        return EXIT_ERROR
    if output_format == "text" and not result.streamed_text and result.output:
        typer.echo(result.output)
    return 0


@app.command()
def status() -> None:
    """Show the provider, model, sandbox, integrations and paths."""
    from rich.console import Console

    from co_tui.deps import create_deps
    from co_tui.status import gather_status, render_status_table

    settings = settings_or_exit()
    deps = create_deps(settings)
    from co_tui.sandbox import SandboxChoice

    choice = SandboxChoice(deps.sandbox, deps.sandbox_reason, deps.sandbox_skipped)
    rows = gather_status(settings, Path.cwd(), choice)
    Console().print(render_status_table(rows))
    asyncio.run(deps.sandbox.cleanup())


auth_app = typer.Typer(help="Sign in to services.", no_args_is_help=True)
app.add_typer(auth_app, name="auth")
app.add_typer(sandbox_app, name="sandbox")


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
    from co_tui.google_auth import sign_in_command

    code = sign_in_command(settings_or_exit(), client_secrets, open_browser=not no_browser)
    raise typer.Exit(code)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:
        if os.environ.get("CO_TUI_DEBUG"):
            raise
        typer.echo(
            f"co-tui: internal error: {type(exc).__name__}: {exc} "
            "(set CO_TUI_DEBUG=1 to see the traceback)",
            err=True,
        )
        sys.exit(EXIT_ERROR)


if __name__ == "__main__":
    main()
