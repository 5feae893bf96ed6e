"""The words of ``koikoi audit`` and ``koikoi replay``: lower case mid-sentence, the winner's score first,
and ``replay --lang ja`` in Japanese to its last line (the verdict included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from koikoi.client.cli import main
from koikoi.engine import Settings
from koikoi.testing import run_match


@pytest.fixture(scope="module")
def complete(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = run_match(Settings(6, False), seed=b"cli")
    p = tmp_path_factory.mktemp("t") / "complete.koikoi"
    p.write_bytes(r.transcripts[0])
    return p


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert err == ""
    return code, out


def test_audit_says_no_doubling_in_lower_case_and_the_winner_first(
    complete: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run(capsys, "audit", str(complete))
    assert code == 0
    first = out.splitlines()[0]
    words = "VALID — a complete match (6 rounds, no ×2 at 8+, 120 s a move, shared deck); seat "
    assert first.startswith(f"{complete}: {words}")
    assert "No ×2" not in out
    won = first.split("; seat ", 1)[1]  # "1 won 30–20, after 6 rounds."
    a, b = (int(x) for x in won.split(" won ", 1)[1].split(",", 1)[0].split("–"))
    assert a >= b and a + b == 50


def test_replay_in_japanese_ends_with_a_japanese_verdict(complete: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "replay", "--lang", "ja", str(complete))
    assert code == 0
    lines = out.rstrip("\n").splitlines()
    verdict = [line for line in lines if line.startswith(str(complete))]
    assert len(verdict) == 1
    words = "有効 — 最後まで終わった対戦（6局、8点以上の2倍なし、一手120秒、山札：shared）。席"
    assert verdict[0].startswith(f"{complete}：{words}")
    assert lines[-1].startswith("  対局者：席0 ") and "最初の親：席" in lines[-1] and "リレー：" in lines[-1]
    assert "VALID" not in out and "players:" not in out and "seat " not in out
    code, out = _run(capsys, "replay", str(complete))
    assert code == 0 and "6 rounds, no ×2 at 8+." in out and f"{complete}: VALID — a complete match" in out
