"""``koikoi ratings URL`` asks again when a server cuts a connection before answering: a relay answers each
HTTP request on a new connection, and its per-address limit on new connections (2 a second after a burst of
30) resets the rest — a new-user trial saw an archive of 46 files fetched only 35 deep. A server that answers
with an error is not asked again."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from koikoi.client import ratings
from koikoi.client.ratings import FetchError, fetch


@contextmanager
def server(resets: int, status: int = 200) -> Iterator[tuple[str, list[int]]]:
    """A one-thread HTTP server on 127.0.0.1 that resets its first ``resets`` connections (RST, no answer),
    then answers ``status`` with a body; the connections it took are counted."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    taken = [0]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                c, _ = ls.accept()
            except OSError:
                return
            taken[0] += 1
            with c:
                if taken[0] <= resets:
                    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    continue
                c.recv(65536)
                body = b"hello"
                c.sendall(b"HTTP/1.0 %d X\r\nContent-Length: %d\r\n\r\n%s" % (status, len(body), body))

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{ls.getsockname()[1]}/matches", taken
    finally:
        stop.set()
        ls.close()
        t.join(5)


def test_a_cut_connection_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ratings, "RETRY_WAITS_S", (0.01, 0.01, 0.01))
    with server(resets=2) as (url, taken):
        assert fetch(url, 1000) == b"hello"
    assert taken[0] == 3


def test_a_server_that_keeps_cutting_is_named_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ratings, "RETRY_WAITS_S", (0.01, 0.01))
    with server(resets=10) as (url, taken), pytest.raises(FetchError) as e:
        fetch(url, 1000)
    assert taken[0] == 3 and "\n" not in str(e.value)


def test_an_error_answer_is_not_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ratings, "RETRY_WAITS_S", (0.01, 0.01, 0.01))
    with server(resets=0, status=404) as (url, taken), pytest.raises(FetchError) as e:
        fetch(url, 1000)
    assert taken[0] == 1 and e.value.status == 404
