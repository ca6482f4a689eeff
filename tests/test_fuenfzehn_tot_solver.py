"""Tests of the exact Fünfzehn – tot turn solver (``agents/fuenfzehn_tot_solver.py``).

Three kinds of check: hand-computable cases (the seed's "Sinn der Regeln" arithmetic,
the chance of hitting exactly 15), an exact expectimax over the real engine (so the
solver and the rules cannot drift apart), and the table, plot and command line.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from itertools import product

import pytest

from parlour import envs
from parlour.agents import fuenfzehn_tot_solver as solver
from parlour.envs.core.engine import CHANCE
from parlour.envs.fuenfzehn_tot.rules import Phase, turn_options

ENV = "fuenfzehn_tot_v0"
S = "stand"


def on(total: int) -> list:
    """Faces and STAND for a turn standing on ``total`` (see test_fuenfzehn_tot.py)."""
    if total <= 6:
        return [total, S]
    if total <= 12 and total != 10:
        return [total - 6, 6, S]
    if total in (13, 14):
        return [1, 1, total - 8, 6, S]
    raise ValueError(total)


def scripted(plan: list, **options):
    """An env after ``plan``, player_0 starting: a list is a turn (faces, each a ROLL,
    and "stand"), a tuple is roll-off dice (chance only)."""
    dice = [x for turn in plan for x in turn if isinstance(x, int)]
    env = envs.make(ENV, **options)
    env.reset(seed=0, options={"starter": 0, "dice": dice})
    raw = env.unwrapped
    for turn in plan:
        if isinstance(turn, tuple):
            continue
        for x in turn:
            env.step(raw.game.action_id("roll" if isinstance(x, int) else x))
    return raw.game, raw.game_state


# The second half with two players holding one match each (matches=2), player_0 to
# start: he takes the first match, player_1 the second, and he wins the roll-off 1-2.
HALF2 = [on(5), on(12), on(12), on(6), (1, 2)]


def engine_values(game, state, success) -> tuple[Fraction, ...]:
    """Each seat's exact chance of ``success(state, seat)`` once this round is over,
    over the engine's own rules, with every player maximising his own chance (standing
    on ties, as the solver does). Roll counts from 4 up share a memo entry: the rules
    treat them alike (`test_roll_counts_beyond_four_play_alike`)."""
    start = (state.round_no, state.phase)
    n = game.num_players
    memo: dict = {}

    def value(s) -> tuple[Fraction, ...]:
        if (s.round_no, s.phase) != start:
            return tuple(Fraction(int(success(s, p))) for p in range(n))
        key = (
            s.pos,
            s.total,
            min(s.rolls, 4),
            s.pending,
            tuple(s.totals),
            tuple(s.busted),
        )
        if key in memo:
            return memo[key]
        player = game.current_player(s)
        if player == CHANCE:
            kids = []
            for face in range(1, 7):
                child = s.clone()
                game.apply(child, face)
                kids.append(value(child))
            v = tuple(sum((k[i] for k in kids), Fraction(0)) / 6 for i in range(n))
        else:
            v = None
            for action in sorted(game.legal_actions(s), reverse=True):  # stand first
                child = s.clone()
                game.apply(child, action)
                kid = value(child)
                if v is None or kid[player] > v[player]:
                    v = kid
        memo[key] = v
        return v

    return value(state)


def not_taking(s, seat: int) -> bool:
    return s.last_round[1] != seat


def winning(s, seat: int) -> bool:
    return s.last_round[:2] == (2, seat)


def test_roll_counts_beyond_four_play_alike() -> None:
    for total in range(16):
        for rolls in range(5, 17):
            assert turn_options(total, rolls) == turn_options(total, 4)


# --- against the engine ---------------------------------------------------------------
@pytest.mark.parametrize("lowest", [1, 3, 6, 8, 9, 11, 12, 13, 14, 15])
def test_last_seat_first_half_matches_the_engine(lowest: int) -> None:
    """The last seat takes the match unless he finishes above the lowest total ("Eine
    vorgelegte Zahl ist immer höher als eine nachgewürfelte"); the solver's value is the
    engine's exact optimum."""
    plan = [on(lowest)] if lowest != 15 else [[1, 1, 6, 6, 1, S]]
    game, state = scripted(plan, players=2)
    assert game.current_player(state) == 1 and state.rolls == 0
    exact = engine_values(game, state, not_taking)[1]
    sol = solver.solve_turn(1, [lowest], exact=True)
    assert sol.win_probability == exact
    fast = solver.solve_turn(1, [lowest]).win_probability
    assert fast == pytest.approx(float(exact))


def test_last_seat_of_three_faces_the_lowest_of_two_totals() -> None:
    game, state = scripted([on(12), on(8)], players=3)
    exact = engine_values(game, state, not_taking)[2]
    assert solver.solve_turn(1, [12, 8], exact=True).win_probability == exact


def test_auto_stand_at_15_matches_the_engine() -> None:
    game, state = scripted([on(14)], players=2, auto_stand_at_15_half1=True)
    exact = engine_values(game, state, not_taking)[1]
    sol = solver.solve_turn(1, [14], auto_stand_at_15_half1=True, exact=True)
    assert sol.win_probability == exact


@pytest.mark.parametrize("highest", [None, 2, 5, 8, 9, 11, 12, 14])
def test_last_seat_second_half_matches_the_engine(highest: int | None) -> None:
    """Second half: the highest total (earlier wins ties) or an immediate 15
    discards."""
    first = [6, 6, 6] if highest is None else on(highest)  # None: player_0 busts
    game, state = scripted(HALF2 + [first], players=2, matches=2)
    assert state.phase == Phase.HALF2 and game.current_player(state) == 1
    exact = engine_values(game, state, winning)[1]
    standing = [None] if highest is None else [highest]
    assert solver.solve_turn(2, standing, exact=True).win_probability == exact


@pytest.mark.parametrize(
    ("players", "half", "bust_rule"),
    [(2, 1, "out"), (3, 1, "out"), (2, 2, "out"), (2, 2, "ends_round"),
     (3, 2, "out"), (3, 2, "ends_round")],
)  # fmt: skip
def test_first_seat_matches_the_engine(players: int, half: int, bust_rule: str) -> None:
    """Earlier seats: the solver's backward induction (later players play their own
    round optimum) equals the engine's equilibrium value for the round's first
    player."""
    if half == 1:
        game, state = scripted([], players=players)
        success = not_taking
    else:
        # every player takes one first-half match; player_0 wins the roll-off with a 1
        three = [
            *(on(5), on(12), on(12)),  # starter 0: player_0
            *(on(12), on(6), on(12)),  # starter 0: player_1
            *(on(12), on(6), on(12)),  # starter 1 (1, 2, 0): player_2
            (1, 2, 3),
        ]
        plan = HALF2 if players == 2 else three
        options = {"matches": players, "half2_bust": bust_rule}
        game, state = scripted(plan, players=players, **options)
        assert state.phase == Phase.HALF2 and state.matches == [1] * players
        success = winning
    assert game.current_player(state) == 0 and state.rolls == 0
    exact = engine_values(game, state, success)[0]
    sol = solver.solve_turn(half, [], players - 1, half2_bust=bust_rule, exact=True)
    assert sol.win_probability == exact


# --- by hand --------------------------------------------------------------------------
@cache
def hit_fifteen(total: int) -> Fraction:
    """P(the running sum hits exactly 15 from ``total``, rolling on and never landing
    on 9, where rule 1 would force a stand)."""
    if total == 15:
        return Fraction(1)
    if total > 15 or total == 9:
        return Fraction(0)
    return sum((hit_fifteen(total + f) for f in range(1, 7)), Fraction(0)) / 6


def test_against_fourteen_only_fifteen_wins() -> None:
    """Against a standing 14 only a 15 helps: the second half wins with every path that
    hits 15 (it ends the round at once); the first half loses the paths that hit 15
    exactly on the third roll, since rule 2 then forces a fourth roll. Those are the
    throws whose first two dice make 10, 11 or 12: (3 + 2 + 1) / 216 = 1/36."""
    assert solver.solve_turn(2, [14], exact=True).win_probability == hit_fifteen(0)
    literal = solver.solve_turn(1, [14], exact=True).win_probability
    assert literal == hit_fifteen(0) - Fraction(1, 36)
    soft = solver.solve_turn(1, [14], auto_stand_at_15_half1=True, exact=True)
    assert soft.win_probability == hit_fifteen(0)


@pytest.mark.parametrize(
    ("half", "standing", "after", "expected"),
    [
        (1, [15], 0, Fraction(0)),  # nothing beats a 15 set earlier
        (1, [1], 0, Fraction(1)),  # 2..6 stand at once; a 1 rolls again to 2..7
        (2, [1], 0, Fraction(1)),
        (2, [None], 0, Fraction(1)),  # everyone before busted: any total wins
        (2, [None, None], 0, Fraction(1)),
    ],
)
def test_hand_computable_values(half: int, standing: list, after: int, expected):
    sol = solver.solve_turn(half, standing, after, exact=True)
    assert sol.win_probability == expected


def test_against_a_two_rules_one_and_two_can_still_bust() -> None:
    """Against a standing 2 the last seat loses only one way: 1, 1 makes 2 (a tie he
    loses, so he rolls), the third roll forces a fourth (rule 2), the fourth lands on
    10 (rule 1: roll again; the third and fourth dice make 8 in 5 ways of 36) and the
    fifth is a 6: P(loss) = 1/36 * 5/36 * 1/6."""
    sol = solver.solve_turn(1, [2], exact=True)
    loss = Fraction(1, 36) * Fraction(5, 36) * Fraction(1, 6)
    assert sol.win_probability == 1 - loss
    assert sol.decision(2, 2) == "roll" and sol.decision(1, 1) == "roll"
    assert sol.decision(3, 1) == "stand" and sol.decision(2, 1) == "roll"
    assert sol.bust == 1 - sol.win_probability


def test_rules_are_in_the_decisions() -> None:
    """Rules 1 and 2 appear as forced entries: 9 stands, 10 rolls, the third roll
    rolls."""
    for half, standing in ((1, [12]), (2, [8]), (1, [3]), (2, [None])):
        sol = solver.solve_turn(half, standing)
        for k in (1, 2, 3, 4):
            if sol.choice[9][k] is not None:
                assert sol.choice[9][k] == "stand" and sol.forced[9][k]
            if sol.choice[10][k] is not None:
                assert sol.choice[10][k] == "roll" and sol.forced[10][k]
        for t in range(3, 16):
            if t != 9 and sol.choice[t][3] is not None:
                assert sol.choice[t][3] == "roll" and sol.forced[t][3]
        assert sol.choice[0][0] == "roll" and sol.forced[0][0]


def test_outcome_distribution_sums_to_one() -> None:
    for half, standing, after in ((1, [7], 0), (2, [11], 0), (1, [], 3), (2, [], 2)):
        sol = solver.solve_turn(half, standing, after, exact=True)
        assert sum(sol.stand_at) + sol.bust + sol.fifteen == 1
        if half == 1:
            assert sol.fifteen == 0


def test_win_probability_falls_as_the_target_rises() -> None:
    for half in (1, 2):
        for after in (0, 1, 2):
            rows = solver.decision_table(half, after, exact=False)
            wins = [float(r.win) for r in rows if r.target is not None]
            assert all(a >= b - 1e-12 for a, b in zip(wins, wins[1:], strict=False))


def test_exact_and_float_agree() -> None:
    for half, standing, after in ((1, [9], 0), (2, [12], 1), (1, [], 2)):
        a = solver.solve_turn(half, standing, after, exact=True)
        b = solver.solve_turn(half, standing, after)
        assert float(a.win_probability) == pytest.approx(b.win_probability, abs=1e-12)
        assert a.choice == b.choice


# --- the seed's arithmetic ------------------------------------------------------------
def test_sinn_der_regeln() -> None:
    """The seed: "Der gewürfelte Wert ist durchschnittlich dreieinhalb ... Dreimal 3,5
    wäre 10,5 ... Viermal 3,5 wäre 14, das Risiko, die Fünfzehn zu überschreiten, ist
    deutlich höher." """
    rows = {r["rolls"]: r for r in solver.rule_arithmetic()}
    assert rows[1]["mean"] == Fraction(7, 2)
    assert rows[3]["mean"] == Fraction(21, 2) and rows[4]["mean"] == 14
    assert rows[3]["bust"] == Fraction(10, 216)  # 16, 17, 18: 6 + 3 + 1 throws
    for k in (3, 4):  # the convolution agrees with enumerating every throw
        brute = sum(1 for throw in product(range(1, 7), repeat=k) if sum(throw) > 15)
        assert rows[k]["bust"] == Fraction(brute, 6**k)
    assert rows[4]["bust"] > 7 * rows[3]["bust"]  # "deutlich höher"


# --- validation, table, plot, command line --------------------------------------------
@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((3, [5]), {}, "half must be 1 or 2"),
        ((1, [16]), {}, r"standing\[0\] must be a total 1..15"),
        ((1, [None]), {}, "a first-half bust ends the round"),
        ((2, [15]), {}, "a second-half 15 ends the round"),
        ((1, []), {}, "at least two players"),
        ((1, [5], -1), {}, "after must be"),
        ((2, [5]), {"half2_bust": "never"}, "half2_bust must be one of"),
    ],
)
def test_bad_solver_input(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        solver.solve_turn(*args, **kwargs)


def test_decision_rejects_impossible_points() -> None:
    sol = solver.solve_turn(1, [8])
    for total, rolls in ((9, 0), (13, 2), (16, 4), (1, 2)):
        with pytest.raises(ValueError, match="cannot be at total"):
            sol.decision(total, rolls)


def test_table_text() -> None:
    rows = solver.decision_table(1)
    assert [r.target for r in rows] == list(range(1, 16))
    text = solver.format_table(rows, fractions=True)
    assert "First half, last seat" in text and "= 0" in text  # the 15 row
    line = next(li for li in text.splitlines() if li.strip().startswith("12 "))
    # against a 12 after two rolls: roll below 9, 9 stands, 10 rolls, roll 11 and 12
    assert ".RRRRRRRsrRR..." in line
    second = solver.format_table(solver.decision_table(2, after=2))
    assert "2 player(s) still to act" in second and "none" in second


def test_main_prints_the_table_and_writes_the_plot(tmp_path, capsys) -> None:
    png = tmp_path / "fuenfzehn_tot.png"
    assert solver.main(["--half", "1", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "Sinn der Regeln" in out and "First half" in out and "Second half" not in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit) as info:
        solver.main(["--help"], prog="parlour solve")
    assert info.value.code == 0
    assert "usage: parlour solve" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        solver.main(["--after", "12"])
    assert info.value.code == 2
