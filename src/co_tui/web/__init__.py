"""Web access helpers for tools/web.py: per-session config, SSRF guard, fetching, HTML to text."""
