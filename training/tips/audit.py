"""The tips audit: is each tip's move the best move, by the best judge we have?

The bot switch (`parlour.training.tips.experiments`) asks whether the heuristic bot
plays better with a tip; the audit asks whether the move the tip recommends is right.
Positions come from games of stated players (heuristic self-play by default) on
stated seeds; at each decision where a tip recommends a move (`TipAdvisor`), a judge
values every legal move (`Judge`) and the tip's move is compared with the best.

**What a tip recommends** (`Advice`): a set of moves (``recommended``) among the moves
it speaks of (``scope``). German Whist's stage-1 tips with a literal prescription
(`LITERAL_TIPS`: win_cheaply, duck_duds, save_trumps, long_suit) recommend the cards
that `parlour.agents.german_whist.tip_situations` says agree with them, among the
cards it speaks of (win_cheaply: the winners); the other tips (German Whist's
value_prizes, fight_late, count_to_seven, open_hands, and all of Forty-Fives') speak
where switching the tip off changes the heuristic bot's move, and recommend the move
of the bot with the tip on. A tip whose every move in scope agrees says nothing.

**The judges.** German Whist stage 2: the exact solver (`move_values`), whether the
seat still wins. German Whist stage 1: determinized search (`pimc_values`: a deal of
the unseen cards consistent with what the seat knows, the rest of stage 1 by the
rollout policy, stage 2 solved exactly), the chance of winning. Forty-Fives: deals
consistent with what the seat knows (`knowledge`, with the voids it saw), each solved
exactly (`move_values`) for the side's points in the deal; only trick play (with
robbing) is judged. A sampled judge draws two independent sets of ``samples`` deals:
set A picks the best move in scope and the tip's best move, set B estimates the
difference between those two (an unbiased estimate of what the pick costs, with its
standard error), and the share of decisions where both sets agree whether the tip's
move is best states the judge's own uncertainty.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ... import agents as agents_mod
from ... import envs
from ...agents.base import Agent, Turn
from ..arena import play_game
from ..stats import wilson
from .config import TipsConfig

#: German Whist tips whose recommendation is read from `tip_situations`
LITERAL_TIPS = {
    "german_whist_v0": ("win_cheaply", "duck_duds", "save_trumps", "long_suit"),
}
#: envs the audit can judge
AUDIT_ENVS = ("german_whist_v0", "forty_fives_v0")
EPS = 1e-9
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Advice:
    """What one tip says at one decision: its moves among the moves it speaks of."""

    tip: str
    recommended: tuple[int, ...]
    scope: tuple[int, ...]
    how: str  # "rule" (tip_situations) or "switch" (the bot with the tip off differs)


class TipAdvisor:
    """What each tip of an env recommends at a decision (`Advice`), read from the
    heuristic bots and `tip_situations` (neither is changed)."""

    def __init__(
        self, env: str, tips: Sequence[str], env_options: Mapping[str, Any] = ()
    ):
        if env not in AUDIT_ENVS:
            raise ValueError(
                f"tip advice is implemented for {', '.join(AUDIT_ENVS)}, not {env}"
            )
        options = dict(env_options)
        self.env = env
        self.tips = tuple(tips)
        self.literal = tuple(t for t in self.tips if t in LITERAL_TIPS.get(env, ()))
        make = agents_mod.make
        self._on = make("heuristic", env, seed=0, env_options=options)
        self._off = {
            t: make(f"heuristic:-{t}", env, seed=0, env_options=options)
            for t in self.tips
            if t not in self.literal
        }

    def _move(self, bot: Agent, turn: Turn) -> int:
        # The same tie-break numbers for both bots: only the tip tells them apart.
        bot.reset(seed=0)
        return bot.act(turn)

    def advise(self, turn: Turn, only: str | None = None) -> dict[str, Advice]:
        """Each tip's `Advice` at ``turn`` (``only``: that tip alone); tips that say
        nothing here are absent."""
        legal = turn.legal_actions()
        if len(legal) < 2:
            return {}
        tips = self.tips if only is None else (only,)
        out: dict[str, Advice] = {}
        literal = [t for t in tips if t in self.literal]
        # the literal tips are stage-1 rules; tip_situations would solve stage 2
        if literal and getattr(turn.state, "stage", 1) == 1:
            from ...agents.german_whist.tip_situations import tip_situations

            said = {
                c: tip_situations(turn.game, turn.state, turn.seat, c) for c in legal
            }
            for t in literal:
                scope = tuple(c for c in legal if t in said[c])
                rec = tuple(c for c in scope if said[c][t])
                if rec and len(rec) < len(scope):
                    out[t] = Advice(t, rec, scope, "rule")
        switched = [t for t in tips if t not in self.literal]
        if switched:
            on = self._move(self._on, turn)
            for t in switched:
                if self._move(self._off[t], turn) != on:
                    out[t] = Advice(t, (on,), tuple(legal), "switch")
        return out


# --- the judges -----------------------------------------------------------------------
@dataclass
class Valuation:
    """A judge's values of the legal moves at one decision: per move, one value per
    sampled deal in each of the two sets (an exact judge: one value, both sets)."""

    a: dict[int, np.ndarray]
    b: dict[int, np.ndarray]
    exact: bool


class Judge:
    """Values every legal move at a decision; `judges` says which decisions."""

    unit = ""

    def judges(self, turn: Turn) -> bool:
        raise NotImplementedError

    def value(self, turn: Turn, key: tuple[int, ...]) -> Valuation:
        raise NotImplementedError

    def observe(self, turn: Turn) -> None:  # noqa: B027 optional hook
        """Called at every decision of the game (judges that remember what a seat
        saw)."""


class GermanWhistJudge(Judge):
    """Stage 2 exact (does the seat still win), stage 1 by determinized search with
    exact stage 2 (the chance of winning)."""

    unit = "win share"

    def __init__(self, samples: int):
        self.samples = samples

    def judges(self, turn: Turn) -> bool:
        from ...envs.german_whist.state import Phase

        return turn.state.phase == Phase.PLAY and not turn.game.honeymoon

    def value(self, turn: Turn, key: tuple[int, ...]) -> Valuation:
        from ...agents.solver.german_whist import move_values, pimc_values

        game, state, seat = turn.game, turn.state, turn.seat
        legal = turn.legal_actions()
        if state.stage == 2:
            exact = {
                c: np.array([1.0 if v.wins else 0.0])
                for c, v in move_values(game, state, tricks=False).items()
            }
            return Valuation(exact, exact, True)
        sets = []
        for k in (0, 1):
            rng = np.random.default_rng([*key, k])
            rows = [pimc_values(game, state, seat, 1, rng) for _ in range(self.samples)]
            sets.append({c: np.array([r[c] for r in rows]) for c in legal})
        return Valuation(sets[0], sets[1], False)


class FortyFivesJudge(Judge):
    """Deals consistent with what the seat knows, each solved exactly: the side's
    points in the deal after each move (trick play and robbing)."""

    unit = "points"

    def __init__(self, samples: int):
        from ...agents.solver.forty_fives import FortyFivesPIMC

        self.samples = samples
        # the PIMC bot's memory of the voids each seat saw (one bot, every seat)
        self._memory = FortyFivesPIMC(1, seed=0)

    def judges(self, turn: Turn) -> bool:
        from ...envs.forty_fives.state import Phase

        return turn.state.phase == Phase.PLAY

    def observe(self, turn: Turn) -> None:
        self._memory.observe(turn)

    def value(self, turn: Turn, key: tuple[int, ...]) -> Valuation:
        from ...agents.solver.forty_fives import move_values
        from ...agents.solver.tricks import deal_hidden

        know = self._memory.knowledge(turn)
        legal = turn.legal_actions()
        sets = []
        for k in (0, 1):
            rng = np.random.default_rng([*key, k])
            rows = []
            for _ in range(self.samples):
                hands = deal_hidden(know, rng)
                rows.append(move_values(turn.game, turn.state, hands, turn.seat, legal))
            sets.append({c: np.array([r[c] for r in rows], float) for c in legal})
        return Valuation(sets[0], sets[1], False)


def make_judge(env: str, samples: int) -> Judge:
    """The audit's judge for ``env`` with ``samples`` deals per set."""
    if env == "german_whist_v0":
        return GermanWhistJudge(samples)
    if env == "forty_fives_v0":
        return FortyFivesJudge(samples)
    raise ValueError(f"the tips audit judges {', '.join(AUDIT_ENVS)}, not {env}")


