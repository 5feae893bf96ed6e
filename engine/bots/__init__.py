"""Computer opponents."""
