"""`co-tui sandbox build`: build the sandbox image from sandbox/Dockerfile, showing progress.

The image is labelled with the Dockerfile's sha256 (the CI set-up script uses the same
label to rebuild only when the Dockerfile changed).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

HASH_LABEL = "co-tui.dockerfile-sha256"
DEFAULT_BASE = "debian:bookworm-slim"

sandbox_app = typer.Typer(
    help="The Docker sandbox image: build it.", no_args_is_help=True, rich_markup_mode=None
)


def dockerfile_dir() -> Path:
    """Where the Dockerfile is: shipped inside the wheel, or the source tree's sandbox/."""
    packaged = Path(__file__).with_name("image")
    if (packaged / "Dockerfile").is_file():
        return packaged
    source = Path(__file__).resolve().parents[3] / "sandbox"
    if (source / "Dockerfile").is_file():
        return source
    raise FileNotFoundError("the sandbox Dockerfile is not shipped with this installation")


def dockerfile_hash(directory: Path) -> str:
    return hashlib.sha256((directory / "Dockerfile").read_bytes()).hexdigest()


def build_image(tag: str, *, base: str | None = None, echo: Callable[[str], None] = print) -> int:
    """Build `tag`; stream the build log through `echo`. Returns an exit code."""
    from co_tui.sandbox.docker import engine_address

    try:
        directory = dockerfile_dir()
    except FileNotFoundError as exc:
        echo(f"co-tui: {exc}")
        return 1
    import docker
    from docker.errors import APIError, DockerException

    try:
        client = docker.from_env(timeout=600)
    except DockerException:
        echo(f"co-tui: no Docker engine answers at {engine_address()}: start Docker first")
        return 1
    args = {"BASE": base} if base else {}
    echo(f"Building {tag} from {directory / 'Dockerfile'} (FROM {base or DEFAULT_BASE})")
    failed: str | None = None
    try:
        for event in client.api.build(
            path=str(directory), tag=tag, buildargs=args, rm=True, forcerm=True,
            labels={HASH_LABEL: dockerfile_hash(directory)}, decode=True,
        ):  # fmt: skip
            if "stream" in event:
                line = str(event["stream"]).rstrip("\n")
                if line.strip():
                    echo(line)
            elif "status" in event:
                echo(" ".join(str(event[k]) for k in ("status", "progress") if event.get(k)))
            elif "error" in event:
                failed = str(event["error"]).strip()
    except APIError as exc:
        failed = str(exc.explanation or exc)
    finally:
        client.close()
    if failed:
        echo(f"co-tui: the build failed: {failed}")
        if "pull access denied" in failed or "manifest" in failed or "lookup" in failed:
            echo("  The base image could not be pulled. With no registry, build a local")
            echo("  Debian base (debootstrap + `docker import`) and pass it with --base.")
        return 1
    echo(f"Built {tag}. co-tui now runs shell commands in it (sandbox_backend auto or docker).")
    return 0


@sandbox_app.command("build")
def build_command(
    base: Annotated[
        str | None,
        typer.Option("--base", help=f"Base image (a Debian bookworm; default {DEFAULT_BASE})."),
    ] = None,
    tag: Annotated[
        str | None, typer.Option("--tag", help="Image name (default: the docker_image setting).")
    ] = None,
) -> None:
    """Build the sandbox image co-tui runs shell commands in."""
    if tag is None:
        from co_tui.config.settings import SettingsError
        from co_tui.config.trust import load_settings

        try:
            tag = load_settings(Path.cwd()).docker_image
        except SettingsError as exc:
            typer.echo(f"co-tui: {exc}", err=True)
            raise typer.Exit(2) from None
    raise typer.Exit(build_image(tag, base=base, echo=typer.echo))