# --- one finding ----------------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    """One decision where a tip spoke, as the judge saw it."""

    tip: str
    best: bool  # set A: the tip's best move is as good as the best in scope
    best_b: bool  # the same question answered by set B (the judge's stability)
    cost: float  # set B's estimate of (best in scope by A) − (tip's best by A)
    se: float  # its standard error (0 for an exact judge)
    stage: int  # German Whist: the stage; Forty-Fives: 0
    exact: bool
    tip_move: int
    judge_move: int
    position: str = ""  # the text view, kept for the examples

    @property
    def confirmed(self) -> bool:
        """The tip's move is worse beyond the judge's noise (exact, or set B's 95%
        interval above zero)."""
        if self.best:
            return False
        return self.cost > EPS if self.exact else self.cost - Z95 * self.se > 0


def _best(values: Mapping[int, float], moves: Sequence[int], prefer=()) -> int:
    top = max(values[m] for m in moves)
    tied = [m for m in moves if values[m] >= top - EPS]
    return next((m for m in tied if m in prefer), tied[0])


def judge_advice(
    advice: Advice, val: Valuation
) -> tuple[bool, bool, float, float, int, int]:
    """(best by A, best by B, cost by B, its s.e., tip's move, judge's move)."""
    mean_a = {m: float(v.mean()) for m, v in val.a.items()}
    mean_b = {m: float(v.mean()) for m, v in val.b.items()}
    rec, scope = advice.recommended, advice.scope
    r_star = _best(mean_a, rec)
    s_star = _best(mean_a, scope, prefer=rec)
    best_a = mean_a[r_star] >= mean_a[s_star] - EPS
    best_b = max(mean_b[m] for m in rec) >= max(mean_b[m] for m in scope) - EPS
    diff = val.b[s_star] - val.b[r_star]
    se = (
        0.0
        if val.exact or len(diff) < 2
        else float(diff.std(ddof=1) / math.sqrt(len(diff)))
    )
    return best_a, best_b, float(diff.mean()), se, r_star, s_star


