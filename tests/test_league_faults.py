"""The league database under faults and load: `parlour league` processes writing one
file at once, a writer holding the file while a new one opens it, and SIGKILL in the
middle of a league; every game committed is kept once and the file stays sound."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from parlour import league
from parlour.league import store

ENV = "german_whist_v0"
PARLOUR = [sys.executable, "-m", "parlour.cli"]
# one table: its batches are 4 deals x 2 seatings
AGENTS = ["random", "heuristic"]
BATCH = 4 * 2


def _count(db: Path) -> int:
    """Games stored so far (0 before the league has made its file)."""
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0


def _check_sound(db: Path) -> list[tuple]:
    """integrity_check passes, no game is stored twice; returns the games' keys."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        keys = conn.execute(
            "SELECT env, options, pairing, deal, seating FROM games"
        ).fetchall()
    finally:
        conn.close()
    assert len(keys) == len(set(keys))
    return keys


def _league(db: Path, games: int) -> list[str]:
    return [
        *PARLOUR,
        "league",
        ENV,
        "--agents",
        *AGENTS,
        "--games",
        str(games),
        "--db",
        str(db),
        "--quiet",
    ]


def test_opening_waits_for_a_writer_holding_a_new_file(tmp_path):
    """A process opening the file while another holds a write lock on it (a league
    creating its schema) waits: SQLite refuses such an opener at once, without its
    busy timeout, which made one of several leagues started together fail."""
    db = tmp_path / "held.sqlite"
    # the timer's thread commits: the connection is shared with it on purpose
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    timer = threading.Timer(0.5, holder.execute, ("COMMIT",))
    timer.start()
    try:
        start = time.monotonic()
        conn = league.connect(db)
        waited = time.monotonic() - start
    finally:
        timer.join()
        holder.close()
    try:
        assert store.schema_version(conn) == store.SCHEMA_VERSION
    finally:
        conn.close()
    assert waited >= 0.4


def test_concurrent_league_commands_store_every_game_once(tmp_path):
    """Four `parlour league` processes on one new file at once: each stores what it
    planned, and every game is stored once."""
    db = tmp_path / "shared.sqlite"
    procs = [
        subprocess.Popen(
            _league(db, 24), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=180) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert "stored 24 of 24 games" in out
    keys = _check_sound(db)
    assert len(keys) == 4 * 24
    # the four claimed different deals: 48 deals x 2 seatings
    assert {k[3] for k in keys} == set(range(48))


def test_serve_and_league_commands_share_one_file(tmp_path):
    """``parlour serve`` storing browser games (a move at a time) while two
    `parlour league` processes write the same file: all of them finish, every league
    game is stored once and every browser game with its result."""
    pytest.importorskip("httpx")
    pytest.importorskip("starlette")
    import random

    from test_web import PLY, play_out, serve

    from parlour.web.service import Parlour

    db = tmp_path / "shared.sqlite"
    parlour = Parlour(db)  # the file is made before the leagues start
    procs = [
        subprocess.Popen(
            _league(db, 24), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    rng = random.Random(3)
    with serve(parlour) as client:
        for _ in range(3):
            page = client.get(
                "/play/german_whist_v0?opponent=random&seat=0", follow_redirects=True
            )
            assert PLY.search(page.text), page.text[-300:]
            play_out(client, page, rng)
    outs = [p.communicate(timeout=180) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert "stored 24 of 24 games" in out
    assert len(_check_sound(db)) == 2 * 24
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT kind, scores FROM web_games").fetchall()
    conn.close()
    assert len(rows) == 3 and all(kind == "play" and s for kind, s in rows)


def test_sigkill_keeps_every_committed_game_and_a_rerun_completes(tmp_path):
    """A league killed with SIGKILL (three times, at different points) leaves a file
    that passes integrity_check and holds whole batches only; a re-run adds its games
    and nothing is stored twice."""
    db = tmp_path / "killed.sqlite"
    kept = 0
    for wait_for in (1, 2 * BATCH, 3 * BATCH):
        proc = subprocess.Popen(
            _league(db, 100_000),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and _count(db) < kept + wait_for:
                time.sleep(0.05)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        now = len(_check_sound(db))
        assert now >= kept + wait_for  # nothing committed was lost
        assert now % BATCH == 0  # a batch is stored whole or not at all
        kept = now
    conn = league.connect(db)  # opens: the league's own check passes
    conn.close()
    done = subprocess.run(_league(db, 8), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(_check_sound(db)) == kept + 8


@pytest.mark.parametrize("at", ["claim", "insert"])
def test_failed_transaction_leaves_nothing_half_written(tmp_path, monkeypatch, at):
    """A write that fails inside its transaction (here: the process's next statement
    raises) is rolled back whole; the connection is usable afterwards."""
    db = tmp_path / "t.sqlite"
    conn = league.connect(db)
    try:
        row = {c: "x" for c in store._COLUMNS} | {"deal": 0, "seed": 0, "seating": 0}
        if at == "insert":
            # the second row breaks the UNIQUE key: the first must not stay
            with pytest.raises(sqlite3.IntegrityError):
                store.insert_games(conn, [row, dict(row)])
            assert store.count_games(conn) == 0
        else:
            store.claim_deals(conn, ENV, "{}", "[]", 4)
            # a failure between the read and the write of the counter
            with pytest.raises(TypeError):
                store.claim_deals(conn, ENV, "{}", "[]", "four")  # type: ignore
            assert store.claim_deals(conn, ENV, "{}", "[]", 1) == 4
        assert not conn.in_transaction
    finally:
        conn.close()
