"""The chat screen's widgets: transcript, sidebar, prompt, status bar."""
