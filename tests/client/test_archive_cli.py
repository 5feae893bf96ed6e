"""``koikoi relay --archive DIR [--archive-url URL]`` as a process: the folder checked before anything starts,
its index served on the relay's own port with the relay's fingerprint, and the next-page links built from
``--archive-url`` (else from where the relay listens)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.net  # starts a relay process

KOIKOI = [sys.executable, "-m", "koikoi.client"]


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOIKOI_")}
    env.update(PYTHONUNBUFFERED="1", KOIKOI_STATE_DIR=str(tmp / "state"))
    return env


@contextmanager
def relay(tmp: Path, *args: str) -> Iterator[tuple[str, str]]:
    """A ``koikoi relay --port 0 --quiet ARGS`` process: its ``http://127.0.0.1:PORT`` and its fingerprint;
    stopped (SIGTERM, as an operator does) at the end."""
    p = subprocess.Popen(
        [*KOIKOI, "relay", "--port", "0", "--quiet", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp),
    )
    try:
        assert p.stdout is not None
        url = p.stdout.readline().strip()
        said = p.stdout.readline().strip()
        assert url.startswith("ws://127.0.0.1:") and said.startswith("witness key fingerprint: "), (url, said)
        yield "http" + url.removeprefix("ws"), said.rsplit(" ", 1)[1]
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            assert p.wait(timeout=30) == 0
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            for stream in (p.stdout, p.stderr):
                if stream is not None:
                    stream.close()


def _index(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=10) as r:
        assert r.headers["Content-Type"] == "application/json"
        page: dict[str, Any] = json.loads(r.read())
        return page


def _fill(folder: Path, n: int) -> list[str]:
    ids = [f"{i:064x}" for i in range(n)]
    for mid in ids:
        (folder / f"{mid}.koikoi").write_bytes(b"x")  # (the index lists names and sizes; it judges nothing)
    return ids


def test_the_relay_serves_its_archive_with_its_fingerprint_and_links_from_where_it_listens(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "archive"  # (made if missing)
    with relay(tmp_path, "--archive", str(folder)) as (base, fp):
        assert folder.is_dir() and list(folder.iterdir()) == []
        assert _index(base + "/matches") == {"format": 1, "relay": fp, "matches": [], "next": None}
        ids = _fill(folder, 1001)
        page = _index(base + "/matches")
        assert page["next"] == f"{base}/matches?after={ids[999]}"
        rest = _index(str(page["next"]))
        assert [m["id"] for m in rest["matches"]] == [ids[1000]] and rest["next"] is None
        with urllib.request.urlopen(f"{base}/matches/{ids[5]}.koikoi", timeout=10) as r:
            assert (r.headers["Content-Type"], r.read()) == ("application/octet-stream", b"x")


def test_the_index_links_are_built_from_archive_url(tmp_path: Path) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    ids = _fill(folder, 1001)
    with relay(tmp_path, "--archive", str(folder), "--archive-url", "https://relay.example.org/koikoi/") as (base, _):
        assert _index(base + "/matches")["next"] == f"https://relay.example.org/koikoi/matches?after={ids[999]}"


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["--archive-url", "https://x"], 2, "--archive-url is the address of the archive --archive DIR keeps"),
        (["--archive", "A", "--archive-url", "ftp://x"], 2, "--archive-url: not an http(s) address"),
        (["--archive", "A", "--archive-url", "https://x/?a=1"], 2, "--archive-url: not an http(s) address"),
        (["--archive", "FILE"], 1, "--archive {tmp}/FILE: cannot write there: "),
        (["--archive", "A", "--watch-log-frames", "0"], 2, "argument --watch-log-frames"),
    ],
)
def test_a_bad_archive_option_is_one_line_and_nothing_starts(
    tmp_path: Path, args: list[str], code: int, words: str
) -> None:
    (tmp_path / "FILE").write_text("a file where the folder should be")
    argv = [str(tmp_path / a) if a in ("A", "FILE") else a for a in args]
    r = subprocess.run([*KOIKOI, "relay", "--port", "0", *argv], capture_output=True, text=True, env=_env(tmp_path))
    assert r.returncode == code and r.stdout == ""
    assert r.stderr.count("\n") == 1 and words.format(tmp=tmp_path) in r.stderr, r.stderr
    assert not (tmp_path / "state").exists()  # (no key made)
    assert not (tmp_path / "A").exists()
