"""Fünfzehn – tot's "Sinn der Regeln" (*Fünfzehn – tot*, German Wikipedia), checked.

The seed argues for its two rules with arithmetic. `dice_claims` checks each of its
numbers exactly, with fractions; `round_seats` gives every seat's chance in one round of
round-optimal players (the solver's policy, `parlour.agents.fuenfzehn_tot_solver`) with
and without each rule (the engine's ``rule1``/``rule2`` options, `turn_options`), and
`round_seat_table` all of them. ``parlour tips fuenfzehn_tot`` reports them next to the
simulated seat order (`parlour.training.tips.seat_order`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..envs.fuenfzehn_tot.rules import turn_options
from . import fuenfzehn_tot_solver as solver
from .fuenfzehn_tot_solver import rule_arithmetic

RULE_SETS = {
    "both rules": (True, True),
    "rule 1 only": (True, False),
    "rule 2 only": (False, True),
    "neither": (False, False),
}


@dataclass(frozen=True)
class RoundSeats:
    """One round of ``players`` round-optimal players: each seat's chance (in turn
    order, seat 0 sets the first total)."""

    half: int
    players: int
    rules: str
    chance: tuple[Fraction, ...]  # half 1: P(takes the match); half 2: P(wins)
    bust: tuple[Fraction, ...]  # P(the seat's turn goes over 15)


def round_seats(
    half: int,
    players: int,
    rule1: bool = True,
    rule2: bool = True,
    **solver_options: Any,
) -> RoundSeats:
    """Exact seat chances of one round, every player playing the solver's round-optimal
    policy (backward induction, `solve_turn` with ``after``) under the given rules.

    First half: the round ends at once with a bust, whose player takes the match;
    otherwise the lowest total takes it, an equal total rolled later being lower.
    Second half (``half2_bust="out"``): a 15 wins at once; a bust only ends that turn;
    the highest total wins, an earlier total beating an equal later one; when everybody
    busts the round is replayed in the same order.
    """
    if half not in (1, 2):
        raise ValueError(f"half must be 1 or 2, got {half!r}")
    if (
        isinstance(players, bool)
        or not isinstance(players, int)
        or not 2 <= players <= 10
    ):
        raise ValueError(f"players must be 2..10, got {players!r}")
    rules = {"rule1": rule1, "rule2": rule2}
    # (lowest or highest total standing, its seat) -> probability
    dist: dict[tuple[int | None, int | None], Fraction] = {(None, None): Fraction(1)}
    chance = [Fraction(0)] * players
    bust = [Fraction(0)] * players
    for i in range(players):
        after = players - 1 - i
        new: dict[tuple[int | None, int | None], Fraction] = {}
        for (t, holder), p in dist.items():
            sol = solver.solve_turn(
                half,
                [] if t is None else [t],
                after,
                exact=True,
                **rules,
                **solver_options,
            )
            bust[i] += p * sol.bust
            if half == 1:
                chance[i] += p * sol.bust  # "tot": he takes the match at once
            else:
                chance[i] += p * sol.fifteen  # a 15 wins the round at once
                if sol.bust:
                    key = (t, holder)
                    new[key] = new.get(key, Fraction(0)) + p * sol.bust
            for u in range(1, 16):
                q = sol.stand_at[u]
                if not q:
                    continue
                if half == 1:
                    better = t is None or u <= t  # a later equal total is lower
                else:
                    better = t is None or u > t  # an earlier equal total is higher
                key = (u, i) if better else (t, holder)
                new[key] = new.get(key, Fraction(0)) + p * q
        dist = new
    replay = Fraction(0)
    for (_, holder), p in dist.items():
        if holder is None:
            replay += p
        else:
            chance[holder] += p
    if half == 2 and replay:
        chance = [c / (1 - replay) for c in chance]
    name = next(k for k, v in RULE_SETS.items() if v == (rule1, rule2))
    return RoundSeats(half, players, name, tuple(chance), tuple(bust))


def round_seat_table(players: Sequence[int] = (2, 3, 4)) -> list[RoundSeats]:
    """`round_seats` for each half, number of players and rule set."""
    return [
        round_seats(half, n, *rules)
        for half in (1, 2)
        for n in players
        for rules in RULE_SETS.values()
    ]


@dataclass(frozen=True)
class Claim:
    """One of the seed's claims, checked exactly."""

    name: str
    verdict: str  # supported / refuted (exact, no interval needed)
    finding: str  # the numbers, in a sentence or two
    numbers: dict[str, Any]


