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


# --- parlour bench-plot ---------------------------------------------------------------
@pytest.mark.slow  # the tiny bench above
def test_bench_keeps_each_seeds_curve_and_bench_plot_draws_them(tiny_bench, tmp_path):
    from parlour.training import bench_curves

    result, _ = tiny_bench
    for row in result.rows:  # eval_opponents=[random]: step 0 and the end
        assert [(p["step"], p["opponent"]) for p in row["curve"]] == [
            (0, "random"),
            (row["steps"], "random"),
        ]
        assert all(0 <= p["win_rate"] <= 1 and p["games"] == 4 for p in row["curve"])
    saved = json.loads((result.out_dir / "bench.json").read_text())
    assert [r["curve"] for r in saved["rows"]] == [r["curve"] for r in result.rows]

    png = tmp_path / "figs" / "curves.png"
    argv = ["bench-plot", str(result.out_dir), str(result.out_dir / "bench.json")]
    assert main([*argv, "--label", "a", "--label", "b", "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (curves, *_), opponents = bench_curves.load(argv[1:2])
    assert opponents == ["random"] and curves.label == "run"
    steps, mean, low, high = curves.mean_band("random")
    per_seed = [[p["win_rate"] for p in r["curve"]] for r in result.rows]
    assert steps == [0, result.rows[0]["steps"]]
    assert np.allclose(mean, np.mean(per_seed, axis=0))
    assert np.allclose(low, np.min(per_seed, axis=0))
    assert np.allclose(high, np.max(per_seed, axis=0))


def _bench_json(path, env="german_whist_v0", recipe=True, curve=True):
    """A bench.json of two seeds with curves against random (the form `bench` writes,
    cut to what bench-plot reads)."""
    rows = [
        {
            "label": f"seed {s}",
            "seed": s,
            "curve": [
                {"step": step, "opponent": "random", "games": 4, "win_rate": w}
                for step, w in ((0, 0.25), (64, 0.5 + s / 4))
            ]
            if curve
            else None,
        }
        for s in (0, 1)
    ]
    data = {
        "env": env,
        "options": {},
        "recipe": {"backend": "batch"} if recipe else None,
        "rows": rows,
    }
    path.mkdir(parents=True)
    (path / "bench.json").write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize(
    "case,message",
    [
        ("missing", "no bench.json"),
        ("garbled", "not a readable bench.json"),
        ("agents", "existing agents"),
        ("no curve", "has no learning curve"),
        ("two games", "one game per figure"),
        ("opponent", "no learning curve against heuristic"),
        ("labels", "--label: 1 labels for 2"),
        ("not png", ".png"),
    ],
)
def test_bench_plot_bad_input_is_one_line_exit_2_and_nothing_drawn(
    tmp_path, capsys, case, message
):
    good = _bench_json(tmp_path / "good")
    # each case's arguments (their directories apart, all made here)
    args = {
        "missing": [str(tmp_path / "nowhere")],
        "agents": [_bench_json(tmp_path / "agents", recipe=False)],
        "no curve": [_bench_json(tmp_path / "no curve", curve=False)],
        "two games": [good, _bench_json(tmp_path / "herzeln", env="herzeln_v0")],
        "opponent": [good, "--vs", "random", "heuristic"],
        "labels": [good, good, "--label", "one"],
    }.get(case, [good])
    if case == "garbled":
        (tmp_path / "good" / "bench.json").write_text("{not json")
    out = tmp_path / ("fig.txt" if case == "not png" else "fig.png")
    assert main(["bench-plot", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_bench_plot_draws_a_bench_json(tmp_path):
    from parlour.training import bench_curves

    good = _bench_json(tmp_path / "ppo")
    out = tmp_path / "fig.png"
    assert main(["bench-plot", good, good, "--out", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    (curves, _), _ = bench_curves.load([good, good])
    steps, mean, low, high = curves.mean_band("random")
    assert steps == [0, 64] and curves.label == "ppo"
    assert mean.tolist() == [0.25, 0.625] and low.tolist() == [0.25, 0.5]
    assert high.tolist() == [0.25, 0.75]
