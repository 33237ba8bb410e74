"""Permission rules: the grammar, what each rule covers (and never covers), their order, and
their effect through run_turn. A rule saved from the dialog never allows a command the
read-only classifier refuses for a reason; a rule written by hand in settings.json does.

(make_deps pretends the isolation level where a test says so; nothing here needs a sandbox.)
"""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from co_tui.config.paths import user_config_dir
from co_tui.config.settings import Permissions, Settings, SettingsError
from co_tui.config.trust import load_settings
from co_tui.headless.frontend import HeadlessFrontend
from co_tui.permissions.matching import ToolCall, covers
from co_tui.permissions.rules import RuleError, parse_rule
from co_tui.permissions.ruleset import PermissionRules
from co_tui.permissions.store import ProjectRuleStore
from co_tui.permissions.suggest import suggest_rule
from co_tui.protocol.frontend import (
    DENIED_MESSAGE,
    ApprovalAnswer,
    ApprovalDecision,
    ApprovalRecord,
)
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps, tool_returns

SHELL = "run_shell_command"
ALWAYS = ApprovalDecision.ALWAYS_ALLOW


def shell(cmd: str) -> ToolCall:
    return ToolCall(SHELL, {"cmd": cmd})


def fetch(url: str) -> ToolCall:
    return ToolCall("web_fetch", {"url": url})


def rules(**lists: list[str]) -> PermissionRules:
    return PermissionRules.from_settings(Permissions(**lists), Path.cwd())


# -- the grammar ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("shell", "tool"),
        ("run_shell_command", "tool"),
        ("shell(git status)", "command"),
        ("shell(make && make install)", "command"),
        ("shell(npm test *)", "prefix"),
        ("shell(*)", "prefix"),
        ("web_fetch(domain:docs.python.org)", "domain"),
        ("web_search", "tool"),
        ("draft_email", "tool"),
        ("mcp:github_*", "mcp"),
    ],
)
def test_rules_parse(text: str, kind: str) -> None:
    assert parse_rule(text).kind == kind


MALFORMED = {
    "": "empty",
    "shell(": "closing `)`",
    "shell()": "empty argument",
    "shell(npm test*)": "word of its own",
    "shell(make && make *)": "never covered by a prefix",
    "shell(npm $SCRIPT *)": "never covered by a prefix",
    "shell(rm ~/x *)": "may expand",
    "shell('unclosed *)": "cannot be split",
    "web_fetch(docs.python.org)": "domain:<host>",
    "web_fetch(domain:*.python.org)": "covers its subdomains",
    "web_fetch(domain:docs python org)": "not a host name",
    "draft_email(to:me)": "only shell(…) and web_fetch(domain:…) take an argument",
    "mcp:": "glob",
    "mcp:git hub": "glob",
    "git status": "not a tool name",
}


@pytest.mark.parametrize("text", list(MALFORMED))
def test_malformed_rules_are_refused_and_say_why(text: str) -> None:
    with pytest.raises(RuleError, match=MALFORMED[text].replace("(", r"\(").replace(")", r"\)")):
        parse_rule(text)


@pytest.mark.parametrize("bad", ["shell(npm test*)", "web_fetch(docs.python.org)", "mcp:"])
def test_a_malformed_rule_in_settings_is_an_error_naming_it(bad: str, tmp_path: Path) -> None:
    settings = tmp_path / ".co-tui" / "settings.json"
    settings.parent.mkdir()
    rules_json = {"permissions": {"allow": ["shell(git status)"], "deny": ["web_search", bad]}}
    settings.write_text(json.dumps(rules_json))
    with pytest.raises(SettingsError) as err:
        load_settings(tmp_path, env={})
    message = str(err.value)
    assert "permissions.deny.1" in message and repr(bad) in message
    assert "bad permission rule" in message and "\n" not in message


def test_permissions_has_no_other_keys(tmp_path: Path) -> None:
    settings = tmp_path / ".co-tui" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"alow": ["shell"]}}))
    with pytest.raises(SettingsError, match=r"permissions\.alow"):
        load_settings(tmp_path, env={})


