"""Fünfzehn – tot, the dice game: the rules engine.

Implements the rule book (de.wikipedia "Fünfzehn – tot") as the state machine of the
rules notes §5; ``docs/games/fuenfzehn_tot.md`` lists
every rule with the sentence it rests on. Plain Python, no RNG: every die is a chance
node whose outcome is the face (1..6), so tests and ``reset(options={"dice": [...]})``
can script any game.

The game in one paragraph: one die, ten matches ("Streichhölzer"). A turn adds up rolls
and may stand at any time, except that a total of 9 must stand and 10 must roll
again (rule 1), and whoever rolls a third time must roll a fourth (rule 2, unless the
total is 9). Over 15 is "tot". In the first half the lowest total of each round takes a
match from the pool (a bust takes one at once); once the pool is empty the second half
begins, in which only match holders play and the highest total (or an immediate 15)
gives a match back. The last player holding matches loses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.engine import (
    CHANCE,
    TERMINAL,
    Game,
    IllegalActionError,
    check_choice,
    check_keys,
    check_seat,
)
from . import observation
from .state import Phase, State

ROLL, STAND = 0, 1
ACTION_NAMES = ("roll", "stand")
FACES = (1, 2, 3, 4, 5, 6)
LIMIT = 15  # "Der Wert von fünfzehn darf allerdings nicht überschritten werden"
MUST_STAND = 9  # rule 1: "NEUN DARF NICHT MEHR"
MUST_ROLL = 10  # rule 1: "ZEHN MUSS NOCH MAL"
THIRD_ROLL = 3  # rule 2: "WER DEN DRITTEN MACHT, MUSS AUCH DEN VIERTEN MACHEN"
MATCHES = 10  # "Außerdem braucht man 10 Streichhölzer"
MIN_PLAYERS = 2
MAX_PLAYERS = 10  # the seed allows any number ("beliebige Anzahl"); the env stops at 10

HALF2_BUST = ("out", "ends_round")
ALL_BUST = ("replay", "next_starter")

_CHANCE_OUTCOMES = [(f, 1.0 / 6.0) for f in FACES]
_ROLL_ONLY = (ROLL,)
_STAND_ONLY = (STAND,)
_BOTH = (ROLL, STAND)


def turn_options(
    total: int, rolls: int, rule1: bool = True, rule2: bool = True
) -> tuple[bool, bool]:
    """``(may_roll, may_stand)`` at ``total`` after ``rolls`` dice (rules 1 and 2;
    either can be switched off to study what it is worth).

    The priority is the seed's: "Die erste Regel gilt absolut, die zweite Regel gilt nur
    dann, wenn die gewürfelte zusammengezählte Zahl nicht Neun ist."
    """
    if rolls == 0:
        return True, False  # a turn starts with a roll: nothing to stand on yet
    if rule1 and total == MUST_STAND:
        return False, True  # rule 1, absolute: 9 stands, even after a third roll
    if rule1 and total == MUST_ROLL:
        return True, False  # rule 1: a 10 must roll at least once more
    if rule2 and rolls == THIRD_ROLL:
        return True, False  # rule 2: who made the third roll makes the fourth
    return True, True


def _options_table(rule1: bool, rule2: bool) -> tuple[tuple[int, ...], ...]:
    """Legal actions by ``total * 5 + min(rolls, 4)`` (rolls beyond 4 play alike)."""
    table = []
    for total in range(LIMIT + 1):
        for rolls in range(5):
            may_roll, may_stand = turn_options(total, rolls, rule1, rule2)
            if may_roll and may_stand:
                table.append(_BOTH)
            else:
                table.append(_ROLL_ONLY if may_roll else _STAND_ONLY)
    return tuple(table)


#: (rule1, rule2) -> the legal actions table, and the same as bitmasks
_LEGAL = {
    (r1, r2): _options_table(r1, r2) for r1 in (True, False) for r2 in (True, False)
}
_LEGAL_BITS = {
    rules: tuple(sum(1 << a for a in actions) for actions in table)
    for rules, table in _LEGAL.items()
}


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


class FuenfzehnTot(Game[State]):
    """Fünfzehn – tot for ``players`` players with ``matches`` matches.

    Options (the rules notes §5; defaults are the notes' recommendations):

    * ``players``: 2..10 (the seed: any number, two to six is a good size).
    * ``matches``: matches in the pool (the seed: 10).
    * ``auto_stand_at_15_half1``: False applies rule 2 literally, so a first-half 15
      reached with the third roll must roll a fourth time and bust; True stands on a
      first-half 15 by itself. [SEED-LITERAL in the notes]
    * ``half2_bust``: ``"out"`` (a second-half bust ends only that player's turn, with
      no total; the round goes on) or ``"ends_round"`` (the round ends at once, as a
      first-half bust does, and the best total standing wins it). [ENGINE CHOICE]
    * ``all_bust``: when nobody in a second-half round has a valid total, no match is
      discarded and the round is played again, by the same starter (``"replay"``) or by
      the next match holder clockwise (``"next_starter"``). [ENGINE CHOICE]
    * ``zero_sum``: True: the loser -1 and every other player +1/(n-1); False: the loser
      -1 and the others 0. [ENGINE CHOICE; the issue asks for zero-sum by default]
    * ``auto_forced_moves``: True applies an action by itself whenever it is the only
      legal one (a turn's first roll, rule 1, rule 2), so players decide only real
      choices.
    * ``rule1``, ``rule2``: the seed's two rules, on by default. Switching one off (a 9
      may roll on and a 10 may stand; a third roll needs no fourth) is not a reading of
      the seed but a variant for measuring what each rule is worth, as the seed's "Sinn
      der Regeln" argues with arithmetic. [VARIANT]
    """

    reset_option_keys = frozenset({"dice", "starter"})

    def __init__(
        self,
        players: int = 4,
        matches: int = MATCHES,
        auto_stand_at_15_half1: bool = False,
        half2_bust: str = "out",
        all_bust: str = "replay",
        zero_sum: bool = True,
        auto_forced_moves: bool = False,
        rule1: bool = True,
        rule2: bool = True,
    ):
        if isinstance(players, bool) or not isinstance(players, int | np.integer):
            raise ValueError(
                f"players must be an integer 2..{MAX_PLAYERS}, got {players!r}"
            )
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ValueError(
                f"players must be {MIN_PLAYERS}..{MAX_PLAYERS} (the seed allows any "
                f"number; this env supports up to {MAX_PLAYERS}), got {players}"
            )
        if isinstance(matches, bool) or not isinstance(matches, int | np.integer):
            raise ValueError(f"matches must be a positive integer, got {matches!r}")
        if not 1 <= matches <= 100:
            raise ValueError(f"matches must be 1..100 (the seed: 10), got {matches}")
        self.num_players = int(players)
        self.total_matches = int(matches)
        self.auto_stand_at_15_half1 = _check_bool(
            "auto_stand_at_15_half1", auto_stand_at_15_half1
        )
        self.half2_bust = check_choice("half2_bust", half2_bust, HALF2_BUST)
        self.all_bust = check_choice("all_bust", all_bust, ALL_BUST)
        #: whether a finished game's returns sum to zero (the generic soak checks it)
        self.zero_sum = _check_bool("zero_sum", zero_sum)
        self.auto_forced_moves = _check_bool("auto_forced_moves", auto_forced_moves)
        # The seed's two rules are on by default; switching one off is a variant for
        # studying what it is worth ("Sinn der Regeln"), not a reading of the seed.
        self.rule1 = _check_bool("rule1", rule1)
        self.rule2 = _check_bool("rule2", rule2)
        self._legal = _LEGAL[self.rule1, self.rule2]
        self._legal_bits = _LEGAL_BITS[self.rule1, self.rule2]
        self.name = "fuenfzehn_tot_v0"
        self.num_actions = 2
        self.observation_size = observation.size(self.num_players)
        self._win_share = 1.0 / (self.num_players - 1) if self.zero_sum else 0.0

    def __repr__(self) -> str:
        return (
            f"FuenfzehnTot(players={self.num_players}, matches={self.total_matches}, "
            f"auto_stand_at_15_half1={self.auto_stand_at_15_half1}, "
            f"half2_bust={self.half2_bust!r}, all_bust={self.all_bust!r}, "
            f"zero_sum={self.zero_sum}, auto_forced_moves={self.auto_forced_moves}, "
            f"rule1={self.rule1}, rule2={self.rule2})"
        )

    # --- the game tree ---------------------------------------------------------------
    def new_state(self) -> State:
        state = State(self.num_players, self.total_matches)
        # "Zuerst wird um das Herauskommen gewürfelt." Every player takes part.
        self._begin_roll_off(state, Phase.ROLL_OFF, list(range(self.num_players)))
        return state

    def current_player(self, state: State) -> int:
        phase = state.phase
        if phase == Phase.HALF1 or phase == Phase.HALF2:
            return CHANCE if state.pending else state.order[state.pos]
        if phase == Phase.OVER:
            return TERMINAL
        return CHANCE  # a roll-off

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        if self.current_player(state) != CHANCE:
            raise ValueError("not a chance node")
        return list(_CHANCE_OUTCOMES)

    def sample_chance(self, state: State, rng: np.random.Generator) -> list[int]:
        return [int(rng.integers(1, 7))]  # one fair die; faster than a weighted choice

    def legal_actions(self, state: State) -> list[int]:
        phase = state.phase
        if (phase != Phase.HALF1 and phase != Phase.HALF2) or state.pending:
            return []
        rolls = state.rolls
        return list(self._legal[state.total * 5 + (rolls if rolls < 4 else 4)])

    def legal_bits(self, state: State) -> int:
        """`legal_actions` as a bitmask (bit ``a`` for action ``a``), for the adapter's
        action mask."""
        phase = state.phase
        if (phase != Phase.HALF1 and phase != Phase.HALF2) or state.pending:
            return 0
        rolls = state.rolls
        return self._legal_bits[state.total * 5 + (rolls if rolls < 4 else 4)]

    def apply(self, state: State, action: int) -> None:
        phase = state.phase
        if phase == Phase.HALF1 or phase == Phase.HALF2:
            if state.pending:
                self._land(state, self._face(state, action))
            else:
                self._decide(state, action)
        elif phase == Phase.OVER:
            raise self.illegal(state, action, "the game is over")
        else:
            self._roll_off_face(state, self._face(state, action))
        if self.auto_forced_moves:
            self._auto(state)

    def _face(self, state: State, face: int) -> int:
        if isinstance(face, bool) or not isinstance(face, int | np.integer):
            raise self.illegal(state, face, "a die shows a face 1..6")
        if not 1 <= face <= 6:
            raise self.illegal(state, face, "a die shows a face 1..6")
        return int(face)

    def illegal(self, state: State, action: int, reason: str) -> IllegalActionError:
        if self.current_player(state) == CHANCE:
            return IllegalActionError(f"illegal chance outcome {action!r}: {reason}")
        return super().illegal(state, action, reason)

    # --- "Herauskommen": the roll-off for the start ----------------------------------
    def _pass_order(self, seats: Sequence[int], clockwise: bool) -> list[int]:
        # "Ein beliebiger Mitspieler fängt mit dem Würfeln an, reihum wird
        # weitergewürfelt": seat 0 rolls first (if it takes part); a counter-clockwise
        # pass runs 0, n-1, n-2, ...
        n = self.num_players
        return sorted(seats) if clockwise else sorted(seats, key=lambda s: -s % n)

    def _begin_roll_off(self, state: State, phase: Phase, seats: list[int]) -> None:
        state.phase = phase
        state.order, state.pos = [], 0  # no round is being played
        state.totals = [-1] * self.num_players
        state.busted = [False] * self.num_players
        state.ro_clockwise = True
        state.ro_seats = self._pass_order(seats, True)
        state.ro_faces = []
        state.ro_passes = []

    def _roll_off_face(self, state: State, face: int) -> None:
        state.ro_faces.append(face)
        if len(state.ro_faces) < len(state.ro_seats):
            return
        rolls = tuple(zip(state.ro_seats, state.ro_faces, strict=True))
        state.ro_passes.append(rolls)
        # "Der Spieler mit der geringsten Augenzahl hat das Herauskommen verloren und
        # muss zur ersten Spielrunde beginnen." The same lowest-roll rule settles a tie
        # for the most matches before the second half ("analog wie oben").
        low = min(state.ro_faces)
        tied = [seat for seat, f in rolls if f == low]
        if len(tied) > 1:
            # "wird noch mal von diesen Mitspielern gewürfelt, diesmal im
            # Gegenuhrzeigersinn. Ist wieder keine Entscheidung gefallen, wird ein
            # drittes Mal (wieder im Uhrzeigersinn) gewürfelt und so weiter"
            state.ro_clockwise = not state.ro_clockwise
            state.ro_seats = self._pass_order(tied, state.ro_clockwise)
            state.ro_faces = []
            return
        purpose = "start" if state.phase == Phase.ROLL_OFF else "half2"
        state.rolloffs.append((purpose, tuple(state.ro_passes)))
        state.ro_seats, state.ro_faces, state.ro_passes = [], [], []
        state.phase = Phase.HALF1 if purpose == "start" else Phase.HALF2
        self._start_round(state, tied[0])

    # --- a player's turn -------------------------------------------------------------
    def _decide(self, state: State, action: int) -> None:
        if action not in self.legal_actions(state):
            raise self.illegal(state, action, self._why_illegal(state, action))
        if action == ROLL:
            state.pending = True  # the die is a chance node
        else:
            self._stand(state)

    def _why_illegal(self, state: State, action: int) -> str:
        if action not in (ROLL, STAND):
            return "the actions are roll (0) and stand (1)"
        if state.rolls == 0:
            return "a turn starts with a roll (there is no total to stand on yet)"
        if self.rule1 and state.total == MUST_STAND:
            return "rule 1: a total of 9 must stand (NEUN DARF NICHT MEHR)"
        if self.rule1 and state.total == MUST_ROLL:
            return "rule 1: a total of 10 must roll again (ZEHN MUSS NOCH MAL)"
        return (
            "rule 2: who rolls a third time must roll a fourth (WER DEN DRITTEN "
            "MACHT, MUSS AUCH DEN VIERTEN MACHEN)"
        )

    def _land(self, state: State, face: int) -> None:
        """The die of a ROLL lands: add it up; the turn or the round may end."""
        state.pending = False
        state.rolls += 1
        state.total += face
        state.dice.append(face)
        total = state.total
        player = state.order[state.pos]
        if total > LIMIT:  # "tot"
            state.busted[player] = True
            if state.phase == Phase.HALF1:
                # "Hat aber ein Mitspieler eine höhere Zahl als fünfzehn gewürfelt, so
                # muss er sofort ein Streichholz nehmen und die Spielrunde ist
                # augenblicklich beendet. Der Verlierer spielt auch sofort zur neuen
                # Spielrunde aus."
                self._take_match(state, player, "bust")
            elif self.half2_bust == "ends_round":
                self._end_half2_round(state)
            else:
                self._next_turn(state)  # out of this round, without a total
        elif total == LIMIT and state.phase == Phase.HALF2:
            # "Hat ein Spieler die Zahl fünfzehn erreicht, kann er sofort ein
            # Streichholz ablegen und die Spielrunde ist augenblicklich beendet."
            # This overrides rule 2 (notes §5.3).
            state.totals[player] = LIMIT
            self._discard(state, player, "fifteen")
        elif total == LIMIT and self.auto_stand_at_15_half1:
            self._stand(state)

    def _stand(self, state: State) -> None:
        state.totals[state.order[state.pos]] = state.total
        self._next_turn(state)

    def _next_turn(self, state: State) -> None:
        state.pos += 1
        state.total = state.rolls = 0
        state.dice = []
        if state.pos < len(state.order):
            return
        # "Normalerweise geht eine Spielrunde bis zum letzten Mitspieler"
        if state.phase == Phase.HALF1:
            self._end_half1_round(state)
        else:
            self._end_half2_round(state)

    def _auto(self, state: State) -> None:
        while not state.pending and (
            state.phase == Phase.HALF1 or state.phase == Phase.HALF2
        ):
            legal = self.legal_actions(state)
            if len(legal) != 1:
                return
            self._decide(state, legal[0])

    # --- rounds ----------------------------------------------------------------------
    def _start_round(self, state: State, starter: int) -> None:
        n = self.num_players
        # "Es wird reihum gewürfelt, die Reihenfolge ist mit dem Uhrzeigersinn."
        seats = [(starter + i) % n for i in range(n)]
        if state.phase == Phase.HALF2:
            # "Wer in der ersten Hälfte kein Streichholz bekommen hat, hat in der
            # zweiten Hälfte eine Spielpause und guckt nur zu." (So does who has none
            # left.)
            seats = [s for s in seats if state.matches[s] > 0]
        state.starter = starter
        state.order = seats
        state.pos = 0
        state.totals = [-1] * n
        state.busted = [False] * n
        state.total = state.rolls = 0
        state.dice = []
        state.pending = False
        state.round_no += 1

    def _end_half1_round(self, state: State) -> None:
        # "der Spieler mit der kleinsten stehengelassenen Zahl bekommt den Fehlerpunkt"
        # and "Eine vorgelegte Zahl ist immer höher als eine nachgewürfelte": among
        # equal lowest totals the later one loses, hence <=.
        loser = state.order[0]
        low = state.totals[loser]
        for seat in state.order[1:]:
            if state.totals[seat] <= low:
                loser, low = seat, state.totals[seat]
        self._take_match(state, loser, "lowest")

    def _end_half2_round(self, state: State) -> None:
        # "dann kann der Spieler mit der höchsten Zahl ein Streichholz ablegen"; an
        # earlier total beats an equal later one, hence the strict >. A busted seat
        # has no total (-1).
        winner, best = -1, 0
        for seat in state.order:
            if state.totals[seat] > best:
                winner, best = seat, state.totals[seat]
        if winner >= 0:
            self._discard(state, winner, "highest")
            return
        # Nobody has a valid total: nothing is discarded, the round is played again.
        state.last_round = (2, -1, "all bust")
        starter = state.starter
        if self.all_bust == "next_starter":
            starter = self._next_holder(state, starter, +1)
        self._start_round(state, starter)

    def _take_match(self, state: State, seat: int, why: str) -> None:
        state.pool -= 1
        state.matches[seat] += 1
        state.last_round = (1, seat, why)
        if state.pool > 0:
            # "Der Verlierer spielt zur neuen Spielrunde aus."
            self._start_round(state, seat)
        else:
            self._start_half2(state)

    def _start_half2(self, state: State) -> None:
        holders = [s for s in range(self.num_players) if state.matches[s] > 0]
        if len(holders) == 1:
            # One player took every match: nobody can keep one longer than he does.
            self._game_over(state, holders[0])
            return
        # "Der Mitspieler mit den meisten Streichhölzern beginnt die erste Spielrunde
        # der zweiten Hälfte. Haben zwei oder mehr Mitspieler die gleiche höchste
        # Anzahl von Streichhölzern, so wird analog wie oben in der Herauskomm-Runde
        # vorgegangen."
        most = max(state.matches)
        tied = [s for s in holders if state.matches[s] == most]
        if len(tied) == 1:
            state.phase = Phase.HALF2
            self._start_round(state, tied[0])
        else:
            self._begin_roll_off(state, Phase.HALF2_ROLL_OFF, tied)

    def _discard(self, state: State, seat: int, why: str) -> None:
        state.matches[seat] -= 1
        state.last_round = (2, seat, why)
        holders = [s for s in range(self.num_players) if state.matches[s] > 0]
        if len(holders) < 2:
            # "wenn man in der zweiten Hälfte als Letzter noch ein Streichholz (oder
            # mehrere Streichhölzer) übrigbehält"
            self._game_over(state, holders[0])
            return
        # "Der Sieger spielt dann auch sofort zur neuen Spielrunde aus. Hat der Sieger
        # der Spielrunde kein Streichholz mehr, so spielt der rechts von ihm sitzende
        # Mitspieler zur nächsten Spielrunde aus." Right = counter-clockwise; players
        # without matches sit out, so the nearest holder on his right starts.
        if state.matches[seat] > 0:
            self._start_round(state, seat)
        else:
            self._start_round(state, self._next_holder(state, seat, -1))

    def _next_holder(self, state: State, seat: int, step: int) -> int:
        """The nearest seat with matches from ``seat`` going ``step`` (+1 left, -1
        right)."""
        n = self.num_players
        s = (seat + step) % n
        while state.matches[s] == 0:
            s = (s + step) % n
        return s

    def _game_over(self, state: State, loser: int) -> None:
        state.phase = Phase.OVER
        state.loser = loser
        state.order, state.pos = [], 0
        state.total = state.rolls = 0
        state.dice = []
        state.pending = False

    # --- results ---------------------------------------------------------------------
    def returns(self, state: State) -> list[float]:
        """0 until the end; then the loser -1 and the others +1/(n-1) (or 0 when
        ``zero_sum=False``)."""
        if state.phase != Phase.OVER:
            return [0.0] * self.num_players
        share = self._win_share
        return [-1.0 if s == state.loser else share for s in range(self.num_players)]

    def utility_bounds(self) -> tuple[float, float]:
        return -1.0, (1.0 / (self.num_players - 1) if self.zero_sum else 0.0)

    def rule_tables(self) -> dict[str, Any]:
        """The die, the limits of rules 1 and 2, the turn's legal actions by total
        and rolls, and the pay-out (`Game.rule_tables`)."""
        return {
            **super().rule_tables(),
            "faces": list(FACES),
            "limit": LIMIT,
            "must_stand": MUST_STAND,
            "must_roll": MUST_ROLL,
            "third_roll": THIRD_ROLL,
            "legal_by_total_and_rolls": self._legal,
            "win_share": self._win_share,
        }

    def info(self, state: State) -> dict[str, Any]:
        """Public facts: everything is public here except the dice still to come."""
        return {
            "phase": state.phase.name.lower(),
            "pool": state.pool,
            "matches": tuple(state.matches),
            "round": state.round_no,
            "starter": state.starter,
            "order": tuple(state.order),
            "totals": tuple(None if t < 0 else t for t in state.totals),
            "busted": tuple(state.busted),
            "total": state.total,
            "rolls": state.rolls,
            "dice": tuple(state.dice),
            "roll_offs": tuple(state.rolloffs),
            "last_round": state.last_round,
            "loser": state.loser,
        }

    def check_invariants(self, state: State) -> None:
        """Matches conserved; round and turn consistent with the rules."""
        n = self.num_players
        assert state.pool >= 0 and min(state.matches) >= 0, "negative matches"
        held = sum(state.matches)
        if state.phase in (Phase.ROLL_OFF, Phase.HALF1):
            assert state.pool + held == self.total_matches, "matches not conserved"
        else:
            assert state.pool == 0, "second half with matches left in the pool"
            assert held <= self.total_matches, "more matches than in the game"
        if state.phase == Phase.OVER:
            holders = [s for s in range(n) if state.matches[s] > 0]
            assert holders == [state.loser], f"game over but holders {holders}"
            assert state.rolls == 0 and not state.pending
            if self.zero_sum:
                assert abs(sum(self.returns(state))) < 1e-9, "returns do not sum to 0"
            return
        if state.phase in (Phase.ROLL_OFF, Phase.HALF2_ROLL_OFF):
            assert state.ro_seats and len(state.ro_faces) < len(state.ro_seats)
            if state.phase == Phase.HALF2_ROLL_OFF:
                most = max(state.matches)
                assert all(state.matches[s] == most for s in state.ro_seats)
            return
        order = state.order
        assert 0 <= state.pos < len(order), "no player to act"
        assert len(order) >= 2, "a round needs two players"
        start = order[0]
        clockwise = sorted(order, key=lambda s: (s - start) % n)
        assert order == clockwise, "order not clockwise"
        if state.phase == Phase.HALF1:
            assert len(order) == n, "everybody plays in the first half"
        else:
            holders = [s for s in range(n) if state.matches[s] > 0]
            assert sorted(order) == holders, "the second half is for match holders"
        for i, seat in enumerate(order):
            finished = state.totals[seat] >= 0 or state.busted[seat]
            assert finished == (i < state.pos), f"seat {seat} finished out of turn"
            if state.busted[seat]:
                assert state.phase == Phase.HALF2, "a first-half bust ends the round"
                assert state.totals[seat] < 0
            elif i < state.pos:
                assert 1 <= state.totals[seat] <= LIMIT
                if state.phase == Phase.HALF2:
                    assert state.totals[seat] < LIMIT, "a second-half 15 ends a round"
        t, k = state.total, state.rolls
        assert len(state.dice) == k and sum(state.dice) == t
        assert k <= t <= min(6 * k, LIMIT), f"impossible total {t} after {k} rolls"
        if state.phase == Phase.HALF2:
            assert t < LIMIT, "a second-half 15 ends the round at once"

    # --- names, options, observation, rendering --------------------------------------
    def action_name(self, action: int) -> str:
        if isinstance(action, bool) or action not in (ROLL, STAND):
            raise ValueError(
                f"unknown action id {action!r}; actions: 0 (roll), 1 (stand)"
            )
        return ACTION_NAMES[action]

    def action_id(self, name: str) -> int:
        key = name.strip().lower() if isinstance(name, str) else name
        if key not in ACTION_NAMES:
            raise ValueError(f"unknown action {name!r}; actions: roll, stand")
        return ACTION_NAMES.index(key)

    def forced_chance(self, options: Mapping[str, Any]) -> list[int | None]:
        """Chance outcomes for ``{"starter": s}`` and/or ``{"dice": [faces]}``.

        ``dice`` lists the faces in the order they are rolled, the roll-off included
        (seat 0 rolls first, see `_pass_order`); ``None`` leaves one die to chance. A
        game that needs a die after the list is an error (`forced_ran_out`), not random
        dice; faces left over when it ends are ignored. ``starter`` scripts the roll-off
        so that seat ``s`` rolls a 1 and everyone else a 2; ``dice`` then start with
        the first turn (without ``dice``, every die after the roll-off is random).
        """
        if "deal" in options or "deals" in options:
            raise ValueError(
                f"{self.name} has no deal; script the dice with options['dice'] "
                "(faces 1..6 in rolling order, the roll-off included)"
            )
        check_keys("reset options", options, sorted(self.reset_option_keys))
        out: list[int | None] = []
        if options.get("starter") is not None:
            n = self.num_players
            starter = check_seat("options['starter']", options["starter"], n)
            out.extend(1 if s == starter else 2 for s in range(n))
        dice = options.get("dice")
        if dice is None:
            return out
        if not isinstance(dice, Sequence) or isinstance(dice, str | bytes):
            raise ValueError(
                f"options['dice'] must be a list of die faces 1..6, got {dice!r}"
            )
        for i, face in enumerate(dice):
            if face is None:
                out.append(None)
                continue
            bad = isinstance(face, bool) or not isinstance(face, int | np.integer)
            if bad or not 1 <= face <= 6:
                raise ValueError(
                    f"options['dice'][{i}] must be a die face 1..6, got {face!r}"
                )
            out.append(int(face))
        return out

    def forced_ran_out(self, options: Mapping[str, Any]) -> str | None:
        """A scripted ``dice`` list that runs out is an error; a ``starter`` alone
        scripts only the roll-off, and the dice after it are random."""
        dice = options.get("dice")
        if dice is None:
            return None
        return (
            f"options['dice'] ran out: the game needs another die after the "
            f"{len(dice)} scripted ones; list more faces (None for a random one)"
        )

    def observe(self, state: State, player: int) -> np.ndarray:
        return observation.encode(self, state, player)

    def render(self, state: State, viewer: int | None = None) -> str:
        return observation.render(self, state, viewer)


__all__ = [
    "ACTION_NAMES",
    "MAX_PLAYERS",
    "FuenfzehnTot",
    "LIMIT",
    "MUST_ROLL",
    "MUST_STAND",
    "Phase",
    "ROLL",
    "STAND",
    "State",
    "turn_options",
]
