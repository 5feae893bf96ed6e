"""``koikoi ratings URL`` against a hostile archive server (a tiny http.server of the test's own, on 127.0.0.1):
every answer is one line, nothing outside the archive's host is asked, no fetch outlives its deadline, and the
table holds only files that passed every check."""

from __future__ import annotations

import hashlib
import http.server
import json
import random
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from koikoi.client import ratings
from koikoi.client.cli import main
from koikoi.engine.match import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.session import Session
from koikoi.testing import Pair, Witness, witness_key

RELAY = witness_key(b"archive-attack-relay")

Answer = Callable[["Handler"], None]


@dataclass
class Hostile:
    url: str = ""
    answer: Answer | None = None
    paths: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    cut: bool = False
    """An answer stopped because the client hung up."""
    whole: bool = False
    """An answer sent to its end."""
    answered: threading.Event = field(default_factory=threading.Event)


class Handler(http.server.BaseHTTPRequestHandler):
    box: Hostile

    def do_GET(self) -> None:
        self.box.paths.append(self.path)
        assert self.box.answer is not None
        try:
            self.box.answer(self)
        except OSError:  # (the client hung up)
            self.box.cut = True
        finally:
            self.box.answered.set()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def send(self, body: bytes, status: int = 200, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    box = Hostile()
    handler = type("H", (Handler,), {"box": box})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    box.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield box
    finally:
        box.stop.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(tmp_path / "config"))


