"""`co-tui daemon install` and `uninstall` (run in this process): the systemd unit passes
`systemd-analyze verify` and reads back, per systemd's rules, as the words and values it was
given, odd paths included; the launchd plist has what launchd needs; nothing that would end
a line is written, no secret is carried, and with no user manager reachable (here, CI) the
file is written and the commands to run are printed.

HOME and the XDG folders are under tmp_path, and XDG_RUNTIME_DIR is an empty folder with
no session bus named: no real user manager or home folder is ever touched."""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from co_tui.daemon.install import InstallError, Kind, install
from co_tui.store.jobs_runner_lock import lock_path, take_lock
from co_tui.store.jobs_store import jobs_path
from tests.cli_in_process import Ran, run_co_tui

SCRIPT = str(Path(sys.executable).parent / "co-tui")
UNIT = "co-tui-daemon.service"
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
needs_systemd_analyze = pytest.mark.skipif(
    SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed (apt: systemd)"
)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    return home


def cli(args: list[str], tmp_path: Path) -> Ran:
    return run_co_tui(args, tmp_path, dict(os.environ))


def unit_path() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user" / UNIT


def plist_path() -> Path:
    return Path(os.environ["HOME"]) / "Library" / "LaunchAgents" / "dev.co-tui.daemon.plist"


def entries(unit: str, key: str) -> list[str]:
    return [line.split("=", 1)[1] for line in unit.splitlines() if line.startswith(f"{key}=")]


def systemd_words(value: str, *, command: bool) -> list[str]:
    """A value of ExecStart= (`command`) or Environment= read as systemd reads it: specifiers
    resolved on the whole line (only `%%` is written here), then split into double-quoted
    words with C escapes undone; in a command's arguments, not its executable path, `$$` is
    a literal `$`."""

    def specifier(found: re.Match[str]) -> str:
        assert found.group(1) == "%", f"a specifier was written: %{found.group(1)}"
        return "%"

    text = re.sub(r"%(.)", specifier, value)
    assert re.fullmatch(r'"(?:[^"\\]|\\.)*"(?: "(?:[^"\\]|\\.)*")*', text), text
    words = [
        re.sub(r"\\(.)", lambda m: m.group(1), quoted)
        for quoted in re.findall(r'"((?:[^"\\]|\\.)*)"', text)
    ]
    if not command:
        return words
    for word in words[1:]:
        assert re.fullmatch(r"(?:[^$]|\$\$)*", word), f"an expanded variable: {word!r}"
    return words[:1] + [word.replace("$$", "$") for word in words[1:]]


def environment(unit: str) -> dict[str, str]:
    pairs = [systemd_words(value, command=False) for value in entries(unit, "Environment")]
    assert all(len(pair) == 1 for pair in pairs)
    return dict(pair[0].split("=", 1) for pair in pairs)


