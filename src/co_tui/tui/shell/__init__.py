"""The app's parts, composed by tui/app.py (CoApp): its shared state (app_base), start-up,
turns, session switching and drafts, model choice, project trust, slash commands and the
command host, the status bar's text. Each gets the AppBase, never the app."""