def _ratings(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["ratings", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _page(matches: list[dict[str, object]], nxt: str | None = None, relay: str = "relay-fp") -> bytes:
    return json.dumps({"format": 1, "relay": relay, "matches": matches, "next": nxt}).encode()


def _entry(data: bytes, mid: str) -> dict[str, object]:
    return {"id": mid, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _match(n: int) -> bytes:
    room = f"HOST{n}"
    w = Witness(RELAY, room, 120)
    key = [hashlib.sha256(b"attack-player-%d-%d" % (n, s)).digest() for s in (0, 1)]
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    a = Session.create(
        Ed25519PrivateKey.from_private_bytes(key[0]),
        room,
        Settings(6),
        hashlib.sha256(key[0]).digest(),
        relay_key=w.public_key,
    )
    b = Session.join(
        Ed25519PrivateKey.from_private_bytes(key[1]), room, hashlib.sha256(key[1]).digest(), relay_key=w.public_key
    )
    from koikoi.engine.bots import make_bot

    pair = Pair((a, b), (make_bot("greedy", random.Random(n)), make_bot("random", random.Random(n + 1))), witness=w)
    pair.note(0, a.start())
    pair.note(1, b.start())
    assert not pair.run()
    return bytes(pair.files[0])


@pytest.fixture(scope="module")
def two() -> list[tuple[str, bytes]]:
    out = []
    for n in (1, 2):
        data = _match(n)
        mid = audit(data).match_id
        assert mid is not None
        out.append((mid, data))
    return sorted(out)


def _one_line(err: str) -> None:
    for line in err.splitlines():
        assert line.startswith("koikoi ratings: ") and "\x1b" not in line, line


# ---------------------------------------------------------------------------------------------- other hosts


def test_a_redirect_to_another_host_or_scheme_is_not_followed(
    home: None, hostile: Hostile, capsys: pytest.CaptureFixture[str]
) -> None:
    other = hostile.url.replace("127.0.0.1", "localhost")
    listener = socket.socket()  # an ftp:// "server": a redirect there must not even connect
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    ftp = f"ftp://127.0.0.1:{listener.getsockname()[1]}/x"
    targets = {"/a/matches": ftp, "/b/matches": "file:///etc/passwd", "/c/matches": other + "/d/matches"}

    def answer(h: Handler) -> None:
        if h.path in targets:
            h.send_response(302)
            h.send_header("Location", targets[h.path])
            h.send_header("Content-Length", "0")
            h.end_headers()
        else:
            h.send(_page([]))

    hostile.answer = answer
    try:
        for path in targets:
            code, out, err = _ratings(capsys, "--json", hostile.url + path)
            assert code == 1 and json.loads(out)["files"] == 0, path
            _one_line(err)
            assert "not followed" in err or "not allowed" in err, err
        with pytest.raises(BlockingIOError):
            listener.accept()  # (was: urllib's FTP handler connected, and waited out its 30 s)
    finally:
        listener.close()
    assert "/d/matches" not in hostile.paths


def test_a_next_page_on_another_host_is_not_asked(
    home: None, hostile: Hostile, capsys: pytest.CaptureFixture[str], two: list[tuple[str, bytes]]
) -> None:
    (mid, data), _ = two
    other = hostile.url.replace("127.0.0.1", "localhost")

    def answer(h: Handler) -> None:
        if h.path == "/matches":
            h.send(_page([_entry(data, mid)], other + "/elsewhere"))
        else:
            h.send(_page([]))

    hostile.answer = answer
    code, out, err = _ratings(capsys, "--json", hostile.url + "/matches")
    assert code == 1 and json.loads(out)["files"] == 0
    assert err == (
        f"koikoi ratings: {hostile.url}/matches: page 1's next page is on another host, not followed: "
        f"{other}/elsewhere\n"
    )
    assert hostile.paths == ["/matches"]


# ---------------------------------------------------------------------------------------------- one line


def test_what_a_server_says_reaches_the_terminal_as_one_line_without_escapes(
    home: None, hostile: Hostile, capsys: pytest.CaptureFixture[str], two: list[tuple[str, bytes]]
) -> None:
    (mid, data), _ = two

    def answer(h: Handler) -> None:
        if h.path == "/format/matches":
            h.send(json.dumps({"format": "1\n\x1b[2Jkoikoi ratings: all good", "matches": []}).encode())
        elif h.path == "/next/matches":
            h.send(_page([_entry(data, mid)], h.box.url + "/next/p2\n\x1b[31mforged"))
        elif h.path == "/reason/matches":
            h.wfile.write(b"HTTP/1.1 500 oops\x1b[31m red\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        else:
            h.send(b"", 404)

    hostile.answer = answer
    for path in ("/format/matches", "/next/matches", "/reason/matches"):
        code, _, err = _ratings(capsys, "--json", hostile.url + path)
        assert code == 1 and len(err.splitlines()) == 1, err
        _one_line(err)


# ---------------------------------------------------------------------------------------------- endless


def test_an_index_of_endless_pages_ends(
    home: None, hostile: Hostile, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ratings, "MAX_INDEX_PAGES", 10, raising=False)
    served = 60  # (a few more than the bound: one match a page, the ids growing)

    def answer(h: Handler) -> None:
        n = len(h.box.paths)
        nxt = f"{h.box.url}/matches?after={n:064x}" if n < served else None
        h.send(_page([{"id": f"{n:064x}", "bytes": 10, "sha256": "0" * 64}], nxt))

    hostile.answer = answer
    code, out, err = _ratings(capsys, "--json", hostile.url + "/matches")
    assert (code, err) == (1, f"koikoi ratings: {hostile.url}/matches: the index has more than 10 pages\n")
    assert len(hostile.paths) == 10 and json.loads(out)["files"] == 0  # (was: 60 pages, then 60 files asked)


@pytest.mark.parametrize("where", ["head", "body"])
def test_a_server_sending_a_byte_at_a_time_is_cut_off_at_the_deadline(
    hostile: Hostile, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.setattr(ratings, "DEADLINE_S", 0.5)
    body = _page([])
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\nX-Pad: {'x' * 150}\r\n\r\n".encode()

    def answer(h: Handler) -> None:  # (each byte well within TIMEOUT_S: only the deadline can stop it)
        fast, slow, rest = (b"", head, body) if where == "head" else (head, body, b"")
        h.wfile.write(fast)
        for i in range(len(slow)):
            if h.box.stop.wait(0.05):
                return
            h.wfile.write(slow[i : i + 1])
            h.wfile.flush()
        h.wfile.write(rest)
        h.box.whole = True

    hostile.answer = answer
    with pytest.raises(ratings.FetchError) as e:
        ratings.fetch(hostile.url + "/matches", 1 << 20)
    assert str(e.value) == "not all sent in 0.5 s"
    assert hostile.answered.wait(30)  # (a guard, never reached: the answer takes some 10 s in all)
    assert (hostile.cut, hostile.whole) == (True, False)  # it hung up at its deadline (was: read all 10 s of it)


# ---------------------------------------------------------------------------------------------- files


def test_a_file_whose_match_id_is_not_its_index_id_is_left_out(
    home: None, hostile: Hostile, capsys: pytest.CaptureFixture[str], two: list[tuple[str, bytes]], tmp_path: Path
) -> None:
    (mid0, data0), (mid1, data1) = two
    wrong = "f" * 64  # (the second file again, under another id: the same bytes and SHA-256 its entry says)
    files = {mid0: data0, mid1: data1, wrong: data1}

    def answer(h: Handler) -> None:
        if h.path == "/matches":
            h.send(_page([_entry(files[m], m) for m in sorted(files)]))
        else:
            h.send(files[h.path.removeprefix("/matches/").removesuffix(".koikoi")], ctype="application/octet-stream")

    hostile.answer = answer
    code, out, err = _ratings(capsys, "--json", hostile.url + "/matches")
    assert (code, err) == (
        1,
        f"koikoi ratings: {hostile.url}/matches/{wrong}.koikoi: not the file the index lists (match {mid1}): "
        "left out\n",
    )
    for mid, data in ((mid0, data0), (mid1, data1)):
        (tmp_path / f"{mid}.koikoi").write_bytes(data)
    local = _ratings(capsys, "--json", str(tmp_path / f"{mid0}.koikoi"), str(tmp_path / f"{mid1}.koikoi"))
    assert local[1] == out  # (the table of the files that passed, exactly; was: "files": 3)
    again = _ratings(capsys, "--json", hostile.url + "/matches")
    assert again == (code, out, err)  # (the same archive rated twice: the same bytes)
