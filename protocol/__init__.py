"""koikoi.protocol."""
