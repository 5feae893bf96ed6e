"""koikoi.relay."""
