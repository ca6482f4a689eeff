"""The league's database: one SQLite file holding every game a league played.

The schema grows by migrations (``MIGRATIONS``, one entry per ``PRAGMA user_version``):
a database is brought up to date when it is opened, never edited in place otherwise.
The file runs in WAL mode and writers wait up to `BUSY_TIMEOUT` for each other, so two
leagues (or a league and a reader such as ``parlour league show``) share one file.
Games are written in batches, one transaction each (`insert_games`), and a table's deal
counter is claimed before its batch is played (`claim_deals`), so concurrent leagues
never play the same deal twice.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import envs

DEFAULT_DB = "runs/league.sqlite"
#: ``PRAGMA application_id`` of a league database ("PlrL"): tells ours from other files
APPLICATION_ID = 0x506C724C
#: seconds a writer waits for another's transaction before giving up
BUSY_TIMEOUT = 120.0

# Each entry moves the schema up one version (``PRAGMA user_version``); a database is
# brought up to date when it is opened. Never edit an entry, append a new one.
MIGRATIONS: list[list[str]] = [
    # 1: the games
    [
        """CREATE TABLE games (
            id INTEGER PRIMARY KEY,
            env TEXT NOT NULL,
            options TEXT NOT NULL,   -- JSON: the game options, defaults filled in
            pairing TEXT NOT NULL,   -- JSON: the table's agents, one per side
            deal INTEGER NOT NULL,   -- the deal's index for this pairing
            seed INTEGER NOT NULL,   -- env seed of the deal
            seating INTEGER NOT NULL,
            seats TEXT NOT NULL,     -- JSON: agent per seat
            hashes TEXT NOT NULL,    -- JSON: checkpoint agent -> weights SHA-256
            teams TEXT NOT NULL,     -- JSON: the seats of each side
            returns TEXT NOT NULL,   -- JSON: total reward per seat
            scores TEXT,             -- JSON: the game's final scores, if it keeps any
            info TEXT NOT NULL,      -- JSON: the engine's public info at the end
            version TEXT NOT NULL,   -- Parlour version that played it
            played_at TEXT NOT NULL,
            UNIQUE (env, options, pairing, deal, seating)
        )""",
    ],
    # 2: a deal counter per pairing, claimed before a batch is played, so concurrent
    # leagues never play the same deal twice; filled from the games already stored.
    [
        """CREATE TABLE pairings (
            env TEXT NOT NULL,
            options TEXT NOT NULL,
            pairing TEXT NOT NULL,
            next_deal INTEGER NOT NULL,
            PRIMARY KEY (env, options, pairing)
        )""",
        """INSERT INTO pairings (env, options, pairing, next_deal)
            SELECT env, options, pairing, MAX(deal) + 1 FROM games
            GROUP BY env, options, pairing""",
        "CREATE INDEX games_by_env ON games (env, options, id)",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)


class LeagueError(ValueError):
    """A bad league database or bad league input; the message is one line."""


# --- the database ---------------------------------------------------------------------
def connect(path: str | Path, create: bool = True) -> sqlite3.Connection:
    """Open (or create) a league database, bring its schema up to date, and return the
    connection (autocommit; WAL; writers wait up to `BUSY_TIMEOUT`).

    Refuses, with a one-line `LeagueError`, a file that is not a SQLite database, a
    corrupt one, a SQLite database that is not a league's, and one from a newer
    Parlour.
    """
    path = Path(path)
    if path.is_dir():
        raise LeagueError(f"{path} is a directory, not a league database file")
    if not path.exists():
        if not create:
            raise LeagueError(
                f"no league database at {path} (run 'parlour league' first)"
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise LeagueError(f"cannot create {path.parent}: {err.strerror}") from None
    elif path.stat().st_size:
        with path.open("rb") as fh:
            head = fh.read(16)
        if head != b"SQLite format 3\x00":
            raise LeagueError(f"{path} is not a SQLite database; refusing to touch it")
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
    except sqlite3.Error as err:
        raise LeagueError(f"cannot open {path}: {err}") from None
    try:
        _check_and_migrate(conn, path)
    except sqlite3.DatabaseError as err:
        conn.close()
        if "locked" in str(err):
            raise LeagueError(
                f"{path} stayed locked by another writer for {BUSY_TIMEOUT:g} s"
            ) from None
        raise LeagueError(f"{path} is not a readable league database ({err})") from None
    except BaseException:
        conn.close()
        raise
    return conn


def _check_and_migrate(conn: sqlite3.Connection, path: Path) -> None:
    def identity() -> tuple[int, int, list[str]]:
        app = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        return app, version, tables

    def refuse_foreign(app: int, version: int, tables: list[str]) -> None:
        if tables and app != APPLICATION_ID:
            raise LeagueError(
                f"{path} is a SQLite database but not a Parlour league "
                f"(tables: {', '.join(sorted(tables)[:5])}); refusing to touch it"
            )
        if version > SCHEMA_VERSION:
            raise LeagueError(
                f"{path} has league schema version {version}, newer than this "
                f"Parlour's {SCHEMA_VERSION}; upgrade Parlour"
            )

    # Look before writing anything (WAL mode is written to the file).
    refuse_foreign(*identity())
    problems = [r[0] for r in conn.execute("PRAGMA quick_check")]
    if problems != ["ok"]:
        raise LeagueError(f"{path} is corrupt (integrity check: {problems[0]})")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
    if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        # another writer may have migrated between our look and our lock
        app, version, tables = identity()
        refuse_foreign(app, version, tables)
        if not tables:
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        for statements in MIGRATIONS[version:]:
            for sql in statements:
                conn.execute(sql)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def schema_version(conn: sqlite3.Connection) -> int:
    """The schema version of an open database."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def options_key(env_name: str, options: Mapping[str, Any] | None) -> str:
    """The stored form of an env's options: its game options with defaults filled in,
    as sorted JSON, so ``-o variant=german`` and no option are the same league."""
    return dumps(envs.game_options(env_name, dict(options or {})))