# --- the run --------------------------------------------------------------------------
@dataclass
class TipAudit:
    """One tip's audit: every decision where it spoke, and the pre-registered
    ``best_share``."""

    tip: str
    predicted: float | None
    findings: list[Finding] = field(default_factory=list)
    examples: dict[str, Finding] = field(default_factory=dict)  # "best", "worse"

    @property
    def applies(self) -> int:
        return len(self.findings)

    @property
    def best(self) -> int:
        return sum(f.best for f in self.findings)

    def best_share(self) -> Any:
        """Wilson interval of the share of its situations where the tip's move is
        best (None when it never spoke)."""
        return wilson(self.best, self.applies) if self.applies else None

    def stability(self) -> float | None:
        """Share of decisions where the two sample sets agree whether the tip's move
        is best."""
        n = self.applies
        return sum(f.best == f.best_b for f in self.findings) / n if n else None

    def cost(self) -> tuple[float, float | None, float | None] | None:
        """Mean cost (set B) where the tip's move is not best, with a 95% interval
        over those decisions (None bounds for a single case); None when it always
        was best."""
        costs = np.array([f.cost for f in self.findings if not f.best])
        if not len(costs):
            return None
        m = float(costs.mean())
        if len(costs) < 2:
            return m, None, None
        h = Z95 * float(costs.std(ddof=1)) / math.sqrt(len(costs))
        return m, m - h, m + h

    @property
    def confirmed(self) -> int:
        return sum(f.confirmed for f in self.findings)

    def outcome(self) -> str:
        """The pre-registered ``best_share`` against the interval: confirmed,
        contradicted or undecided."""
        ci = self.best_share()
        if self.predicted is None or ci is None:
            return "untested"
        if ci.low >= self.predicted:
            return "at least as predicted"
        if ci.high < self.predicted:
            return "below the prediction"
        return "undecided"

    def as_dict(self) -> dict[str, Any]:
        ci = self.best_share()
        cost = self.cost()
        return {
            "tip": self.tip,
            "applies": self.applies,
            "best": self.best,
            "best_share": None if ci is None else [ci.estimate, ci.low, ci.high],
            "predicted_best_share": self.predicted,
            "outcome": self.outcome(),
            "judge_agreement": self.stability(),
            "confirmed_worse": self.confirmed,
            "mean_cost_when_not_best": None if cost is None else list(cost),
            "by_stage": {
                str(s): [sum(f.best for f in fs), len(fs)]
                for s, fs in _by_stage(self.findings).items()
            },
            "examples": {k: _example_dict(f) for k, f in self.examples.items()},
        }


