"""`co-tui daemon install` and `uninstall`: the daemon as a systemd user service (Linux) or a
launchd agent (macOS), so that jobs run without a terminal left open.

The file runs the daemon of this installation: the `co-tui` console script beside the running
interpreter, by absolute path (a service manager's PATH is not the shell's, and `python -m
co_tui` does not run the app). The path is made absolute but not resolved through links: a
venv's python is a link out of the venv, and a packager's stable link outlives an upgrade.

It carries the XDG base directories and the `CO_TUI_*` variables set in the shell that
installs it, so that the service reads the same data folder as `co-tui jobs add` run there.
It carries no secrets: a variable whose name holds KEY, TOKEN, SECRET, PASSWORD, PASSWD or
CREDENTIAL stays out. A unit file or a plist is world-readable and gets copied into backups
and dotfile repositories; API keys belong in settings.json or credentials.json (0600), which
the daemon's sessions read as the app does.

Quoting follows systemd.syntax(7) and systemd.service(5): each ExecStart word is
double-quoted with backslash and double quote escaped and `%` doubled (specifiers are
resolved before the words are split). `$` is doubled in the arguments only: they are
expanded as variables, the executable path is not (`$$` there would stay two characters).
Environment= assignments are quoted the same way, `$` left as is: systemd expands nothing
there. A newline, carriage return or NUL in any word or value is refused rather than
quoted: in a unit file it would end the line, and the rest of a path would become unit
lines of its own. An executable path holding a quote, a backslash or a control character is
refused for systemd too: systemd would load the unit and never run it.

Nothing needs the service manager to be reachable: the file is written, and when no user
manager answers (a container, an ssh session without one, CI) the commands to run are
printed instead.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

Kind = Literal["systemd", "launchd"]
Say = Callable[[str], None]

UNIT_NAME = "co-tui-daemon.service"
LABEL = "dev.co-tui.daemon"
FILE_MODE = 0o644
CARRIED_XDG = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
CARRIED_PREFIX = "CO_TUI_"
SECRET_MARKS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
MANAGER_TIMEOUT_S = 15.0

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNSAFE_EXECUTABLE = re.compile(r"[\x01-\x1f\x7f\"'\\]")  # systemd's string_is_safe()
_LINE_BREAKERS = {"\n": "a newline", "\r": "a carriage return", "\0": "a NUL character"}


class InstallError(Exception):
    """The service file cannot be made or placed; the message names the reason."""


def default_kind() -> Kind:
    return "launchd" if sys.platform == "darwin" else "systemd"


def daemon_command_line() -> list[str]:
    """`co-tui daemon` of this installation: the console script beside sys.executable."""
    from co_tui.session.jobs.companion import console_script

    found = console_script()
    if found is None:
        raise InstallError(
            f"no co-tui console script beside {sys.executable}: the service needs one to "
            "run; reinstall co-tui into that environment"
        )
    return [str(found), "daemon"]


def is_secret(name: str) -> bool:
    upper = name.upper()
    return any(mark in upper for mark in SECRET_MARKS)


def carried_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables the service gets: XDG base directories and CO_TUI_* (in any case, as
    the settings read them), never a secret."""
    source = os.environ if environ is None else environ
    return {
        name: value
        for name, value in sorted(source.items())
        if (name in CARRIED_XDG or name.upper().startswith(CARRIED_PREFIX))
        and value
        and _ENV_NAME.fullmatch(name)
        and not is_secret(name)
    }


def _checked(what: str, value: str) -> str:
    for char, called in _LINE_BREAKERS.items():
        if char in value:
            raise InstallError(
                f"{what} contains {called}, which a service file cannot hold: {value!r}"
            )
    try:
        value.encode()
    except UnicodeEncodeError:
        raise InstallError(f"{what} is not valid UTF-8: {value!r}") from None
    return value


def _checked_command(command: Sequence[str]) -> list[str]:
    if not command:
        raise InstallError("the daemon's command line is empty")
    if not os.path.isabs(command[0]):
        raise InstallError(f"the daemon's executable is not an absolute path: {command[0]!r}")
    return [
        _checked("the executable path" if i == 0 else f"argument {i}", word)
        for i, word in enumerate(command)
    ]


def _checked_env(env: Mapping[str, str]) -> dict[str, str]:
    for name in env:
        if not _ENV_NAME.fullmatch(name):
            raise InstallError(f"{name!r} is not a valid environment variable name")
    return {name: _checked(f"the variable {name}", value) for name, value in env.items()}


def _systemd_quoted(text: str, *, dollars: bool) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    if dollars:
        escaped = escaped.replace("$", "$$")
    return f'"{escaped}"'


