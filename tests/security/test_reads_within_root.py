"""What the model sees from the user's files never comes from outside their folder.

AGENTS.md, knowledge, skills and vault notes linked to a host file (/etc/hostname, a
secret next to the workspace) are left out of the system prompt and refused by the tools,
with a one-line reason; a note swapped between a file and a link while it is being read
never returns the outside file. Real files, real links, real threads: nothing is mocked.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic_ai import ModelRetry

from co_tui.config.paths import PROJECT_DIR_NAME, user_config_dir
from co_tui.config.settings import Settings
from co_tui.config.trust.project_files import ProjectView, read_project_files
from co_tui.prompts import assemble_prompt
from co_tui.protocol.recording import RecordingFrontend
from co_tui.safety.safe_read import ReadRefused, list_within, read_text_within, walk_within
from co_tui.skills import discover_skills, list_skills_display, skills_prompt_section
from co_tui.tools.obsidian import list_notes, read_note, search_notes
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps, model_view
from tests.knowledge.conftest import ctx_for
from tests.servers.fake_openai import Reply, serve, text, tool_call
from tests.test_headless import openai_env, spawn_cli

SECRET = "HOST-SECRET-51c0ffee"
INSIDE = "INSIDE-NOTE-text"
HOSTNAME = Path("/etc/hostname")
MODEL = "gemini-2.5-flash"


def put(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def link(path: Path, target: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target, target_is_directory=target.is_dir())
    return path


def skill_md(name: str, description: str, body: str = "Do the thing.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A folder outside every root, standing in for ~/.ssh: secrets in every shape."""
    root = tmp_path / "host"
    put(root / "secret.txt", SECRET)
    put(root / "knowledge" / "x.md", f"{SECRET} knowledge")
    put(root / "notes" / "n.md", f"{SECRET} budget note")
    put(root / "skill" / "SKILL.md", skill_md("evil", f"{SECRET} evil skill", SECRET))
    return root


@pytest.fixture
def hostname() -> str:
    if not HOSTNAME.is_file():
        pytest.skip("/etc/hostname does not exist here")
    return HOSTNAME.read_text(encoding="utf-8").strip()


# -- the system prompt ----------------------------------------------------------------


def trusted(ws: Path) -> ProjectView:
    """The project's files as co-tui reads them at start, trusted: all of it would load."""
    return ProjectView(read_project_files(ws), trusted=True)


def _project(ws: Path) -> Path:
    return ws / PROJECT_DIR_NAME


LINKED_PROMPT_FILES: dict[str, Callable[[Path, Path], Path]] = {
    "AGENTS.md -> /etc/hostname": lambda ws, host: link(ws / "AGENTS.md", HOSTNAME),
    "AGENTS.md -> secret": lambda ws, host: link(ws / "AGENTS.md", host / "secret.txt"),
    "knowledge/x.md -> /etc/hostname": lambda ws, host: link(
        _project(ws) / "knowledge" / "x.md", HOSTNAME
    ),
    "knowledge -> /etc": lambda ws, host: link(_project(ws) / "knowledge", Path("/etc")),
    "knowledge -> host": lambda ws, host: link(_project(ws) / "knowledge", host / "knowledge"),
    ".co-tui -> host": lambda ws, host: link(_project(ws), host),
    "instructions.md -> secret": lambda ws, host: link(
        _project(ws) / "instructions.md", host / "secret.txt"
    ),
    "user knowledge/x.md -> secret": lambda ws, host: link(
        user_config_dir() / "knowledge" / "x.md", host / "secret.txt"
    ),
    "user knowledge -> host": lambda ws, host: link(
        user_config_dir() / "knowledge", host / "knowledge"
    ),
}


