"""koikoi: Koi-Koi (hanafuda) played peer-to-peer, with no referee and nothing to hide."""

__version__ = "0.1.0"
