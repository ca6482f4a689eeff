"""The whole run of ``parlour tips GAME``: checks, experiments, studies, outputs.

`run_tips` checks every input before any game is played, then runs the game's tip
experiments (and, for Fünfzehn – tot, the claims, the round table and the seat order;
for German Whist, the agent agreement) and writes ``<game>.md``, ``.png`` and ``.json``.
`TipsRun` holds all of it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import agents as agents_mod
from ... import envs, versions
from ...agents.fuenfzehn_tot_rationale import (
    Claim,
    RoundSeats,
    dice_claims,
    round_seat_table,
)
from ..distributed import RaySession, executor_of, session_for
from ..stats import obf_boundaries
from .agreement import Agreement, run_agreement
from .chart import plot_chart
from .config import TipsConfig, load_config
from .experiments import TipResult, check_tip_switch, run_experiments
from .report import render_report
from .runner import Runner
from .seat_order import game_seat_order
from .sections import kept_sections


@dataclass
class TipsRun:
    """Everything ``parlour tips`` computed for one game."""

    config: TipsConfig
    command: str
    max_deals: int
    seed: int
    opponents: tuple[str, ...]
    results: list[TipResult]
    agreement: list[Agreement] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    rounds: list[RoundSeats] = field(default_factory=list)
    seat_order: dict[str, Any] | None = None
    paths: dict[str, Path] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            **versions(self.config.env),
            "env_options": self.config.env_options,
            "command": self.command,
            "seed": self.seed,
            "max_deals": self.max_deals,
            "opponents": list(self.opponents),
            "looks": list(self.results[0].schedule) if self.results else [],
            "boundaries": list(obf_boundaries(len(self.results[0].schedule)))
            if self.results
            else [],
            "tips": [r.as_dict() for r in self.results],
            "agreement": [a.as_dict() for a in self.agreement],
            "claims": [
                {
                    "name": c.name,
                    "verdict": c.verdict,
                    "finding": c.finding,
                    "numbers": c.numbers,
                }
                for c in self.claims
            ],
            "rounds": [
                {
                    "half": r.half,
                    "players": r.players,
                    "rules": r.rules,
                    "chance": [float(x) for x in r.chance],
                    "chance_exact": [str(x) for x in r.chance],
                    "bust": [float(x) for x in r.bust],
                }
                for r in self.rounds
            ],
            "seat_order": self.seat_order,
        }

    def summary(self) -> str:
        """A short plain-text table for the terminal."""
        lines = [
            f"{self.config.env}: {len(self.results)} tip(s), at most "
            f"{self.max_deals} deals each, seed {self.seed}"
        ]
        for r in self.results:
            t = r.tests[r.primary]
            lines.append(
                f"  {r.name:<16} {r.verdict + ('†' if r.shaky else ''):<21} "
                f"Δ{r.primary} {t.estimate:+.3f} "
                f"[{t.low:+.3f}, {t.high:+.3f}]  p={t.p:.3g}  n={t.n}  "
                f"MDE={t.mde:.3f}  predicted {r.hypothesis.prediction}"
            )
        shaky = [r for r in self.results if r.shaky]
        if shaky:
            # the same caution as the Markdown report's † (see report._method_notes)
            worst = max(r.false_positive_rate or 0.0 for r in shaky)
            lines.append(
                "  † not yet reliable: too few deals differ between the arms, so the "
                f"z-test would report an effect that is not there up to {worst:.0%} "
                f"of the time (nominal 5%); run more deals (--games) or read the "
                "exact sign test in the report"
            )
        for c in self.claims:
            lines.append(f"  claim {c.name:<20} {c.verdict}")
        return "\n".join(lines)


def run_tips(
    game: str,
    *,
    tips: Sequence[str] | None = None,
    games: int | None = None,
    opponents: Sequence[str] | None = None,
    checkpoint: str | None = None,
    out: str | Path | None = None,
    seed: int | None = None,
    workers: int | None = 1,
    progress: bool = False,
    agreement_deals: int | None = None,
    calibrate: int = 2000,
    command: str | None = None,
    executor: str = "local",
    address: str | None = None,
    ray_init: Mapping[str, Any] | None = None,
    backend: str | None = None,
) -> TipsRun:
    """Run a game's tip experiments (and Fünfzehn – tot's claims) and write the report.

    ``games`` caps the deals per tip (default: the config's ``max_deals``); for
    Fünfzehn – tot it is also the number of whole games of the seat-order simulation.
    ``opponents`` replaces the config's pool; ``checkpoint`` adds ``ckpt:PATH`` to it
    and, for German Whist, measures the checkpoint's agreement with the tips. ``out``
    is the directory for ``<game>.md``, ``.png`` and ``.json`` (None: nothing written).

    ``executor="ray"`` plays the blocks of games as Ray tasks instead of ``workers``
    processes (`parlour.training.distributed`: a local Ray of its own, or the cluster
    at ``address``; ``ray_init`` adds `ray.init` keyword arguments); the results are
    the local ones. The agent-agreement study (a few hundred deals) stays here.
    ``backend=`` is the old name of ``executor=`` (deprecated).
    """
    executor = executor_of(executor, backend)
    session = session_for(executor, address, ray_init)
    if session is not None and workers is not None and workers != 1:
        raise ValueError(
            "--workers is the local executor's; with --executor ray every CPU of the "
            "cluster plays"
        )
    config = load_config(game)
    env = config.env
    workers = default_workers() if workers is None else workers
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"--workers must be a positive integer, got {workers!r}")
    names = list(dict.fromkeys(tips)) if tips else [t.name for t in config.tips]
    chosen = [config.tip(n) for n in names]
    max_deals = config.max_deals if games is None else games
    if isinstance(max_deals, bool) or not isinstance(max_deals, int) or max_deals < 2:
        raise ValueError(f"--games must be an integer >= 2, got {max_deals!r}")
    seed = config.seed if seed is None else seed
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {seed!r}")
    pool = list(opponents) if opponents else list(config.opponents)
    if checkpoint:
        from ..checkpoint import resolve

        pool.append(f"ckpt:{resolve(checkpoint)}")
    pool = list(dict.fromkeys(pool))
    context = {"env_options": config.env_options}
    for spec in pool:  # fail fast, with the agent's own message, before any game
        agents_mod.make(spec, env, seed=0, **context)
    for t in chosen:
        check_tip_switch(env, t.name, config.env_options)
    if command is None:
        command = f"parlour tips {env}" + "".join(f" --tip {n}" for n in (tips or []))
        command += f" --games {max_deals} --seed {seed}"
        if opponents:
            command += " --opponents " + " ".join(opponents)
        if checkpoint:
            command += f" --checkpoint {checkpoint}"
        if out is not None:
            command += f" --out {out}"
    run = TipsRun(config, command, max_deals, seed, tuple(pool), [])
    runner: Runner | RaySession
    if session is not None:
        session.begin(pool, announce=progress)
        runner = session
    else:
        runner = Runner(workers)
    with runner:
        studies = envs.record(env).tips_studies
        if "claims" in studies:
            run.claims = dice_claims()
        if "seat_order" in studies:
            run.rounds = round_seat_table(
                tuple(config.extra.get("round_players", [2, 3, 4]))
            )
            seat_games = (
                games
                if games is not None
                else int(config.extra.get("seat_games", 2000))
            )
            run.seat_order = game_seat_order(
                seat_games,
                players=int(config.env_options.get("players", 4)),
                seed=seed,
                runner=runner,
                progress=progress,
            )
        run.results = run_experiments(
            env,
            chosen,
            env_options=config.env_options,
            opponents=pool,
            max_deals=max_deals,
            looks=config.looks,
            seed=seed,
            primary=config.primary,
            runner=runner,
            progress=progress,
            calibrate=calibrate,
        )
    if "agreement" in studies:
        # The heuristic and random play are the reference columns of the agreement
        # table; a checkpoint, when given, is the subject.
        run.agreement = run_agreement(
            ([pool[-1]] if checkpoint else []) + ["heuristic", "random"],
            env_options=config.env_options,
            deals=agreement_deals or max(10, min(200, max_deals // 10)),
            seed=seed,
        )
    if out is not None:
        write_outputs(run, Path(out))
    return run



def write_outputs(run: TipsRun, out: Path) -> dict[str, Path]:
    """Write ``<game>.md``, ``<game>.png`` and ``<game>.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    stem = run.config.short
    paths = {
        "report": out / f"{stem}.md",
        "chart": out / f"{stem}.png",
        "json": out / f"{stem}.json",
    }
    plot_chart(run, paths["chart"])
    # the audit and baseline sections come from their own commands: keep them
    old = paths["report"]
    kept = kept_sections(old.read_text(encoding="utf-8")) if old.exists() else ""
    text = render_report(run, paths["chart"].name)
    paths["report"].write_text(
        text + ("\n" + kept if kept else ""), encoding="utf-8"
    )
    paths["json"].write_text(
        json.dumps(run.as_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    run.paths = paths
    return paths


def default_workers() -> int:
    """Worker processes for ``parlour tips``: the machine's CPUs."""
    return max(1, os.cpu_count() or 1)
