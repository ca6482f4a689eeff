"""Tips on a strong baseline: does a tip still help a player who is already good?

Arm A is a strong agent (the game's shipped ``pretrained`` agent by default) that
follows the tip wherever the tip speaks (`TipFollower`: where `TipAdvisor` gives
advice about the kind of move the agent chose, the agent's own favourite among the
moves the tip recommends; elsewhere the agent's move); arm B is the same agent
alone. Both arms play the same duplicate deals with the same sequential design as
the bot-switch experiments (`parlour.training.tips.experiments.run_experiments`,
arm B shared by every tip). Arm A's spec is ``follow:TIP:AGENT``, a spec of this
harness only (`follower_spec`), which `parlour.training.tips.runner.play_block`
builds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ... import agents as agents_mod
from ...agents.base import Agent, Turn
from .audit import AUDIT_ENVS, TipAdvisor
from .config import Hypothesis, TipsConfig, load_config
from .experiments import TipResult, run_experiments
from .runner import Runner

FOLLOW = "follow:"


class TipFollower(Agent):
    """``base`` that plays as ``tip`` says wherever it speaks: ``base``'s move when
    the tip recommends it, else ``base``'s favourite among the tip's moves (its
    choice with every other move masked out). A move outside the tip's scope is
    kept: win_cheaply says which card to win with, not whether to win, and long_suit
    which plain card to throw, not whether to ruff."""

    def __init__(self, base: Agent, advisor: TipAdvisor, tip: str):
        if tip not in advisor.tips:
            raise ValueError(f"the advisor does not know tip {tip!r}")
        self.base, self.advisor, self.tip = base, advisor, tip
        self.spec = follower_spec(tip, base.spec)
        self.spoke = 0  # decisions where the tip spoke
        self.changed = 0  # … and the base agent's move was not the tip's

    def reset(self, seed: int | None = None) -> None:
        self.base.reset(seed)

    def act(self, turn: Turn) -> int:
        own = self.base.act(turn)
        advice = self.advisor.advise(turn, only=self.tip).get(self.tip)
        if advice is None or own not in advice.scope:
            return own
        self.spoke += 1
        if own in advice.recommended:
            return own
        self.changed += 1
        mask = np.zeros_like(turn.mask)
        mask[list(advice.recommended)] = 1
        choice = self.base.act(replace(turn, mask=mask))
        if choice not in advice.recommended:
            raise RuntimeError(f"{self.base.spec} played a masked-out move")
        return choice


def follower_spec(tip: str, base: str) -> str:
    """The spec of arm A: ``follow:TIP:BASE``."""
    return f"{FOLLOW}{tip}:{base}"


def parse_follower(spec: str) -> tuple[str, str] | None:
    """``(tip, base)`` of a ``follow:TIP:BASE`` spec, None for any other spec."""
    if not spec.startswith(FOLLOW):
        return None
    tip, colon, base = spec.removeprefix(FOLLOW).partition(":")
    if not tip or not colon or not base:
        raise ValueError(f"not a follow:TIP:AGENT spec: {spec!r}")
    return tip, base


def make_follower(
    spec: str, env: str, env_options: Mapping[str, Any], base: Agent
) -> TipFollower:
    """The `TipFollower` of a ``follow:TIP:BASE`` spec around the built ``base``."""
    parsed = parse_follower(spec)
    if parsed is None:
        raise ValueError(f"not a follow:TIP:AGENT spec: {spec!r}")
    tip = parsed[0]
    return TipFollower(base, TipAdvisor(env, (tip,), env_options), tip)


@dataclass
class BaselineRun:
    """``parlour tips GAME --baseline AGENT``: one A/B result per tip."""

    config: TipsConfig
    command: str
    agent: str
    max_deals: int
    looks: int
    seed: int
    opponents: tuple[str, ...]
    results: list[TipResult] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "env": self.config.env,
            "env_options": self.config.env_options,
            "command": self.command,
            "agent": self.agent,
            "max_deals": self.max_deals,
            "looks": self.looks,
            "seed": self.seed,
            "opponents": list(self.opponents),
            "tips": [r.as_dict() for r in self.results],
        }


def baseline_settings(config: TipsConfig) -> dict[str, Any]:
    """The config's ``baseline`` section, checked, with each tip's hypothesis."""
    section = dict(config.extra_sections.get("baseline") or {})
    if not section:
        raise ValueError(f"configs/tips/{config.env}.yaml has no baseline section")
    predictions = dict(section.get("predictions") or {})
    hyps = {}
    for t in config.tips:
        entry = predictions.get(t.name)
        if not isinstance(entry, Mapping) or "prediction" not in entry:
            raise ValueError(f"baseline prediction missing for tip {t.name!r}")
        hyps[t.name] = Hypothesis(
            t.name,
            t.seed,
            t.gloss,
            "arm A follows the tip wherever it speaks, arm B the agent alone",
            str(entry["prediction"]),
            str(entry.get("why", "")),
        )
    return {
        "agent": str(section.get("agent", "pretrained")),
        "max_deals": int(section.get("max_deals", 200)),
        "looks": int(section.get("looks", 2)),
        "opponents": tuple(section.get("opponents", ["heuristic"])),
        "seed": int(section.get("seed", config.seed)),
        "hypotheses": hyps,
    }


def check_baseline_agent(env: str, spec: str, env_options: Mapping[str, Any]) -> None:
    """ValueError (one line) unless ``spec`` builds a plain agent for ``env``."""
    if spec.startswith(FOLLOW):
        raise ValueError("--baseline takes an agent spec, not a follow: spec")
    agents_mod.make(spec, env, seed=0, env_options=dict(env_options))


def run_baseline(
    game: str,
    agent: str | None = None,
    *,
    tips: Sequence[str] | None = None,
    games: int | None = None,
    seed: int | None = None,
    workers: int = 1,
    progress: bool = False,
    command: str = "",
) -> BaselineRun:
    """The strong-baseline A/B of each tip of ``game``; inputs are checked before any
    game is played."""
    config = load_config(game)
    if config.env not in AUDIT_ENVS:
        raise ValueError(
            f"the strong baseline covers {', '.join(AUDIT_ENVS)}, not {config.env}"
        )
    settings = baseline_settings(config)
    agent = agent or settings["agent"]
    check_baseline_agent(config.env, agent, config.env_options)
    names = list(tips) if tips else [t.name for t in config.tips]
    hyps = [config.tip(n) and settings["hypotheses"][n] for n in names]
    if games is not None and (
        isinstance(games, bool) or not isinstance(games, int) or games < 1
    ):
        raise ValueError(f"--games must be a positive integer, got {games!r}")
    max_deals = games or settings["max_deals"]
    seed = settings["seed"] if seed is None else seed
    with Runner(workers) as runner:
        results = run_experiments(
            config.env,
            hyps,
            env_options=config.env_options,
            opponents=settings["opponents"],
            max_deals=max_deals,
            looks=settings["looks"],
            seed=seed,
            primary=config.primary,
            arm_a=agent,
            arm_b=lambda name: follower_spec(name, agent),
            tip_arm="A",
            runner=runner,
            progress=progress,
        )
    return BaselineRun(
        config,
        command,
        agent,
        max_deals,
        settings["looks"],
        seed,
        settings["opponents"],
        results,
    )
