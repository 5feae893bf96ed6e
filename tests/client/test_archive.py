"""The archive: the folder written atomically, its index and files served over real HTTP, and ``koikoi ratings``
reading it as it reads the same files locally.

The transcripts are real: whole shared-deck matches between four named keys through the in-memory harness,
witnessed by one relay key (as a relay's room would). A real HTTP server on 127.0.0.1 (an ephemeral port, in
a thread, stopped by the fixture) serves :func:`koikoi.client.archive.routes` as the relay's HTTP answer does:
the request's target (path and query) in, ``(status, content type, body)`` out, None a 404.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import random
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from koikoi.client import archive
from koikoi.client.archive import Written, archivable, file_name, keep, not_archivable, read_index, routes, write
from koikoi.client.cli import main
from koikoi.engine.bots import make_bot
from koikoi.engine.match import Settings
from koikoi.protocol.audit import audit
from koikoi.protocol.messages import fingerprint
from koikoi.protocol.session import Session
from koikoi.protocol.transcript import encode_transcript, parse_transcript
from koikoi.testing import Pair, Witness, make_pair, witness_key

Route = Callable[[str], tuple[int, str, bytes] | None]
Frames = list[tuple[int, bytes]]

RELAY = witness_key(b"archive-relay")
RELAY_FP = fingerprint(bytes(RELAY.verify_key))
PLAYERS = ("ann", "ben", "cat", "dan")


def _key(name: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"koikoi/test-archive\x00" + name.encode()).digest())


def _match(creator: str, joiner: str, n: int, publish: tuple[bool, bool] = (False, False)) -> bytes:
    """Seat 0's file of a whole match between two named keys, witnessed by :data:`RELAY`; ``publish``: each
    player's consent in its HELLO."""
    room = f"ARCH{n}"
    w = Witness(RELAY, room, 120)
    nonce = [hashlib.sha256(b"archive-%d-%d" % (n, s)).digest() for s in (0, 1)]
    settings = Settings(6, n % 2 == 0)
    a = Session.create(_key(creator), room, settings, nonce[0], relay_key=w.public_key, publish=publish[0])
    b = Session.join(_key(joiner), room, nonce[1], relay_key=w.public_key, publish=publish[1])
    rng = random.Random(n)
    bots = (make_bot("greedy", random.Random(rng.random())), make_bot("random", random.Random(rng.random())))
    pair = Pair((a, b), bots, witness=w)
    pair.note(0, a.start())
    pair.note(1, b.start())
    assert not pair.run()
    return bytes(pair.files[0])


