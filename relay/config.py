"""Everything the relay can be told (:class:`RelayConfig`); every limit has an option in ``koikoi relay``."""

from __future__ import annotations

from dataclasses import dataclass

from ..protocol.framing import MAX_FRAME_BYTES

__all__ = ["ENVELOPE_OVERHEAD", "RelayConfig"]

ENVELOPE_OVERHEAD = 64
"""Bytes a WebSocket message may carry beyond the player frame (the ``frame`` envelope)."""


@dataclass
class RelayConfig:
    """Everything the relay can be told; every limit has an option in ``koikoi relay``."""

    host: str = "127.0.0.1"
    port: int = 7878
    max_rooms: int = 1000
    max_connections: int = 10000
    max_connections_per_ip: int = 32
    max_frame_bytes: int = MAX_FRAME_BYTES
    frames_per_s: float = 50.0
    burst: int = 200
    idle_timeout: float = 60.0
    ping_interval: float = 20.0
    grace: float = 120.0
    seat_buffer_frames: int = 256
    seat_buffer_bytes: int = 1 << 20
    attempts_per_conn: int = 5
    attempts_per_room: int = 5
    attempts_window: float = 60.0
    handshake_timeout: float = 10.0
    shutdown_timeout: float = 3.0
    max_list: int = 500
    tombstone_s: float = 600.0
    restore: bool = True
    trust_proxy: bool = False
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = None
    scrypt_threads: int = 2
    certify_per_s: float = 1.0
    certify_burst: int = 2
    # per address (an IPv4 address, or an IPv6 /64): a stranger's limit never stops another address
    max_handshakes_per_ip: int = 8
    """TCP connections from one address still in the WebSocket handshake; more are closed at once."""
    new_connections_per_ip_per_s: float = 2.0
    """New connections from one address per second, sustained (a burst of ``new_connections_burst``)."""
    new_connections_burst: int = 30
    attempts_per_ip: int = 10
    """Failed joins / code guesses / bad tokens from one address per ``attempts_window``, across reconnects."""
    max_waiting_rooms_per_ip: int = 4
    """Rooms created from one address that wait for a joiner."""
    max_rooms_per_ip: int = 32
    """Open rooms created (or rebuilt with ``resume``) from one address, in any state: a room joined by the
    creator itself, or rebuilt from a made-up ticket, outlives its connections for the full grace."""
    waiting_grace: float = 10.0
    """A waiting room whose creator left before anyone joined closes after this, not the full grace."""
    first_frame_timeout: float = 30.0
    """A joiner that sends no frame within this is removed and the room goes back to the lobby."""
    scrypt_per_ip: int = 1
    """Password checks (scrypt) running at once for one address."""
    scrypt_per_ip_per_s: float = 2.0
    """Password checks per second for one address, sustained (a burst of 10)."""
    chosen_codes_after_s: float = 600.0
    """A ``create`` with a code of the creator's choosing is refused this long after the relay started: it
    cannot know whether the code was a match's before its start (a cheater could create that match's room anew
    and take both seats). Tests of a relay that has long been running set 0."""
    lockout_quiet_s: float = 30.0
    """A seat away from an address that a connection limit refused is not certified silent until that address
    has had no such refusal for this long (its holder may have been kept out); the grace period waits too."""
    # watchers (spec/relay.md "Watchers") and the archive
    max_watchers_per_room: int = 16
    """Connections watching one room at once; more get ``too_many_watchers``."""
    max_watching_per_ip: int = 16
    """Connections watching (any rooms) from one address at once; more get ``too_many_watching``."""
    watches_per_ip_per_s: float = 1.0
    """``watch`` requests let in per second for one address, sustained (a burst of twice ``max_watching_per_ip``):
    each sends the room's log again (up to ``watch_log_bytes``), so a watch-leave loop is bounded."""
    watch_log_frames: int = 4096
    """Distinct frames a room's log keeps (for late watchers and the archive); then it stops growing."""
    watch_log_bytes: int = 4 << 20
    """Bytes of player frames a room's log keeps; then it stops growing."""
    watch_log_total_bytes: int = 512 << 20
    """Bytes of player frames all the rooms' logs keep together; then every log stops growing (memory stays
    bounded whatever strangers send: a 12-round sealed match is about 300 KB)."""
    archive: bool = False
    """This relay keeps a public archive: each room both seats took is handed, when it closes, to the driver's
    ``on_archive`` hook (an :class:`~koikoi.relay.effects.Archive` effect); the lobby says so (``archive``)."""

    def check(self) -> None:
        """Raise ValueError naming the first option out of range."""
        for name in (
            "max_rooms",
            "max_connections",
            "max_connections_per_ip",
            "burst",
            "seat_buffer_frames",
            "seat_buffer_bytes",
            "attempts_per_conn",
            "attempts_per_room",
            "max_list",
            "scrypt_threads",
            "certify_burst",
            "max_handshakes_per_ip",
            "attempts_per_ip",
            "max_waiting_rooms_per_ip",
            "max_rooms_per_ip",
            "scrypt_per_ip",
            "new_connections_burst",
            "max_watchers_per_room",
            "max_watching_per_ip",
            "watch_log_frames",
            "watch_log_bytes",
            "watch_log_total_bytes",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.max_frame_bytes < 16:
            raise ValueError("max_frame_bytes must be at least 16")
        for name in (
            "frames_per_s",
            "idle_timeout",
            "ping_interval",
            "grace",
            "attempts_window",
            "handshake_timeout",
            "shutdown_timeout",
            "certify_per_s",
            "waiting_grace",
            "first_frame_timeout",
            "scrypt_per_ip_per_s",
            "new_connections_per_ip_per_s",
            "watches_per_ip_per_s",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be more than 0")
        if self.chosen_codes_after_s < 0:
            raise ValueError("chosen_codes_after_s must be at least 0")
        if self.ping_interval >= self.idle_timeout:
            raise ValueError("ping_interval must be shorter than idle_timeout")
        if not 0 <= self.port <= 65535 or (self.metrics_port is not None and not 0 <= self.metrics_port <= 65535):
            raise ValueError("ports must be in 0..65535")
