"""A relay URL that reaches a web server (a wrong port, a proxy without WebSocket): one line naming it,
``not_a_relay``, and under --json an ``error`` event — never the page or a ConnectionRejected repr."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from koikoi.client.cli import main

PAGE = b"<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>"


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def web(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("KOIKOI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("KOIKOI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("KOIKOI_RELAY", raising=False)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"ws://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _said(url: str) -> str:
    return (
        f"{url} is not a koikoi relay: it answered HTTP 200 instead of a WebSocket (a wrong port, or a proxy "
        "without WebSocket support?)"
    )


def test_host_json_prints_one_error_event(web: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["host", "--bot", "greedy", "--json", "--relay", web]) == 1
    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    assert events == [{"event": "error", "code": "not_a_relay", "message": _said(web)}]
    assert err == f"koikoi host: {_said(web)}\n"
    assert "nginx" not in out + err and "ConnectionRejected" not in out + err


@pytest.mark.parametrize("argv", [["join", "acdef", "--bot", "random"], ["rooms"]])
def test_join_and_rooms_say_it_in_one_line(web: str, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main([*argv, "--relay", web]) == 1
    out, err = capsys.readouterr()
    assert err == f"koikoi {argv[0]}: {_said(web)}\n" and "nginx" not in out
