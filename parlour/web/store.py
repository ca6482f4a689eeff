"""The web app's games in the league's SQLite database.

The server opens the league database (``parlour league``'s file; created if missing,
its schema brought up to date by the league) and adds one table of its own,
``web_games``: every game played or watched in the browser and every game record
imported at start. A game is stored as its env, options, seed and move names, so it
is rebuilt exactly after a restart. League games (the league's ``games`` table keeps
a deal's seed and the agents, not the moves) are replayed by playing the deal again
with the same agents and seeds; the moves found are kept in ``web_games`` the first
time, and the replay is refused if it ends with other scores than the league stored.

Connections are one per thread, in WAL mode with a busy timeout, so the server's
threads and a ``parlour league`` run can write to the file at the same time.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

# the league is used through this one name (its database and leaderboards)
from .. import league

DEFAULT_DB = league.DEFAULT_DB
#: seconds a writer waits for another's transaction
BUSY_TIMEOUT = 30.0

WEB_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS web_games (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,          -- play | watch | league | record
        env TEXT NOT NULL,
        options TEXT NOT NULL,       -- JSON: the env options as given
        seed INTEGER,                -- env seed of the game
        reset_options TEXT,          -- JSON: a record's forced deal, else NULL
        seats TEXT NOT NULL,         -- JSON: agent spec per seat, "human" for a person
        human INTEGER,               -- the browser's seat, NULL for none
        moves TEXT NOT NULL,         -- JSON: the moves' names in order
        scores TEXT,                 -- JSON: final returns per seat; NULL while playing
        source TEXT,                 -- where an imported game came from
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS web_games_by_kind ON web_games (kind, updated_at)",
]


#: the columns of web_games, in order
_FIELDS = (
    "id kind env options seed reset_options seats human moves scores source "
    "created_at updated_at"
).split()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def new_id(kind: str) -> str:
    """A fresh game id that cannot be guessed from another's."""
    return f"{kind[0]}{secrets.token_hex(6)}"