def systemd_unit(command: Sequence[str], env: Mapping[str, str]) -> str:
    """The text of co-tui-daemon.service. Raises InstallError for a word or value it cannot
    hold."""
    words = _checked_command(command)
    if _UNSAFE_EXECUTABLE.search(words[0]):
        raise InstallError(
            "systemd runs no executable whose path holds a quote, a backslash or a control "
            f"character: {words[0]!r}"
        )
    values = _checked_env(env)
    exec_start = " ".join(_systemd_quoted(w, dollars=i > 0) for i, w in enumerate(words))
    environment = [
        f"Environment={_systemd_quoted(f'{name}={value}', dollars=False)}"
        for name, value in values.items()
    ]
    return "\n".join(
        [
            "[Unit]",
            "Description=co-tui daemon: runs scheduled co-tui jobs",
            "",
            "[Service]",
            "Type=simple",
            f"ExecStart={exec_start}",
            "Restart=on-failure",
            "RestartSec=10",
            *environment,
            "",
            "[Install]",
            "WantedBy=default.target",
            "",
        ]
    )


def launchd_plist(command: Sequence[str], env: Mapping[str, str], log_path: Path) -> bytes:
    """The launchd agent dev.co-tui.daemon.plist (XML). Raises InstallError as systemd_unit."""
    log = _checked("the log path", str(log_path))
    agent: dict[str, object] = {
        "Label": LABEL,
        "ProgramArguments": _checked_command(command),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ProcessType": "Background",
        "StandardOutPath": log,
        "StandardErrorPath": log,
    }
    values = _checked_env(env)
    if values:
        agent["EnvironmentVariables"] = values
    import plistlib  # only for this: not at every start of co-tui

    return plistlib.dumps(agent, fmt=plistlib.FMT_XML)


def log_path() -> Path:
    from co_tui.store.jobs_runner_lock import log_path as daemon_log_path
    from co_tui.store.jobs_store import jobs_path

    return daemon_log_path(jobs_path())


def service_path(kind: Kind) -> Path:
    """Where the service manager looks for the file: the user's own units or agents."""
    if kind == "launchd":
        return Path.home() / "Library" / "LaunchAgents" / f"{LABEL}.plist"
    config = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(config) if os.path.isabs(config) else Path.home() / ".config"
    return base / "systemd" / "user" / UNIT_NAME


def service_file(
    kind: Kind, command: Sequence[str] | None = None, env: Mapping[str, str] | None = None
) -> bytes:
    """The file's content for `kind`: this installation's daemon and this shell's variables
    unless `command` and `env` are given."""
    words = daemon_command_line() if command is None else command
    values = carried_environment() if env is None else env
    if kind == "launchd":
        return launchd_plist(words, values, log_path())
    return systemd_unit(words, values).encode()


