"""Bots in other programs: the stdin/stdout JSON-lines protocol (spec/bot-protocol.md).

:class:`ExternalBot` starts a program, shakes hands with it and then, for each
decision, sends the seat's view and the legal actions as one JSON line and
reads one JSON line back. It is a :class:`~koikoi.engine.bots.Bot` like the
built-in ones (``choose(view) -> Action``), so selfplay, practice, host and
join use it the same way; its ``choose`` blocks, so a trio program calls it
through ``trio.to_thread.run_sync`` (as it should for any bot that thinks).

Everything that can go wrong with the other program — it cannot be started,
it crashes, it hangs, it writes something that is not a legal answer — raises
:class:`BotError` with one line naming what was wrong (never a traceback), and
the program is stopped. :meth:`ExternalBot.close` says ``quit``, waits a moment
and then kills; it is safe to call twice.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import select
import subprocess
import threading
import time
from collections.abc import Sequence
from types import TracebackType
from typing import IO, Any

from ..engine.actions import Action, NotationError, parse_action
from ..engine.cards import CARD_IDS
from ..engine.match import Phase, SeatView
from ..errors import RemoteError

__all__ = [
    "DEFAULT_HELLO_TIMEOUT",
    "DEFAULT_MOVE_TIMEOUT",
    "PROTOCOL_VERSION",
    "BotError",
    "ExternalBot",
    "view_to_json",
]

PROTOCOL_VERSION = 1
DEFAULT_HELLO_TIMEOUT = 10.0
DEFAULT_MOVE_TIMEOUT = 10.0
MAX_LINE = 1 << 20  # one answer line: 1 MiB at most
_QUIT_GRACE = 2.0
_PHASES = {Phase.PLAY: "play", Phase.CHOOSE: "choose", Phase.DECIDE: "decide", Phase.OVER: "over"}


class BotError(RemoteError):
    """The external bot failed; ``str()`` is one line saying how."""


def _ids(cards: Sequence[int]) -> list[str]:
    return [CARD_IDS[c] for c in cards]


def view_to_json(view: SeatView) -> dict[str, Any]:
    """The seat's view as the protocol sends it: only what the seat may see."""
    return {
        "seat": view.seat,
        "rounds": view.settings.rounds,
        "double_at_8": view.settings.double_at_8,
        "round": view.round,
        "dealer": view.dealer,
        "points": list(view.points),
        "phase": _PHASES[view.phase],
        "to_move": view.to_move,
        "hand": _ids(view.hand),
        "opponent_hand_count": view.opponent_hand_count,
        "table": _ids(view.table),
        "captures": [_ids(view.captures[0]), _ids(view.captures[1])],
        "deck_count": view.deck_count,
        "pending_draw": None if view.pending_draw is None else CARD_IDS[view.pending_draw],
        "calls": list(view.calls),
        "multiplier": view.multiplier,
        "totals": list(view.totals),
        "called_totals": list(view.called_totals),
        "last_turn": view.last_turn,
        "history": [r.to_json() for r in view.history],
    }


def _show(line: str, limit: int = 120) -> str:
    """A line of the bot's output, shortened for an error message."""
    text = line.strip()
    return repr(text if len(text) <= limit else text[:limit] + "…")


