"""Tool-calling evals: golden cases (evals/tool_calling.jsonl), scores, baselines, a gate.

cases.py loads and validates the cases, runner.py runs them on an agent whose tools are all
deferred, scoring.py judges each move and scores the dimensions, baseline.py writes results
and applies the gate, report.py renders tables, command.py is `co-tui eval`.
"""
