"""The floor order: each part of co_tui imports only from the parts below it.

`FLOORS` lists co_tui's folders (and the two entry modules) from the bottom up; a module
belongs to the longest name in the list that contains it. A module may import from its own
part, from its own folder's parts on its floor, and from any floor below; an import of
another part on its own floor or above fails the test, with the line that makes it (a
package whose `__init__` imports nothing of co_tui is no dependency). Every import counts:
at module level, inside a function (it only defers the dependency to the first call) and
under `if TYPE_CHECKING:` (a type that only the upper part may name ties the lower part to
it all the same). The import graph is the one `test_import_cycles.py` reads with `ast`;
nothing is imported.

docs/architecture.md shows the same order; the last test fails when the two drift apart.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_import_cycles import ROOT, SRC, _modules, import_graph

# Bottom first. Parts on one floor do not import each other.
FLOORS: list[tuple[str, ...]] = [
    ("shims",),  # every patch of or path around a dependency
    ("safety",),  # redaction, visible text, the safe reader, file modes, signals
    ("protocol", "permissions.rules", "permissions.matching"),  # events, frontend, specs
    ("config",),  # settings, paths, endpoints, project trust
    ("permissions",),  # the user's rules: stored, combined with the settings'
    ("sandbox", "web", "integrations", "knowledge"),  # leaf services
    ("telemetry", "memory"),  # telemetry names sandbox results; memory reads notes' fronts
    ("llm",),  # providers, model resolution, the embedded model
    ("context",),  # CoDeps, what the model is sent, origins, usage
    ("store",),  # the session store, append-only
    ("policy",),  # approvals, read-only classifier, egress guard, fence, tool specs
    ("tools",),  # tool bodies
    ("prompts", "skills"),  # the system prompt; skills
    ("turn",),  # the turn runner, streaming, replay, sub-agents
    ("agent",),  # building the agent (with delegate, which runs a sub-agent's turn), MCP
    ("session",),  # ChatSession, slash commands, export, the health table
    ("tui", "headless", "evals", "daemon"),  # fronts
    ("serve",),  # the app in a browser: one tui process per connection
    ("cli",),  # the command line
    ("entry",),  # the console script
]

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def _floor_of() -> dict[str, int]:
    return {part: floor for floor, parts in enumerate(FLOORS) for part in parts}


def part_of(module: str) -> str:
    """The longest name in FLOORS that contains `module` ('' for co_tui itself)."""
    names = module.split(".")[1:]
    floors = _floor_of()
    for end in range(len(names), 0, -1):
        candidate = ".".join(names[:end])
        if candidate in floors:
            return candidate
    return ""


def test_every_module_has_a_floor() -> None:
    homeless = [m for m in _modules() if m != ROOT and not part_of(m)]
    assert not homeless, f"modules on no floor (add their folder to FLOORS): {homeless}"


def test_the_only_top_level_modules_are_the_entry_points() -> None:
    loose = sorted(p.name for p in (SRC / ROOT).glob("*.py") if p.name != "__init__.py")
    assert loose == ["cli.py", "entry.py"]


def test_no_import_reaches_up_or_sideways() -> None:
    floors = _floor_of()
    graph = import_graph()
    modules = _modules()
    wrong = []
    for module, edges in graph.items():
        own = part_of(module)
        if not own:
            continue
        for target, line in sorted(edges.items()):
            other = part_of(target)
            if not other or other == own or floors[other] < floors[own]:
                continue
            if modules[target].name == "__init__.py" and not graph[target]:
                continue
            same_folder = other.split(".")[0] == own.split(".")[0]
            if same_folder and floors[other] == floors[own]:
                continue
            where = "above" if floors[other] > floors[own] else "beside"
            wrong.append(f"  {module} (line {line}) -> {target}: {other} is {where} {own}")
    assert not wrong, "imports against the floor order:\n" + "\n".join(wrong)


def test_the_graph_sees_an_upward_import() -> None:
    """The test above could not pass vacuously: the session imports the turn runner."""
    graph = import_graph()
    floors = _floor_of()
    assert "co_tui.turn.runner" in graph["co_tui.session.chat"]
    assert floors[part_of("co_tui.turn.runner")] < floors[part_of("co_tui.session.chat")]


def test_the_architecture_page_shows_this_order() -> None:
    """docs/architecture.md's floor table: one line a floor, top first, its parts in order."""
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- floors -->\n```\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no ```-block after <!-- floors -->"
    lines = block.group(1).splitlines()[1:]  # under the header; indented lines continue a row
    rows = [line.split("  ")[0].strip() for line in lines if line and not line[0].isspace()]
    shown = [tuple(p.strip() for p in row.split(",")) for row in rows]
    assert shown == list(reversed(FLOORS))
