"""``koikoi relay`` that cannot listen: the line names the address that failed (the metrics port when it is
the busy one), and a host that is no address fails before the relay's key file is created."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from koikoi.client.cli import main


def test_a_host_that_is_no_address_fails_before_the_key_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KOIKOI_STATE_DIR", str(tmp_path / "state"))
    rc = main(["relay", "--host", "0.0.0.0.0", "--port", "0", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith("koikoi relay: cannot listen on 0.0.0.0.0:0 (--host)") and err.count("\n") == 1, err
    assert not (tmp_path / "state").exists() or not any((tmp_path / "state").iterdir())


def test_a_busy_metrics_port_is_the_port_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        m = busy.getsockname()[1]
        rc = main(["relay", "--port", "0", "--metrics-port", str(m), "--quiet", "--key", str(tmp_path / "r.key")])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith(f"koikoi relay: cannot listen on 127.0.0.1:{m} (--metrics-port): "), err
    assert err.count("\n") == 1, err
