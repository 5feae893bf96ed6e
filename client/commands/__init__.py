"""Subcommands of the koikoi command (one module each)."""
