"""The exact turn solver for Fünfzehn – tot (*Fünfzehn – tot*, German Wikipedia).

The seed argues for its two rules with arithmetic ("Sinn der Regeln": three rolls
average 10.5, four average 14). This module makes the argument checkable: a dynamic
programme over a turn's states ``(total, rolls)`` gives the exact probability of beating
the totals already standing and the optimal stand/roll decision everywhere, under rule 1
(9 must stand, 10 must roll) and rule 2 (the third roll forces a fourth unless the total
is 9). The legal moves come from the engine
(`parlour.envs.fuenfzehn_tot.rules.turn_options`), so the two cannot disagree.

What is optimised is the round, not the game: in the first half the chance of not
taking this round's match, in the second half the chance of winning this round
(discarding a match). Only five roll counts matter: 0 (must roll), 1, 2, 3 (rule 2: must
roll) and 4 or more.

* **The last seat** (``after=0``) is exact: he wins by finishing above the lowest total
  standing (first half; an equal total rolled later is lower), or above the highest
  valid one or with an immediate 15 (second half).
* **Earlier seats** (``after > 0``) are solved by backward induction, assuming every
  later player plays this same round-optimal policy. In the first half a total at or
  below the lowest standing makes its player the lowest so far, who takes the match
  unless a later player finishes at or below him or busts; in the second half a total
  above the highest standing wins unless a later player beats it. Each later player's
  outcome distribution comes from his own solution, so the result is a subgame-perfect
  solution of the round: exact for that model, a heuristic for the game, whose later
  rounds it ignores (see ``docs/games/fuenfzehn_tot.md``).

``python -m parlour.agents.fuenfzehn_tot_solver --help`` prints the table of decisions
and win probabilities and can write a plot.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

from ..envs.fuenfzehn_tot.rules import HALF2_BUST, LIMIT, turn_options

KCLASSES = 5  # roll counts 0, 1, 2, 3 and "4 or more" play differently; more do not
Number = Fraction | float


@dataclass(frozen=True)
class TurnSolution:
    """The solved turn of one player: values and decisions at every ``(total, rolls)``.

    Tables are indexed ``[total][k]`` with ``total`` 0..15 and ``k`` = min(rolls, 4).
    """

    half: int
    target: int | None  # lowest (half 1) / highest (half 2) total standing, or None
    after: int  # players still to act after this one in the round
    value: tuple[tuple[Number, ...], ...]  # win probability with optimal play
    stand_value: tuple[Number, ...]  # win probability of standing on each total
    roll_value: tuple[tuple[Number | None, ...], ...]  # of rolling (None: illegal)
    choice: tuple[tuple[str | None, ...], ...]  # "roll"/"stand"; None: unreachable
    forced: tuple[tuple[bool, ...], ...]  # only one action is legal there
    stand_at: tuple[Number, ...]  # P(the turn ends standing on each total 0..15)
    bust: Number  # P(the turn goes over 15)
    fifteen: Number  # P(an immediate second-half 15)

    @property
    def win_probability(self) -> Number:
        """The chance of winning (first half: not losing) the round, from the start."""
        return self.value[0][0]

    def decision(self, total: int, rolls: int) -> str:
        """``"roll"`` or ``"stand"`` at this point of the turn."""
        k = min(rolls, KCLASSES - 1)
        if not 0 <= total <= LIMIT or rolls < 0 or self.choice[total][k] is None:
            raise ValueError(f"a turn cannot be at total {total} after {rolls} rolls")
        return self.choice[total][k]


def _reachable(total: int, k: int) -> bool:
    if k == 0:
        return total == 0
    return k <= total <= 6 * k if k < KCLASSES - 1 else total >= k


def _solve_turn(
    half: int,
    stand_pay: Sequence[Number],
    auto15: bool,
    one: Number,
    rules: tuple[bool, bool] = (True, True),
):
    """Backward induction over a turn, given the payoff of standing on each total.

    A bust pays 0; a second-half 15 pays 1 (the round is won at once); with ``auto15``
    a first-half 15 stands by itself. Returns the value, roll-value, choice and forced
    tables and the outcome distribution (stand_at, bust, fifteen).
    """
    zero = one * 0
    sixth = one / 6
    size = range(LIMIT + 1)
    value = [[zero] * KCLASSES for _ in size]
    roll_v: list[list[Number | None]] = [[None] * KCLASSES for _ in size]
    choice: list[list[str | None]] = [[None] * KCLASSES for _ in size]
    forced = [[False] * KCLASSES for _ in size]
    for t in range(LIMIT, -1, -1):  # a roll raises the total: later states are done
        for k in range(KCLASSES):
            may_roll, may_stand = turn_options(t, k, *rules)
            r = None
            if may_roll:
                nk = min(k + 1, KCLASSES - 1)
                acc = zero
                for face in range(1, 7):
                    u = t + face
                    if u > LIMIT:
                        continue  # "tot": pays nothing
                    if u == LIMIT and half == 2:
                        acc += one  # an immediate 15 wins the round
                    elif u == LIMIT and auto15:
                        acc += stand_pay[LIMIT]
                    else:
                        acc += value[u][nk]
                r = acc * sixth
            roll_v[t][k] = r
            forced[t][k] = not (may_roll and may_stand)
            # On a tie, stand: the same chance with fewer dice.
            if may_stand and (r is None or stand_pay[t] >= r):
                value[t][k], pick = stand_pay[t], "stand"
            else:
                value[t][k], pick = r, "roll"
            gone = t == LIMIT and (half == 2 or auto15)  # a 15 ends the turn at once
            choice[t][k] = pick if _reachable(t, k) and not gone else None
    # Forward: where does the turn end under this policy?
    reach = [[zero] * KCLASSES for _ in size]
    reach[0][0] = one
    stand_at = [zero] * (LIMIT + 1)
    bust = fifteen = zero
    for t in size:
        for k in range(KCLASSES):
            p = reach[t][k]
            if not p:
                continue
            if choice[t][k] == "stand":
                stand_at[t] += p
                continue
            q = p * sixth
            nk = min(k + 1, KCLASSES - 1)
            for face in range(1, 7):
                u = t + face
                if u > LIMIT:
                    bust += q
                elif u == LIMIT and half == 2:
                    fifteen += q
                elif u == LIMIT and auto15:
                    stand_at[LIMIT] += q
                else:
                    reach[u][nk] += q
    return value, roll_v, choice, forced, stand_at, bust, fifteen


def _one(exact: bool) -> Number:
    return Fraction(1) if exact else 1.0


@cache
def _solution(
    half: int,
    target: int | None,
    after: int,
    auto15: bool,
    bust_rule: str,
    exact: bool,
    rules: tuple[bool, bool] = (True, True),
) -> TurnSolution:
    one = _one(exact)
    zero = one * 0
    stand_pay = [zero] * (LIMIT + 1)  # standing on 0 is never legal
    for t in range(1, LIMIT + 1):
        if half == 1:
            # Above the lowest total he is safe for good; at or below it (or first in
            # the round) he becomes the lowest and loses unless someone undercuts him.
            safe = target is not None and t > target
            lose = _lowest_loses(after, t, auto15, exact, rules)
            stand_pay[t] = one if safe else one - lose
        elif target is None or t > target:
            stand_pay[t] = _highest_wins(after, t, bust_rule, exact, rules)
    tables = _solve_turn(half, stand_pay, auto15 and half == 1, one, rules)
    value, roll_v, choice, forced, stand_at, bust, fifteen = tables

    def freeze(rows):
        return tuple(tuple(r) for r in rows)

    return TurnSolution(
        half=half,
        target=target,
        after=after,
        value=freeze(value),
        stand_value=tuple(stand_pay),
        roll_value=freeze(roll_v),
        choice=freeze(choice),
        forced=freeze(forced),
        stand_at=tuple(stand_at),
        bust=bust,
        fifteen=fifteen,
    )


@cache
def _lowest_loses(
    after: int, t: int, auto15: bool, exact: bool, rules: tuple[bool, bool]
) -> Number:
    """First half: P(the player now lowest on ``t`` takes the match), ``after`` to
    come."""
    one = _one(exact)
    if after == 0:
        return one
    nxt = _solution(1, t, after - 1, auto15, "out", exact, rules)
    above = sum(nxt.stand_at[t + 1 :], one * 0)  # only then does he stay the lowest
    return above * _lowest_loses(after - 1, t, auto15, exact, rules)


@cache
def _highest_wins(
    after: int, t: int, bust_rule: str, exact: bool, rules: tuple[bool, bool]
) -> Number:
    """Second half: P(the valid total ``t``, now highest, wins), ``after`` to come."""
    one = _one(exact)
    if after == 0:
        return one
    nxt = _solution(2, t, after - 1, False, bust_rule, exact, rules)
    below = sum(nxt.stand_at[: t + 1], one * 0)
    rest = _highest_wins(after - 1, t, bust_rule, exact, rules)
    if bust_rule == "ends_round":
        return nxt.bust + below * rest  # a bust ends the round: the highest wins
    return (below + nxt.bust) * rest


def solve_turn(
    half: int,
    standing: Sequence[int | None] = (),
    after: int = 0,
    *,
    auto_stand_at_15_half1: bool = False,
    half2_bust: str = "out",
    exact: bool = False,
    rule1: bool = True,
    rule2: bool = True,
) -> TurnSolution:
    """Solve the turn of a player facing the totals ``standing`` before him in a round.

    ``standing`` lists the totals in round order (``None`` for a second-half bust);
    ``after`` is the number of players still to act after him (0: the last seat).
    ``exact=True`` computes with fractions. The rule options are the env's (``rule1``
    and ``rule2`` off only to study the rules).
    """
    if half not in (1, 2):
        raise ValueError(f"half must be 1 or 2, got {half!r}")
    if isinstance(after, bool) or not isinstance(after, int) or not 0 <= after <= 20:
        raise ValueError(
            f"after must be the number of players still to act (0..20), got {after!r}"
        )
    if half2_bust not in HALF2_BUST:
        raise ValueError(
            f"half2_bust must be one of {list(HALF2_BUST)}, got {half2_bust!r}"
        )
    valid = []
    for i, total in enumerate(standing):
        if total is None:
            if half == 1:
                raise ValueError(
                    "a first-half bust ends the round: no None among standing totals"
                )
            continue
        if isinstance(total, bool) or not isinstance(total, int):
            raise ValueError(f"standing[{i}] must be a total 1..15, got {total!r}")
        if not 1 <= total <= LIMIT:
            raise ValueError(f"standing[{i}] must be a total 1..15, got {total!r}")
        if half == 2 and total == LIMIT:
            raise ValueError("a second-half 15 ends the round: no 15 can stand")
        valid.append(total)
    if half == 1 and not standing and after == 0:
        raise ValueError(
            "a first-half round has at least two players: give the totals standing "
            "or the players after"
        )
    target = (min(valid) if half == 1 else max(valid)) if valid else None
    auto15 = bool(auto_stand_at_15_half1) and half == 1
    bust_rule = half2_bust if half == 2 else "out"
    rules = (bool(rule1), bool(rule2))
    return _solution(half, target, after, auto15, bust_rule, bool(exact), rules)


# --- the seed's arithmetic ------------------------------------------------------------
def dice_sum_distribution(k: int) -> dict[int, Fraction]:
    """The exact distribution of the sum of ``k`` dice."""
    dist = {0: Fraction(1)}
    for _ in range(k):
        nxt: dict[int, Fraction] = {}
        for s, p in dist.items():
            for face in range(1, 7):
                nxt[s + face] = nxt.get(s + face, Fraction(0)) + p / 6
        dist = nxt
    return dist


def rule_arithmetic(max_rolls: int = 5) -> list[dict[str, Fraction | int]]:
    """The seed's "Sinn der Regeln": for 1..``max_rolls`` dice, the mean sum and
    P(over 15)."""
    rows = []
    for k in range(1, max_rolls + 1):
        dist = dice_sum_distribution(k)
        mean = sum((s * p for s, p in dist.items()), Fraction(0))
        bust = sum((p for s, p in dist.items() if s > LIMIT), Fraction(0))
        rows.append({"rolls": k, "mean": mean, "bust": bust})
    return rows


# --- the table ------------------------------------------------------------------------
@dataclass(frozen=True)
class TableRow:
    """One line of the decision table: a standing target and the policy against it."""

    half: int
    target: int | None
    after: int
    win: Number  # P(win the round) from the start of the turn
    decisions: dict[int, str]  # roll class (1, 2, 4) -> 15 letters for totals 1..15


def _letters(sol: TurnSolution, k: int) -> str:
    out = []
    for t in range(1, LIMIT + 1):
        c = sol.choice[t][k]
        if c is None:
            out.append(".")
        else:
            out.append(c[0] if sol.forced[t][k] else c[0].upper())  # forced: lower
    return "".join(out)


def targets(half: int, after: int) -> list[int | None]:
    """The standing targets worth tabulating: None (nothing stands) and every total."""
    first = [None] if (half == 2 or after > 0) else []
    return first + list(range(1, LIMIT + (1 if half == 1 else 0)))


def decision_table(
    half: int,
    after: int = 0,
    *,
    auto_stand_at_15_half1: bool = False,
    half2_bust: str = "out",
    exact: bool = True,
) -> list[TableRow]:
    """For each standing target: the win probability, decisions after 1, 2, 4+ rolls."""
    rows = []
    for target in targets(half, after):
        sol = solve_turn(
            half,
            [] if target is None else [target],
            after,
            auto_stand_at_15_half1=auto_stand_at_15_half1,
            half2_bust=half2_bust,
            exact=exact,
        )
        letters = {k: _letters(sol, k) for k in (1, 2, 4)}
        rows.append(TableRow(half, target, after, sol.win_probability, letters))
    return rows


def format_table(rows: Sequence[TableRow], fractions: bool = False) -> str:
    """The table as text: S/R stand/roll by choice, s/r forced by the rules, . never."""
    if not rows:
        return ""
    half, after = rows[0].half, rows[0].after
    what = "lowest" if half == 1 else "highest"
    if half == 1:
        goal = (
            "not taking the match (finish above the lowest total; an equal later "
            "total is lower)"
        )
    else:
        goal = "winning the round (finish above the highest total, or reach 15 at once)"
    seat = "last seat" if after == 0 else f"{after} player(s) still to act after you"
    digits = ["         111111 ", "123456789012345 "]
    name = "First" if half == 1 else "Second"
    lines = [
        f"{name} half, {seat}: P = probability of {goal}.",
        "Decisions by total (1..15) after 1, 2 and 4+ rolls: S stand, R roll (your "
        "choice), s/r forced by rule 1 or 2, . unreachable.",
        f"{what + ' standing':>16} {'P':>8}   {'after 1 roll':<16}   "
        f"{'after 2 rolls':<16}   {'after 4+ rolls':<16}",
        *(f"{'':>16} {'':>8}   " + "   ".join([d] * 3) for d in digits),
    ]
    for row in rows:
        label = "none" if row.target is None else str(row.target)
        line = f"{label:>16} {float(row.win):>8.4f}   " + "   ".join(
            f"{row.decisions[k]} " for k in (1, 2, 4)
        )
        if fractions and isinstance(row.win, Fraction):
            line += f"   = {row.win}"
        lines.append(line)
    return "\n".join(lines)


def format_arithmetic() -> str:
    """The seed's "Sinn der Regeln" numbers, exactly."""
    lines = ["Sinn der Regeln (the seed: three rolls average 10.5, four average 14):"]
    for row in rule_arithmetic():
        lines.append(
            f"  {row['rolls']} roll(s): mean {float(row['mean']):>5.2f} "
            f"({row['mean']}), P(over 15) = {float(row['bust']):.4f} ({row['bust']})"
        )
    return "\n".join(lines)