@pytest.fixture(scope="module")
def transcripts() -> list[bytes]:
    """Eight decided matches between the four players, and a ninth cut short (unfinished)."""
    out = [_match(PLAYERS[i % 4], PLAYERS[(i + 1 + i // 4) % 4], i) for i in range(9)]
    frames = parse_transcript(out[8]).frames
    out[8] = encode_transcript(frames[: len(frames) // 2])
    return out


@pytest.fixture
def folder(tmp_path: Path, transcripts: list[bytes]) -> Path:
    """The archive's folder as :func:`write` leaves it, every transcript named by its match id."""
    d = tmp_path / "archive"
    d.mkdir()
    for data in transcripts:
        mid = audit(data).match_id
        assert mid is not None
        assert write(d, data, mid) in (Written.WRITTEN, Written.SAME)
    return d


@dataclass
class Server:
    url: str
    """``http://127.0.0.1:PORT``"""
    route: Route | None = None


@pytest.fixture
def server() -> Iterator[Server]:
    """A real HTTP server on 127.0.0.1, any free port, answering with ``server.route`` (set by the test)."""
    box = Server("")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            answer = box.route(self.path) if box.route is not None else None
            status, ctype, body = answer or (404, "text/plain", b"not found\n")
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # (quiet)
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    box.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield box
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _serve(server: Server, folder: Path, page: int = archive.PAGE) -> None:
    server.route = routes(folder, RELAY_FP, base_url=lambda: server.url, page=page)


def _get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read()


# ---------------------------------------------------------------------------------------------- writing


def test_write_names_the_file_by_match_id_and_never_replaces_a_different_one(
    tmp_path: Path, transcripts: list[bytes]
) -> None:
    a, b = transcripts[0], transcripts[1]
    mid = audit(a).match_id
    assert mid is not None
    assert write(tmp_path, a, mid) == Written.WRITTEN
    assert [p.name for p in tmp_path.iterdir()] == [f"{mid}.koikoi"]  # no temporary file left
    assert (tmp_path / f"{mid}.koikoi").read_bytes() == a
    assert (tmp_path / f"{mid}.koikoi").stat().st_mode & 0o777 == 0o644  # (public)
    assert write(tmp_path, a, bytes.fromhex(mid)) == Written.SAME
    assert write(tmp_path, b, mid) == Written.KEPT  # another file under that name: kept as it was
    assert (tmp_path / f"{mid}.koikoi").read_bytes() == a
    assert [p.name for p in tmp_path.iterdir()] == [f"{mid}.koikoi"]


@pytest.mark.parametrize("bad", [b"\x00" * 31, "AB" * 32, "ab" * 31, "../" + "a" * 61, "a" * 64 + "/x"])
def test_a_match_id_is_32_bytes_or_64_lowercase_hex_digits(tmp_path: Path, bad: bytes | str) -> None:
    with pytest.raises(ValueError):
        write(tmp_path, b"x", bad)
    assert list(tmp_path.iterdir()) == []
    assert file_name(b"\x01" * 32) == "01" * 32 + ".koikoi"


def test_write_is_atomic_a_reader_never_sees_a_partial_file(
    tmp_path: Path, transcripts: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bytes go to a temporary file, fsynced, and only then get the match's name: a crash before the link
    leaves no file of that name (and the temporary one is removed)."""
    data = transcripts[0]
    mid = audit(data).match_id
    assert mid is not None
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        assert not (tmp_path / f"{mid}.koikoi").exists()  # (the name comes after the data is on disk)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)

    def crash(src: str, dst: str) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "link", crash)
    with pytest.raises(OSError):
        write(tmp_path, data, mid)
    assert list(tmp_path.iterdir()) == [] and len(synced) == 1
    monkeypatch.undo()
    assert write(tmp_path, data, mid) == Written.WRITTEN


# ---------------------------------------------------------------------------------------------- what goes in


def test_only_valid_decided_matches_witnessed_by_this_relay_go_in(transcripts: list[bytes]) -> None:
    decided = audit(transcripts[0])
    assert decided.status == "complete" and archivable(decided, False, relay=RELAY_FP)
    assert archivable(decided, False)  # (no relay named: any)
    assert not_archivable(decided, False, relay="another") == "another relay's key"
    unfinished = audit(transcripts[-1])
    assert unfinished.status == "unfinished" and not_archivable(unfinished, False) == "status unfinished"
    damaged = bytearray(transcripts[1])
    damaged[len(damaged) // 2] ^= 0x40
    assert not_archivable(audit(bytes(damaged)), False) == "status invalid"


def test_a_private_room_goes_in_only_when_both_players_publish() -> None:
    """The consent is each player's own HELLO's (signed, so the file proves it): both, or the match stays out."""
    for n, publish in enumerate([(False, False), (True, False), (False, True), (True, True)]):
        rep = audit(_match("ann", "ben", 100 + n, publish))
        assert rep.status == "complete" and rep.publish == list(publish)
        assert archivable(rep, False, relay=RELAY_FP)  # a public room's match goes in whatever they said
        if publish == (True, True):
            assert archivable(rep, True, relay=RELAY_FP)
        else:
            assert not_archivable(rep, True, relay=RELAY_FP) == "a private room, not both players publish"


def _relayed(seed: bytes, deck: str, publish: tuple[bool, bool] = (False, False)) -> tuple[Frames, bytes]:
    """A bot match through the in-memory harness (its witness stands for the relay, key ``witness_key(seed)``):
    the frames in the order a relay takes them (``(seat, d)``, as an Archive effect holds them), and seat 0's
    transcript."""
    frames: Frames = []

    def record(seat: int, index: int, frame: bytes) -> list[bytes]:  # (every frame as sent, in order)
        frames.append((seat, frame))
        return [frame]

    pair = make_pair(Settings(6), ("greedy", "random"), seed, room="ARCHV", deck=deck, publish=publish, tamper=record)
    assert not pair.run()
    return frames, bytes(pair.files[0])


@pytest.mark.parametrize("deck", ["sealed", "shared"])
def test_keep_follows_the_rooms_log_and_writes_the_line_the_audit_accepts(tmp_path: Path, deck: str) -> None:
    seed = b"archive-keep-" + deck.encode()
    frames, seat0 = _relayed(seed, deck)
    relay_key = bytes(witness_key(seed).verify_key)
    kept = keep(tmp_path, "ARCHV", False, frames, relay_key)
    assert (kept.written, kept.why) == (Written.WRITTEN, None)
    honest = audit(seat0)
    (f,) = tmp_path.iterdir()
    assert f.name == f"{honest.match_id}.koikoi"
    served = audit(f.read_bytes())
    assert (served.valid, served.status, served.result, served.rounds, served.ending) == (
        True,
        honest.status,
        honest.result,
        honest.rounds,
        honest.ending,
    )
    # the same room's log again (a second hand-over): the same file, nothing replaced
    assert keep(tmp_path, "ARCHV", False, frames, relay_key).written == Written.SAME
    # junk, repeats and RESENDs in the log change nothing; a log cut short is no match to publish
    noisy = [(0, b"junk"), *[x for fr in frames for x in (fr, fr)], (1, b"\x00" * 40)]
    (tmp_path / "noisy").mkdir()
    assert keep(tmp_path / "noisy", "ARCHV", False, noisy, relay_key).why is None
    assert (tmp_path / "noisy" / f.name).read_bytes() == f.read_bytes()
    cut = keep(tmp_path / "cut", "ARCHV", False, frames[: len(frames) // 2], relay_key)
    assert (cut.written, cut.why) == (None, "status unfinished") and not (tmp_path / "cut").exists()


def test_keep_leaves_out_another_rooms_or_relays_line_and_a_private_room_without_both_consents(
    tmp_path: Path,
) -> None:
    seed = b"archive-keep-private"
    frames, _ = _relayed(seed, "sealed")
    relay_key = bytes(witness_key(seed).verify_key)
    assert keep(tmp_path, "OTHER", False, frames, relay_key).why == "status unfinished"  # (its HELLOs: dropped)
    assert keep(tmp_path, "ARCHV", False, frames, bytes(witness_key(b"another").verify_key)).written is None
    assert keep(tmp_path, "ARCHV", True, frames, relay_key).why == "a private room, not both players publish"
    assert list(tmp_path.iterdir()) == []
    consenting, _ = _relayed(seed + b"-both", "sealed", (True, True))
    both = keep(tmp_path, "ARCHV", True, consenting, bytes(witness_key(seed + b"-both").verify_key))
    assert (both.written, both.report.publish) == (Written.WRITTEN, [True, True])


# ---------------------------------------------------------------------------------------------- serving


def test_the_index_lists_every_match_by_id_with_its_size_and_sha256(folder: Path, server: Server) -> None:
    (folder / ".partial.tmp").write_bytes(b"a temporary file")  # (write's own: never listed)
    (folder / ("AB" * 32 + ".koikoi")).write_bytes(b"not a name write gives")
    (folder / "notes.koikoi").write_bytes(b"nor this")
    _serve(server, folder)
    status, ctype, body = _get(server.url + "/matches")
    assert (status, ctype) == (200, "application/json")
    index = json.loads(body)
    assert list(index) == ["format", "relay", "matches", "next"]
    assert (index["format"], index["relay"], index["next"]) == (1, RELAY_FP, None)
    files = sorted(p for p in folder.glob("*.koikoi") if p.name == p.name.lower() and len(p.name) == 71)
    assert len(files) == 9
    assert index["matches"] == [
        {"id": p.name[:64], "bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
        for p in files
    ]
    for m in index["matches"]:
        status, ctype, data = _get(f"{server.url}/matches/{m['id']}.koikoi")
        assert (status, ctype) == (200, "application/octet-stream")
        assert hashlib.sha256(data).hexdigest() == m["sha256"] and audit(data).match_id == m["id"]
    assert _get(server.url + "/matches/")[2] == body


def test_pages_follow_each_other_by_absolute_next_urls(folder: Path, server: Server) -> None:
    _serve(server, folder, page=4)
    ids: list[str] = []
    url: str | None = server.url + "/matches"
    pages = 0
    while url is not None and pages < 10:
        status, _, body = _get(url)
        assert status == 200
        page = json.loads(body)
        assert len(page["matches"]) <= 4
        ids.extend(m["id"] for m in page["matches"])
        url = page["next"]
        if url is not None:
            assert url == f"{server.url}/matches?after={page['matches'][-1]['id']}"
        pages += 1
    assert pages == 3 and len(ids) == 9 and ids == sorted(ids)
    # after=ID: those greater than ID, whether ID is in the archive or not
    after = json.loads(_get(f"{server.url}/matches?after={ids[4]}")[2])["matches"]
    assert [m["id"] for m in after] == ids[5:9]
    between = format(int(ids[4], 16) + 1, "064x")
    assert [m["id"] for m in json.loads(_get(f"{server.url}/matches?after={between}")[2])["matches"]] == ids[5:9]
    last = json.loads(_get(f"{server.url}/matches?after={ids[-1]}")[2])
    assert (last["matches"], last["next"]) == ([], None)


def test_pages_of_1000(tmp_path: Path) -> None:
    for i in range(2001):
        (tmp_path / f"{i:064x}.koikoi").write_bytes(b"%d" % i)
    serve = routes(tmp_path, RELAY_FP, base_url="https://relay.example/koikoi/")
    sizes: list[int] = []
    target: str | None = "/matches"
    while target is not None and len(sizes) < 10:
        answer = serve(target)
        assert answer is not None
        page = json.loads(answer[2])
        sizes.append(len(page["matches"]))
        nxt = page["next"]
        assert nxt is None or nxt.startswith("https://relay.example/koikoi/matches?after=")
        target = None if nxt is None else nxt.removeprefix("https://relay.example/koikoi")
    assert sizes == [1000, 1000, 1]


@pytest.mark.parametrize(
    "target",
    [
        "/matches?after=xyz",
        "/matches?after=" + "A" * 64,
        "/matches?after=" + "a" * 63,
        "/matches?after=" + "a" * 64 + "&after=" + "b" * 64,
    ],
)
def test_a_bad_after_is_a_400(folder: Path, server: Server, target: str) -> None:
    _serve(server, folder)
    status, ctype, body = _get(server.url + target)
    assert status == 400 and ctype.startswith("text/plain") and body.startswith(b"bad request: after=ID")


def test_only_a_match_id_reaches_the_disk(folder: Path, server: Server, tmp_path: Path) -> None:
    secret = tmp_path / "secret.koikoi"
    secret.write_bytes(b"outside the archive")
    one = next(folder.glob("*.koikoi")).name
    (folder / ("e" * 64 + ".koikoi")).symlink_to(secret)  # (a link in the folder: not served, not listed)
    _serve(server, folder)
    for target in (
        "/matches/../secret.koikoi",
        "/matches/..%2fsecret.koikoi",
        "/matches/%2e%2e/secret.koikoi",
        "/matches/" + one.upper(),
        "/matches/" + one + "/",
        "/matches/" + one + ".tmp",
        "/matches/" + one[:64],
        "/matches/" + "e" * 64 + ".koikoi",
        "/matches/" + "0" * 64 + ".koikoi",
        "/matches//" + one,
    ):
        status, _, body = _get(server.url + target)
        assert status == 404 and b"outside" not in body, target
    assert "e" * 64 not in _get(server.url + "/matches")[2].decode()
    assert _get(f"{server.url}/matches/{one}?x=1")[0] == 200
    assert server.route is not None and server.route("/elsewhere") is None and server.route("/") is None


# ---------------------------------------------------------------------------------------------- ratings


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(tmp_path / "config"))


def _ratings(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["ratings", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("page", [archive.PAGE, 2])
def test_ratings_of_the_archive_are_the_table_of_the_same_files(
    home: None, folder: Path, server: Server, capsys: pytest.CaptureFixture[str], page: int
) -> None:
    _serve(server, folder, page=page)
    local = _ratings(capsys, "--json", str(folder))
    fetched = _ratings(capsys, "--json", server.url + "/matches")
    assert local == fetched  # (the same exit, the same bytes, nothing on stderr)
    code, out, err = fetched
    assert code == 0 and err == ""
    table = json.loads(out)
    assert (table["files"], table["rated"], table["left_out"]["counts"]) == (9, 8, {"unfinished": 1})
    assert len(table["players"]) == 4
    text = _ratings(capsys, server.url + "/matches/")  # (a trailing slash: the same archive)
    assert text[0] == 0 and "8 matches rated from 9 files; left out: 1 unfinished." in text[1]


def test_a_file_that_is_not_the_one_the_index_lists_is_left_out_with_one_line(
    home: None, folder: Path, server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    honest = routes(folder, RELAY_FP, base_url=lambda: server.url)
    ids = json.loads((honest("/matches") or (0, "", b""))[2])["matches"]
    changed, cut = ids[0]["id"], ids[1]["id"]

    def tampered(target: str) -> tuple[int, str, bytes] | None:
        answer = honest(target)
        if answer is not None and target == f"/matches/{changed}.koikoi":
            data = bytearray(answer[2])
            data[len(data) // 2] ^= 0x01  # the same size, another SHA-256
            return answer[0], answer[1], bytes(data)
        if answer is not None and target == f"/matches/{cut}.koikoi":
            return answer[0], answer[1], answer[2][:-1]
        return answer

    server.route = tampered
    code, out, err = _ratings(capsys, "--json", server.url + "/matches")
    assert code == 1
    assert err.splitlines() == [
        f"koikoi ratings: {server.url}/matches/{changed}.koikoi: not the file the index lists (another SHA-256): "
        "left out",
        f"koikoi ratings: {server.url}/matches/{cut}.koikoi: not the file the index lists "
        f"({ids[1]['bytes'] - 1} bytes, not {ids[1]['bytes']}): left out",
    ]
    rest = [folder / f"{m['id']}.koikoi" for m in ids[2:]]
    assert out == _ratings(capsys, "--json", *map(str, rest))[1]  # the rest, rated as those files are


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_index_that_cannot_be_read_is_one_line(
    home: None, folder: Path, server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    answers: dict[str, tuple[int, str, bytes]] = {
        "/junk": (200, "application/json", b"{not json"),
        "/healthz": (200, "application/json", b'{"status":"ok"}\n'),
        "/v2": (200, "application/json", b'{"format": 2, "relay": "x", "matches": [], "next": null}'),
        "/loop": (200, "application/json", b'{"format": 1, "relay": "x", "matches": [], "next": "http://x/"}'),
    }
    server.route = answers.get
    port = _closed_port()
    cases = {
        f"http://127.0.0.1:{port}/matches": f"cannot reach 127.0.0.1:{port}: Connection refused",
        server.url + "/junk": "not an archive index: not JSON",
        server.url + "/healthz": "not an archive index (a relay's archive is at /matches)",
        server.url + "/v2": "an archive index of format 2, not 1",
        server.url + "/loop": "not an archive index: a page with no matches has a next page",
        server.url + "/nothing": "the server answered 404 Not Found (no archive here? koikoi relay --archive "
        "serves one at /matches)",
    }
    for url, words in cases.items():
        code, out, err = _ratings(capsys, "--json", url)
        assert (code, err) == (1, f"koikoi ratings: {url}: {words}\n"), url
        assert json.loads(out)["files"] == 0


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda m: m.update(id=m["id"].upper()), "match 1: id is not 64 lowercase hex digits"),
        (lambda m: m.update(bytes=True), "match 1: bytes is not a size"),
        (lambda m: m.update(bytes=-1), "match 1: bytes is not a size"),
        (lambda m: m.update(sha256=None), "match 1: sha256 is not 64 lowercase hex digits"),
        (lambda m: m.update(id="0" * 64), "match 1: not in order of id"),
    ],
)
def test_an_index_entry_of_the_wrong_shape_is_named(
    folder: Path, change: Callable[[dict[str, object]], None], words: str
) -> None:
    page = json.loads((routes(folder, RELAY_FP, base_url="http://r")("/matches") or (0, "", b""))[2])
    assert read_index(json.dumps(page).encode()).matches[1].id == page["matches"][1]["id"]
    change(page["matches"][1])
    with pytest.raises(archive.NotAnIndex) as e:
        read_index(json.dumps(page).encode())
    assert str(e.value) == f"not an archive index: {words}"


def test_a_second_page_that_goes_back_is_refused(
    home: None, folder: Path, server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    honest = routes(folder, RELAY_FP, base_url=lambda: server.url, page=4)

    def backwards(target: str) -> tuple[int, str, bytes] | None:
        return honest("/matches" if target.startswith("/matches?after=") else target)  # page 1 again and again

    server.route = backwards
    code, _, err = _ratings(capsys, "--json", server.url + "/matches")
    after = json.loads((honest("/matches") or (0, "", b""))[2])["next"]
    assert (code, err) == (
        1,
        f"koikoi ratings: {server.url}/matches: page 2 ({after}) does not follow the page before it\n",
    )
