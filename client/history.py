"""The history of this user's own matches: the transcript folder, audited once, indexed in SQLite.

The transcripts (``<data dir>/transcripts/*.koikoi``) are the source of truth. :func:`open_history` keeps an
index of them in ``<data dir>/history.sqlite3`` (the standard library's :mod:`sqlite3`): one row a file,
with its name, size and modification time (ns) and what its audit said (:func:`summarize`, as JSON). Each
open lists the folder and re-audits only the files that are new or whose size or modification time
changed, drops the rows of files that are gone, and rebuilds the whole index when it is missing, damaged,
or was written by another version of koikoi or of this schema (the auditor's verdict may have changed).
A folder the index cannot be written in is still read: the index is then kept in memory for this run.

A row is the same whoever reads it: which seat was this user's is decided when it is shown
(:func:`my_seat`: the seat whose key is this user's, else seat 0 of a practice match, else the role in the
file's name, ``-host`` seat 0 and ``-join`` seat 1). Names given to opponents' fingerprints
(``koikoi history --name FP NAME``) are kept in ``config.toml``'s ``[names]`` table (:func:`load_names`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..engine.events import KoiKoi, RoundEnded
from ..errors import LocalError
from ..protocol.audit import DECIDED, AuditReport, audit
from ..protocol.codes import Status
from .commands.audit import NotATranscriptFile, read_transcript_file
from .config import Config, ConfigError, load_config, save_config
from .transcript_file import PRACTICE_ROOM, data_dir

__all__ = [
    "INDEX_FILE",
    "SCHEMA",
    "History",
    "HistoryError",
    "check_name",
    "entry_json",
    "load_names",
    "match_when",
    "my_seat",
    "normal_fingerprint",
    "open_history",
    "save_name",
    "stats_json",
    "summarize",
]

INDEX_FILE = "history.sqlite3"
SCHEMA = 2
"""The index's layout and the summary's shape: a row written under another one is rebuilt."""
MAX_NAME_CHARS = 64
_FP = re.compile(r"^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$")
_STAMP = re.compile(r"^(\d{8})-(\d{6})")


class HistoryError(LocalError):
    """Bad input to ``koikoi history`` (a fingerprint, a name, a date) or a names table it cannot use."""


def transcripts_dir() -> Path:
    return data_dir() / "transcripts"


def match_when(name: str, mtime_ns: int) -> str:
    """When a match started, as this machine wrote it: the UTC time at the head of the file's name
    (``20261202-025110-…``), else the file's modification time; ``YYYY-MM-DDTHH:MM:SSZ``."""
    m = _STAMP.match(name)
    if m:
        try:
            t = dt.datetime.strptime(m.group(1) + m.group(2), "%Y%m%d%H%M%S")
            return t.strftime("%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            pass
    t = dt.datetime.fromtimestamp(mtime_ns / 1e9, dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _role(name: str) -> int | None:
    stem = name.removesuffix(".koikoi")
    stem = re.sub(r"-\d+$", "", stem)  # (a name numbered on when taken)
    if stem.endswith("-host"):
        return 0
    if stem.endswith("-join"):
        return 1
    return None


def _seat_play(rep: AuditReport) -> list[dict[str, Any]]:
    """Per seat: points won in rounds, yaku made (by id), koi-koi calls and how many of them paid (the caller
    won that round). Only the rounds that count (the audit's ``rounds``)."""
    seats: list[dict[str, Any]] = [
        {"points_won": 0, "rounds_won": 0, "yaku": {}, "calls": 0, "paid": 0} for _ in (0, 1)
    ]
    for r in rep.rounds:
        w = r["winner"]
        if w is None:
            continue
        seats[w]["points_won"] += r["payment"]
        seats[w]["rounds_won"] += 1
        for y in r["yaku"]:
            seats[w]["yaku"][y["id"]] = seats[w]["yaku"].get(y["id"], 0) + 1
    ref = rep.referee
    m = ref.match if ref is not None else None
    if m is None:
        return seats
    counted = len(rep.rounds)
    calls = [0, 0]
    for e in m.log:
        if isinstance(e, KoiKoi):
            calls[e.seat] += 1
        elif isinstance(e, RoundEnded):
            if e.result.round <= counted:
                for s in (0, 1):
                    seats[s]["calls"] += calls[s]
                    if e.result.winner == s:
                        seats[s]["paid"] += calls[s]
            calls = [0, 0]
    return seats


def summarize(name: str, mtime_ns: int, data: bytes | None, problem: str | None = None) -> dict[str, Any]:
    """What one file's audit says, seat by seat (the index's row; its shape is :data:`SCHEMA`'s)."""
    rep = audit(data) if data is not None else None
    base: dict[str, Any] = {"file": name, "when": match_when(name, mtime_ns), "role": _role(name)}
    if rep is None:
        return {
            **base,
            "status": Status.INVALID,
            "valid": False,
            "error": problem,
            "match_id": None,
            "players": [None, None],
            "room": None,
            "settings": None,
            "points": [25, 25],
            "winner": None,
            "ending": None,
            "rounds": 0,
            "seats": _seat_play(AuditReport()),
        }
    return {
        **base,
        "status": rep.status,
        "valid": rep.valid,
        "error": rep.errors[0].message if rep.errors else None,
        "match_id": rep.match_id,
        "players": list(rep.players),
        "room": rep.room,
        "settings": rep.settings,
        "points": list(rep.result["points"]),
        "winner": rep.result["winner"],
        "ending": (rep.ending or {}).get("code"),
        "rounds": len(rep.rounds),
        "seats": _seat_play(rep),
    }


@dataclass(slots=True)
class History:
    """Every file's row (newest first) and what this open did."""

    rows: list[dict[str, Any]]
    audited: int
    """Files audited by this open (new or changed: all of them when the index was rebuilt)."""
    removed: int
    index: Path | None
    """The index file, None when it could not be written (kept in memory)."""


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path, timeout=10)
    con.execute("PRAGMA journal_mode=WAL")
    return con


_COLUMNS = (
    "name TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, when_utc TEXT NOT NULL, role INTEGER,"
    " status TEXT NOT NULL, valid INTEGER NOT NULL, error TEXT, match_id TEXT, player0 TEXT, player1 TEXT,"
    " room TEXT, rounds_setting INTEGER, double_at_8 INTEGER, move_time_s INTEGER, deck TEXT,"
    " points0 INTEGER NOT NULL, points1 INTEGER NOT NULL, winner INTEGER, ending TEXT, rounds INTEGER NOT NULL,"
    " seats TEXT NOT NULL"
)
_NAMES = ", ".join(c.split()[0] for c in _COLUMNS.split(", "))
_SLOTS = ", ".join("?" for _ in _COLUMNS.split(", "))


def _to_db(size: int, mtime_ns: int, r: Mapping[str, Any]) -> tuple[Any, ...]:
    st = r["settings"] or {}
    return (
        r["file"], size, mtime_ns, r["when"], r["role"], r["status"], int(r["valid"]), r["error"], r["match_id"],
        r["players"][0], r["players"][1], r["room"], st.get("rounds"), st.get("double_at_8"), st.get("move_time_s"),
        st.get("deck"), r["points"][0], r["points"][1], r["winner"], r["ending"], r["rounds"],
        json.dumps(r["seats"], sort_keys=True),
    )  # fmt: skip


def _from_db(t: tuple[Any, ...]) -> dict[str, Any]:
    """A row as :func:`summarize` made it (``seats`` left as JSON text: only ``--stats`` reads it)."""
    name, _, _, when, role, status, valid, error, match_id, p0, p1, room, rounds_s, dbl, mt, deck = t[:16]
    pt0, pt1, winner, ending, rounds, seats = t[16:]
    settings = (
        None if rounds_s is None else {"rounds": rounds_s, "double_at_8": bool(dbl), "move_time_s": mt, "deck": deck}
    )
    return {
        "file": name, "when": when, "role": role, "status": status, "valid": bool(valid), "error": error,
        "match_id": match_id, "players": [p0, p1], "room": room, "settings": settings, "points": [pt0, pt1],
        "winner": winner, "ending": ending, "rounds": rounds, "seats": seats,
    }  # fmt: skip


def _fresh(con: sqlite3.Connection) -> None:
    con.executescript(
        "DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS meta;"
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        f"CREATE TABLE files ({_COLUMNS});"
    )
    con.executemany("INSERT INTO meta VALUES (?, ?)", [("schema", str(SCHEMA)), ("koikoi", __version__)])
    con.commit()


def _usable(con: sqlite3.Connection) -> bool:
    try:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        con.execute(f"SELECT {_NAMES} FROM files LIMIT 1").fetchall()
    except sqlite3.DatabaseError:
        return False
    return meta.get("schema") == str(SCHEMA) and meta.get("koikoi") == __version__


def _open_index(path: Path) -> tuple[sqlite3.Connection, Path | None]:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = _connect(path)
        if not _usable(con):
            _fresh(con)
        return con, path
    except sqlite3.DatabaseError:  # a damaged file: it is only an index, so it is made again
        try:
            for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
                p.unlink(missing_ok=True)
            con = _connect(path)
            _fresh(con)
            return con, path
        except (OSError, sqlite3.DatabaseError):
            pass
    except OSError:
        pass
    con = sqlite3.connect(":memory:")
    _fresh(con)
    return con, None


def _scan(folder: Path) -> dict[str, tuple[int, int]]:
    found: dict[str, tuple[int, int]] = {}
    try:
        with os.scandir(folder) as it:
            for e in it:
                if not e.name.endswith(".koikoi"):
                    continue
                try:
                    if not e.is_file():
                        continue
                    st = e.stat()
                except OSError:
                    continue
                found[e.name] = (st.st_size, st.st_mtime_ns)
    except FileNotFoundError:
        pass
    return found


def open_history(folder: Path | None = None, index: Path | None = None) -> History:
    """The history of the transcripts in ``folder`` (default: the data dir's), through the index."""
    folder = folder or transcripts_dir()
    con, where = _open_index(index or data_dir() / INDEX_FILE)
    try:
        on_disk = _scan(folder)
        known = {r[0]: r for r in con.execute(f"SELECT {_NAMES} FROM files")}
        gone = [n for n in known if n not in on_disk]
        changed = sorted(n for n, st in on_disk.items() if n not in known or known[n][1:3] != st)
        rows = [known[n] for n in on_disk if n in known and known[n][1:3] == on_disk[n]]
        fresh = []
        for name in changed:
            size, mtime = on_disk[name]
            try:
                data: bytes | None = read_transcript_file(str(folder / name))
                problem = None
            except NotATranscriptFile as e:
                data, problem = None, e.message
            fresh.append(_to_db(size, mtime, summarize(name, mtime, data, problem)))
        if gone or fresh:
            try:
                with con:
                    con.executemany("DELETE FROM files WHERE name = ?", [(n,) for n in gone])
                    con.executemany(f"INSERT OR REPLACE INTO files ({_NAMES}) VALUES ({_SLOTS})", fresh)
            except sqlite3.Error:  # (read-only, full, or held too long by another koikoi): shown all the same
                where = None
        rows.extend(fresh)
        rows.sort(key=lambda r: (r[3], r[0]), reverse=True)
        out = [_from_db(r) for r in rows]
    finally:
        con.close()
    return History(out, len(changed), len(gone), where)


# -- names ---------------------------------------------------------------------


def normal_fingerprint(text: str) -> str:
    """A fingerprint as typed (any case, with or without dashes) in its one form, or :class:`HistoryError`."""
    t = text.strip().upper().replace("-", "").replace(" ", "")
    fp = "-".join(t[i : i + 4] for i in range(0, len(t), 4))
    if not _FP.match(fp):
        raise HistoryError(
            f"{text!r} is not a key fingerprint (four groups of four letters and digits: 7KQM-2XHD-R4T9-WB0E)"
        )
    return fp


def load_names(cfg: Config | None = None) -> dict[str, str]:
    """The names given to fingerprints (``config.toml``'s ``[names]``: ``"7KQM-2XHD-R4T9-WB0E" = "Alice"``).
    Entries that are not a fingerprint and a string are ignored."""
    if cfg is None:
        try:
            cfg = load_config()
        except ConfigError:
            return {}
    table = cfg.extra.get("names")
    if not isinstance(table, Mapping):
        return {}
    return {str(k): v for k, v in table.items() if isinstance(v, str) and _FP.match(str(k))}


def check_name(name: str) -> str:
    """A name as it is kept (stripped), or :class:`HistoryError` (one line)."""
    name = name.strip()
    if len(name) > MAX_NAME_CHARS or any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise HistoryError(f"a name is one line of at most {MAX_NAME_CHARS} characters")
    return name


def save_name(fp: str, name: str) -> Path:
    """Give ``fp`` a name (an empty name removes it), in ``config.toml``. :class:`HistoryError`, one line."""
    fp = normal_fingerprint(fp)
    name = check_name(name)
    try:
        cfg = load_config()
    except ConfigError as e:
        raise HistoryError(str(e)) from None
    names = dict(load_names(cfg))
    if name:
        names[fp] = name
    else:
        names.pop(fp, None)
    extra = {k: v for k, v in cfg.extra.items() if k != "names"}
    if names:
        extra["names"] = dict(sorted(names.items()))
    try:
        return save_config(Config(cfg.relay, cfg.lang, cfg.assist, cfg.practice, extra, cfg.practice_extra))
    except ConfigError as e:
        raise HistoryError(str(e)) from None


# -- what is shown ---------------------------------------------------------------


def my_seat(row: Mapping[str, Any], me: str | None) -> int | None:
    """This user's seat in a row (module docstring), None when it cannot be told."""
    players = row["players"]
    if me is not None and me in players and players[0] != players[1]:
        return int(players.index(me))
    if row["room"] == PRACTICE_ROOM:
        return 0
    role = row["role"]
    return None if role is None else int(role)


def _result(row: Mapping[str, Any], seat: int | None) -> str | None:
    if seat is None or row["status"] not in DECIDED:
        return None
    w = row["winner"]
    return "draw" if w is None else "win" if w == seat else "loss"


def entry_json(row: Mapping[str, Any], me: str | None, names: Mapping[str, str]) -> dict[str, Any]:
    """One match as ``koikoi history --json`` prints it (docs/players.md, "Your match history")."""
    seat = my_seat(row, me)
    opponent = row["players"][1 - seat] if seat is not None else None
    return {
        "file": row["file"],
        "when": row["when"],
        "match_id": row["match_id"],
        "status": row["status"],
        "valid": row["valid"],
        "error": row["error"],
        "practice": row["room"] == PRACTICE_ROOM,
        "room": row["room"],
        "settings": row["settings"],
        "players": row["players"],
        "seat": seat,
        "opponent": opponent,
        "opponent_name": names.get(opponent) if opponent is not None else None,
        "result": _result(row, seat),
        "points": row["points"],
        "ending": row["ending"],
        "rounds": row["rounds"],
    }


def stats_json(rows: Iterable[Mapping[str, Any]], me: str | None, names: Mapping[str, str]) -> dict[str, Any]:
    """``koikoi history --stats --json``: the matches that audit valid and whose seat is known."""
    listed = counted = 0
    totals = {"wins": 0, "losses": 0, "draws": 0}
    by: dict[tuple[bool, str | None], dict[str, Any]] = {}
    points_won = points_lost = rounds_won = rounds_lost = calls = paid = 0
    yaku: dict[str, int] = {}
    for row in rows:
        listed += 1
        seat = my_seat(row, me)
        if seat is None or not row["valid"]:
            continue
        counted += 1
        practice = row["room"] == PRACTICE_ROOM
        opponent = None if practice else row["players"][1 - seat]
        seats = row["seats"]
        if isinstance(seats, str):  # (as the index keeps it)
            seats = json.loads(seats)
        mine, theirs = seats[seat], seats[1 - seat]
        points_won += mine["points_won"]
        points_lost += theirs["points_won"]
        rounds_won += mine["rounds_won"]
        rounds_lost += theirs["rounds_won"]
        calls += mine["calls"]
        paid += mine["paid"]
        for k, n in mine["yaku"].items():
            yaku[k] = yaku.get(k, 0) + n
        line = by.setdefault(
            (practice, opponent),
            {
                "opponent": opponent,
                "name": names.get(opponent) if opponent is not None else None,
                "practice": practice,
                "matches": 0,
                "wins": 0,
                "losses": 0,
                "draws": 0,
            },
        )
        line["matches"] += 1
        r = _result(row, seat)
        if r is not None:
            key = {"win": "wins", "loss": "losses", "draw": "draws"}[r]
            line[key] += 1
            totals[key] += 1
    return {
        "matches": listed,
        "counted": counted,
        **totals,
        "by_opponent": sorted(by.values(), key=lambda x: (-x["matches"], x["practice"], x["opponent"] or "")),
        "points_won": points_won,
        "points_lost": points_lost,
        "rounds_won": rounds_won,
        "rounds_lost": rounds_lost,
        "yaku": dict(sorted(yaku.items())),
        "koikoi": {"calls": calls, "paid": paid},
    }
