"""Command-line flags that only mean something with -p are refused without it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from co_tui.cli import app
from co_tui.headless.runner import EXIT_USAGE


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--yes"], "--yes needs -p"),
        (["-y"], "--yes needs -p"),
        (["--output-format", "json"], "--output-format needs -p"),
        (["--yes", "--output-format", "text"], "--yes and --output-format need -p"),
    ],
)
def test_print_only_flags_without_p_exit_2_naming_the_flag(args: list[str], named: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == EXIT_USAGE
    assert named in result.output


def test_the_flags_still_work_with_p() -> None:
    result = CliRunner().invoke(app, ["-p", "hi", "-m", "test", "--yes", "--output-format", "json"])
    assert result.exit_code == 0, result.output
    assert '"text"' in result.output