# --- the plot -------------------------------------------------------------------------
def plot(
    path: str,
    *,
    auto_stand_at_15_half1: bool = False,
    half2_bust: str = "out",
    max_after: int = 3,
) -> None:
    """Write a PNG: the win probability against the standing target per half (for 0 to
    ``max_after`` players still to act), and the last seat's decisions after two
    rolls."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    opts = {"auto_stand_at_15_half1": auto_stand_at_15_half1, "half2_bust": half2_bust}
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    for col, half in enumerate((1, 2)):
        what = "lowest" if half == 1 else "highest"
        ax = axes[0][col]
        for after in range(max_after + 1):
            rows = [
                r
                for r in decision_table(half, after, exact=False, **opts)
                if r.target is not None
            ]
            label = "last seat" if after == 0 else f"{after} after"
            ax.plot(
                [r.target for r in rows],
                [float(r.win) for r in rows],
                marker="o",
                label=label,
            )
        ax.set_title(
            "First half: P(not taking the match)"
            if half == 1
            else "Second half: P(winning the round)"
        )
        ax.set_xlabel(f"{what} total standing before you")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend()
        # The last seat's decisions after two rolls (the third roll forces a fourth).
        ax = axes[1][col]
        rows = decision_table(half, 0, exact=False, **opts)
        codes = {".": 0, "R": 1, "S": 2, "r": 3, "s": 4}
        grid = [[codes[ch] for ch in r.decisions[2]] for r in rows]
        cmap = ListedColormap(["#eeeeee", "#d62728", "#2ca02c", "#ff9896", "#98df8a"])
        ax.imshow(grid, cmap=cmap, vmin=0, vmax=4, aspect="auto", origin="lower")
        ax.set_xticks(range(LIMIT), [str(t) for t in range(1, LIMIT + 1)])
        ax.set_yticks(
            range(len(rows)),
            ["none" if r.target is None else str(r.target) for r in rows],
        )
        ax.set_xlabel("your total after two rolls")
        ax.set_ylabel(f"{what} total standing")
        ax.set_title("Last seat after two rolls: green stand, red roll (pale: forced)")
    fig.suptitle("Fünfzehn – tot: the exact turn solver (rules 1 and 2)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# --- command line ---------------------------------------------------------------------
def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of `main` (``--help`` explains every option)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Fünfzehn – tot: print the exact table of stand/roll decisions and "
        "win probabilities for a player's turn against the totals already standing, "
        "with the seed's 'Sinn der Regeln' arithmetic, and optionally plot it.",
    )
    parser.add_argument(
        "--half",
        type=int,
        choices=(1, 2),
        action="append",
        help="the half to tabulate (repeatable; default both)",
    )
    parser.add_argument(
        "--after",
        type=int,
        default=0,
        metavar="N",
        help="players still to act after you in the round (default 0: the last seat, "
        "solved exactly; N > 0 assumes they play the same round-optimal policy)",
    )
    parser.add_argument(
        "--auto-stand-at-15-half1",
        action="store_true",
        help="the env option: a first-half 15 stands by itself (default: rule 2 "
        "applies literally, so a 15 on the third roll must roll again)",
    )
    parser.add_argument(
        "--half2-bust",
        choices=HALF2_BUST,
        default="out",
        help="the env option for a second-half bust (default: out)",
    )
    parser.add_argument(
        "--fractions",
        action="store_true",
        help="also print each probability as an exact fraction",
    )
    parser.add_argument("--plot", metavar="FILE.png", help="also write the plot (PNG)")
    return parser  # fmt: skip


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Print the seed's arithmetic and the decision tables; write the plot if asked."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if not 0 <= args.after <= 9:
        parser.error("--after must be 0..9 (a game has at most 10 players)")
    opts = {
        "auto_stand_at_15_half1": args.auto_stand_at_15_half1,
        "half2_bust": args.half2_bust,
    }
    print(format_arithmetic())
    for half in sorted(set(args.half or (1, 2))):
        print()
        print(format_table(decision_table(half, args.after, **opts), args.fractions))
    if args.plot:
        plot(args.plot, **opts)
        print(f"\nwrote {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