def verify_complaints(unit: Path) -> list[str]:
    """What `systemd-analyze verify --user` says of `unit` (lines about other units left)."""
    assert SYSTEMD_ANALYZE is not None
    done = subprocess.run(
        [SYSTEMD_ANALYZE, "verify", "--user", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    said = (done.stdout + done.stderr).splitlines()
    return [line for line in said if unit.name in line or str(unit) in line]


@needs_systemd_analyze
def test_the_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    ran = cli(["daemon", "install", "--kind", "systemd"], tmp_path)
    assert ran.returncode == 0, ran.stderr
    unit = unit_path()
    assert unit.stat().st_mode & 0o777 == 0o644
    text = unit.read_text()
    assert "[Install]\nWantedBy=default.target" in text
    for line in ("Type=simple", "Restart=on-failure", "RestartSec=10"):
        assert line in text.splitlines()
    (exec_start,) = entries(text, "ExecStart")
    assert systemd_words(exec_start, command=True) == [SCRIPT, "daemon"]
    assert verify_complaints(unit) == []

    # The check bites: the same unit with an executable that is not there is named.
    broken = unit.with_name("co-tui-daemon-broken.service")
    broken.write_text(text.replace(f'"{SCRIPT}"', f'"{tmp_path}/missing/co-tui"'))
    assert verify_complaints(broken), "systemd-analyze verify complained of nothing"


def test_a_path_with_a_space_a_percent_and_a_dollar_reads_back(tmp_path: Path) -> None:
    folder = tmp_path / "my tools 100% $HOME ${HOME} %n"
    folder.mkdir()
    script = folder / "co-tui"
    script.symlink_to(SCRIPT)
    command = [str(script), "daemon", "an $argument ${HOME} 50% \\ \" 'quoted'"]
    env = {
        "XDG_DATA_HOME": str(tmp_path / "data 100% $x"),
        "CO_TUI_MODEL": 'ollama:q "a\\b" $HOME %h',
    }
    said: list[str] = []
    assert install("systemd", command=command, env=env, say=said.append, warn=said.append)
    text = unit_path().read_text()
    (exec_start,) = entries(text, "ExecStart")
    assert systemd_words(exec_start, command=True) == command
    assert environment(text) == env
    if SYSTEMD_ANALYZE is not None:
        assert verify_complaints(unit_path()) == []


def test_systemd_refuses_an_executable_path_with_a_quote(tmp_path: Path) -> None:
    script = tmp_path / "it's" / "co-tui"
    said: list[str] = []
    with pytest.raises(InstallError, match="a quote"):
        install(
            "systemd", command=[str(script), "daemon"], env={}, say=said.append, warn=said.append
        )
    assert not unit_path().exists() and said == []


@pytest.mark.parametrize("kind", ["systemd", "launchd"])
@pytest.mark.parametrize(
    ("char", "called"),
    [("\n", "a newline"), ("\r", "a carriage return"), ("\0", "a NUL character")],
)
def test_a_line_break_in_a_path_or_value_is_refused(
    tmp_path: Path, kind: Kind, char: str, called: str
) -> None:
    said: list[str] = []
    path = [f"{tmp_path}/a{char}ExecStartPre=/bin/sh", "daemon"]
    with pytest.raises(InstallError, match=f"the executable path contains {called}"):
        install(kind, command=path, env={}, say=said.append, warn=said.append)
    value = {"CO_TUI_MODEL": f"x{char}[Service]"}
    with pytest.raises(InstallError, match=f"the variable CO_TUI_MODEL contains {called}"):
        install(kind, command=[SCRIPT, "daemon"], env=value, say=said.append, warn=said.append)
    assert not unit_path().exists() and not plist_path().exists()
    assert said == []


def test_a_newline_in_the_shell_environment_stops_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CO_TUI_MODEL", "ollama:qwen\nExecStartPre=/bin/sh -c 'rm -rf ~'")
    ran = cli(["daemon", "install", "--kind", "systemd"], tmp_path)
    assert ran.returncode == 1
    assert "nothing installed" in ran.stderr
    assert "CO_TUI_MODEL contains a newline" in ran.stderr
    assert not unit_path().exists()


def test_the_plist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-launchctl-here"))
    ran = cli(["daemon", "install", "--kind", "launchd"], tmp_path)
    assert ran.returncode == 0, ran.stderr
    path = plist_path()
    assert path.stat().st_mode & 0o777 == 0o644
    agent = plistlib.loads(path.read_bytes())
    log = str(tmp_path / "data" / "co-tui" / "daemon.log")
    assert agent["Label"] == "dev.co-tui.daemon"
    assert agent["ProgramArguments"] == [SCRIPT, "daemon"]
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["StandardOutPath"] == agent["StandardErrorPath"] == log
    assert agent["ProcessType"] == "Background"
    assert agent["EnvironmentVariables"]["XDG_DATA_HOME"] == str(tmp_path / "data")
    assert Path(log).parent.is_dir()  # launchd opens the log but makes no folder
    assert f"launchctl bootstrap gui/{os.getuid()} {path}" in ran.stdout


@pytest.mark.parametrize("kind", ["systemd", "launchd"])
def test_secrets_are_never_carried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: Kind
) -> None:
    secrets = {
        "CO_TUI_GEMINI_API_KEY": "AIza-not-in-the-unit-1",
        "CO_TUI_SLACK_BOT_TOKEN": "xoxb-not-in-the-unit-2",
        "CO_TUI_SMTP_PASSWORD": "not-in-the-unit-3",
        "co_tui_client_secret": "not-in-the-unit-4",
        "SLACK_BOT_TOKEN": "xoxb-not-in-the-unit-5",
        "GEMINI_API_KEY": "AIza-not-in-the-unit-6",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CO_TUI_MODEL", "ollama:qwen3:4b")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-launchctl-here"))
    printed = cli(["daemon", "install", "--kind", kind, "--print"], tmp_path)
    assert printed.returncode == 0, printed.stderr
    assert not unit_path().exists() and not plist_path().exists()  # --print writes nothing
    assert cli(["daemon", "install", "--kind", kind], tmp_path).returncode == 0
    written = (unit_path() if kind == "systemd" else plist_path()).read_text()
    assert printed.stdout == written
    for name, value in secrets.items():
        assert value not in written and name.upper() not in written.upper()
    for name in ("CO_TUI_MODEL", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        assert os.environ[name] in written and name in written


def test_install_twice_then_uninstall_twice(tmp_path: Path) -> None:
    first = cli(["daemon", "install", "--kind", "systemd"], tmp_path)
    assert first.returncode == 0 and f"wrote {unit_path()}" in first.stdout
    text = unit_path().read_bytes()
    again = cli(["daemon", "install", "--kind", "systemd"], tmp_path)
    assert again.returncode == 0 and f"unchanged {unit_path()}" in again.stdout
    assert unit_path().read_bytes() == text
    assert [p.name for p in unit_path().parent.iterdir()] == [UNIT]  # no temporary file left

    wanted = unit_path().parent / "default.target.wants" / UNIT  # as `systemctl enable` makes
    wanted.parent.mkdir()
    wanted.symlink_to(unit_path())
    removed = cli(["daemon", "uninstall", "--kind", "systemd"], tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert f"removed {unit_path()}" in removed.stdout and f"removed {wanted}" in removed.stdout
    assert not unit_path().exists() and not wanted.is_symlink()
    nothing = cli(["daemon", "uninstall", "--kind", "systemd"], tmp_path)
    assert nothing.returncode == 0 and "nothing to uninstall" in nothing.stdout


def test_uninstall_the_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-launchctl-here"))
    assert cli(["daemon", "install", "--kind", "launchd"], tmp_path).returncode == 0
    removed = cli(["daemon", "uninstall", "--kind", "launchd"], tmp_path)
    assert removed.returncode == 0 and f"removed {plist_path()}" in removed.stdout
    assert "launchctl bootout" in removed.stdout and not plist_path().exists()
    nothing = cli(["daemon", "uninstall", "--kind", "launchd"], tmp_path)
    assert nothing.returncode == 0 and "nothing to uninstall" in nothing.stdout


def test_with_no_user_manager_the_commands_to_run_are_printed(tmp_path: Path) -> None:
    ran = cli(["daemon", "install", "--kind", "systemd"], tmp_path)
    assert ran.returncode == 0, ran.stderr
    lines = [line.strip() for line in ran.stdout.splitlines()]
    assert "no systemd user manager answers here" in ran.stdout
    assert "systemctl --user daemon-reload" in lines
    assert f"systemctl --user enable --now {UNIT}" in lines
    assert unit_path().is_file()


def test_a_daemon_running_already_is_named_and_the_unit_still_written(tmp_path: Path) -> None:
    fd = take_lock(lock_path(jobs_path()))
    try:
        ran = cli(["daemon", "install", "--kind", "systemd"], tmp_path)
    finally:
        os.close(fd)
    assert ran.returncode == 0, ran.stderr
    assert f"a daemon (pid {os.getpid()}) already runs" in ran.stderr
    assert "daemon.lock" in ran.stderr
    assert unit_path().is_file()


def test_daemon_help_lists_install_and_uninstall(tmp_path: Path) -> None:
    ran = cli(["daemon", "--help"], tmp_path)
    assert ran.returncode == 0
    assert "install" in ran.stdout and "uninstall" in ran.stdout