@pytest.mark.parametrize("case", sorted(LINKED_PROMPT_FILES))
def test_linked_prompt_files_are_left_out_with_a_warning(
    tmp_path: Path, host: Path, hostname: str, case: str
) -> None:
    ws, plain = tmp_path / "ws", tmp_path / "plain"
    for root in (ws, plain):
        put(_project(root) / "instructions.md", "PLAIN-INSTRUCTIONS")
    if "instructions.md" in case or ".co-tui" in case:
        (_project(ws) / "instructions.md").unlink()
        (_project(plain) / "instructions.md").unlink()
        if ".co-tui" in case:
            _project(ws).rmdir()
    expected = assemble_prompt(Settings(), trusted(plain), MODEL).text
    linked = LINKED_PROMPT_FILES[case](ws, host)

    result = assemble_prompt(Settings(), trusted(ws), MODEL)
    # Nothing of the link's target: the prompt is the one built without it.
    assert result.text == expected
    assert SECRET not in result.text
    assert not any(s.source and s.source.startswith(str(linked)) for s in result.sections)
    (warning,) = result.warnings
    assert warning.startswith(f"{linked} skipped: it is a symbolic link")


async def test_the_agent_never_sends_linked_files_to_the_model(
    tmp_path: Path, host: Path, hostname: str
) -> None:
    """Built the way the app builds it: the instructions of the first model request."""
    ws = tmp_path / "ws"
    link(ws / "AGENTS.md", HOSTNAME)
    link(_project(ws) / "knowledge" / "x.md", host / "secret.txt")
    put(_project(ws) / "knowledge" / "ok.md", "OK-KNOWLEDGE: plain file")
    link(_project(ws) / "skills" / "evil", host / "skill")
    model = ScriptedModel(["done"])
    result = await run_turn(
        make_bundle(model.model).agent,
        "hi",
        deps=make_deps(ws, project=trusted(ws)),
        history=[],
        frontend=RecordingFrontend(),
    )
    assert result.ok
    instructions = model.seen[0][-1].instructions or ""
    assert "OK-KNOWLEDGE: plain file" in instructions
    assert SECRET not in instructions and "evil" not in instructions
    assert 'file="AGENTS.md"' not in instructions and 'file="x.md"' not in instructions


# -- skills ---------------------------------------------------------------------------


def _skills_root(ws: Path) -> Path:
    return _project(ws) / "skills"


async def test_linked_skills_are_problems_and_their_files_unreadable(
    tmp_path: Path, host: Path
) -> None:
    ws = tmp_path / "ws"
    root = _skills_root(ws)
    link(root / "evil", host / "skill")  # a skill folder linking outside
    (root / "evil2").mkdir(parents=True)
    link(root / "evil2" / "SKILL.md", host / "skill" / "SKILL.md")  # a SKILL.md linking out
    put(root / "good" / "SKILL.md", skill_md("good", "A good one"))
    put(root / "good" / "real.md", "REAL-FILE")
    link(root / "good" / "notes.md", host / "secret.txt")  # an extra file linking out
    link(root / "good" / "more", host)  # an extra folder linking out
    link(user_config_dir() / "skills", host)  # the user's whole skills folder

    catalog = discover_skills(trusted(ws))
    assert "evil" not in catalog.skills and set(catalog.skills) >= {"good", "summarize-logs"}
    problems = {str(p.path): p.message for p in catalog.problems}
    assert set(problems) == {
        str(root / "evil"),
        str(root / "evil2" / "SKILL.md"),
        str(user_config_dir() / "skills"),
    }
    assert all(m.startswith("is a symbolic link") for m in problems.values())
    assert catalog.skills["good"].files == ("real.md",)
    display = list_skills_display(trusted(ws))
    assert f"`{root / 'evil2' / 'SKILL.md'}`: is a symbolic link" in display
    assert SECRET not in display and SECRET not in skills_prompt_section(catalog.skills.values())

    model = ScriptedModel(
        [Call("load_skill", {"name": "evil"}, "c1")],
        [Call("load_skill", {"name": "good", "file": "notes.md"}, "c2")],
        [Call("load_skill", {"name": "good", "file": "more/secret.txt"}, "c3")],
        [Call("load_skill", {"name": "good", "file": "real.md"}, "c4")],
        ["done"],
    )
    frontend = RecordingFrontend()
    result = await run_turn(
        make_bundle(model.model).agent,
        "go",
        deps=make_deps(ws, project=trusted(ws)),
        history=[],
        frontend=frontend,
    )
    assert result.ok
    assert "REAL-FILE" in repr(result.messages)
    assert SECRET not in repr(result.messages) and SECRET not in repr(frontend.log)


