"""koikoi.relay: the relay server (``server``), its trio client library (``client``), room codes (``codes``).

The relay pairs two players in a room and forwards their frames untouched; see ``spec/relay.md``.
It imports nothing of the project but :mod:`koikoi.protocol.framing`.
"""