class Store:
    """The web tables of one league database."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        # the league's connect creates the file, checks it is a league's and migrates it
        conn = league.connect(self.path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            for sql in WEB_SCHEMA:
                conn.execute(sql)
            conn.execute("COMMIT")
        finally:
            conn.close()
        self._local = threading.local()

    def conn(self) -> sqlite3.Connection:
        """This thread's connection (autocommit, WAL, busy timeout)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
            conn.execute("PRAGMA journal_mode=WAL")
            # in WAL mode a commit survives a crash of the server without a sync per
            # move (only a power cut can lose the last moves)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    # --- games ------------------------------------------------------------------------
    def insert(
        self,
        game_id: str,
        kind: str,
        env_name: str,
        options: Mapping[str, Any],
        seed: int | None,
        seats: Sequence[str],
        moves: Sequence[str],
        human: int | None = None,
        scores: Sequence[float] | None = None,
        reset_options: Mapping[str, Any] | None = None,
        source: str | None = None,
    ) -> bool:
        """Store a game (kept as it is if its id is stored already); whether it was
        new."""
        now = _now()
        cur = self.conn().execute(
            "INSERT OR IGNORE INTO web_games (id, kind, env, options, seed, "
            "reset_options, seats, human, moves, scores, source, created_at, "
            "updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                game_id,
                kind,
                env_name,
                json.dumps(dict(options), sort_keys=True),
                seed,
                json.dumps(reset_options) if reset_options else None,
                json.dumps(list(seats)),
                human,
                json.dumps(list(moves)),
                json.dumps(list(scores)) if scores is not None else None,
                source,
                now,
                now,
            ),
        )
        return cur.rowcount == 1

    def update_moves(
        self, game_id: str, moves: Sequence[str], scores: Sequence[float] | None
    ) -> None:
        """Store a game's moves so far (and its scores once over)."""
        self.conn().execute(
            "UPDATE web_games SET moves=?, scores=?, updated_at=? WHERE id=?",
            (
                json.dumps(list(moves)),
                json.dumps(list(scores)) if scores is not None else None,
                _now(),
                game_id,
            ),
        )

    def get(self, game_id: str) -> dict[str, Any] | None:
        """A stored web game as a dict (JSON columns read), or None."""
        sql = f"SELECT {', '.join(_FIELDS)} FROM web_games WHERE id=?"
        row = self.conn().execute(sql, (game_id,)).fetchone()
        return None if row is None else _game(row)

    def recent(self, limit: int = 20) -> list[dict[str, Any]]:
        """The latest web games, newest first."""
        sql = (
            f"SELECT {', '.join(_FIELDS)} FROM web_games "
            "ORDER BY updated_at DESC, rowid DESC LIMIT ?"
        )
        return [_game(r) for r in self.conn().execute(sql, (limit,))]

    # --- league games -----------------------------------------------------------------
    def league_row(self, row_id: int) -> dict[str, Any] | None:
        """A league game (``games`` table) by its id, or None."""
        row = (
            self.conn()
            .execute(
                "SELECT id, env, options, seed, seats, hashes, returns FROM games "
                "WHERE id=?",
                (row_id,),
            )
            .fetchone()
        )
        if row is None:
            return None
        keys = ("id", "env", "options", "seed", "seats", "hashes", "returns")
        out = dict(zip(keys, row, strict=True))
        for k in ("options", "seats", "hashes", "returns"):
            out[k] = json.loads(out[k])
        return out

    def league_games(self, limit: int = 20) -> list[dict[str, Any]]:
        """The latest league games (id, env, seats, returns), newest first."""
        rows = self.conn().execute(
            "SELECT id, env, seats, returns FROM games ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [
            {"id": i, "env": e, "seats": json.loads(s), "returns": json.loads(r)}
            for i, e, s, r in rows
        ]

    def league_envs(self) -> list[str]:
        """The envs with league games stored."""
        return [
            r[0]
            for r in self.conn().execute("SELECT DISTINCT env FROM games ORDER BY 1")
        ]

    def leaderboards(self, env_name: str) -> list[Any]:
        """The league's leaderboards of an env, one per option set
        (`parlour.league.leaderboards`)."""
        return league.leaderboards(self.path, env_name)

    # --- imported records -------------------------------------------------------------
    def import_records(self, paths: Iterable[str | Path]) -> int:
        """Store the game records of JSONL files (``parlour arena --record``, text
        play); a record already imported keeps its id. Returns the records read."""
        from ..text import load_records

        count = 0
        for path in paths:
            for record in load_records(path):
                line = json.dumps(record, sort_keys=True, ensure_ascii=False)
                game_id = "r" + hashlib.sha256(line.encode()).hexdigest()[:12]
                moves = [m["action"] for m in record["moves"] if m.get("action")]
                self.insert(
                    game_id,
                    "record",
                    record["env"],
                    record["options"] or {},
                    record["seed"],
                    record.get("seats") or [],
                    moves,
                    scores=record["scores"],
                    reset_options=record.get("reset_options"),
                    source=str(path),
                )
                count += 1
        return count

    def close(self) -> None:
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def _game(row: tuple) -> dict[str, Any]:
    out = dict(zip(_FIELDS, row, strict=True))
    for k in ("options", "reset_options", "seats", "moves", "scores"):
        if out[k] is not None:
            out[k] = json.loads(out[k])
    return out


def league_seat_specs(row: Mapping[str, Any]) -> list[str]:
    """The agent spec of each seat of a league game: its name less the checkpoint
    hash the league appends to checkpoint agents."""
    return [
        name.rsplit("#", 1)[0] if name in row["hashes"] else name
        for name in row["seats"]
    ]


__all__ = [
    "DEFAULT_DB",
    "Store",
    "league_seat_specs",
    "new_id",
]