def _by_stage(findings: Sequence[Finding]) -> dict[int, list[Finding]]:
    out: dict[int, list[Finding]] = {}
    for f in findings:
        out.setdefault(f.stage, []).append(f)
    return dict(sorted(out.items()))


def _example_dict(f: Finding) -> dict[str, Any]:
    return {
        "best": f.best,
        "cost": f.cost,
        "se": f.se,
        "stage": f.stage,
        "tip_move": f.tip_move,
        "judge_move": f.judge_move,
        "position": f.position,
    }


@dataclass
class AuditRun:
    """``parlour tips GAME --audit``: every tip's audit and how it was made."""

    config: TipsConfig
    command: str
    players: str
    games: int
    samples: int
    seed: int
    unit: str
    decisions: int  # decisions with a choice that the judge could value
    tips: list[TipAudit]
    move_names: dict[int, str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "env": self.config.env,
            "env_options": self.config.env_options,
            "command": self.command,
            "players": self.players,
            "games": self.games,
            "samples": self.samples,
            "seed": self.seed,
            "unit": self.unit,
            "decisions": self.decisions,
            "move_names": {str(k): v for k, v in self.move_names.items()},
            "tips": [t.as_dict() for t in self.tips],
        }


class _Watcher(Agent):
    """Plays ``base``'s moves and, before each, has the audit look at the decision."""

    def __init__(self, base: Agent, look: Callable[[Turn], None]):
        self.base, self.look, self.spec = base, look, base.spec

    def reset(self, seed: int | None = None) -> None:
        self.base.reset(seed)

    def act(self, turn: Turn) -> int:
        self.look(turn)
        return self.base.act(turn)


def audit_settings(config: TipsConfig) -> dict[str, Any]:
    """The config's ``audit`` section, checked: players, games, samples, seed and the
    predicted best shares."""
    section = dict(config.extra_sections.get("audit") or {})
    if not section:
        raise ValueError(f"configs/tips/{config.env}.yaml has no audit section")
    predictions = dict(section.get("predictions") or {})
    known = {t.name for t in config.tips}
    unknown = sorted(set(predictions) - known)
    if unknown:
        raise ValueError(f"audit predictions for unknown tips {unknown}")
    shares = {}
    for tip, entry in predictions.items():
        share = entry.get("best_share") if isinstance(entry, Mapping) else None
        if not isinstance(share, int | float) or not 0 <= share <= 1:
            raise ValueError(f"audit prediction of {tip!r} needs best_share in [0, 1]")
        shares[tip] = float(share)
    return {
        "players": str(section.get("players", "heuristic")),
        "games": int(section.get("games", 10)),
        "samples": int(section.get("samples", 32)),
        "seed": int(section.get("seed", config.seed)),
        "predictions": shares,
    }


