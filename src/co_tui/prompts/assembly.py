"""assemble_prompt: the system prompt, in increasing precedence.

1. behavioural aspects (aspects/*.md, chosen by model tier)
2. model quirk counter-steering (model_quirks.py)
3. personality (personalities/<name>.md; tier 1 none, tier 2 its Style section only)
4. knowledge: user_config_dir()/knowledge/*.md, then <workspace>/.co-tui/knowledge/*.md
5. project instructions: <workspace>/AGENTS.md, then <workspace>/.co-tui/instructions.md

Files the user wrote are read only from inside their folder (user_config_dir() or the
workspace) and never through a symbolic link (see co_tui.safe_read): a refused file is
left out with a warning naming it and why. They are wrapped in tags naming their origin.
The built-in parts are always kept; when the total would pass the tier's cap, user files
lose their tail, the lowest-precedence ones first, and a warning names each one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from co_tui.config import Settings
from co_tui.paths import PROJECT_DIR_NAME, user_config_dir
from co_tui.prompts.model_quirks import quirks_for
from co_tui.prompts.tiers import TIER_FULL, TIER_MID, TIER_TINY, model_tier
from co_tui.safe_read import NotFound, ReadRefused, list_within, read_text_within

DEFAULT_PERSONALITY = "finch"
# Characters, per tier: tiny local models have ~4k-token contexts.
MAX_PROMPT_CHARS: dict[int, int] = {TIER_TINY: 6_000, TIER_MID: 16_000, TIER_FULL: 40_000}
MAX_FILE_BYTES = 256_000

ASPECTS_BY_TIER: dict[int, tuple[str, ...]] = {
    TIER_TINY: ("identity", "response_style", "tool_output"),
    TIER_MID: ("identity", "response_style", "tool_output", "tool_usage", "pagination",
               "memory"),
    TIER_FULL: ("identity", "response_style", "tool_output", "tool_usage", "pagination",
                "memory", "notes"),
}  # fmt: skip

PRECEDENCE_NOTE = (
    "The sections below come in increasing precedence: where two conflict, follow the later "
    "one. Project instructions come last and win over everything before them."
)


@dataclass
class PromptSection:
    kind: str  # aspect | quirks | personality | knowledge | instructions
    name: str
    text: str
    source: str | None = None  # the file it came from, for user and project files


@dataclass
class PromptAssembly:
    text: str
    tier: int
    sections: list[PromptSection] = field(default_factory=list)
    loaded_files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _packaged(folder: str, name: str) -> str | None:
    node = resources.files("co_tui.prompts").joinpath(folder, f"{name}.md")
    return node.read_text(encoding="utf-8").strip() if node.is_file() else None


def available_personalities() -> list[str]:
    folder = resources.files("co_tui.prompts").joinpath("personalities")
    return sorted(p.name.removesuffix(".md") for p in folder.iterdir() if p.name.endswith(".md"))


def _style_only(text: str) -> str:
    match = re.search(r"^## Style\s*\n(.*?)(?=^## |\Z)", text, re.DOTALL | re.MULTILINE)
    return match.group(1).strip() if match else text


def _personality(name: str, tier: int, warnings: list[str]) -> PromptSection | None:
    if tier == TIER_TINY:
        return None
    text = _packaged("personalities", name)
    if text is None:
        warnings.append(
            f"unknown personality {name!r} (available: {', '.join(available_personalities())}); "
            f"using {DEFAULT_PERSONALITY}"
        )
        name, text = DEFAULT_PERSONALITY, _packaged("personalities", DEFAULT_PERSONALITY) or ""
    if tier == TIER_MID:
        text = _style_only(text)
    return PromptSection("personality", name, f"## Personality: {name}\n{text}")


@dataclass(frozen=True)
class UserFile:
    kind: str  # knowledge | instructions
    origin: str  # user | project
    root: Path  # the folder it must stay inside: user_config_dir() or the workspace
    relative: str

    @property
    def path(self) -> Path:
        return self.root / self.relative


def _refused(exc: ReadRefused, warnings: list[str]) -> None:
    warning = f"{exc.path} skipped: it {exc.reason}"
    # A missing file is not a problem, only not there; a linked folder is said once.
    if not isinstance(exc, NotFound) and warning not in warnings:
        warnings.append(warning)


def _read_user_file(file: UserFile, warnings: list[str]) -> str | None:
    """The file's text, read without following links out of its root; a refusal is a
    warning naming the file and why."""
    try:
        text = read_text_within(file.root, file.relative, limit=MAX_FILE_BYTES, truncate=True)
    except ReadRefused as exc:
        _refused(exc, warnings)
        return None
    return text.strip() or None


def _markdown_in(root: Path, folder: str, warnings: list[str]) -> list[str]:
    """folder/*.md below root, links included (so reading them reports the refusal)."""
    try:
        entries = list_within(root, folder)
    except ReadRefused as exc:
        _refused(exc, warnings)
        return []
    return [f"{folder}/{e.name}" for e in entries if e.name.endswith(".md") and e.kind != "dir"]


def user_files(workspace: Path | None, warnings: list[str]) -> list[UserFile]:
    """Every user/project file the prompt may include, lowest precedence first."""
    config = user_config_dir()
    files = [
        UserFile("knowledge", "user", config, rel)
        for rel in _markdown_in(config, "knowledge", warnings)
    ]
    if workspace is not None:
        knowledge = _markdown_in(workspace, f"{PROJECT_DIR_NAME}/knowledge", warnings)
        files += [UserFile("knowledge", "project", workspace, rel) for rel in knowledge]
        for rel in ("AGENTS.md", f"{PROJECT_DIR_NAME}/instructions.md"):
            files.append(UserFile("instructions", "project", workspace, rel))
    return files


def _wrap(file: UserFile, text: str) -> str:
    return f'<{file.kind} origin="{file.origin}" file="{file.path.name}">\n{text}\n</{file.kind}>'


def _fit(texts: list[str], budget: int) -> tuple[list[str], list[int]]:
    """Give the budget to the highest-precedence (last) texts first; returns the cut ones."""
    out = list(texts)
    cut: list[int] = []
    for i in range(len(texts) - 1, -1, -1):
        if len(texts[i]) <= budget:
            budget -= len(texts[i])
            continue
        keep = max(0, budget - 40)
        out[i] = texts[i][:keep] + "\n[truncated: prompt size cap]" if keep else ""
        budget -= len(out[i])
        cut.append(i)
    return out, cut


def assemble_prompt(
    settings: Settings | None = None,
    workspace: Path | None = None,
    model_name: str = "",
    provider: str = "",
    *,
    max_chars: int | None = None,
) -> PromptAssembly:
    """Build the system prompt; `workspace=None` skips project knowledge and instructions."""
    settings = settings or Settings()
    tier = model_tier(model_name, provider)
    cap = max_chars if max_chars is not None else MAX_PROMPT_CHARS[tier]
    warnings: list[str] = []
    sections: list[PromptSection] = []
    for name in ASPECTS_BY_TIER[tier]:
        text = _packaged("aspects", name)
        if text:
            sections.append(PromptSection("aspect", name, text))
    quirks = quirks_for(model_name)
    if quirks:
        body = "\n".join(f"- {q.correction}" for q in quirks)
        sections.append(PromptSection("quirks", model_name, f"## Model notes\n{body}"))
    personality = _personality(settings.personality or DEFAULT_PERSONALITY, tier, warnings)
    if personality:
        sections.append(personality)

    user: list[PromptSection] = []
    for file in user_files(workspace, warnings):
        text = _read_user_file(file, warnings)
        if text is not None:
            name = f"{file.origin}:{file.path.name}"
            user.append(PromptSection(file.kind, name, _wrap(file, text), str(file.path)))

    fixed = "\n\n".join(s.text for s in sections)
    separators = len(PRECEDENCE_NOTE) + 2 * (len(user) + 2)
    budget = cap - len(fixed) - separators
    if budget < 0 and user:
        warnings.append(f"built-in prompt alone is {len(fixed)} chars, over the {cap} cap")
    fitted, cut = _fit([s.text for s in user], max(0, budget))
    for i in sorted(cut):
        what = "dropped" if not fitted[i] else "truncated"
        warnings.append(f"{user[i].source}: {what}, the prompt is capped at {cap} characters")
    kept = []
    for section, text in zip(user, fitted, strict=True):
        if text:
            section.text = text
            kept.append(section)
    parts = [fixed]
    if kept:
        parts.append(PRECEDENCE_NOTE)
        parts += [s.text for s in kept]
    return PromptAssembly(
        text="\n\n".join(parts),
        tier=tier,
        sections=sections + kept,
        loaded_files=[s.source for s in kept if s.source],
        warnings=warnings,
    )
