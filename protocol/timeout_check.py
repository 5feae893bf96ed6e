"""Whether a TIMEOUT's certificate proves the silence it claims (spec/protocol.md §7.3).

:class:`TimeoutCheck` judges a relay certificate against the line as it stands: the relay and room both
HELLOs bound, the seat the line waits for, both seats' keys, each seat's last frame at the relay (the
claimer's last message; the silent seat's last message, its RESEND for the awaited place, or cited junk),
every message since the silent seat's last among the relay's recent frames of the claimer, and a silence
of at least the move time. One check for the claimer before it sends, the opponent and the auditor.
"""

from __future__ import annotations

from collections.abc import Callable

from . import messages
from .chain import Chain
from .errors import ProtocolError
from .handshake import Handshake
from .messages import END_TYPES, ZERO_HASH, Msg, MsgType, msg_hash, parse, parse_resend, resend_frame
from .witness import CertificateError, fingerprint, open_certificate

__all__ = ["TimeoutCheck"]


class TimeoutCheck:
    """The certificate rule over one line: its handshake, its chain, and whom it waits for."""

    def __init__(self, handshake: Handshake, chain: Chain, expected: Callable[[], tuple[int, MsgType] | None]) -> None:
        self._handshake = handshake
        self._chain = chain
        self._expected = expected

    def silent_frame_needed(self, blob: bytes, claimer: int) -> bytes | None:
        """The hash of the silent seat's last frame the certificate names, when it is neither that seat's
        last message nor the RESEND for the next sequence number (the claimer must then cite the frame)."""
        try:
            cert = open_certificate(blob)
        except CertificateError:
            return None
        silent = 1 - claimer
        named = cert.last_frame[silent]
        return None if named in self._silent_last_ok(silent, len(self._chain.msgs)) else named

    def _silent_last_ok(self, silent: int, seq: int) -> set[bytes]:
        """What the witness may name as the awaited seat's last frame, with no frame cited (§7.3, step 6): a
        message of it in the line — its last, or an earlier one (an honest seat's last witnessed frame is always
        its newest message, every other frame going with the control flag, §5.2; an older one means it sent its
        later messages flagged to hide them from the witness) — or empty when it has none, or the RESEND for
        ``seq`` (it is silent there, asking for the line)."""
        ok = {m.hash for m in self._chain.msgs[:seq] if m.seat == silent} or {b""}
        sid = self._handshake.sid
        if sid is not None:
            ok.add(msg_hash(resend_frame(sid, seq)))
        return ok

    def _junk(self, frame: bytes, seat: int, seq: int) -> bool:
        """True when ``frame`` is neither ``RESEND(match id, seq)`` nor a message validly signed with ``seat``'s
        key (of any match: after a replayed HELLO an honest seat may be in another session than the claimer's
        line, and its frames there are not junk) unless :meth:`_off_the_line` shows it can never continue the
        line: something only a broken or cheating client sends, which cannot have moved the line. Any other
        RESEND is junk here: it was the seat's last *witnessed* frame, so the seat sent it without the control
        flag, which an honest client never does (spec/protocol.md §7.3). So is a message of the *other* seat:
        an honest client sends the other seat's messages (in answers) only with the flag."""
        sid = self._handshake.sid
        if parse_resend(frame) is not None:
            return sid is None or frame != resend_frame(sid, seq)
        try:
            m = parse(frame)
        except ProtocolError:
            return True
        key = self._handshake.keys[seat]
        if m.seat != seat or key is None:
            return True
        try:
            messages.verify(key, m)
        except ProtocolError:
            return True
        return self._off_the_line(m, seat, seq)

    def _off_the_line(self, m: Msg, seat: int, seq: int) -> bool:
        """A message of ``seat`` (its signature checked) that its own signatures in the line show can never
        continue it, whatever the claimer did: of another match id once ``seat`` signed a message of this
        one after the HELLOs (an honest seat is in one session of a room), or an end message behind the line
        whose cut would take away a message ``seat`` signed itself (an honest seat signs nothing after its own
        end, and an end cuts only the other seat's messages), or a message the other seat's stop took the place
        of (it follows the same message as that stop). spec/protocol.md §7.3, step 6."""
        msgs = self._chain.msgs
        if m.match != self._handshake.sid:
            return any(x.seat == seat and x.seq >= 2 for x in msgs[:seq])
        if m.type in END_TYPES and m.seq < seq:
            return any(x.seat == seat for x in msgs[m.seq : seq])
        if m.seq < seq:
            # a message the claimer's stop set aside: the line holds the claimer's DISCLOSE at its place, after
            # the same message; its sender, sent that stop (the certificate lists it), discloses or is silent
            held = msgs[m.seq]
            if m.type is MsgType.DISCLOSE and m.seat < held.seat:
                return False  # of two stops that cross, seat 0's stands (spec/sealed-line.md §2): it is no junk
            return held.seat != seat and held.type is MsgType.DISCLOSE and held.prev == m.prev
        return False

    def problem(self, blob: bytes, silent_frame: bytes, claimer: int, seq: int) -> tuple[str | None, bool, str | None]:
        """``(problem, connected, witness)`` for a TIMEOUT at ``seq`` (the line holds ``seq`` messages)."""
        hs = self._handshake
        silent = 1 - claimer
        mt, rk = hs.move_time_s, hs.relay_key
        if hs.sid is None or mt is None or rk is None:
            return "no match is bound yet (the HELLOs are not both in)", False, None
        if mt == 0:
            return "this match has no clock (move time none)", False, None
        if rk == ZERO_HASH:
            return "this match has no relay to witness time", False, None
        if not blob:
            return "no certificate", False, None
        try:
            cert = open_certificate(blob)
        except CertificateError as e:
            return e.message, False, None
        if cert.relay_key != rk:
            return f"the certificate is signed by relay {cert.witness}, not the relay both HELLOs bound", False, None
        h0 = hs.hellos[0]
        assert h0 is not None
        if cert.room != h0.room:
            return f"the certificate is for room {cert.room!r}, not {h0.room!r}", False, None
        if cert.silent_seat != silent:
            return f"the certificate says seat {cert.silent_seat} is silent, not seat {silent}", False, None
        for seat in (silent, claimer):
            hello = hs.hellos[seat]
            assert hello is not None
            if cert.seat_keys[seat] != hello.public_key:
                held = fingerprint(cert.seat_keys[seat]) if cert.seat_keys[seat] else "no proven key"
                return (
                    f"the relay's seat {seat} was held by {held}, not the key seat {seat}'s HELLO binds",
                    False,
                    None,
                )
        exp = self._expected()
        if exp is None or exp[0] != silent:
            return f"the line does not wait for seat {silent}", False, None
        for seat in (claimer, silent):
            if seat == silent:
                ok = self._silent_last_ok(silent, seq)
            else:
                last = self._chain.last_of(seat)
                ok = {last.hash if last is not None else b""}
            named = cert.last_frame[seat]
            if seat == silent and silent_frame:
                if msg_hash(silent_frame) != named:
                    return "the cited frame is not the silent seat's last frame the certificate names", False, None
                if not self._junk(silent_frame, silent, seq):
                    return "the cited frame is a message or a request of the silent seat, not junk", False, None
                continue
            if named not in ok:
                return (
                    f"the relay's last frame from seat {seat} is not its last message (stale or crossed)",
                    False,
                    None,
                )
        line = self._chain.msgs[:seq]
        since = max((i for i, m in enumerate(line) if m.seat == silent), default=-1)
        for m in line[since + 1 :]:
            if m.hash not in cert.recent:
                return (
                    f"the relay lists no frame of seat {claimer}'s message {m.seq}: the silent seat may never have"
                    " got it",
                    False,
                    None,
                )
        if cert.silent_ms < mt * 1000:
            return f"seat {silent} was silent {cert.silent_ms} ms, less than the move time ({mt} s)", False, None
        return None, cert.connected, cert.witness
