"""Approve-all has one writer: CoDeps.set_approve_all. Read with `ast`, every assignment to
an `auto_confirm` attribute in src/co_tui is inside that method, so the dialog's "approve
all", /yolo, sub-agents and session switches all go through one place."""

from __future__ import annotations

import ast

from tests.test_import_cycles import ROOT, SRC


def _writes(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, enclosing function) of each assignment to `<something>.auto_confirm`."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = function
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = child.name
            targets: list[ast.expr] = []
            if isinstance(child, ast.Assign):
                targets = child.targets
            elif isinstance(child, ast.AugAssign | ast.AnnAssign):
                targets = [child.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Attribute) and sub.attr == "auto_confirm":
                        found.append((child.lineno, name))
            visit(child, name)

    visit(tree, "")
    return found


def test_only_set_approve_all_writes_auto_confirm() -> None:
    elsewhere = []
    seen_in_the_method = False
    for path in sorted((SRC / ROOT).rglob("*.py")):
        for line, function in _writes(ast.parse(path.read_text(encoding="utf-8"))):
            if path.name == "deps.py" and function == "set_approve_all":
                seen_in_the_method = True
            else:
                elsewhere.append(f"{path.relative_to(SRC)}:{line} (in {function or 'module'})")
    assert seen_in_the_method, "CoDeps.set_approve_all no longer writes auto_confirm"
    assert not elsewhere, "approve-all written outside CoDeps.set_approve_all:\n" + "\n".join(
        elsewhere
    )
