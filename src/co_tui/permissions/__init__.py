"""Permission rules: which tool calls run without asking, which always ask, which are denied.

- rules.py: the grammar (`shell(git status)`, `shell(npm test *)`, `web_fetch(domain:x)`,
  `mcp:github_*`, a bare tool name), parsed and checked when settings load.
- matching.py: whether one rule covers one call.
- ruleset.py: the rules in force (settings.json and saved for this project), deny > ask >
  allow, and where each comes from.
- store.py: the rules saved from the approval dialog, one file per project in the user's
  config directory (never in the workspace), mode 0600.
- suggest.py: the rule for exactly one call, offered in the dialog.

Nothing here is imported by this package itself: config/settings.py imports rules.py for validation,
and store.py imports config/settings.py.
"""
