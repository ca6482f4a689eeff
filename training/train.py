"""A training run, whatever the backend: ``parlour train ENV [--backend sb3]``.

`train` checks everything before anything is written, then runs the phases
(`training.rundir.PHASES`): the warm start's teacher games and its fit
(`training.imitation`), then self-play, in which the backend (`training.backends`)
collects and updates rollout by rollout while the shared schedule
(`training.evaluation`) adds snapshots to the opponent pool (`training.selfplay`),
writes checkpoints and evaluates against the baseline bots. Ctrl-C in any phase keeps
what is finished, and ``--resume`` continues from there (docs/training.md).

This module also re-exports the config (`training.config`) and run-directory
(`training.rundir`) names that the CLI, notebooks, benchmarks and tests import from it.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .. import envs
from . import backends, imitation
from . import checkpoint as ckpt_io
from . import evaluation as evaluation_mod
from .config import (
    CONFIG_DIR,
    TrainConfig,
    apply_overrides,
    config_from_dict,
    load_config,
    presets,
)
from .pause import pause_point
from .rundir import (
    FROZEN_ON_RESUME,
    PHASES,
    STATE,
    WARM_START_DIR,
    RunDir,
    TrainResult,
    default_run_dir,
    plot_learning_curve,
    read_evaluations,
    resume_config,
    run_state,
    stored_config,
    summary_table,
)
from .selfplay import OpponentPool

# the name older code and tests read the CSV with
_read_evaluations = read_evaluations

__all__ = [
    "CONFIG_DIR",
    "FROZEN_ON_RESUME",
    "PHASES",
    "STATE",
    "WARM_START_DIR",
    "TrainConfig",
    "TrainResult",
    "apply_overrides",
    "config_from_dict",
    "default_run_dir",
    "load_config",
    "plot_learning_curve",
    "presets",
    "resume_config",
    "run_state",
    "stored_config",
    "summary_table",
    "train",
    "warm_start",
    "warm_start_warning",
]


def warm_start_warning(config: TrainConfig) -> str | None:
    """A warning when the warm start's teacher decisions outnumber the self-play
    budget (the teacher games then take most of the run's time and memory), else
    None. Decisions per game are counted on one random game."""
    if not config.warm_start:
        return None
    env = envs.make(config.env, **config.env_options)
    env.reset(seed=config.seed)
    rng = np.random.default_rng(config.seed)
    decisions = 0
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        decisions += 1
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    env.close()
    teacher = config.warm_start_games * decisions
    if teacher <= config.total_timesteps:
        return None
    fits = max(1, config.total_timesteps // max(1, decisions))
    return (
        f"warning: the warm start's {config.warm_start_games:,} teacher games (about "
        f"{teacher:,} decisions) outweigh the {config.total_timesteps:,} self-play "
        "steps and will take most of the run; for a short run use --set "
        f"warm_start_games={fits} (or warm_start='' for none)"
    )


def train(
    config: TrainConfig,
    run_dir: str | Path | None = None,
    resume: bool = False,
    progress: bool = True,
    final_eval: bool = True,
    backend: str = backends.DEFAULT,
    backend_options: dict[str, Any] | None = None,
) -> TrainResult:
    """Run (or resume) a training run with ``backend``; returns where everything was
    written.

    The phases (`PHASES`): the warm start's teacher games (kept in ``RUN_DIR/
    warm_start/`` as they finish), its fit, self-play (checkpoints and evaluations),
    done. Ctrl-C in any phase keeps what is finished and returns an interrupted result;
    ``resume=True`` (or a fresh start with the very config the run was started with)
    continues from the last completed phase. Everything is checked before anything is
    written (``backend_options``, the backend's own keywords such as rllib's
    ``num_env_runners`` and ``address``, too). ``final_eval=False`` skips the
    evaluations at step 0 and after the last step, leaving only the periodic ones
    (for timing runs).
    """
    backends.check(backend)
    config.validate()

    def say(line: str) -> None:
        if progress:
            print(line)

    # what a resumed run reads back is checked before anything is written, and its
    # backend before the backend's own checks (which may reach for Ray)
    run = RunDir.check(config, run_dir, resume, say)
    if run.saved is not None:
        used = run.saved.manifest.get("backend", backends.DEFAULT)
        if used != backend:
            raise ValueError(
                f"{run.path} was trained with --backend {used}; continue it with "
                f"--backend {used}"
            )
        ckpt_io.check_rules(
            run.saved, config.env, envs.game_options(config.env, config.env_options)
        )
    backends.check_config(backend, config)
    backends.check_options(backend, config, backend_options)
    if progress and run.fresh:
        warning = warm_start_warning(config)
        if warning:
            print(warning, file=sys.stderr)

    import torch

    # 1 (the default) is about 3x faster than torch's default for small MLPs here
    torch.set_num_threads(config.torch_threads)
    run.start(say)

    game_options = envs.game_options(config.env, config.env_options)
    rules = envs.fingerprint(config.env, config.env_options)
    pool = OpponentPool.of_config(config)
    bar = _SelfPlayBar(config, run.evaluations, progress)
    learner = backends.make(backend, config, pool, run.path, bar.step, backend_options)
    game = learner.game
    if run.saved is not None:
        for label, weights in learner.restore(run.saved):
            pool.add_snapshot(weights, label)
    if config.learner_partners and not pool.snapshots:
        # the partners play the learner from the first rollout on
        pool.add_snapshot(learner.export_weights(), "self@start")

    def save_checkpoint(step: int | None = None) -> Path:
        steps = learner.steps if step is None else step
        manifest = {
            "env": config.env,
            "env_options": config.env_options,
            "game_options": game_options,
            "observation_size": game.observation_size,
            "num_actions": game.num_actions,
            "fingerprint": rules,
            "net_arch": list(config.net_arch),
            "activation": config.activation,
            "step": steps,
            "backend": backend,
            "config": dataclasses.asdict(config),
            "snapshots": [s.spec for s in pool.snapshots],
        }
        tensors = learner.checkpoint_tensors([s.policy for s in pool.snapshots])
        return run.save_checkpoint(steps, tensors, manifest)

    per_opponent = evaluation_mod.games_per_opponent(config, game)

    def evaluate(steps: int) -> list[dict[str, Any]]:
        run.mark("evaluation")
        try:
            rows = evaluation_mod.evaluate(
                config,
                learner.export_weights(),
                steps,
                per_opponent,
                run.elapsed,
                progress,
            )
            pause_point("evaluation")
            run.record(rows)
            return rows
        finally:
            run.mark("self-play")

    def stopped(now: str, path: Path | None, steps: int) -> TrainResult:
        result = run.result(now, path, steps, True)
        learner.close()
        return result

    if run.phase in ("teacher games", "fit"):
        try:
            report = warm_start(
                learner, config, progress, run.path / WARM_START_DIR, run.write_state
            )
        except KeyboardInterrupt:
            return stopped(run.read_phase(), None, 0)
        ckpt_io.write_json_atomic(
            run.path / "warm_start.json",
            {**dataclasses.asdict(report), "seconds": round(run.elapsed(), 1)},
        )
        pool.add_snapshot(learner.export_weights(), "self@warm_start")
        # A checkpoint at step 0, so that --resume after an interrupt never repeats it.
        save_checkpoint(0)
        run.write_state("self-play")

    try:
        if config.total_timesteps - learner.steps > 0:
            _self_play(
                learner, config, pool, run, bar, save_checkpoint, evaluate, final_eval
            )
    except KeyboardInterrupt:
        bar.close()
        # Only whole rollouts count: the weights as they were at the start of the
        # rollout in progress, which is collected again after --resume.
        steps = learner.rewind()
        return stopped("self-play", save_checkpoint(steps), steps)
    bar.close()
    steps = learner.steps
    path = save_checkpoint()
    try:
        if final_eval and not any(r["step"] == steps for r in run.evaluations):
            run.evaluations.extend(evaluate(steps))
    except KeyboardInterrupt:
        return stopped("self-play", path, steps)
    plot = plot_learning_curve(
        run.evaluations, run.path / "learning_curve.png", config, learner.method
    )
    result = run.result("done", path, steps, False, plot)
    learner.close()
    return result


def _self_play(
    learner: backends.Backend,
    config: TrainConfig,
    pool: OpponentPool,
    run: RunDir,
    bar: _SelfPlayBar,
    save_checkpoint: Callable[[int], Path],
    evaluate: Callable[[int], list[dict[str, Any]]],
    start_eval: bool,
) -> None:
    """The self-play phase: rollouts until the budget, with snapshots, checkpoints and
    evaluations at rollout boundaries, where the policy has just been updated and the
    step count covers only trained-on data (so a checkpoint there resumes exactly)."""
    schedule = evaluation_mod.Schedule(
        config, learner.steps, run.evaluations, start_eval
    )
    learner.begin(config.total_timesteps, bar.episode)
    bar.open(learner.steps, learner.rollout_steps)
    while learner.steps < config.total_timesteps:
        learner.begin_rollout()
        steps = learner.steps
        if schedule.due("snapshot", steps):
            pool.add_snapshot(learner.export_weights(), f"self@{steps}")
        if schedule.due("checkpoint", steps):
            save_checkpoint(steps)
        if schedule.due("eval", steps):
            rows = evaluate(steps)
            run.evaluations.extend(rows)
            for r in rows:
                learner.log(f"eval/win_rate_vs_{r['opponent']}", r["win_rate"])
        if not learner.collect():
            break
        pause_point("self-play")
        learner.update()


class _SelfPlayBar:
    """The self-play progress bar, with the recent win rate against each kind of
    opponent and the last evaluation."""

    def __init__(
        self, config: TrainConfig, evaluations: list[dict[str, Any]], progress: bool
    ) -> None:
        self.config, self.evaluations, self.progress = config, evaluations, progress
        self.bar = None
        self.calls = 0
        self.recent: dict[str, list[float]] = {}

    def open(self, steps: int, rollout: int) -> None:
        if not self.progress:
            return
        from ..progress import progress_bar

        # the backend stops after the rollout that reaches the budget: whole rollouts
        total = self.config.total_timesteps
        final = steps + -(-(total - steps) // rollout) * rollout
        self.bar = progress_bar(
            total=final,
            initial=steps,
            unit="step",
            desc="self-play",
            dynamic_ncols=True,
        )

    def episode(self, kind: str, final: float) -> None:
        window = self.recent.setdefault(kind, [])
        window.append(1.0 if final > 0 else 0.5 if final == 0 else 0.0)
        del window[:-200]

    def step(self, steps: int) -> None:
        self.calls += 1
        if self.bar is not None:
            self.bar.update(steps - self.bar.n)
            if self.calls % 50 == 0:
                self.bar.set_postfix_str(self._postfix(), refresh=False)

    def _postfix(self) -> str:
        parts = [f"{k} {np.mean(v):.2f}" for k, v in sorted(self.recent.items()) if v]
        text = "win vs " + " ".join(parts) if parts else ""
        if self.evaluations:
            last = self.evaluations[-len(self.config.eval_opponents) :]
            text += " | eval " + " ".join(
                f"{r['opponent']} {r['win_rate']:.2f}" for r in last
            )
        return text

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _bar(total: int, unit: str, desc: str, progress: bool) -> Any:
    """A progress bar (`parlour.progress.progress_bar`), hidden without
    ``progress``."""
    from ..progress import progress_bar

    return progress_bar(
        total=total, unit=unit, desc=desc, disable=not progress, dynamic_ncols=True
    )


def warm_start(
    learner: backends.Backend,
    config: TrainConfig,
    progress: bool,
    store: Path | None = None,
    phase: Callable[[str], None] | None = None,
) -> imitation.FitReport:
    """Imitation before self-play (`training.imitation`): collect the teacher's games
    (kept in ``store`` as they finish) and fit the learner's policy and value heads to
    them (`Backend.imitate`). ``phase(name)`` is told when the fit begins."""
    teacher = f"teacher games ({config.warm_start})"
    with _bar(config.warm_start_games, "game", teacher, progress) as bar:
        data = imitation.collect(
            config.env,
            config.env_options,
            config.warm_start,
            config.warm_start_games,
            seed=config.seed,
            noise=config.warm_start_noise,
            workers=config.warm_start_workers,
            progress=bar.update,
            exact=config.warm_start_exact,
            store=store,
        )
    if phase is not None:
        phase("fit")
    pause_point("fit")
    fit = f"fit ({len(data):,} decisions)"
    with _bar(config.warm_start_epochs, "epoch", fit, progress) as bar:

        def on_epoch(epoch: int, loss: float) -> None:
            bar.update(1)
            bar.set_postfix_str(f"loss {loss:.3f}", refresh=False)

        report = learner.imitate(data, on_epoch)
    if progress:
        seen = report.train_agreement
        print(
            f"warm start: the student plays the teacher's move in "
            f"{report.agreement:.1%} of {report.held_out_decisions:,} held-out "
            "decisions"
            + ("" if seen is None else f" ({seen:.1%} of as many training ones)")
        )
    return report
