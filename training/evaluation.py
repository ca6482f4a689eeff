"""The evaluation schedule against the baseline bots, shared by every backend.

At step 0, every ``eval_every`` steps and at the end of a run, the greedy learner (the
backend's exported weights, `training.policy.NumpyPolicy`) plays each of
``eval_opponents`` on duplicate deals (`training.arena`); one row per opponent goes to
``evaluations.csv``. `Schedule` also says when the learner's snapshots join the pool and
when checkpoints are written; it is consulted at rollout boundaries, where the step
count covers only trained-on data, so what is done there resumes exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .arena import run_arena, teams_of
from .config import TrainConfig
from .policy import NumpyPolicy, PolicyAgent


def next_multiple(steps: int, every: int) -> int:
    """The first multiple of ``every`` after ``steps``."""
    return (steps // every + 1) * every


class Schedule:
    """When snapshots, checkpoints and evaluations are due, from a starting step."""

    def __init__(
        self,
        config: TrainConfig,
        steps: int,
        evaluations: list[dict[str, Any]],
        start_eval: bool,
    ) -> None:
        self.config = config
        # An evaluation that was due at or before this step and is not in the record
        # (the step-0 point, or one interrupted by Ctrl-C) is done first.
        due = steps // config.eval_every * config.eval_every
        last = max((r["step"] for r in evaluations), default=-1)
        self.next = {
            "snapshot": next_multiple(steps, config.snapshot_every),
            "checkpoint": next_multiple(steps, config.checkpoint_every),
            "eval": (
                due
                if last < due and (due > 0 or start_eval)
                else next_multiple(steps, config.eval_every)
            ),
        }
        self.every = {
            "snapshot": config.snapshot_every,
            "checkpoint": config.checkpoint_every,
            "eval": config.eval_every,
        }

    def due(self, what: str, steps: int) -> bool:
        """Whether ``what`` (snapshot, checkpoint, eval) is due at ``steps``; when it
        is, the next one is scheduled."""
        if steps < self.next[what]:
            return False
        self.next[what] = next_multiple(steps, self.every[what])
        return True


def games_per_opponent(config: TrainConfig, game) -> int:
    """``eval_games`` rounded up to whole rotations of the duplicate deals."""
    rotations = len(teams_of(game))
    return -(-config.eval_games // rotations) * rotations


def evaluate(
    config: TrainConfig,
    policy: NumpyPolicy,
    steps: int,
    per_opponent: int,
    elapsed: Callable[[], float],
    progress: bool,
) -> list[dict[str, Any]]:
    """One evaluation: ``policy`` against each of ``eval_opponents`` on duplicate
    deals; one row (win rate and mean score with 95% intervals) per opponent."""
    from ..progress import progress_bar

    rows = []
    with progress_bar(
        total=per_opponent * len(config.eval_opponents),
        desc=f"evaluation @ step {steps:,}",
        unit="game",
        leave=False,
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        for opponent in config.eval_opponents:
            agent = PolicyAgent(policy, f"learner@{steps}")
            bar.set_postfix_str(f"vs {opponent}", refresh=False)
            result = run_arena(
                config.env,
                [agent, opponent],
                games=config.eval_games,
                duplicate=True,
                seed=10_000 + config.seed,
                env_options=config.env_options,
                on_game=lambda _: bar.update(1),
            )
            win, score = result.win_rate(), result.mean_score()
            rows.append(
                {
                    "step": steps,
                    "opponent": opponent,
                    "games": result.games,
                    "win_rate": win.estimate,
                    "win_low": win.low,
                    "win_high": win.high,
                    "mean_score": score.estimate,
                    "score_low": score.low,
                    "score_high": score.high,
                    "elapsed_s": round(elapsed(), 1),
                }
            )
    return rows