# -- what a rule covers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cmd", "covered"),
    [
        ("npm test", True),
        ("npm test --watch", True),
        ("npm  test   a b c", True),
        ("'npm' \"test\" -x", True),  # the same words, quoted
        ("  npm test", True),
        ("npm testx", False),  # words, not characters
        ("npm tes", False),
        ("npmtest", False),
        ("npm run test", False),
        ("npm", False),
        ("FOO=1 npm test", False),
        # shell syntax is never covered by a prefix
        ("npm test; rm -rf ~", False),
        ("npm test;rm -rf ~", False),
        ("npm test && rm -rf ~", False),
        ("npm test || rm -rf ~", False),
        ("npm test | sh", False),
        ("npm test & rm -rf ~", False),
        ("npm test > ~/.bashrc", False),
        ("npm test < /etc/passwd", False),
        ("npm test $(rm -rf ~)", False),
        ("npm test ${HOME}", False),
        ("npm test `rm -rf ~`", False),
        ("npm test\nrm -rf ~", False),
        ("npm test\rrm -rf ~", False),
        ("npm test (rm)", False),
        ("npm test ';' rm", False),  # even quoted: the whole line is refused
        ("npm test 'unclosed", False),
    ],
)
def test_prefix_rules_compare_shell_words_and_never_cover_shell_syntax(
    cmd: str, covered: bool
) -> None:
    assert covers(parse_rule("shell(npm test *)"), shell(cmd)) is covered


def test_exact_rules_cover_only_the_same_command() -> None:
    exact = parse_rule("shell(git status)")
    assert covers(exact, shell("git status"))
    assert covers(exact, shell("  git status "))
    assert not covers(exact, shell("git status --short"))
    assert not covers(exact, shell("git status; rm -rf ~"))
    chained = parse_rule("shell(make && make install)")
    assert covers(chained, shell("make && make install"))  # exact and equal: operators too
    assert not covers(chained, shell("make && make install; rm -rf ~"))
    assert not covers(chained, shell("make"))


