"""The timed soak (``benchmarks/soak.py --minutes M``, `benchmarks/soak_all.py`): it
runs every task, sums them up, and reports a failure with its seed and exit 1."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
spec = importlib.util.spec_from_file_location("soak_all", BENCH / "soak_all.py")
soak_all = importlib.util.module_from_spec(spec)
sys.modules["soak_all"] = soak_all  # dataclasses look their module up there
spec.loader.exec_module(soak_all)


def soak(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BENCH / "soak.py"), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_short_soak_runs_every_task_and_sums_up() -> None:
    """A few seconds of Fünfzehn tot (its bot kinds, every variant, the batched
    engine): one round at least, no failure, one row per player."""
    done = soak("--minutes", "0.05", "fuenfzehn_tot_v0")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rows = {line.split()[1]: line.split() for line in lines[3:-1]}
    assert set(rows) == {"random", "heuristic", "optimal", "threshold:12", "batched"}
    for player, row in rows.items():
        games, checked, failures = int(row[2]), int(row[3]), int(row[4])
        assert games >= 5 and checked > 0 and failures == 0, player
    assert "0 failures (soak seed 0)" in lines[-1]


def test_a_failure_is_reported_with_its_seed(monkeypatch) -> None:
    """A batched engine whose first game has no legal action, and a bot that plays
    an illegal move: both tasks fail, once each, naming seed and unit; the others
    play on."""
    engine = soak_all.batch.ENGINES["fuenfzehn_tot_v0"]
    real_mask = engine.legal_mask

    def no_move_in_game_0(self):
        mask = real_mask(self).clone()
        mask[0] = False
        return mask

    monkeypatch.setattr(engine, "legal_mask", no_move_in_game_0)
    real_make = soak_all.agents.make

    def make(spec, env_name, **kw):
        agent = real_make(spec, env_name, **kw)
        if spec == "optimal":
            agent.act = lambda turn: int(turn.mask.argmin())  # an illegal id
        return agent

    monkeypatch.setattr(soak_all.agents, "make", make)
    monkeypatch.setattr(soak_all.envs, "VARIANTS", {"fuenfzehn_tot_v0": [{}]})
    tasks = soak_all.run(["fuenfzehn_tot_v0"], minutes=0.001, seed=7, progress=False)
    failed = {t.player: t.failure for t in tasks if t.failure is not None}
    assert set(failed) == {"batched", "optimal"}
    assert (
        "seed 7, unit 0, batch step 0: games [0] have no legal action"
        in failed["batched"]
    )
    assert (
        "seed 7, unit 0" in failed["optimal"]
        and "not one of the legal" in failed["optimal"]
    )
    text = soak_all.summary(tasks, 7)
    assert "2 failures (soak seed 7)" in text
    assert text.count("FAILED fuenfzehn_tot_v0 variant 0") == 2
    # the failing unit replays
    task = next(t for t in tasks if t.player == "batched")
    with pytest.raises(AssertionError, match="no legal action"):
        soak_all.play_unit(task, 7, 0)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--minutes", "0"], "expected a positive number, got 0.0"),
        (["--minutes", "soon"], "expected a positive number, got 'soon'"),
        (["--minutes", "1", "no_such_v0"], "unknown env 'no_such_v0'"),
        (
            ["--minutes", "1", "herzeln_v0", "--variant-index", "0"],
            "--variant-index goes with one ENV",
        ),
    ],
)
def test_bad_arguments(args: list[str], message: str) -> None:
    done = soak(*args)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
