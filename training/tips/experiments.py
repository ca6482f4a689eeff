"""The duplicate A/B experiments, one per tip, with sequential stopping.

Arm A is the full heuristic and arm B the same bot with the tip off
(``heuristic:-tip``); both play the same deals against the same opponents in the same
seats. The unit is the deal: its paired difference A − B over all its games, tested by
`parlour.training.stats.sequential_test` at the looks of the design. `aa_experiment`
runs both arms with the same bot, for the harness's own false-positive rate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import agents as agents_mod
from ..stats import (
    SequentialTest,
    look_schedule,
    null_calibration,
    sequential_test,
    sign_test,
)
from .config import (
    CALIBRATION_WARN,
    METRICS,
    Hypothesis,
    prediction_matched,
    verdict,
)
from .runner import Block, Runner, _chunks, games_per_deal, play_block


@dataclass
class TipResult:
    """One tip's experiment: data, tests and verdict."""

    hypothesis: Hypothesis
    arm_a: str
    arm_b: str
    opponents: tuple[str, ...]
    schedule: tuple[int, ...]
    primary: str
    a: np.ndarray  # [deal, opponent, seating, metric] of arm A, deals analysed
    b: np.ndarray
    tests: dict[str, SequentialTest] = field(default_factory=dict)
    per_opponent: dict[str, dict[str, SequentialTest]] = field(default_factory=dict)
    false_positive_rate: float | None = None

    @property
    def name(self) -> str:
        return self.hypothesis.name

    @property
    def deals(self) -> int:
        return self.tests[self.primary].n

    @property
    def verdict(self) -> str:
        return verdict(self.tests[self.primary])

    @property
    def matched(self) -> bool:
        return prediction_matched(self.hypothesis.prediction, self.verdict)

    @property
    def shaky(self) -> bool:
        """The z-test's null calibration on this tip's data is above
        ``CALIBRATION_WARN``: few deals differ between the arms."""
        rate = self.false_positive_rate
        return rate is not None and rate > CALIBRATION_WARN

    def sign_test(self, metric: str | None = None) -> tuple[int, int, float]:
        """`sign_test` of the per-deal differences analysed (to the stopping look)."""
        return sign_test(self.differences(metric or self.primary))

    def differences(
        self, metric: str = "win", opponent: int | None = None
    ) -> np.ndarray:
        """Per-deal paired differences A − B, averaged over seatings (and opponents)."""
        m = METRICS.index(metric)
        diff = self.a[..., m] - self.b[..., m]
        if opponent is not None:
            return diff[:, opponent, :].mean(axis=1)
        return diff.mean(axis=(1, 2))

    def rates(self, arm: str, opponent: int, metric: str = "win") -> float:
        data = self.a if arm == "A" else self.b
        return float(data[:, opponent, :, METRICS.index(metric)].mean())

    def as_dict(self) -> dict[str, Any]:
        return {
            "tip": self.name,
            "arm_a": self.arm_a,
            "arm_b": self.arm_b,
            "prediction": self.hypothesis.prediction,
            "verdict": self.verdict,
            "prediction_matched": self.matched,
            "deals": self.deals,
            "primary": self.primary,
            "tests": {m: t.as_dict() for m, t in self.tests.items()},
            "per_opponent": {
                o: {
                    "A_win_rate": self.rates("A", i),
                    "B_win_rate": self.rates("B", i),
                    "A_score": self.rates("A", i, "score"),
                    "B_score": self.rates("B", i, "score"),
                    **{m: t.as_dict() for m, t in self.per_opponent[o].items()},
                }
                for i, o in enumerate(self.opponents)
            },
            "false_positive_rate": self.false_positive_rate,
            "sign_test": dict(
                zip(("A_better", "B_better", "p"), self.sign_test(), strict=True)
            ),
        }


def check_tip_switch(env: str, tip: str, env_options: Mapping[str, Any]) -> None:
    """ValueError unless ``heuristic:-tip`` builds and the full bot has the tip on."""
    agents_mod.make(f"heuristic:-{tip}", env, seed=0, env_options=dict(env_options))
    full = agents_mod.make("heuristic", env, seed=0, env_options=dict(env_options))
    options = getattr(full, "options", None)
    on = options.get(tip) if isinstance(options, Mapping) else getattr(full, tip, None)
    if on is False:
        raise ValueError(
            f"tip {tip!r} is off in the full {env} heuristic: nothing to test"
        )