# What Python's str.strip() and str.split() take for whitespace, and /bin/sh keeps in a word.
NOT_SH_BLANKS = ["\xa0", "\u3000", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2028"]


@pytest.mark.parametrize("char", [*NOT_SH_BLANKS, "\r"], ids=repr)
def test_an_exact_rule_ignores_only_what_sh_ignores(char: str) -> None:
    exact = parse_rule("shell(git status)")
    assert not covers(exact, shell(f"git status{char}"))  # sh gives git `status<char>`
    assert not covers(exact, shell(f"{char}git status"))  # sh runs `<char>git`
    assert covers(exact, shell(" git status\t\n"))  # blanks, and a final line break
    written = parse_rule(f"shell(git status{char})")  # rule text is read the same way
    assert written.command == f"git status{char}"
    assert covers(written, shell(f"git status{char}"))
    assert not covers(written, shell("git status"))


@pytest.mark.parametrize("char", NOT_SH_BLANKS, ids=repr)
def test_a_prefix_rule_splits_words_where_sh_does(char: str) -> None:
    prefix = parse_rule("shell(git status *)")
    assert covers(prefix, shell(f"git status {char}"))  # `<char>` is a further word
    assert not covers(prefix, shell(f"git status{char}--short"))
    leading = parse_rule(f"shell({char}git status *)")
    assert leading.words == (f"{char}git", "status")
    assert not covers(leading, shell("git status --short"))
    assert covers(leading, shell(f"{char}git status --short"))
    with pytest.raises(RuleError, match="word of its own"):
        parse_rule(f"shell(git status{char}*)")


@pytest.mark.parametrize("char", NOT_SH_BLANKS, ids=repr)
def test_allow_and_deny_rules_in_settings_read_commands_as_sh_does(char: str) -> None:
    ruleset = rules(
        allow=["shell(git status)", f"shell(npm test{char} *)"],
        deny=[f"shell(rm -rf build{char})", f"shell({char}curl *)"],
    )
    assert ruleset.evaluate(shell(f"git status{char}")).rule is None  # not allowed: it asks
    assert ruleset.evaluate(shell("npm test --watch")).rule is None
    allowed = ruleset.evaluate(shell(f"npm test{char} --watch")).rule
    assert allowed is not None and allowed.action == "allow"
    denied = ruleset.evaluate(shell(f"rm -rf build{char}")).rule
    assert denied is not None and denied.action == "deny"
    assert ruleset.evaluate(shell("rm -rf build")).rule is None  # another file for sh
    denied = ruleset.evaluate(shell(f"{char}curl x")).rule
    assert denied is not None and denied.action == "deny"
    assert ruleset.evaluate(shell("curl x")).rule is None  # another program for sh


def test_shell_star_covers_plain_commands_only() -> None:
    star = parse_rule("shell(*)")
    assert covers(star, shell("rm -rf build"))
    assert not covers(star, shell("ls; rm -rf ~"))


@pytest.mark.parametrize(
    ("url", "covered"),
    [
        ("https://docs.python.org/3/library/shlex.html", True),
        ("http://docs.python.org:8080/", True),
        ("https://DOCS.Python.org./3/", True),
        ("https://en.docs.python.org/", True),  # a subdomain
        ("https://evil-docs.python.org.attacker.com/", False),
        ("https://docs.python.org.attacker.com/", False),
        ("https://evildocs.python.org/", False),
        ("https://python.org/", False),  # the parent domain is not covered
        ("https://docs.python.org@attacker.com/", False),  # the host is attacker.com
        ("https://attacker.com\\@docs.python.org/", False),  # a user name: never fetched
        ("ftp://docs.python.org/", False),
        ("docs.python.org/3/", False),  # no scheme: web_fetch refuses it
        ("https://[::1]/", False),
        ("not a url at all", False),
    ],
)
def test_domain_rules_cover_the_host_and_its_subdomains(url: str, covered: bool) -> None:
    assert covers(parse_rule("web_fetch(domain:docs.python.org)"), fetch(url)) is covered


def test_mcp_globs_cover_mcp_tools_only() -> None:
    rule = parse_rule("mcp:github_*")
    assert covers(rule, ToolCall("github_create_issue", {"title": "x"}, mcp=True))
    assert not covers(rule, ToolCall("gitlab_create_issue", {}, mcp=True))
    assert not covers(rule, ToolCall("github_create_issue", {}, mcp=False))  # not an MCP tool
    assert covers(parse_rule("mcp:*"), ToolCall("notes_search", {}, mcp=True))
    assert not covers(parse_rule("mcp:*"), shell("ls"))


def test_bare_tool_names_cover_every_call_of_that_tool() -> None:
    assert covers(parse_rule("web_search"), ToolCall("web_search", {"query": "tides"}))
    assert not covers(parse_rule("web_search"), fetch("https://example.com/"))
    assert covers(parse_rule("draft_email"), ToolCall("draft_email", {"to": "a@b.c"}))
    assert covers(parse_rule("shell"), shell("ls; rm -rf ~"))  # every command: as written
    assert covers(parse_rule("github_create_issue"), ToolCall("github_create_issue", {}, True))


# -- deny, then ask, then allow -------------------------------------------------------------


def test_deny_beats_allow() -> None:
    ruleset = rules(allow=["shell(rm *)", "web_search"], deny=["shell(rm -rf *)"])
    decided = ruleset.evaluate(shell("rm -rf build")).rule
    assert decided is not None and decided.action == "deny"
    assert decided.rule.text == "shell(rm -rf *)"
    allowed = ruleset.evaluate(shell("rm build")).rule
    assert allowed is not None and allowed.action == "allow"


def test_ask_beats_allow() -> None:
    ruleset = rules(allow=["shell(git *)"], ask=["shell(git push *)"])
    decided = ruleset.evaluate(shell("git push origin main")).rule
    assert decided is not None and decided.action == "ask"
    allowed = ruleset.evaluate(shell("git pull")).rule
    assert allowed is not None and allowed.action == "allow"


def test_no_rule_decides_what_no_rule_covers() -> None:
    verdict = rules(allow=["shell(git status)"]).evaluate(shell("git push"))
    assert verdict.rule is None and verdict.held_back is None


# -- the offered rule and the store ---------------------------------------------------------


def test_the_offered_rule_covers_exactly_the_call() -> None:
    assert suggest_rule(shell("npm test")) == "shell(npm test)"
    assert suggest_rule(shell("echo (x")) == "shell(echo (x)"
    assert suggest_rule(fetch("https://Docs.Python.org/3/")) == "web_fetch(domain:docs.python.org)"
    assert suggest_rule(ToolCall("draft_email", {"to": "a@b.c"})) == "draft_email"
    assert suggest_rule(ToolCall("github_create_issue", {}, mcp=True)) == "github_create_issue"
    # Not offered: what one line of rule text could not show or say faithfully.
    assert suggest_rule(shell("echo a\nrm -rf ~")) is None
    assert suggest_rule(shell("echo \x1b[2Kls")) is None
    assert suggest_rule(shell("echo \u202eevil")) is None
    assert suggest_rule(shell("ls *")) is None  # would read as a prefix rule
    assert suggest_rule(fetch("https://user@docs.python.org/")) is None


def test_saved_rules_live_in_the_config_dir_keyed_by_the_real_path(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    link = tmp_path / "link"
    link.symlink_to(project)
    store = ProjectRuleStore(project)
    store.add("shell(npm test *)")
    assert store.path.is_relative_to(user_config_dir())
    assert not store.path.is_relative_to(project)
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert json.loads(store.path.read_text()) == {
        "project": str(project.resolve()),
        "allow": ["shell(npm test *)"],
    }
    assert ProjectRuleStore(link).path == store.path  # the same project by another path
    assert ProjectRuleStore(link).load().texts == ("shell(npm test *)",)
    assert ProjectRuleStore(tmp_path).load().texts == ()  # another project
    assert store.remove("shell(npm test *)") and store.load().texts == ()


def test_a_config_dir_inside_the_project_is_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    ruleset = PermissionRules.from_settings(Permissions(), tmp_path)
    assert "inside this project" in ruleset.cannot_save
    with pytest.raises(Exception, match="inside this project"):
        ruleset.save("shell(ls)")
    assert not (tmp_path / ".config").exists()


# -- through run_turn -----------------------------------------------------------------------


async def turn(
    tmp_path: Path,
    calls: list[Call],
    frontend: Any,
    *,
    settings: Settings | None = None,
    isolation: str | None = None,
    auto_confirm: bool = False,
) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel(calls, ["done"])
    deps = make_deps(tmp_path, settings, isolation=isolation)
    deps.auto_confirm = auto_confirm
    result = await run_turn(
        make_bundle(model.model).agent, "go", deps=deps, history=[], frontend=frontend
    )
    assert result.ok, result.error
    return result, model


def with_rules(**lists: list[str]) -> Settings:
    return Settings(permissions=Permissions(**lists))


async def test_an_allow_rule_runs_the_call_without_asking(tmp_path: Path) -> None:
    frontend = RecordingFrontend()
    settings = with_rules(allow=["shell(touch *)"])
    await turn(
        tmp_path, [Call(SHELL, {"cmd": "touch made.txt"}, "c1")], frontend, settings=settings
    )
    assert frontend.approval_requests == []
    assert (tmp_path / "made.txt").exists()
    [record] = frontend.of("approval")
    assert (record.decision, record.read_only, record.rule) == ("auto", False, "shell(touch *)")
    assert record.reason == "allowed by your permission rule `shell(touch *)` (settings.json)"


async def test_a_command_an_allow_rule_covers_runs_in_the_normal_sandbox(tmp_path: Path) -> None:
    # `ls` is read-only: alone it would run in the read-only view (which the subprocess
    # sandbox refuses); allowed by the user's rule it runs in the normal sandbox.
    (tmp_path / "seen.txt").write_text("x")
    frontend = RecordingFrontend()
    settings = with_rules(allow=["shell(ls *)"])
    calls = [Call(SHELL, {"cmd": "ls"}, "c1")]
    await turn(tmp_path, calls, frontend, settings=settings, isolation="namespace")
    [record] = frontend.of("approval")
    assert (record.decision, record.read_only) == ("auto", False)
    [result] = frontend.of("tool_result")
    assert result.status == "ok" and "seen.txt" in result.content


async def test_a_deny_rule_denies_without_asking_and_names_the_rule(tmp_path: Path) -> None:
    frontend = RecordingFrontend([ApprovalDecision.APPROVE])
    settings = with_rules(allow=["shell(touch *)"], deny=["shell(touch secret *)"])
    calls = [Call(SHELL, {"cmd": "touch secret.txt"}, "c1")]
    # `touch secret *` has the words touch, secret: it covers `touch secret x`, not this one.
    calls.append(Call(SHELL, {"cmd": "touch secret x"}, "c2"))
    _, model = await turn(tmp_path, calls, frontend, settings=settings)
    assert frontend.approval_requests == []
    allowed, denied = frontend.of("approval")
    assert (allowed.tool_call_id, allowed.decision) == ("c1", "auto")
    assert (denied.tool_call_id, denied.decision) == ("c2", "deny")
    assert denied.rule == "shell(touch secret *)"
    assert denied.reason == "denied by your permission rule `shell(touch secret *)` (settings.json)"
    assert not (tmp_path / "x").exists() and (tmp_path / "secret.txt").exists()
    told = {r.tool_call_id: r for r in tool_returns(model.seen[-1])}
    assert told["c2"].outcome == "denied"
    assert "denied by your permission rule `shell(touch secret *)`" in str(told["c2"].content)


async def test_a_deny_rule_holds_under_approve_all_and_headless_yes(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    frontend = HeadlessFrontend("stream-json", approve_all=True, out=out, err=err)
    settings = with_rules(deny=["shell"])
    calls = [Call(SHELL, {"cmd": "touch made.txt"}, "c1")]
    await turn(tmp_path, calls, frontend, settings=settings, auto_confirm=True)
    assert not (tmp_path / "made.txt").exists()
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    [approval] = [e for e in events if e["type"] == "approval"]
    assert approval["decision"] == "deny" and approval["rule"] == "shell"
    assert approval["reason"] == "denied by your permission rule `shell` (settings.json)"


async def test_the_text_output_does_not_suggest_yes_for_a_rule_denial(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    frontend = HeadlessFrontend("text", out=out, err=err)
    settings = with_rules(deny=["shell(touch *)"])
    await turn(tmp_path, [Call(SHELL, {"cmd": "touch a"}, "c1")], frontend, settings=settings)
    assert "denied by your permission rule `shell(touch *)`" in err.getvalue()
    assert "--yes" not in err.getvalue()


async def test_an_ask_rule_asks_for_a_read_only_command(tmp_path: Path) -> None:
    frontend = RecordingFrontend([ApprovalDecision.DENY])
    settings = with_rules(ask=["shell(git log *)"], allow=["shell(git *)"])
    calls = [Call(SHELL, {"cmd": "git log --oneline -1"}, "c1")]
    await turn(tmp_path, calls, frontend, settings=settings, isolation="namespace")
    [request] = frontend.approval_requests
    assert "your permission rule `shell(git log *)` (settings.json) asks" in request.reason
    [record] = frontend.of("approval")
    assert record.decision == "deny"


async def test_approve_all_covers_an_ask_rule(tmp_path: Path) -> None:
    frontend = RecordingFrontend()
    settings = with_rules(ask=["shell(touch *)"])
    calls = [Call(SHELL, {"cmd": "touch a"}, "c1")]
    await turn(tmp_path, calls, frontend, settings=settings, auto_confirm=True)
    assert frontend.approval_requests == []
    [record] = frontend.of("approval")
    assert record.decision == "auto" and "approve-all" in record.reason


async def test_without_rules_the_same_command_runs_read_only(tmp_path: Path) -> None:
    frontend = RecordingFrontend()
    calls = [Call(SHELL, {"cmd": "git log --oneline -1"}, "c1")]
    await turn(tmp_path, calls, frontend, isolation="namespace")
    [record] = frontend.of("approval")
    assert (record.decision, record.read_only) == ("auto", True)


def approvals(frontend: RecordingFrontend) -> list[ApprovalRecord]:
    return list(frontend.of("approval"))


async def test_a_rule_saved_from_the_dialog_never_allows_a_refused_command(
    tmp_path: Path,
) -> None:
    """Always allow `git diff *` from the dialog: `git diff --cached` then runs without
    asking; `git diff --output=x` (the classifier refuses `--output`) still asks."""
    first = RecordingFrontend([ApprovalAnswer(ALWAYS, "shell(git diff *)")])
    await turn(tmp_path, [Call(SHELL, {"cmd": "git diff HEAD"}, "c1")], first)
    [request] = first.approval_requests
    assert request.suggested_rule == "shell(git diff HEAD)"  # edited to a prefix
    [saved] = approvals(first)
    assert (saved.decision, saved.rule) == ("always_allow", "shell(git diff *)")
    assert saved.reason == "saved the permission rule `shell(git diff *)` for this project"

    second = RecordingFrontend()
    await turn(tmp_path, [Call(SHELL, {"cmd": "git diff --cached"}, "c2")], second)
    assert second.approval_requests == []
    [auto] = approvals(second)
    assert auto.decision == "auto" and auto.rule == "shell(git diff *)"
    assert "(saved for this project)" in auto.reason

    third = RecordingFrontend([ApprovalDecision.DENY])
    await turn(tmp_path, [Call(SHELL, {"cmd": "git diff --output=x"}, "c3")], third)
    [asked] = third.approval_requests
    assert "`--output` makes git diff write a file" in asked.reason
    assert "`shell(git diff *)`" in asked.reason
    assert not (tmp_path / "x").exists()


async def test_the_same_rule_written_by_hand_allows_the_refused_command(tmp_path: Path) -> None:
    frontend = RecordingFrontend()
    settings = with_rules(allow=["shell(git diff *)"])
    calls = [Call(SHELL, {"cmd": "git diff --output=x"}, "c1")]
    await turn(tmp_path, calls, frontend, settings=settings)
    assert frontend.approval_requests == []
    [record] = approvals(frontend)
    assert record.decision == "auto" and record.rule == "shell(git diff *)"


async def test_always_allow_covers_the_rest_of_the_batch(tmp_path: Path) -> None:
    frontend = RecordingFrontend([ApprovalAnswer(ALWAYS, "shell(touch *)")])
    calls = [Call(SHELL, {"cmd": "touch a"}, "c1"), Call(SHELL, {"cmd": "touch b"}, "c2")]
    await turn(tmp_path, calls, frontend)
    assert len(frontend.approval_requests) == 1
    assert [r.decision for r in approvals(frontend)] == ["always_allow", "auto"]
    assert (tmp_path / "a").exists() and (tmp_path / "b").exists()


async def test_a_bare_always_allow_saves_the_offered_rule(tmp_path: Path) -> None:
    frontend = RecordingFrontend([ALWAYS])
    await turn(tmp_path, [Call(SHELL, {"cmd": "touch a"}, "c1")], frontend)
    [record] = approvals(frontend)
    assert (record.decision, record.rule) == ("always_allow", "shell(touch a)")
    assert ProjectRuleStore(tmp_path).load().texts == ("shell(touch a)",)


async def test_a_rule_that_does_not_cover_the_call_is_not_saved(tmp_path: Path) -> None:
    frontend = RecordingFrontend([ApprovalAnswer(ALWAYS, "shell(rm *)")])
    await turn(tmp_path, [Call(SHELL, {"cmd": "touch a"}, "c1")], frontend)
    [record] = approvals(frontend)
    assert record.decision == "approve" and record.rule == ""  # approved once
    [status] = frontend.of("status")
    assert "was not saved" in status.message and status.level == "warning"
    assert ProjectRuleStore(tmp_path).load().texts == ()
    assert (tmp_path / "a").exists()


async def test_nothing_is_offered_when_rules_cannot_be_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    frontend = RecordingFrontend([ApprovalDecision.DENY])
    await turn(tmp_path, [Call(SHELL, {"cmd": "touch a"}, "c1")], frontend)
    [request] = frontend.approval_requests
    assert request.suggested_rule is None


async def test_a_denied_call_still_tells_the_model_it_was_the_user(tmp_path: Path) -> None:
    frontend = RecordingFrontend([ApprovalDecision.DENY])
    _, model = await turn(tmp_path, [Call(SHELL, {"cmd": "touch a"}, "c1")], frontend)
    [told] = tool_returns(model.seen[-1])
    assert told.content == DENIED_MESSAGE
