"""Screens: the chat and the approval modal."""
