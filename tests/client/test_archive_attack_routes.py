"""The archive's HTTP routes (client/archive.py ``Routes``) against what may lie in its folder and what a client
may ask: every answer a status and a body, nothing outside the folder, nothing held open."""

from __future__ import annotations

import os
from pathlib import Path

from koikoi.client.archive import routes

NOT_FOUND = b"not found: no such match in this archive (GET /matches lists them)\n"


def _lowest_free_fd() -> int:
    fd = os.open(os.devnull, os.O_RDONLY)
    os.close(fd)
    return fd


def test_a_folder_link_or_fifo_named_like_a_match_is_a_404_and_holds_nothing_open(tmp_path: Path) -> None:
    real = "a" * 64
    (tmp_path / f"{real}.koikoi").write_bytes(b"bytes")
    (tmp_path / ("c" * 64 + ".koikoi")).mkdir()
    os.symlink(tmp_path / f"{real}.koikoi", tmp_path / ("b" * 64 + ".koikoi"))
    os.mkfifo(tmp_path / ("d" * 64 + ".koikoi"))
    r = routes(tmp_path, "fp", base_url="http://relay")
    assert r(f"/matches/{real}.koikoi") == (200, "application/octet-stream", b"bytes")
    before = _lowest_free_fd()
    for name in "bcd":
        for _ in range(3):
            assert r(f"/matches/{name * 64}.koikoi") == (404, "text/plain; charset=utf-8", NOT_FOUND)  # (was:
            # a folder's IsADirectoryError out of the route, a 500, and its descriptor left open)
    assert _lowest_free_fd() == before
    index = r("/matches")
    assert index is not None and index[0] == 200 and index[2].count(b'"id"') == 1