def check_audit_args(games: int | None, samples: int | None) -> None:
    """ValueError for a non-positive ``games`` or ``samples``."""
    for name, v in (("--games", games), ("--samples", samples)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ValueError(f"{name} must be a positive integer, got {v!r}")


def run_audit(
    game: str,
    *,
    tips: Sequence[str] | None = None,
    games: int | None = None,
    samples: int | None = None,
    seed: int | None = None,
    progress: bool = False,
    command: str = "",
    on_game: Callable[[AuditRun], None] | None = None,
) -> AuditRun:
    """Audit each tip of ``game`` against the judge over games of the config's
    players; every input is checked before a game is played. ``on_game`` sees the
    run so far after each game (game ``i``'s seeds do not depend on ``games``, so the
    first ``k`` games are the run with ``games=k``)."""
    from ...text.views import view
    from .config import load_config

    config = load_config(game)
    if config.env not in AUDIT_ENVS:
        raise ValueError(
            f"the tips audit covers {', '.join(AUDIT_ENVS)}, not {config.env}"
        )
    check_audit_args(games, samples)
    settings = audit_settings(config)
    names = list(tips) if tips else [t.name for t in config.tips]
    for name in names:
        config.tip(name)
    games = games or settings["games"]
    samples = samples or settings["samples"]
    seed = settings["seed"] if seed is None else seed
    players = settings["players"]
    env = envs.make(config.env, **config.env_options)
    raw = env.unwrapped
    n = raw.game.num_players
    advisor = TipAdvisor(config.env, names, config.env_options)
    judge = make_judge(config.env, samples)
    audits = {t: TipAudit(t, settings["predictions"].get(t)) for t in names}
    count = {"decisions": 0, "games": 0}
    move_names: dict[int, str] = {}

    def look(turn: Turn) -> None:
        judge.observe(turn)
        if len(turn.legal_actions()) < 2 or not judge.judges(turn):
            return
        count["decisions"] += 1
        advice = advisor.advise(turn)
        if not advice:
            return
        val = judge.value(turn, (seed, count["games"], count["decisions"]))
        stage = getattr(turn.state, "stage", 0)
        for tip, adv in advice.items():
            best, best_b, cost, se, r, s = judge_advice(adv, val)
            finding = Finding(tip, best, best_b, cost, se, stage, val.exact, r, s)
            audit = audits[tip]
            kind = "best" if best else "worse"
            old = audit.examples.get(kind)
            # the example: the first best decision, the costliest worse one
            if old is None or (not best and cost > old.cost):
                text = view(turn.game, turn.state, turn.seat)
                finding = replace(finding, position=text)
                audit.examples[kind] = finding
                for m in (r, s):
                    move_names[m] = turn.game.action_name(m)
            audit.findings.append(finding)

    def snapshot(played: int) -> AuditRun:
        return AuditRun(
            config,
            command,
            players,
            played,
            samples,
            seed,
            judge.unit,
            count["decisions"],
            [audits[t] for t in names],
            dict(move_names),
        )

    deal_seeds = np.random.SeedSequence(seed).generate_state(games, dtype=np.uint32)
    bar = None
    if progress:
        from ...progress import progress_bar

        bar = progress_bar(total=games, desc=f"{config.env} audit", unit="game")
    try:
        for g, deal_seed in enumerate(int(s) for s in deal_seeds):
            count["games"] = g
            bots = [
                _Watcher(
                    agents_mod.make(
                        players,
                        config.env,
                        seed=deal_seed + 7919 * (s + 1),
                        env_options=dict(config.env_options),
                    ),
                    look,
                )
                for s in range(n)
            ]
            play_game(env, bots, seed=deal_seed)
            if bar is not None:
                bar.update(1)
            if on_game is not None:
                on_game(snapshot(g + 1))
    finally:
        if bar is not None:
            bar.close()
        env.close()
    return snapshot(games)