def test_a_skill_file_swapped_for_a_link_after_listing_is_refused(
    tmp_path: Path, host: Path
) -> None:
    """load_skill reads only listed files, and even a listed one is opened without
    following links: a user's skill file swapped after discovery is refused. A project's
    skill files were read once, at start: the swap changes nothing of what loads."""
    from co_tui.skills.tool import _read_file

    ws = tmp_path / "ws"
    for root in (user_config_dir() / "skills", _skills_root(ws)):
        put(root / "good" / "SKILL.md", skill_md("good", "A good one"))
    user_file = put(user_config_dir() / "skills" / "good" / "real.md", "REAL-FILE")
    project_file = put(_skills_root(ws) / "good" / "real.md", "PROJECT-FILE")
    user_skill = discover_skills(None).skills["good"]
    project_skill = discover_skills(trusted(ws)).skills["good"]
    assert (user_skill.origin, project_skill.origin) == ("user", "project")
    assert _read_file(user_skill, "real.md") == "REAL-FILE"
    for swapped in (user_file, project_file):
        swapped.unlink()
        link(swapped, host / "secret.txt")
    with pytest.raises(ModelRetry, match="is a symbolic link"):
        _read_file(user_skill, "real.md")
    assert _read_file(project_skill, "real.md") == "PROJECT-FILE"


# -- vault notes ----------------------------------------------------------------------


@pytest.fixture
def vault(tmp_path: Path, host: Path) -> Path:
    root = tmp_path / "vault"
    put(root / "projects" / "alpha.md", "The alpha budget meeting is on Monday.")
    link(root / "leak.md", host / "secret.txt")  # a note linked outside
    link(root / "host.md", HOSTNAME)
    link(root / "sub", host / "notes")  # a vault folder linked outside
    link(root / "projects" / "etc", Path("/etc"))
    return root


def test_linked_notes_are_refused_and_never_indexed(
    tmp_path: Path, vault: Path, hostname: str
) -> None:
    deps = make_deps(tmp_path, Settings(obsidian_vault_path=str(vault)))
    ctx = ctx_for(deps)
    for name in ("leak.md", "leak", "host.md", "sub/n.md", "sub/n", "projects/etc/hostname"):
        with pytest.raises(ModelRetry, match="is a symbolic link") as refused:
            read_note(ctx, name)
        assert SECRET not in str(refused.value)
    assert "alpha budget" in read_note(ctx, "projects/alpha")
    assert model_view(list_notes(ctx))["notes"] == ["projects/alpha.md"]
    assert SECRET not in str(model_view(search_notes(ctx, "budget")))
    assert model_view(search_notes(ctx, SECRET.split("-")[-1]))["count"] == 0
    assert model_view(search_notes(ctx, hostname))["count"] == 0


async def test_linked_notes_through_a_turn(tmp_path: Path, vault: Path) -> None:
    model = ScriptedModel(
        [Call("read_note", {"filename": "leak.md"}, "r1")],
        [Call("read_note", {"filename": "sub/n.md"}, "r2")],
        [Call("search_notes", {"query": "budget"}, "s1")],
        [Call("list_notes", {}, "l1")],
        ["done"],
    )
    frontend = RecordingFrontend()
    deps = make_deps(tmp_path, Settings(obsidian_vault_path=str(vault)))
    result = await run_turn(
        make_bundle(model.model).agent, "read", deps=deps, history=[], frontend=frontend
    )
    assert result.ok
    statuses = [(r.tool_name, r.status) for r in frontend.of("tool_result")]
    assert statuses[:2] == [("read_note", "failed"), ("read_note", "failed")]
    assert SECRET not in repr(result.messages) and SECRET not in repr(frontend.log)


