"""koikoi.client."""