def write_atomically(path: Path, content: bytes) -> None:
    """`path` holds `content` (mode 0644) or what it held before, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, FILE_MODE)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def _run(args: list[str]) -> subprocess.CompletedProcess[str] | None:
    """The manager's answer, or None when it could not be asked at all."""
    try:
        return subprocess.run(
            args, capture_output=True, text=True, timeout=MANAGER_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _why(done: subprocess.CompletedProcess[str] | None) -> str:
    if done is None:
        return "it could not be run"
    text = " ".join((done.stderr or done.stdout).split())
    return text or f"exit status {done.returncode}"


def systemd_reachable() -> bool:
    """A systemd user manager answers (not so in most containers and CI machines)."""
    if shutil.which("systemctl") is None:
        return False
    done = _run(["systemctl", "--user", "show-environment"])
    return done is not None and done.returncode == 0


def _systemctl(*args: str) -> list[str]:
    return ["systemctl", "--user", *args]


def _launchd_domain() -> str:
    return f"gui/{os.getuid()}"


def _bootout() -> list[str]:
    return ["launchctl", "bootout", f"{_launchd_domain()}/{LABEL}"]


def _service_pid(kind: Kind) -> int | None:
    """The pid of the daemon the service manager runs for us, if one does."""
    if kind == "systemd":
        if not systemd_reachable():
            return None
        done = _run(_systemctl("show", "--property=MainPID", "--value", UNIT_NAME))
        text = done.stdout.strip() if done is not None and done.returncode == 0 else ""
        return int(text) if text.isdigit() and text != "0" else None
    if shutil.which("launchctl") is None:
        return None
    done = _run(["launchctl", "list", LABEL])
    found = re.search(r'"PID"\s*=\s*(\d+);', done.stdout) if done is not None else None
    return int(found.group(1)) if found else None


def _warn_if_a_daemon_runs(kind: Kind, warn: Say) -> None:
    from co_tui.store.jobs_runner_lock import running_daemon
    from co_tui.store.jobs_store import jobs_path

    pid = running_daemon(jobs_path())
    if pid is None or pid == _service_pid(kind):
        return
    warn(
        f"a daemon (pid {pid}) already runs the jobs of {jobs_path().parent}: the service "
        "cannot start while it holds daemon.lock, and retries every 10 s; stop that one "
        f"(kill {pid}) to hand the jobs over"
    )


def install(
    kind: Kind,
    *,
    say: Say,
    warn: Say,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> bool:
    """Write the service file and start it where the manager answers, else print how.
    False when a reachable manager refused; raises InstallError (nothing written) or
    OSError (the file could not be written)."""
    content = service_file(kind, command, env)
    path = service_path(kind)
    _warn_if_a_daemon_runs(kind, warn)
    try:
        before: bytes | None = path.read_bytes()
    except OSError:
        before = None
    if kind == "launchd":
        from co_tui.safety.private_files import private_dir

        private_dir(log_path().parent)  # launchd opens the log but makes no folder
    write_atomically(path, content)
    say(f"{'unchanged' if before == content else 'wrote'} {path}")
    if kind == "launchd":
        return _load_agent(path, changed=before != content, say=say, warn=warn)
    return _enable_unit(changed=before is not None and before != content, say=say, warn=warn)


def _enable_unit(*, changed: bool, say: Say, warn: Say) -> bool:
    steps = [_systemctl("daemon-reload"), _systemctl("enable", "--now", UNIT_NAME)]
    if not systemd_reachable():
        say("no systemd user manager answers here; to start the service, run:")
        for step in steps:
            say(f"  {shlex.join(step)}")
        return True
    if changed:
        steps.append(_systemctl("try-restart", UNIT_NAME))  # a running one has the old line
    for step in steps:
        done = _run(step)
        if done is None or done.returncode != 0:
            warn(f"`{shlex.join(step)}` failed: {_why(done)}")
            warn(f"the unit is written; once that is fixed, run: {shlex.join(steps[1])}")
            return False
    say(
        f"enabled and started {UNIT_NAME} (systemctl --user status {UNIT_NAME}; "
        f"journalctl --user -u {UNIT_NAME})"
    )
    return True


def _load_agent(path: Path, *, changed: bool, say: Say, warn: Say) -> bool:
    bootstrap = ["launchctl", "bootstrap", _launchd_domain(), str(path)]
    if shutil.which("launchctl") is None:
        say("launchctl is not found here; to load the agent, run:")
        say(f"  {shlex.join(bootstrap)}")
        return True
    loaded = _run(["launchctl", "list", LABEL])
    if loaded is not None and loaded.returncode == 0:
        if not changed:
            say(f"{LABEL} is loaded already (log: {log_path()})")
            return True
        _run(_bootout())
    done = _run(bootstrap)
    if done is None or done.returncode != 0:
        warn(f"`{shlex.join(bootstrap)}` failed: {_why(done)}")
        return False
    say(f"loaded {LABEL} (log: {log_path()})")
    return True


def uninstall(kind: Kind, *, say: Say, warn: Say) -> bool:
    """Stop and remove the service where the manager answers, and its file in any case;
    says so when nothing was installed. False when a reachable manager refused."""
    path = service_path(kind)
    if not path.exists() and not path.is_symlink():
        say(f"nothing to uninstall: there is no {path}")
        return True
    if kind == "launchd":
        ok = _stop_agent(say, warn)
        path.unlink()
        say(f"removed {path}")
        return ok
    if not systemd_reachable():
        wanted = path.parent / "default.target.wants" / UNIT_NAME
        if wanted.is_symlink():  # what `systemctl --user enable` made
            wanted.unlink()
            say(f"removed {wanted}")
        path.unlink()
        say(f"removed {path}")
        say(
            "no systemd user manager answers here: if the service still runs, stop it where "
            f"one does: {shlex.join(_systemctl('stop', UNIT_NAME))}"
        )
        return True
    disable = _systemctl("disable", "--now", UNIT_NAME)
    done = _run(disable)
    ok = done is not None and done.returncode == 0
    if ok:
        say(f"stopped and disabled {UNIT_NAME}")
    else:
        warn(f"`{shlex.join(disable)}` failed: {_why(done)}")
    path.unlink()
    say(f"removed {path}")
    reload = _run(_systemctl("daemon-reload"))
    if reload is None or reload.returncode != 0:
        warn(f"`systemctl --user daemon-reload` failed: {_why(reload)}")
        ok = False
    return ok


def _stop_agent(say: Say, warn: Say) -> bool:
    bootout = _bootout()
    if shutil.which("launchctl") is None:
        say(f"launchctl is not found here: if the agent is loaded, run {shlex.join(bootout)}")
        return True
    loaded = _run(["launchctl", "list", LABEL])
    if loaded is None or loaded.returncode != 0:
        return True
    done = _run(bootout)
    if done is None or done.returncode != 0:
        warn(f"`{shlex.join(bootout)}` failed: {_why(done)}")
        return False
    say(f"stopped and unloaded {LABEL}")
    return True