# -- races ----------------------------------------------------------------------------

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
needs_exchange = pytest.mark.skipif(
    not hasattr(_libc, "renameat2"), reason="needs Linux renameat2 (glibc 2.28+)"
)


def exchange(a: Path, b: Path) -> None:
    """Swap two names atomically (renameat2 RENAME_EXCHANGE): there is never a moment
    when either is missing, the sharpest form of the check-then-open race."""
    if _libc.renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE):
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), str(a))


class Swapper:
    """A thread swapping `path` with `other` as fast as it can until stopped."""

    def __init__(self, path: Path, other: Path) -> None:
        self.path, self.other = path, other
        self.swaps = 0
        self.error: OSError | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                exchange(self.path, self.other)
                self.swaps += 1
        except OSError as exc:
            self.error = exc

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self.error is not None:
            raise self.error


def _attempts(call: Callable[[], str], seconds: float = 1.5) -> Iterator[str | None]:
    """Call repeatedly for `seconds` (at least 500 times): the text, or None if refused."""
    deadline = time.monotonic() + seconds
    count = 0
    while count < 500 or time.monotonic() < deadline:
        count += 1
        try:
            yield call()
        except (ModelRetry, ReadRefused):
            yield None


@needs_exchange
def test_a_note_swapped_with_a_link_mid_read_never_leaks(tmp_path: Path, host: Path) -> None:
    vault = tmp_path / "vault"
    put(vault / "note.md", f"{INSIDE} budget")
    link(vault / ".swap", host / "secret.txt")  # hidden: never a note itself
    deps = make_deps(tmp_path, Settings(obsidian_vault_path=str(vault)))
    ctx = ctx_for(deps)
    with Swapper(vault / "note.md", vault / ".swap") as swapper:
        seen = list(_attempts(lambda: read_note(ctx, "note.md")))
        searched = [str(model_view(search_notes(ctx, "budget"))) for _ in range(50)]
    assert swapper.swaps > 100
    assert all(SECRET not in s for s in seen if s is not None)
    assert all(SECRET not in s for s in searched)
    # The race was real: some reads found the note, some found the link and were refused.
    assert any(s is not None and INSIDE in s for s in seen) and None in seen


@needs_exchange
def test_a_folder_swapped_with_a_link_mid_read_never_leaks(tmp_path: Path, host: Path) -> None:
    vault = tmp_path / "vault"
    put(vault / "sub" / "n.md", f"{INSIDE} budget")
    link(vault / ".swap", host / "notes")  # host/notes/n.md holds the secret
    deps = make_deps(tmp_path, Settings(obsidian_vault_path=str(vault)))
    ctx = ctx_for(deps)
    with Swapper(vault / "sub", vault / ".swap") as swapper:
        seen = list(_attempts(lambda: read_note(ctx, "sub/n.md")))
        listed = [model_view(list_notes(ctx))["notes"] for _ in range(50)]
    assert swapper.swaps > 100
    assert all(SECRET not in s for s in seen if s is not None)
    assert all(n in ([], ["sub/n.md"]) for n in listed)
    assert any(s is not None and INSIDE in s for s in seen) and None in seen
    assert SECRET not in str(model_view(search_notes(ctx, "budget")))


@needs_exchange
def test_agents_md_swapped_with_a_link_never_reaches_the_prompt(tmp_path: Path, host: Path) -> None:
    ws = tmp_path / "ws"
    put(ws / "AGENTS.md", INSIDE)
    link(ws / ".swap", host / "secret.txt")
    with Swapper(ws / "AGENTS.md", ws / ".swap"):
        prompts = [assemble_prompt(Settings(), trusted(ws), MODEL) for _ in range(500)]
    assert all(SECRET not in p.text for p in prompts)
    assert any(INSIDE in p.text for p in prompts)
    assert any("symbolic link" in w for p in prompts for w in p.warnings)


# -- hard links, odd files, the reader itself -----------------------------------------


