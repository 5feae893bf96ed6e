"""Issue 12: ``koikoi host --lang ja`` says the match's lines in Japanese (here in ``--plain``, a bot playing
the seat; the host runs its relay on a loopback port the test picks), while the joiner's ``--json`` events
under ``--lang ja`` stay exactly the contract's, in English."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.net  # starts real koikoi processes and a relay

PY = sys.executable
_JA = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _env(tmp: Path, who: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KOIKOI_", "LC_"))}
    env.update(KOIKOI_CONFIG_DIR=str(tmp / who / "config"), KOIKOI_DATA_DIR=str(tmp / who / "data"),
               KOIKOI_STATE_DIR=str(tmp / who / "state"), LANG="C.UTF-8", PYTHONIOENCODING="utf-8",
               PYTHONUNBUFFERED="1", KOIKOI_LINGER="3")  # fmt: skip
    return env


def test_host_lang_ja_says_the_match_in_japanese_and_json_stays_english(tmp_path: Path) -> None:
    a, b = tmp_path / "a.koikoi", tmp_path / "b.koikoi"
    port = _free_port()
    host = subprocess.Popen(
        [PY, "-m", "koikoi.client", "host", "--listen", f"127.0.0.1:{port}", "--bot", "greedy", "--plain",
         "--lang", "ja", "--rounds", "6", "--transcript", str(a)],
        env=_env(tmp_path, "alice"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert host.stdout is not None
        before: list[str] = []
        while not (m := re.search(r"koikoi join (\S+) --relay (\S+)", before[-1] if before else "")):
            line = host.stdout.readline().decode()
            assert line, f"the host ended before its room: {before}"
            before.append(line)
        room, url = m.group(1), m.group(2)
        join = subprocess.run(
            [PY, "-m", "koikoi.client", "join", room, "--relay", url, "--bot", "random", "--json", "--lang", "ja",
             "--transcript", str(b)],
            env=_env(tmp_path, "bob"), capture_output=True, stdin=subprocess.DEVNULL, timeout=240, check=False,
        )  # fmt: skip
        out, err = host.communicate(timeout=60)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
    assert host.returncode == 0, err.decode()
    assert join.returncode == 0, join.stderr.decode()
    lines = [line.strip() for line in out.decode().splitlines()]
    said = "\n".join(lines)
    room_lines = "".join(before)  # the room's lines, up to the join command
    assert re.search(r"に部屋 \S+ を作りました：全6局、", room_lines), room_lines
    assert "相手はこれで参加します：" in room_lines, room_lines
    assert "Created room" not in room_lines and "joins with" not in room_lines
    assert "相手が参加しました。" in lines
    # 伏せた山札 (sealed, host's default) or 共有の山札 (shared)
    begins = r"^対戦開始：あなたは席0（部屋の作成者）。全6局、8点以上で2倍、一手120秒、\S+山札。$"
    assert re.search(begins, said, re.M), said
    assert re.search(r"^あなたの鍵：\S+、相手の鍵：\S+（声に出して照らし合わせてください）。$", said, re.M), said
    first = r"^最初の親は(あなた|相手)（コミット・リビールのコイン投げで決定：どちらも操作できません）。$"
    assert re.search(first, said, re.M), said
    assert re.search(r"^持ち時間：一手120秒。", said, re.M), said
    assert "このリレーはあなたが動かしています：あなたのプログラムが時間の証人で、相手にもそう伝えられます。" in lines
    assert lines[-2:] == ["双方が結果に署名しました。", f"棋譜：{a}"], lines[-4:]
    for english in ("The match begins", "Your key:", "first (chosen by", "The clock:", "Your opponent has joined",
                    "Both players signed", "Transcript:", "You run this relay"):  # fmt: skip
        assert english not in said, english
    # the joiner's --json events: the contract's keys and English (or no) words, whatever --lang says
    events = [json.loads(line) for line in join.stdout.decode().splitlines()]
    assert [e["event"] for e in events][:2] == ["room", "match_start"] and events[-1]["event"] == "match_end"
    assert set(events[1]) == {"event", "seat", "first_dealer", "opponent", "settings", "witness", "resumed"}
    assert set(events[-1]) == {"event", "points", "winner", "transcript", "status", "ending"}
    assert not _JA.search(join.stdout.decode()), join.stdout.decode()