def _roll_risk(total: int, rolls: int, rule1: bool, rule2: bool) -> Fraction:
    """P(bust) of rolling on from ``total`` after ``rolls`` dice and then standing as
    soon as the rules allow (the least risky way to take one more roll)."""

    def risk(t: int, k: int) -> Fraction:
        if t > 15:
            return Fraction(1)
        may_roll, may_stand = turn_options(t, k, rule1, rule2)
        if may_stand:
            return Fraction(0)
        return sum((risk(t + f, k + 1) for f in range(1, 7)), Fraction(0)) / 6

    return sum((risk(total + f, rolls + 1) for f in range(1, 7)), Fraction(0)) / 6


def dice_claims() -> list[Claim]:
    """The seed's "Sinn der Regeln", number by number."""
    out = []
    one = {
        t: Fraction(sum(1 for f in range(1, 7) if t + f > 15), 6) for t in range(9, 16)
    }
    fifteen_from_9 = Fraction(1, 6)
    forced = _roll_risk(9, 2, rule1=False, rule2=True)
    # situations: half, lowest/highest total standing, 0-3 players after
    situations = 0
    rolls_on = {2: 0, 4: 0}  # after two rolls / after four or more
    for half in (1, 2):
        for target in [None, *range(1, 15)]:
            for after in (0, 1, 2, 3):
                if half == 1 and target is None and after == 0:
                    continue
                sol = solver.solve_turn(
                    half,
                    [] if target is None else [target],
                    after,
                    exact=True,
                    rule1=False,
                )
                situations += 1
                for k in rolls_on:
                    rolls_on[k] += sol.choice[9][k] == "roll"
    out.append(
        Claim(
            "nine_is_safe",
            "supported" if one[9] == 0 and fifteen_from_9 > 0 else "refuted",
            f"One roll from 9 goes over 15 with probability {one[9]} and reaches 15 "
            f"with {fifteen_from_9}: the improvement the first rule forbids is free of "
            f"risk for one roll. The caveat: 9 is reached after two rolls at the "
            f"earliest, and then one more roll is the third, which the second rule "
            f"turns into two; that pair goes over 15 with probability {forced} "
            f"({float(forced):.3f}). Without rule 1 "
            f"(rule 2 kept), optimal play would roll on from 9 in {rolls_on[4]} of "
            f"{situations} situations after four or more rolls (one roll, no risk) and "
            f"in {rolls_on[2]} of {situations} after two (half, total standing, 0 to 3 "
            f"players after).",
            {
                "p_bust_one_roll_from_9": str(one[9]),
                "p_15_from_9": str(fifteen_from_9),
                "p_bust_third_and_fourth_from_9": str(forced),
                "situations": situations,
                "rolls_on_from_9_without_rule1_after_4": rolls_on[4],
                "rolls_on_from_9_without_rule1_after_2": rolls_on[2],
            },
        )
    )
    out.append(
        Claim(
            "ten_is_risky",
            "supported" if one[10] == Fraction(1, 6) else "refuted",
            "One roll goes over 15 with probability "
            + ", ".join(f"{one[t]} from {t}" for t in range(10, 16))
            + ": from 10 only a six kills, as the seed says.",
            {f"p_bust_one_roll_from_{t}": str(one[t]) for t in range(9, 16)},
        )
    )
    rows = {r["rolls"]: r for r in rule_arithmetic(5)}
    three, four = rows[3], rows[4]
    out.append(
        Claim(
            "three_rolls",
            "supported" if three["mean"] == Fraction(21, 2) else "refuted",
            f"Three dice average {three['mean']} = {float(three['mean'])} and go over "
            f"15 with probability {three['bust']} ({float(three['bust']):.3f}): well "
            f"away from the danger threshold.",
            {"mean": str(three["mean"]), "p_over_15": str(three["bust"])},
        )
    )
    ratio = four["bust"] / three["bust"]
    busts = {}
    for name, (r1, r2) in (
        ("with rule 2", (True, True)),
        ("without rule 2", (True, False)),
    ):
        seats = round_seats(1, 4, r1, r2)
        busts[name] = sum(seats.bust, Fraction(0)) / 4
    out.append(
        Claim(
            "four_rolls",
            "supported" if four["mean"] == 14 and ratio > 2 else "refuted",
            f"Four dice average {four['mean']} and go over 15 with probability "
            f"{four['bust']} ({float(four['bust']):.3f}), {float(ratio):.1f} times the "
            f"three-dice risk. In a first-half round of four optimal players a turn "
            f"busts with probability {float(busts['with rule 2']):.3f} with rule 2 and "
            f"{float(busts['without rule 2']):.3f} without it.",
            {
                "mean": str(four["mean"]),
                "p_over_15": str(four["bust"]),
                "ratio_to_three": float(ratio),
                "p_bust_per_turn_4p_half1": {k: float(v) for k, v in busts.items()},
            },
        )
    )
    return out