def test_hard_links(tmp_path: Path) -> None:
    """A hard link to our own file is read (whoever made it could have copied it); one to
    a file owned by another user is refused."""
    if os.geteuid() != 0:
        pytest.skip("making a file owned by another user needs root")
    outside = put(tmp_path / "outside.txt", SECRET)
    root = tmp_path / "root"
    root.mkdir()
    os.link(outside, root / "mine.md")
    assert read_text_within(root, "mine.md", limit=1000) == SECRET
    os.chown(outside, 12345, 12345)
    with pytest.raises(ReadRefused, match="hard link to a file owned by another user"):
        read_text_within(root, "mine.md", limit=1000)
    single = put(root / "theirs.md", "ONE-LINK")  # not a hard link: read whoever owns it
    os.chown(single, 12345, 12345)
    assert read_text_within(root, "theirs.md", limit=1000) == "ONE-LINK"


def test_fifos_folders_size_and_traversal(tmp_path: Path) -> None:
    root = tmp_path / "root"
    put(root / "big.md", "x" * 100)
    os.mkfifo(root / "pipe.md")  # opening it would block: refused before it is opened
    (root / "dir.md").mkdir()
    cases = {
        "pipe.md": "is not a regular file",
        "dir.md": "is not a regular file",
        "big.md": "is too large",
        "../outside.txt": "leaves its folder",
        "/etc/hostname": "leaves its folder",
    }
    for name, reason in cases.items():
        with pytest.raises(ReadRefused, match=reason) as refused:
            read_text_within(root, name, limit=10)
        assert str(refused.value).count("\n") == 0
    assert read_text_within(root, "big.md", limit=10, truncate=True) == "x" * 10


def test_listings_never_follow_links(tmp_path: Path, host: Path) -> None:
    root = tmp_path / "root"
    put(root / "a" / "b.md", "B")
    link(root / "a" / "out", host)
    link(root / "x.md", host / "secret.txt")
    assert [(e.name, e.kind) for e in list_within(root)] == [("a", "dir"), ("x.md", "link")]
    walked = {prefix: [e.name for e in entries] for prefix, entries in walk_within(root)}
    assert walked == {"": ["a", "x.md"], "a/": ["b.md", "out"]}
    with pytest.raises(ReadRefused, match="is a symbolic link"):
        list_within(root, "a/out")


# -- co-tui -p against an OpenAI-compatible server ------------------------------------


@pytest.mark.e2e
def test_headless_run_sends_nothing_from_outside(tmp_path: Path, host: Path, vault: Path) -> None:
    ws = tmp_path / "ws"
    link(ws / "AGENTS.md", host / "secret.txt")
    link(_project(ws) / "knowledge", host / "knowledge")
    put(_skills_root(ws) / "good" / "SKILL.md", skill_md("good", "A good one"))
    link(_skills_root(ws) / "good" / "notes.md", host / "secret.txt")
    link(_skills_root(ws) / "evil", host / "skill")
    script = [
        tool_call("read_note", filename="leak.md"),
        tool_call("read_note", filename="sub/n.md"),
        Reply("tool", tool_name="load_skill", tool_args={"name": "good", "file": "notes.md"}),
        tool_call("search_notes", query="budget"),
        text("Nothing to see."),
    ]
    with serve(script) as srv:
        env = {**openai_env(srv.url), "OBSIDIAN_VAULT_PATH": str(vault)}
        proc = spawn_cli(["-p", "read my notes", "--trust-project"], ws, **env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Nothing to see."
    assert len(srv.requests) == 5
    bodies = json.dumps([r.body for r in srv.requests])
    assert SECRET not in bodies
    messages = srv.requests[0].body["messages"]
    system = json.dumps([m for m in messages if m["role"] == "system"])
    assert "- good: A good one" in system and "evil" not in system
    assert f"{ws / 'AGENTS.md'} skipped: it is a symbolic link" in proc.stderr
    assert SECRET not in proc.stdout + proc.stderr