class ExternalBot:
    """A bot in another program, spoken to over its stdin and stdout.

    ``argv`` is the program and its arguments. ``label`` names the bot in
    error messages (default: the command line). ``hello_timeout`` and
    ``move_timeout`` are in seconds. The constructor starts the program and
    shakes hands; it raises :class:`BotError` if that fails.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        label: str | None = None,
        hello_timeout: float = DEFAULT_HELLO_TIMEOUT,
        move_timeout: float = DEFAULT_MOVE_TIMEOUT,
        cwd: str | None = None,
    ) -> None:
        if not argv:
            raise BotError("no program given for the external bot")
        self.argv = list(argv)
        self.label = label or " ".join(self.argv)
        self.move_timeout = move_timeout
        self.name = self.label
        self.hello_name: str | None = None
        """The name the program gave in its hello (None: it gave none); practice shows it as the opponent's."""
        self.author: str | None = None
        self._next_id = 1
        self._closed = False
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=5)
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                bufsize=0,
            )
        except FileNotFoundError:
            raise BotError(f"cannot start bot {self.label!r}: no such program {self.argv[0]!r}") from None
        except PermissionError:
            raise BotError(f"cannot start bot {self.label!r}: {self.argv[0]!r} is not executable") from None
        except OSError as e:
            raise BotError(f"cannot start bot {self.label!r}: {e.strerror or e}") from None
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        try:
            self._hello(hello_timeout)
        except BotError:
            self._kill()
            raise

    # -- the pipes -----------------------------------------------------------

    def _read_stdout(self) -> None:
        out = self._proc.stdout
        assert out is not None
        buf = b""
        try:
            while True:
                chunk = out.read(65536)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    self._lines.put(line.decode("utf-8", errors="replace"))
                if len(buf) > MAX_LINE:
                    self._lines.put(buf[:200].decode("utf-8", errors="replace") + "…[line longer than 1 MiB]")
                    break
        except (OSError, ValueError):
            pass
        finally:
            _close_quietly(out)  # this thread closes the pipe it reads (see _close_pipes)
        self._lines.put(None)  # end of output

    def _read_stderr(self) -> None:
        err = self._proc.stderr
        assert err is not None
        try:
            for raw in iter(err.readline, b""):
                text = raw.decode("utf-8", errors="replace").rstrip()
                if text:
                    self._stderr.append(text)
        except (OSError, ValueError):
            pass
        finally:
            _close_quietly(err)

    def _send(self, obj: dict[str, Any], timeout: float) -> None:
        """Write one line; a program that stops reading its input fails after ``timeout`` seconds."""
        stdin = self._proc.stdin
        assert stdin is not None
        data = memoryview((json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode())
        deadline = time.monotonic() + timeout
        try:
            if os.name != "posix":  # pragma: no cover - pipes cannot be polled there
                stdin.write(data)
                return
            fd = stdin.fileno()
            os.set_blocking(fd, False)
            while data:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([], [fd], [], left)[1]:
                    raise self._fail(f"did not read its input within {timeout:g} s")
                try:
                    n = os.write(fd, data)
                except BlockingIOError:
                    continue
                data = data[n:]
        except (BrokenPipeError, OSError, ValueError):
            # a program that has exited says so whichever came first, our write or its end (never a race in words)
            try:
                self._proc.wait(timeout=0.5)
                exited = True
            except subprocess.TimeoutExpired:
                exited = False
            what = "exited while we waited for it to read its input" if exited else "stopped reading its input"
            raise self._fail(self._gone(what)) from None

    def _gone(self, what: str) -> str:
        code = self._proc.poll()
        if code is None:
            try:
                code = self._proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                code = None
        how = f"{what}" if code is None else f"{what} (exit code {code})"
        if code is not None and code < 0:
            how = f"{what} (killed by signal {-code})"
        if code is not None:
            self._stderr_reader.join(timeout=0.5)  # the program has exited: let its last words arrive
        tail = f"; its last error output: {' | '.join(self._stderr)}" if self._stderr else ""
        return how + tail

    def _fail(self, message: str) -> BotError:
        """Stop the program and make the error to raise."""
        self._kill()
        return BotError(f"bot {self.label!r} {message}")

    def _receive(self, timeout: float, waiting_for: str) -> dict[str, Any]:
        """The next protocol message (``info`` lines are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                if left <= 0:  # a program that only chatters does not get more time
                    raise queue.Empty
                line = self._lines.get(timeout=left)
            except queue.Empty:
                raise self._fail(f"did not answer within {timeout:g} s (waiting for {waiting_for})") from None
            if line is None:
                raise self._fail(self._gone(f"exited while we waited for {waiting_for}"))
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                raise self._fail(f"wrote a line that is not JSON: {_show(line)}") from None
            except RecursionError:  # thousands of nested arrays or objects: the decoder gives up
                raise self._fail(f"wrote JSON nested too deeply to read: {_show(line, 40)}") from None
            if not isinstance(msg, dict):
                raise self._fail(f"wrote JSON that is not an object: {_show(line)}")
            kind = msg.get("type")
            if kind == "info":
                continue
            if kind == "error":
                raise self._fail(f"reported an error: {_show(str(msg.get('message', '')))}")
            return msg

    # -- the protocol --------------------------------------------------------

    def _hello(self, timeout: float) -> None:
        self._send({"type": "koikoi", "protocol": PROTOCOL_VERSION}, timeout)
        msg = self._receive(timeout, "its hello")
        if msg.get("type") != "hello":
            raise self._fail(f"answered the handshake with {_show(json.dumps(msg))}, not a hello")
        if msg.get("protocol") != PROTOCOL_VERSION:
            raise self._fail(f"speaks protocol {msg.get('protocol')!r}; we speak {PROTOCOL_VERSION}")
        name = msg.get("name")
        if isinstance(name, str) and name.strip():
            shown = " ".join("".join(c if c.isprintable() else " " for c in name).split())[:64]  # (no escapes)
            if shown:
                self.name = self.hello_name = shown
        author = msg.get("author")
        if isinstance(author, str):
            self.author = author[:64]

    def choose(self, view: SeatView) -> Action:
        """Ask the program for its action; raise :class:`BotError` unless it answers a legal one in time."""
        if self._closed:
            raise BotError(f"bot {self.label!r} is closed")
        legal = view.legal_actions
        request_id = self._next_id
        self._next_id += 1
        self._send(
            {"type": "decide", "id": request_id, "view": view_to_json(view), "legal": [a.text for a in legal]},
            self.move_timeout,
        )
        msg = self._receive(self.move_timeout, f"an answer to decision {request_id}")
        if msg.get("type") != "action":
            raise self._fail(f"answered decision {request_id} with {_show(json.dumps(msg))}, not an action")
        if msg.get("id") != request_id:
            raise self._fail(f"answered decision {msg.get('id')!r} while we asked decision {request_id}")
        text = msg.get("action")
        if not isinstance(text, str):
            raise self._fail(f"answered decision {request_id} without an action text: {_show(json.dumps(msg))}")
        try:
            action = parse_action(text)
        except NotationError as e:
            raise self._fail(f"answered {_show(text)}, which is not an action: {e}") from None
        if action not in legal:
            shown = ", ".join(a.text for a in legal[:12]) + (", …" if len(legal) > 12 else "")
            raise self._fail(f"answered {action.text!r}, which is not legal now (legal: {shown})")
        return action

    # -- closing ------------------------------------------------------------

    def _kill(self) -> None:
        self._closed = True
        proc = self._proc
        if proc.poll() is None:
            proc.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._close_pipes()

    def _close_pipes(self) -> None:
        """Close our end of the program's input. Its output pipes are closed by the threads that read them, when
        they end (the program gone, the pipe at its end): closing a pipe under a thread about to read it frees
        its descriptor number, which the next program's pipe may take, and the old thread then read the new
        program's hello (seen once in a full test run: 'exited while we waited for its hello')."""
        _close_quietly(self._proc.stdin)

    def close(self) -> None:
        """Say ``quit``, give the program a moment to leave, then kill it. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        proc = self._proc
        try:
            if proc.poll() is None and proc.stdin is not None:
                proc.stdin.write(b'{"type":"quit"}\n')
                proc.stdin.flush()
                proc.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            proc.wait(timeout=_QUIT_GRACE)
        except subprocess.TimeoutExpired:
            proc.kill()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self._close_pipes()

    def __enter__(self) -> ExternalBot:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if not self._closed and self._proc.poll() is None:
                self._proc.kill()
        except Exception:
            pass


def _close_quietly(stream: IO[bytes] | None) -> None:
    try:
        if stream is not None:
            stream.close()
    except (OSError, ValueError):
        pass
