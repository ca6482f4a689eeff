"""The league: games appended to SQLite, ratings fitted from them, concurrent writers,
crashes, corrupt and foreign files, schema migration, the CLI's errors and Ray."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers import as_from_a_terminal

import parlour
from parlour import league
from parlour.cli import main

ENV = "german_whist_v0"
AGENTS = ["random", "heuristic", "heuristic:-duck_duds"]


def rows(db: Path) -> list[sqlite3.Row]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM games ORDER BY id").fetchall()
    finally:
        conn.close()


def stored(db: Path) -> list[sqlite3.Row]:
    """The games stored so far, or none before the league has made its file."""
    if not db.exists():
        return []
    try:
        return rows(db)
    except sqlite3.OperationalError:
        return []


def test_tiny_league_twice_doubles_rows_and_rates_random_last(tmp_path, capsys):
    db = tmp_path / "league.sqlite"
    argv = ["league", ENV, "--agents", *AGENTS, "--games", "4", "--db", str(db)]
    assert main([*argv, "--quiet"]) == 0
    first = rows(db)
    # 3 pairs, 2 deals each, both seatings
    assert len(first) == 12
    assert main([*argv, "--quiet"]) == 0
    second = rows(db)
    assert len(second) == 24
    # a re-run plays new deals: no (pairing, deal) was played twice
    deals = {(r["pairing"], r["deal"], r["seating"]) for r in second}
    assert len(deals) == 24
    assert {r["deal"] for r in second[12:]} == {2, 3}
    row = second[0]
    assert row["env"] == ENV
    assert json.loads(row["options"])["variant"] == "german"
    assert row["seed"] == league.deal_seed(row["deal"])
    assert sorted(json.loads(row["seats"])) == sorted(json.loads(row["pairing"]))
    assert len(json.loads(row["returns"])) == 2
    assert json.loads(row["hashes"]) == {}
    assert row["version"]

    out = capsys.readouterr().out
    assert "stored 12 of 12 games" in out
    board = league.leaderboards(db, ENV)[0]
    order = [s.agent for s in board.standings]
    assert order.index("random") > order.index("heuristic")
    assert board.games == 24
    heuristic = board.standings[order.index("heuristic")]
    assert heuristic.games == 16
    assert heuristic.win_share.low <= heuristic.win_share.estimate


def test_show_prints_json_and_plot(tmp_path, capsys):
    db = tmp_path / "l.sqlite"
    league.run_league(ENV, AGENTS[:2], games=2, db=db)
    capsys.readouterr()
    plot = tmp_path / "board.png"
    assert (
        main(["league", "show", ENV, "--db", str(db), "--json", "--plot", str(plot)])
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data[0]["env"] == ENV and data[0]["games"] == 2
    assert data[0]["parlour_version"] == parlour.__version__
    assert data[0]["env_version"] == 0
    names = {s["agent"] for s in data[0]["standings"]}
    assert names == {"random", "heuristic"}
    assert plot.stat().st_size > 1000
    assert main(["league", "show", ENV, "--db", str(db), "--markdown"]) == 0
    assert "| `heuristic` |" in capsys.readouterr().out


def test_tables_of_three_or_more_sides_seat_agents_in_rotation(tmp_path):
    assert league.tables_for(["a", "b", "c"], 2) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert league.tables_for(["a", "b", "c", "d"], 3) == [
        ("a", "b", "c"),
        ("b", "c", "d"),
        ("a", "c", "d"),
        ("a", "b", "d"),
    ]
    # fewer agents than sides: the table is filled in rotation
    assert league.tables_for(["a", "b"], 3) == [("a", "a", "b"), ("a", "b", "b")]
    db = tmp_path / "h.sqlite"
    run = league.run_league(
        "fuenfzehn_tot_v0",
        ["random", "threshold:12"],
        games=3,
        db=db,
        env_options={"players": 3},
    )
    assert run.stored == run.planned == 2 * 3
    games = rows(db)
    # each deal is played with the agents rotated through the three seats
    first_deal = [json.loads(r["seats"]) for r in games[:3]]
    assert first_deal[0] != first_deal[1] and sorted(first_deal[0]) == sorted(
        first_deal[1]
    )
    board = league.leaderboards(db, "fuenfzehn_tot_v0")[0]
    assert board.sides == 3


def test_fit_rates_partnerships_as_teams():
    # seats 0,2 against 1,3; partners are different agents; a+b always win
    teams = [[0, 2], [1, 3]]
    games = []
    for i in range(30):
        seats = ["a", "c", "b", "d"] if i % 2 else ["c", "a", "d", "b"]
        winner = 0 if seats[0] == "a" else 1
        returns = [1.0 if s in teams[winner] else -1.0 for s in range(4)]
        games.append((seats, teams, returns))
    fitted = league.fit(games)
    assert min(fitted["a"]["mu"], fitted["b"]["mu"]) > max(
        fitted["c"]["mu"], fitted["d"]["mu"]
    )
    assert fitted["a"]["wins"] == [1.0] * 30 and fitted["c"]["wins"] == [0.0] * 30


_WRITER = textwrap.dedent(
    """
    import sys, time
    from parlour import league
    db, start = sys.argv[1], float(sys.argv[2])
    while time.time() < start:
        time.sleep(0.01)
    run = league.run_league(
        "german_whist_v0", ["random", "heuristic", "heuristic:-duck_duds"],
        games=12, db=db, batch_deals=1,
    )
    print(run.stored)
    """
)


def test_concurrent_leagues_append_every_game(tmp_path):
    db = tmp_path / "shared.sqlite"
    start = time.time() + 4
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(db), str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err
        assert "locked" not in err
        assert out.strip() == "36"
    games = rows(db)
    assert len(games) == 72
    # the two leagues claimed different deals of every pairing
    keys = {(r["pairing"], r["deal"], r["seating"]) for r in games}
    assert len(keys) == 72
    assert {r["deal"] for r in games} == set(range(12))
    conn = league.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_interrupt_keeps_every_finished_batch(tmp_path, monkeypatch):
    db = tmp_path / "i.sqlite"
    real = league.play_batch
    calls = []

    def interrupted_on_third(batch, on_game=None):
        calls.append(batch)
        if len(calls) == 3:
            real(batch, on_game)  # the games of this batch are played, then Ctrl-C
            raise KeyboardInterrupt
        return real(batch, on_game)

    # run_league plays what its module names play_batch
    monkeypatch.setattr(league.run, "play_batch", interrupted_on_third)
    run = league.run_league(ENV, AGENTS, games=8, db=db, batch_deals=1)
    assert run.interrupted
    assert run.stored == 2 * 2 == len(rows(db))
    monkeypatch.undo()
    # the interrupted batch's deal was claimed, so the next run does not reuse it
    league.run_league(ENV, AGENTS, games=2, db=db)
    deals = [(r["pairing"], r["deal"]) for r in rows(db)]
    assert len(set(deals)) == len(deals) // 2


_SLOW_WRITER = textwrap.dedent(
    """
    import sys
    from parlour import league
    league.run_league("german_whist_v0", ["random", "heuristic"], games=100000,
                      db=sys.argv[1], batch_deals=2)
    """
)


def test_killed_league_loses_at_most_the_batch_in_progress(tmp_path):
    db = tmp_path / "k.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(db)])
    try:
        deadline = time.time() + 60
        while time.time() < deadline and len(stored(db)) < 8:
            time.sleep(0.3)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    conn = league.connect(db)  # opens: integrity check passes
    count = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    conn.close()
    assert count >= 8
    assert count % 4 == 0  # whole batches only: 2 deals x 2 seatings
    run = league.run_league(ENV, ["random", "heuristic"], games=4, db=db)
    assert run.stored == 4


def test_corrupt_file_is_refused_with_one_line(tmp_path, capsys):
    db = tmp_path / "c.sqlite"
    league.run_league(ENV, AGENTS[:2], games=2, db=db)
    data = bytearray(db.read_bytes())
    assert len(data) > 8192
    # keep the header, scramble the pages behind it
    for i in range(4096, len(data)):
        data[i] = (i * 131) % 251
    db.write_bytes(bytes(data))
    with pytest.raises(league.LeagueError, match="corrupt|not a readable"):
        league.connect(db)
    argv = ["league", ENV, "--agents", "random", "heuristic", "--db", str(db)]
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("parlour league: error:")

    junk = tmp_path / "notes.sqlite"
    junk.write_text("these are my notes, not a database\n" * 200)
    before = junk.read_bytes()
    assert main(["league", "show", ENV, "--db", str(junk)]) == 2
    err = capsys.readouterr().err
    assert "not a SQLite database" in err and err.count("\n") == 1
    assert junk.read_bytes() == before


def test_foreign_sqlite_file_is_refused_and_left_alone(tmp_path, capsys):
    db = tmp_path / "other.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers (name) VALUES ('Ada')")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    argv = ["league", ENV, "--agents", "random", "heuristic", "--db", str(db)]
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "not a Parlour league" in err and err.count("\n") == 1
    assert db.read_bytes() == before
    assert not Path(f"{db}-wal").exists()


def test_newer_schema_is_refused(tmp_path):
    db = tmp_path / "new.sqlite"
    league.connect(db).close()
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version={league.SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(league.LeagueError, match="newer"):
        league.connect(db)


def test_migration_from_version_1(tmp_path):
    db = tmp_path / "v1.sqlite"
    # a database as version 1 left it, with games in it
    conn = sqlite3.connect(db, isolation_level=None)
    for sql in league.MIGRATIONS[0]:
        conn.execute(sql)
    conn.execute(f"PRAGMA application_id={league.APPLICATION_ID}")
    conn.execute("PRAGMA user_version=1")
    opts, by_name, hashes, _ = league.prepare(ENV, ["random", "heuristic"])
    batch = league.Batch(
        ENV, {}, opts, ("heuristic", "random"), by_name, hashes, first_deal=0, deals=3
    )
    league.insert_games(conn, league.play_batch(batch))
    conn.close()

    conn = league.connect(db)
    assert league.schema_version(conn) == league.SCHEMA_VERSION == 2
    # the deal counter was filled from the stored games
    assert conn.execute("SELECT next_deal FROM pairings").fetchall() == [(3,)]
    conn.close()
    run = league.run_league(ENV, ["random", "heuristic"], games=2, db=db)
    assert run.stored == 2
    assert [r["deal"] for r in rows(db)] == [0, 0, 1, 1, 2, 2, 3, 3]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--agents", "random", "wizard"], "unknown agent"),
        (["--agents", "random"], "at least two agents"),
        (["--agents", "heuristic", "heuristic:+win_cheaply"], "same agent"),
        (["--agents", "random", "heuristic", "-o", "variant=klondike"], "variant"),
    ],
)
def test_bad_input_is_one_line_before_any_game(tmp_path, capsys, extra, message):
    db = tmp_path / "x.sqlite"
    assert main(["league", ENV, *extra, "--db", str(db), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not db.exists()


def test_bad_db_path_is_refused_before_any_game(tmp_path, capsys):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    for path in (blocker / "league.sqlite", tmp_path):
        argv = ["league", ENV, "--agents", "random", "heuristic", "--db", str(path)]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("parlour league: error:") and err.count("\n") == 1
    assert main(["league", "show", ENV, "--db", str(tmp_path / "none.sqlite")]) == 2
    assert "no league database" in capsys.readouterr().err
    assert main(["league", "show", ENV, "--agents", "random"]) == 2
    assert main(["league", ENV]) == 2


def test_ray_executor_without_ray_names_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    db = tmp_path / "r.sqlite"
    argv = ["league", ENV, "--agents", "random", "heuristic", "--db", str(db)]
    assert main([*argv, "--executor", "ray"]) == 2
    err = capsys.readouterr().err
    assert "ray[rllib]" in err and err.count("\n") == 1
    assert not db.exists()


# Starting Ray takes 5-20 s (processes for its control store and workers): slow suite.
@pytest.mark.slow
def test_ray_executor_stores_the_same_games_as_local(tmp_path):
    ray = pytest.importorskip("ray")
    local, remote = tmp_path / "local.sqlite", tmp_path / "ray.sqlite"
    league.run_league(ENV, AGENTS, games=4, db=local)
    try:
        run = league.run_league(
            ENV,
            AGENTS,
            games=4,
            db=remote,
            executor="ray",
            ray_init={"num_cpus": 2, "include_dashboard": False},
        )
    finally:
        if ray.is_initialized():
            ray.shutdown()
    assert run.stored == 12

    def key(r):
        return (r["pairing"], r["deal"], r["seating"])

    fields = ["seed", "seats", "returns", "scores", "info"]
    a = {key(r): [r[f] for f in fields] for r in rows(local)}
    b = {key(r): [r[f] for f in fields] for r in rows(remote)}
    assert a == b


def test_ctrl_c_on_the_cli_keeps_the_finished_batches(tmp_path):
    db = tmp_path / "c.sqlite"
    argv = ["league", ENV, "--agents", "random", "heuristic", "--games", "100000"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "parlour.cli", *argv, "--db", str(db), "--quiet"],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_from_a_terminal,
    )
    deadline = time.time() + 60
    while time.time() < deadline and len(stored(db)) < 8:
        time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    kept = len(rows(db))
    assert f"interrupted: kept {kept} of 100000 games" in err
    assert kept >= 8 and kept % 8 == 0  # whole batches of 4 deals x 2 seatings


def test_a_ctrl_c_just_after_a_commit_is_counted_with_that_batch(tmp_path, monkeypatch):
    # the signal lands after the batch's transaction commits and before the run counts
    # it: the count the run reports must still be what the database holds
    from parlour.league import run as league_run

    commit = league_run.insert_games

    def commit_then_ctrl_c(conn, batch):
        commit(conn, batch)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(league_run, "insert_games", commit_then_ctrl_c)
    db = tmp_path / "late.sqlite"
    # Python's own Ctrl-C handler, as in a terminal: a test run started in the
    # background of a non-interactive shell (`make test &`) inherits SIGINT ignored
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run = league.run_league(ENV, ["random", "heuristic"], games=1000, db=db)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert run.interrupted
    assert run.stored == len(rows(db)) == 8  # the first batch, counted


def test_checkpoint_agent_is_stored_with_its_weights_hash(tmp_path):
    from parlour.training.train import config_from_dict, train

    config = config_from_dict(
        {
            "env": ENV,
            "total_timesteps": 128,
            "n_envs": 1,
            "n_steps": 64,
            "batch_size": 64,
            "n_epochs": 1,
            "net_arch": [16],
            "opponents": {"random": 1.0},
            "checkpoint_every": 128,
            "eval_every": 128,
            "eval_games": 2,
            "eval_opponents": ["random"],
            "tensorboard": False,
            "warm_start": "",
        }
    )
    result = train(config, run_dir=tmp_path / "run", progress=False)
    digest = json.loads((Path(result.checkpoint) / "manifest.json").read_text())[
        "weights_sha256"
    ]
    spec = f"ckpt:{result.run_dir}"
    db = tmp_path / "c.sqlite"
    league.run_league(ENV, [spec, "random"], games=2, db=db)
    row = rows(db)[0]
    name = f"{spec}#{digest[:12]}"
    assert name in json.loads(row["seats"])
    assert json.loads(row["hashes"]) == {name: digest}
    board = league.leaderboards(db, ENV)[0]
    mine = next(s for s in board.standings if s.checkpoint)
    assert (mine.spec, mine.checkpoint) == (spec, digest)
