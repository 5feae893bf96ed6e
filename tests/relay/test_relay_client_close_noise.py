"""A ping the WebSocket layer cannot answer while the connection closes (wsproto's LocalProtocolError) is
harmless then: ``connect`` leaves it out of what it raises however deeply trio nested it (a new-user trial saw
``koikoi watch: unexpected error: LocalProtocolError: Event Pong(...) cannot be sent in state
ConnectionState.LOCAL_CLOSING`` at the end of a match, and no verdict)."""

from __future__ import annotations

from wsproto.utilities import LocalProtocolError

from koikoi.relay.client import without_close_noise


def test_close_noise_is_left_out_at_any_depth() -> None:
    nested = BaseExceptionGroup("outer", [BaseExceptionGroup("inner", [LocalProtocolError("Pong")])])
    assert without_close_noise(nested) is None
    mixed = BaseExceptionGroup("outer", [BaseExceptionGroup("inner", [LocalProtocolError("Pong"), KeyError(1)])])
    rest = without_close_noise(mixed)
    assert rest is not None
    leaves = [e for g in rest.exceptions for e in (g.exceptions if isinstance(g, BaseExceptionGroup) else [g])]
    assert [type(e) for e in leaves] == [KeyError]
