"""Telling a command that failed for lack of network from any other failure. The outputs
are what these programs printed in a bubblewrap sandbox and a `--network none` container."""

from __future__ import annotations

import pytest

from co_tui.sandbox.base import CommandResult
from co_tui.sandbox.offline import network_program, offline_failure

SEEN = {
    "curl -sS https://example.com": "curl: (6) Could not resolve host: example.com",
    "git ls-remote https://github.com/x/y": (
        "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com"
    ),
    "python3 fetch.py": (
        "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>"
    ),
    "pip download requests": (
        "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None))"
        " after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection."
        "HTTPSConnection object at 0x7f5be6c43650>: Failed to establish a new connection: "
        "[Errno -3] Temporary failure in name resolution')': /simple/requests/\n"
        "ERROR: No matching distribution found for requests"
    ),
    "wget https://example.com": (
        "Resolving example.com (example.com)... failed: Temporary failure in name resolution.\n"
        "wget: unable to resolve host address ‘example.com’"
    ),
    "npm view left-pad version": (
        "npm error request to https://registry.npmjs.org/left-pad failed, reason: "
        "getaddrinfo EAI_AGAIN registry.npmjs.org"
    ),
    "ssh git@github.com": (
        "ssh: Could not resolve hostname github.com: Temporary failure in name resolution"
    ),
    "python3 connect.py": "OSError: [Errno 101] Network is unreachable",
}


@pytest.mark.parametrize("cmd", list(SEEN))
def test_a_network_error_in_the_output_is_named(cmd: str) -> None:
    failure = offline_failure(cmd, CommandResult(SEEN[cmd], exit_code=1))
    assert failure is not None
    assert failure.evidence.lower() in SEEN[cmd].lower()
    assert failure.what() == f"its output says `{failure.evidence}`"


def test_a_command_that_succeeded_is_never_called_offline() -> None:
    # The phrase in the output of a command that worked (a log it printed) says nothing.
    result = CommandResult("grep found: Could not resolve host\n", exit_code=0)
    assert offline_failure("grep -r resolve logs/", result) is None


@pytest.mark.parametrize(
    "output",
    [
        "ls: cannot access 'missing': No such file or directory",
        "curl: (7) Failed to connect to 127.0.0.1 port 8000: Connection refused",
        "E: Unable to locate package foo",
    ],
)
def test_other_failures_are_not_blamed_on_the_network(output: str) -> None:
    assert offline_failure("some command", CommandResult(output, exit_code=2)) is None


def test_a_network_program_that_timed_out_may_have_been_waiting() -> None:
    result = CommandResult("Collecting requests\n", exit_code=-9, timed_out=True)
    failure = offline_failure("cd app && pip install -r requirements.txt", result)
    assert failure is not None and failure.program == "pip"
    assert failure.what() == "it timed out running `pip`, which may have been waiting for it"


def test_another_command_that_timed_out_is_just_slow() -> None:
    result = CommandResult("", exit_code=-9, timed_out=True)
    assert offline_failure("sleep 200", result) is None
    assert offline_failure("echo curl is a word here; sleep 200", result) is None


@pytest.mark.parametrize(
    ("cmd", "program"),
    [
        ("git fetch origin", "git fetch"),
        ("git -C repo pull", "git pull"),
        ("git status", ""),
        ("/usr/bin/curl -O x", "curl"),
        ("npm install && npm test", "npm"),
        ("echo 'unclosed", ""),
    ],
)
def test_network_programs_are_found_by_their_words(cmd: str, program: str) -> None:
    assert network_program(cmd) == program