def dumps(value: Any) -> str:
    """Stored JSON: sorted keys; numpy scalars and arrays as plain numbers."""
    return json.dumps(value, sort_keys=True, default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray | tuple | set | frozenset):
        return list(value)
    return str(value)


def claim_deals(
    conn: sqlite3.Connection, env_name: str, opts: str, pairing: str, n: int
) -> int:
    """Reserve the next ``n`` deal indices of a pairing; returns the first."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute(
            "SELECT next_deal FROM pairings WHERE env=? AND options=? AND pairing=?",
            (env_name, opts, pairing),
        ).fetchone()
        start = row[0] if row else 0
        conn.execute(
            "INSERT INTO pairings (env, options, pairing, next_deal) VALUES (?,?,?,?) "
            "ON CONFLICT (env, options, pairing) "
            "DO UPDATE SET next_deal=excluded.next_deal",
            (env_name, opts, pairing, start + n),
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return start


_COLUMNS = (
    "env options pairing deal seed seating seats hashes teams returns scores info "
    "version played_at"
).split()


def insert_games(conn: sqlite3.Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Store one batch of games in one transaction."""
    sql = (
        f"INSERT INTO games ({', '.join(_COLUMNS)}) "
        f"VALUES ({', '.join('?' * len(_COLUMNS))})"
    )
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(sql, [tuple(r[c] for c in _COLUMNS) for r in rows])
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def count_games(conn: sqlite3.Connection, env_name: str | None = None) -> int:
    """Games stored (for one env, or all)."""
    if env_name is None:
        return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    return conn.execute(
        "SELECT COUNT(*) FROM games WHERE env=?", (env_name,)
    ).fetchone()[0]


def option_sets(conn: sqlite3.Connection, env_name: str) -> list[str]:
    """The option sets (stored keys) that have games for an env, oldest first."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT options FROM games WHERE env=? GROUP BY options ORDER BY MIN(id)",
            (env_name,),
        )
    ]


def stored_games(
    conn: sqlite3.Connection, env_name: str, opts: str
) -> Iterator[tuple[list[str], list[list[int]], list[float], dict[str, str]]]:
    """Each stored game of an env and option set, in the order stored: agent per seat,
    the sides' seats, the returns and the checkpoint hashes."""
    cursor = conn.execute(
        "SELECT seats, teams, returns, hashes FROM games WHERE env=? AND options=? "
        "ORDER BY id",
        (env_name, opts),
    )
    for seats, teams, returns, hashes in cursor:
        yield (
            json.loads(seats),
            json.loads(teams),
            json.loads(returns),
            json.loads(hashes),
        )