def run_experiments(
    env: str,
    tips: Sequence[Hypothesis],
    *,
    env_options: Mapping[str, Any] | None = None,
    opponents: Sequence[str] = ("random", "heuristic"),
    max_deals: int = 1000,
    looks: int = 4,
    seed: int = 0,
    primary: str = "win",
    arm_a: str = "heuristic",
    arm_b: Callable[[str], str] | None = None,
    salts: tuple[int, int] = (0, 0),
    runner: Runner | None = None,
    progress: bool = False,
    calibrate: int = 0,
    tip_arm: str = "B",
) -> list[TipResult]:
    """Run one duplicate A/B experiment per tip with sequential stopping.

    ``arm_b(name)`` gives arm B's spec (default ``heuristic:-name``). ``salts`` shift
    the arms' agent seeds (an A/A experiment uses the same spec with different salts).
    ``calibrate`` > 0 adds each tip's `null_calibration` with that many experiments.
    ``tip_arm="A"`` swaps the roles: ``arm_b(name)`` plays arm A of each tip and the
    shared ``arm_a`` plays arm B (the strong-baseline experiments).
    """
    if tip_arm not in ("A", "B"):
        raise ValueError(f"tip_arm must be 'A' or 'B', got {tip_arm!r}")
    if primary not in METRICS:
        raise ValueError(f"primary must be one of {METRICS}, got {primary!r}")
    if not tips:
        raise ValueError("no tips to test")
    if not opponents:
        raise ValueError("give at least one opponent")
    env_options = dict(env_options or {})
    schedule = look_schedule(max_deals, looks)
    arm_b = arm_b or (lambda name: f"heuristic:-{name}")
    specs_b = {t.name: arm_b(t.name) for t in tips}
    seeds = np.random.SeedSequence(seed).generate_state(max_deals, dtype=np.uint32)
    deal_seeds = [int(s) for s in seeds]
    options_key = tuple(sorted(env_options.items()))
    per_deal = games_per_deal(env, env_options, len(opponents))
    own_runner = runner is None
    runner = runner or Runner(1)
    bar = None
    if progress:
        from ...progress import progress_bar

        total = max_deals * per_deal * (len(tips) + 1)
        bar = progress_bar(total=total, desc=f"{env} tips", unit="game")
    a_data = np.zeros((0, len(opponents), per_deal // len(opponents), 2))
    b_data = {t.name: a_data.copy() for t in tips}
    active = [t.name for t in tips]
    stopped: dict[str, SequentialTest] = {}
    try:
        start = 0
        for k, n in enumerate(schedule):
            new = deal_seeds[start:n]
            size = max(1, math.ceil(len(new) / (4 * runner.workers)))
            size = min(size, 25)
            arms = [("A", arm_a, salts[0])] + [
                (t, specs_b[t], salts[1]) for t in active
            ]
            jobs, owners = [], []
            for arm, spec, salt in arms:
                for chunk in _chunks(new, size):
                    jobs.append(
                        Block(env, options_key, spec, tuple(opponents), chunk, salt)
                    )
                    owners.append(arm)

            def done(i: int, jobs: list[Block] = jobs) -> None:
                if bar is not None:
                    bar.update(len(jobs[i].deal_seeds) * per_deal)

            results = runner.map(play_block, jobs, done)
            for arm in dict.fromkeys(owners):
                got = np.concatenate(
                    [r for r, o in zip(results, owners, strict=True) if o == arm]
                )
                if arm == "A":
                    a_data = np.concatenate([a_data, got])
                else:
                    b_data[arm] = np.concatenate([b_data[arm], got])
            for name in list(active):
                diff = (
                    a_data[:n, ..., METRICS.index(primary)]
                    - b_data[name][..., METRICS.index(primary)]
                ).mean(axis=(1, 2))
                if tip_arm == "A":
                    diff = -diff
                test = sequential_test(diff, schedule)
                if test.crossed or k == len(schedule) - 1:
                    stopped[name] = test
                    active.remove(name)
                    if bar is not None and k < len(schedule) - 1:
                        bar.total -= (max_deals - n) * per_deal
                        bar.refresh()
            if not active:
                if bar is not None and k < len(schedule) - 1:
                    bar.total -= (max_deals - n) * per_deal
                    bar.refresh()
                break
            start = n
    finally:
        if bar is not None:
            bar.close()
        if own_runner:
            runner.close()
    results_out = []
    for t in tips:
        test = stopped[t.name]
        n = test.n
        arms = (
            arm_a, specs_b[t.name], a_data[:n].copy(), b_data[t.name][:n].copy()
        )
        if tip_arm == "A":
            arms = (arms[1], arms[0], arms[3], arms[2])
        res = TipResult(
            t, arms[0], arms[1], tuple(opponents), schedule, primary, *arms[2:]
        )
        for metric in METRICS:
            res.tests[metric] = sequential_test(
                res.differences(metric), schedule, look=test.look
            )
        for i, o in enumerate(opponents):
            res.per_opponent[o] = {
                metric: sequential_test(
                    res.differences(metric, i), schedule, look=test.look
                )
                for metric in METRICS
            }
        if calibrate:
            res.false_positive_rate = null_calibration(
                res.differences(primary), schedule, calibrate, seed=seed
            )
        results_out.append(res)
    return results_out


def aa_experiment(
    env: str,
    spec: str,
    *,
    env_options: Mapping[str, Any] | None = None,
    opponents: Sequence[str] = ("random",),
    max_deals: int = 40,
    looks: int = 2,
    seed: int = 0,
    primary: str = "win",
    runner: Runner | None = None,
) -> TipResult:
    """An A/A experiment: both arms play ``spec`` (with different agent seeds), so any
    effect the harness reports is a false positive."""
    hyp = Hypothesis("A/A", "(control)", None, "both arms identical", "none")
    (result,) = run_experiments(
        env,
        [hyp],
        env_options=env_options,
        opponents=opponents,
        max_deals=max_deals,
        looks=looks,
        seed=seed,
        primary=primary,
        arm_a=spec,
        arm_b=lambda _: spec,
        salts=(1, 2),
        runner=runner,
    )
    return result
