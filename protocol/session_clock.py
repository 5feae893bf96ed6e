"""A session's time (spec/protocol.md §7): what the match waits for, when the warning comes, when the limit
is reached, when to ask the relay for a silence certificate again, and when to ask the opponent to send
again. Sans-IO: the client's clock tells it the seconds into the current wait."""

from __future__ import annotations

from dataclasses import dataclass

from .messages import SEALED_TYPES, MsgType
from .session_events import CertificateNeeded, OwnTimeExpired, TimeoutWarning, WaitFor

__all__ = ["SessionClock", "TimeoutPolicy", "Wait"]


@dataclass(frozen=True, slots=True)
class TimeoutPolicy:
    """When the warning comes (``warning``: seconds before the limit). The limit of every step is the
    match's bound ``move_time_s`` (spec/protocol.md §7)."""

    warning: float = 30.0


@dataclass(frozen=True, slots=True)
class Wait:
    """What the match waits for. ``epoch`` changes whenever the wait starts afresh."""

    epoch: int
    seat: int
    what: MsgType
    limit: float | None
    warn_at: float | None

    @property
    def what_text(self) -> WaitFor:
        if self.what in SEALED_TYPES or self.what is MsgType.ABORT:
            return WaitFor.MOVE  # the sealed line's automatic steps (spec/sealed-line.md §2) are a move's time
        return {MsgType.MOVE: WaitFor.MOVE, MsgType.RESULT: WaitFor.RESULT}.get(self.what, WaitFor.HANDSHAKE)


Alarm = TimeoutWarning | OwnTimeExpired | CertificateNeeded
"""What a tick of the clock can report."""


class SessionClock:
    """One seat's clock: the epoch of the current wait, and per wait whether its warning and its limit came,
    how many certificates and how many RESENDs it has asked for. Each wait starts afresh (:meth:`new_wait`:
    a message entered the line, or a resumed session heard the opponent); the counts then start again."""

    def __init__(self, seat: int, timeouts: TimeoutPolicy | None, resend_after: float, epoch: int = 0) -> None:
        if not resend_after > 0:
            raise ValueError("resend_after is a positive number of seconds")
        self.seat = seat
        self.timeouts = timeouts or TimeoutPolicy()
        self.resend_after = float(resend_after)
        self.epoch = epoch
        self._warned = -1  # the epoch whose warning came
        self._expired = -1  # the epoch whose limit came
        self._counted = -1  # the epoch the two counts below are of
        self._resends = 0
        self._cert_asks = 0

    def new_wait(self) -> None:
        self.epoch += 1

    def wait(self, expected: tuple[int, MsgType] | None, move_time_s: int | None) -> Wait | None:
        """The wait for ``expected`` (the seat and the message the line expects next; None: nothing)."""
        if expected is None:
            return None
        seat, t = expected
        limit = float(move_time_s) if move_time_s else None
        # the warning comes `warning` seconds before the limit, but never before three quarters of it
        # have passed (a 30 s move time with the 30 s default would warn at once, every move)
        warn = None if limit is None else max(limit * 0.75, limit - self.timeouts.warning)
        return Wait(self.epoch, seat, t, limit, warn)

    def _count_for(self, epoch: int) -> None:
        if self._counted != epoch:
            self._counted = epoch
            self._resends = 0
            self._cert_asks = 0

    def resend_period(self, w: Wait) -> float:
        """How often to ask again while waiting: ``resend_after``, but at least four times per move time (the
        relay's witness counts a waiting seat's requests, so a frame lost on its way here is asked for well
        before the opponent may ask for a certificate; spec/protocol.md §5.2)."""
        return min(self.resend_after, w.limit / 4) if w.limit else self.resend_after

    def deadline(self, w: Wait, resending: bool) -> float | None:
        """Seconds into wait ``w`` when :meth:`tick` has something to do (``resending``: this side asks the
        opponent to send again while it lasts)."""
        self._count_for(w.epoch)
        cands: list[float] = []
        if w.limit is not None and w.warn_at is not None:
            if self._warned != w.epoch and w.warn_at < w.limit:
                cands.append(w.warn_at)
            if self._expired != w.epoch:
                cands.append(w.limit)
            elif w.seat != self.seat:
                cands.append(w.limit + self._cert_asks * self.resend_after)
        if resending:
            cands.append((self._resends + 1) * self.resend_period(w))
        return min(cands) if cands else None

    def tick(self, w: Wait, seconds: float, resending: bool) -> tuple[Alarm | None, bool]:
        """``seconds`` into wait ``w``: what is due now — the warning (once), at the limit this seat's
        :class:`OwnTimeExpired` or a :class:`CertificateNeeded` for the awaited opponent (again every
        ``resend_after`` seconds after the limit) — and whether to ask the opponent to send again now."""
        self._count_for(w.epoch)
        alarm: Alarm | None = None
        peer = w.seat != self.seat
        if w.limit is not None and w.warn_at is not None:
            if seconds >= w.limit:
                if self._expired != w.epoch:
                    self._expired = w.epoch
                    self._warned = w.epoch
                    if peer:
                        self._cert_asks = 1
                        alarm = CertificateNeeded(w.seat)
                    else:
                        alarm = OwnTimeExpired(w.what_text)
                elif peer and seconds >= w.limit + self._cert_asks * self.resend_after:
                    self._cert_asks = int((seconds - w.limit) // self.resend_after) + 1
                    alarm = CertificateNeeded(w.seat)
            elif seconds >= w.warn_at and self._warned != w.epoch:
                self._warned = w.epoch
                alarm = TimeoutWarning(w.seat, w.what_text, w.limit - seconds)
        period = self.resend_period(w)
        resend = resending and seconds >= (self._resends + 1) * period
        if resend:
            self._resends = int(seconds // period)
        return alarm, resend
