"""The in-memory harness moved to :mod:`koikoi.testing` (it is for tests only, never the product's).

This name is kept only for spec/vectors/protocol/generate.py, which imports it, until that script imports
:mod:`koikoi.testing` itself; then this module goes. Nothing else may import it (pyproject's import-linter
contract lets this one import of koikoi.testing through, and no other)."""

from __future__ import annotations

from ..testing import Pair, Witness, fixed_key, reforge, seat_keys, witness_key

__all__ = ["Pair", "Witness", "fixed_key", "reforge", "seat_keys", "witness_key"]
