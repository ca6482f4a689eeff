"""``parlour bench`` on tiny budgets: the rows and summary it writes, its seeds, its
refusals of bad input; and the best response's batch backend for a network agent."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from parlour.cli import main
from parlour.training import bench as bench_mod
from parlour.training.selfplay import TRAIN_SEED_LIMIT

# a few hundred learner decisions on small nets: seconds
TINY = ("n_envs=2", "n_steps=32", "batch_size=32", "net_arch=[16, 16]")
TINY += ("tensorboard=false", "eval_games=4", "n_epochs=1")
TINY_PROTOCOL = bench_mod.Protocol(
    games=4, br_steps=64, br_games=4, exact_games=2, rating_deals=1, br_overrides=TINY
)


@pytest.fixture(scope="module")
def tiny_bench(tmp_path_factory):
    """Two seeds of a tiny sb3 recipe in Fünfzehn – tot (fields random and heuristic,
    an exact yardstick, four sides), appended to a Markdown and a JSON results file."""
    out = tmp_path_factory.mktemp("bench")
    results = out / "results.md"
    recipe = bench_mod.Recipe(
        "sb3", overrides=(*TINY, "eval_opponents=[random]", "warm_start=''")
    )
    result = bench_mod.bench(
        "fuenfzehn_tot_v0",
        steps=64,
        seeds=2,
        recipe=recipe,
        protocol=TINY_PROTOCOL,
        out_dir=out / "run",
        append=results,
        progress=False,
        min_seeds=1,
    )
    return result, results


@pytest.mark.slow  # two seeds trained and measured: a minute or two on a loaded machine
def test_a_tiny_bench_writes_one_row_per_seed_and_a_summary(tiny_bench):
    result, results = tiny_bench
    data = json.loads((result.out_dir / "bench.json").read_text())
    assert data["env"] == "fuenfzehn_tot_v0" and data["steps"] == 64
    assert data["recipe"]["backend"] == "sb3"
    assert [r["seed"] for r in data["rows"]] == [0, 1]
    for row in data["rows"]:
        assert set(row["win_share"]) == {"random", "heuristic"}  # no solver here
        assert row["best_response"]["steps"] == 64
        assert row["best_response"]["backend"] == "batch"  # a checkpoint: a network
        assert row["best_response"]["games"] >= 4
        assert row["exact"]["data"]["games"] >= 2
        assert row["rating"]["ladder"] == ["random", "heuristic"]
        assert row["steps"] == 64 and row["train_wall_s"] > 0 and row["train_cpu_s"] > 0
    # the summary is the mean of the rows' figures, with a Student t interval
    summary = data["summary"]
    firsts = [r["win_share"]["random"]["estimate"] for r in data["rows"]]
    assert summary["vs random"]["estimate"] == pytest.approx(np.mean(firsts))
    ratings = [r["rating"]["mu"] for r in data["rows"]]
    assert summary["rating"]["estimate"] == pytest.approx(np.mean(ratings))
    exact = [r["exact"]["value"] for r in data["rows"]]
    assert summary["exact"]["estimate"] == pytest.approx(np.mean(exact))
    for figure in summary.values():
        assert figure["low"] <= figure["estimate"] <= figure["high"]
    # the Markdown: a header, a row per seed and the summary row; the results file
    # got the same table
    md = (result.out_dir / "bench.md").read_text()
    lines = [line for line in md.splitlines() if line.startswith("|")]
    assert len(lines) == 2 + 2 + 1
    assert lines[0].split("|")[2:-1] == [f" {c} " for c in result.columns()]
    assert lines[2].startswith("| `seed 0` |") and "mean [95% CI]" in lines[-1]
    cell = f"{firsts[0]:.3f}"
    assert cell in lines[2]
    assert results.read_text().strip() == md.strip()


@pytest.mark.slow
def test_seeds_of_training_evaluation_and_best_response_never_overlap(tiny_bench):
    result, _ = tiny_bench
    seeds = result.seeds
    assert seeds["train"] == [0, 1]
    assert seeds["best_response"] == [
        bench_mod.BR_SEED_OFFSET,
        bench_mod.BR_SEED_OFFSET + 1,
    ]
    assert not set(seeds["train"]) & set(seeds["best_response"])
    plan = bench_mod.seed_plan(7, 5)
    assert max(plan["train"]) < min(plan["best_response"])
    assert seeds["held_out_from"] == TRAIN_SEED_LIMIT
    # every training run is a normal one: self-play seeds below TRAIN_SEED_LIMIT
    for row in result.rows:
        assert row["best_response"]["seed"] in seeds["best_response"]


def test_rating_and_evaluation_games_play_held_out_deals(monkeypatch):
    played = []
    real = bench_mod.play_game

    def spy(env, players, seed=None, options=None):
        played.append(seed)
        return real(env, players, seed=seed, options=options)

    monkeypatch.setattr(bench_mod, "play_game", spy)
    ladder = bench_mod.ladder_games("german_whist_v0", ["random", "heuristic"], 2, {})
    rated = bench_mod.rating(
        "german_whist_v0", "random", ["random", "heuristic"], ladder, 2, {}
    )
    assert played and all(s >= TRAIN_SEED_LIMIT for s in played)
    assert len(ladder) == 2 * 2  # one table, two deals, two seatings
    assert rated["games"] == 2 * 2 * 2  # against each rung: two deals, two seatings
    assert math.isfinite(rated["mu"]) and rated["sigma"] > 0


def test_a_json_results_file_gets_one_line_per_bench(tmp_path):
    protocol = dataclasses.replace(TINY_PROTOCOL, fields=("random", "heuristic"))
    result = bench_mod.bench(
        "german_whist_v0",
        agents=["random"],
        protocol=protocol,
        out_dir=tmp_path / "run",
        append=tmp_path / "results.jsonl",
        progress=False,
    )
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == 1
    data = json.loads(lines[0])
    assert data["recipe"] is None and data["summary"] == {}
    row = data["rows"][0]
    assert row["agent"] == "random"
    assert list(row["win_share"]) == ["random", "heuristic"]
    assert row["rating"]["ladder"] == ["random", "heuristic"]
    assert row["best_response"]["backend"] == "sb3"  # a bot: the sb3 backend
    assert "tricks lost" in row["exact"]["text"]
    assert result.markdown().count("\n| `random` |") == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["german_whist_v0", "--agent", "nobody"], "nobody"),
        (["german_whist_v0", "--agent", "optimal"], "optimal"),
        (["german_whist_v0", "--steps", "0"], "--steps"),
        (["german_whist_v0", "--steps", "-5"], "--steps"),
        (["german_whist_v0", "--steps", "64", "--seeds", "0"], "--seeds"),
        (["german_whist_v0", "--steps", "64", "--seeds", "2"], "at least 3"),
        (["german_whist_v0", "--agent", "random", "--br-steps", "0"], "--br-steps"),
        (["german_whist_v0", "--agent", "random", "--games", "-1"], "--games"),
        (["german_whist_v0", "--steps", "64", "-c", "seed=4"], "seed"),
        (["german_whist_v0", "--steps", "64", "-c", "nokey=1"], "nokey"),
        (["german_whist_v0", "--steps", "64", "--trainer", "x"], "x"),
        (["german_whist_v0", "--steps", "99999", "--trainer", "batch"], "opponents."),
        (["german_whist_v0", "--agent", "random", "--out", "FILE/x"], "FILE"),
        (["german_whist_v0", "--agent", "random", "--append", "FILE/x"], "--append"),
        (["german_whist_v0", "-o", "variant=nope", "--agent", "random"], "nope"),
        (["no_such_game_v0", "--agent", "random"], "no_such_game_v0"),
        (["german_whist_v0"], "--steps"),
        (["german_whist_v0", "--agent", "random", "--steps", "5"], "--agent"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(
    tmp_path, capsys, args, message
):
    blocker = tmp_path / "FILE"
    blocker.write_text("a file, so FILE/x cannot be created")
    args = [a.replace("FILE", str(blocker)) for a in args]
    out = tmp_path / "out"
    argv = ["bench", *args, "--quiet"]
    if "--out" not in args:
        argv += ["--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]


def test_a_non_empty_out_dir_is_refused(tmp_path, capsys):
    (tmp_path / "old.txt").write_text("")
    argv = ["bench", "german_whist_v0", "--agent", "random", "--quiet"]
    assert main([*argv, "--out", str(tmp_path)]) == 2
    assert "not empty" in capsys.readouterr().err


def test_the_fields_are_the_bots_the_env_has():
    assert bench_mod.fields_of("german_whist_v0") == ["random", "heuristic", "solver"]
    assert bench_mod.fields_of("herzeln_v0") == ["random", "heuristic", "solver"]
    assert bench_mod.fields_of("fuenfzehn_tot_v0") == ["random", "heuristic"]
    chosen = bench_mod.Protocol(fields=("random", "pimc:2"))
    assert bench_mod.fields_of("german_whist_v0", chosen) == ["random", "pimc:2"]
