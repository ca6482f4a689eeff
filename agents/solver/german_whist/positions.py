"""Engine positions for the stage-2 search: read, solved, and every optimal card.

`Stage2Position` reads an open-handed position from the engine state; `PositionSolver`
asks `Stage2Solver` about it in the engine's card ids; `move_values`, `solve`,
`best_stage2_card` and `optimal_moves` (the imitation warm start's exact labels) are
what the bots and the harnesses call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ....envs.german_whist.rules import TRICKS_TO_WIN, GermanWhist
from ....envs.german_whist.state import Phase, State
from .search import SHARED, Layout, Stage2Solver, most_reached


# --- engine positions -----------------------------------------------------------------
@dataclass(frozen=True)
class Stage2Position:
    """An open-handed stage-2 position read from the engine: both hands, who leads, the
    card led (or -1), the seat to play, and each seat's stage-2 tricks so far."""

    hands: tuple[int, int]
    leader: int
    lead: int
    to_play: int
    tricks: tuple[int, int]

    @classmethod
    def from_state(cls, state: State) -> Stage2Position:
        if state.phase != Phase.PLAY or state.stage != 2:
            raise ValueError(
                "the solver needs a stage-2 position (stock empty, play going on)"
            )
        return cls(
            (state.hands[0], state.hands[1]),
            state.leader,
            state.lead,
            state.to_play,
            (state.tricks2[0], state.tricks2[1]),
        )

    @property
    def tricks_left(self) -> int:
        """Tricks still to play, the open one included."""
        return max(self.hands[0].bit_count(), self.hands[1].bit_count())


class PositionSolver:
    """Card-level answers for one engine game (pack and trump) on top of `Stage2Solver`.

    Values are for a given seat and count the tricks still to play (the open trick
    included), as if all 13 were played out: German Whist's 7th trick ends the game, but
    who reaches 7 first is the same either way.
    """

    def __init__(
        self, game: GermanWhist, trump_mask: int, solver: Stage2Solver | None = None
    ):
        self.game = game
        self.layout = Layout.of(game, trump_mask)
        self.solver = solver or SHARED

    # seat 0's view at a trick boundary
    def _reach0(self, h0: int, h1: int, leader: int, k0: int) -> bool:
        n = h0.bit_count()
        if k0 <= 0:
            return True
        if k0 > n:
            return False
        return self.solver.reach(self.layout.word(h0, h1), leader, k0)

    def legal(self, pos: Stage2Position) -> int:
        """The legal cards of the seat to play (stage 2: follow suit, jokers as
        trumps)."""
        hand = pos.hands[pos.to_play]
        if pos.lead < 0:
            return hand
        return (hand & self.layout.group_mask(pos.lead)) or hand

    def can_take(self, pos: Stage2Position, seat: int, k: int) -> bool:
        """True if ``seat`` can take at least ``k`` of the tricks left, against any
        defence."""
        if pos.lead < 0:
            return self._seat_reach(pos.hands, pos.leader, seat, k)
        # the open trick: the follower's best answer decides
        mover = pos.to_play
        for card in self._reps(pos, self.legal(pos)):
            if self.after(pos, card, seat, k) == (mover == seat):
                return mover == seat
        return mover != seat

    def _seat_reach(
        self, hands: tuple[int, int], leader: int, seat: int, k: int
    ) -> bool:
        n = hands[0].bit_count()
        if seat == 0:
            return self._reach0(hands[0], hands[1], leader, k)
        return not self._reach0(hands[0], hands[1], leader, n - k + 1)

    def after(self, pos: Stage2Position, card: int, seat: int, k: int) -> bool:
        """True if, once the seat to play plays ``card``, ``seat`` can still take ``k``
        of the tricks left (the open trick included)."""
        lay = self.layout
        mover = pos.to_play
        hands = list(pos.hands)
        hands[mover] &= ~(1 << card)
        if pos.lead >= 0:  # this card completes the trick
            winner = pos.leader if lay.beats(pos.lead, card) else mover
            got = 1 if winner == seat else 0
            return self._seat_reach((hands[0], hands[1]), winner, seat, k - got)
        # a lead: every answer of the follower must leave ``seat`` on target (or, if the
        # follower is ``seat``, one answer must)
        follower = 1 - mover
        hand_f = hands[follower]
        legal = (hand_f & lay.group_mask(card)) or hand_f
        remaining = hands[0] | hands[1] | (1 << card)
        for cls in lay.classes(legal, remaining):
            answer = cls[0]
            h = list(hands)
            h[follower] &= ~(1 << answer)
            winner = mover if lay.beats(card, answer) else follower
            got = 1 if winner == seat else 0
            ok = self._seat_reach((h[0], h[1]), winner, seat, k - got)
            if ok == (follower == seat):
                return ok
        return follower != seat

    def _reps(self, pos: Stage2Position, legal: int) -> list[int]:
        remaining = (
            pos.hands[0] | pos.hands[1] | ((1 << pos.lead) if pos.lead >= 0 else 0)
        )
        return [cls[0] for cls in self.layout.classes(legal, remaining)]

    def max_tricks(self, pos: Stage2Position, seat: int) -> int:
        """The most of the tricks left that ``seat`` can take against best defence."""
        return most_reached(lambda k: self.can_take(pos, seat, k), pos.tricks_left)

    def max_tricks_after(
        self, pos: Stage2Position, card: int, seat: int, lower: int = 0
    ) -> int:
        """The most tricks ``seat`` can take once ``card`` is played (``lower - 1`` when
        that is below ``lower``: the search stops there)."""
        if lower > 0 and not self.after(pos, card, seat, lower):
            return lower - 1
        lo, hi = max(lower, 0), pos.tricks_left + 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.after(pos, card, seat, mid):
                lo = mid
            else:
                hi = mid
        return lo

    def classes(self, pos: Stage2Position) -> list[list[int]]:
        """The legal cards of the seat to play in classes of equivalent cards."""
        remaining = (
            pos.hands[0] | pos.hands[1] | ((1 << pos.lead) if pos.lead >= 0 else 0)
        )
        return self.layout.classes(self.legal(pos), remaining)


def german_target(pos: Stage2Position, seat: int) -> int:
    """Stage-2 tricks ``seat`` still needs to win German Whist ("7 of the 13
    tricks")."""
    return TRICKS_TO_WIN - pos.tricks[seat]


@dataclass(frozen=True)
class MoveValue:
    """What one legal card is worth to the seat playing it, against perfect play.

    ``wins``: German Whist only, whether the seat still wins (None in Honeymoon).
    ``tricks``: the most of the tricks left (the open one included) it can still take,
    all 13 stage-2 tricks played out; None when not computed.
    """

    card: int
    wins: bool | None
    tricks: int | None


def move_values(
    game: GermanWhist,
    state: State,
    tricks: bool = True,
    solver: Stage2Solver | None = None,
) -> dict[int, MoveValue]:
    """Every legal card of the seat to play in a stage-2 position, with its exact value
    (German: win or lose, and the tricks when ``tricks``; Honeymoon: the tricks)."""
    pos = Stage2Position.from_state(state)
    ps = PositionSolver(game, state.trump_mask, solver)
    seat = pos.to_play
    out: dict[int, MoveValue] = {}
    for cls in ps.classes(pos):
        card = cls[0]
        wins = None
        if not game.honeymoon:
            wins = ps.after(pos, card, seat, german_target(pos, seat))
        t = ps.max_tricks_after(pos, card, seat) if tricks or game.honeymoon else None
        for c in cls:
            out[c] = MoveValue(c, wins, t)
    return out


def solve(
    game: GermanWhist, state: State, solver: Stage2Solver | None = None
) -> dict[str, Any]:
    """The exact value of a stage-2 position for the seat to play: ``{"seat", "wins"
    (German only, else None), "max_tricks" (of the tricks left)}``."""
    pos = Stage2Position.from_state(state)
    ps = PositionSolver(game, state.trump_mask, solver)
    seat = pos.to_play
    wins = None if game.honeymoon else ps.can_take(pos, seat, german_target(pos, seat))
    return {"seat": seat, "wins": wins, "max_tricks": ps.max_tricks(pos, seat)}


def best_stage2_card(
    game: GermanWhist, state: State, solver: Stage2Solver | None = None
) -> int:
    """The solver bot's stage-2 card (see `SolverAgent` for the choice among equals)."""
    pos = Stage2Position.from_state(state)
    ps = PositionSolver(game, state.trump_mask, solver)
    seat = pos.to_play
    classes = ps.classes(pos)
    if len(classes) == 1:
        return classes[0][0]
    classes = _natural_order(ps.layout, pos, classes)
    if not game.honeymoon:
        need = german_target(pos, seat)
        for cls in classes:
            if ps.after(pos, cls[0], seat, need):
                return cls[0]  # a winning card: any one keeps the win
    # Honeymoon, or a lost German position: the most tricks; ties to the natural order.
    best, best_t = classes[0][0], -1
    for cls in classes:
        t = ps.max_tricks_after(pos, cls[0], seat, lower=best_t + 1)
        if t > best_t:
            best, best_t = cls[0], t
    return best


def optimal_moves(
    game: GermanWhist, state: State, solver: Stage2Solver | None = None
) -> list[int] | None:
    """Every legal card that keeps the exact value of a stage-2 position, or None
    before stage 2 (the solver knows nothing exact there).

    German Whist: the cards that keep a won position won; in a lost position the cards
    that take the most tricks. Honeymoon Whist: the cards that take the most tricks.
    The imitation warm start (`parlour.training.imitation`) uses these as its labels:
    any of them is as good as the teacher's choice among them.
    """
    if state.phase != Phase.PLAY or state.stage != 2:
        return None
    pos = Stage2Position.from_state(state)
    ps = PositionSolver(game, state.trump_mask, solver)
    seat = pos.to_play
    classes = ps.classes(pos)
    if len(classes) > 1 and not game.honeymoon:
        need = german_target(pos, seat)
        winning = [cls for cls in classes if ps.after(pos, cls[0], seat, need)]
        if winning:
            return sorted(c for cls in winning for c in cls)
    if len(classes) > 1:
        values = [ps.max_tricks_after(pos, cls[0], seat) for cls in classes]
        best = max(values)
        classes = [cls for cls, v in zip(classes, values, strict=True) if v == best]
    return sorted(c for cls in classes for c in cls)


def _natural_order(
    lay: Layout, pos: Stage2Position, classes: list[list[int]]
) -> list[list[int]]:
    """Classes in the order a player would consider them: following, the cheapest card
    that wins, then the lowest losers; leading, the top card of a suit first, then low
    cards.
    """
    strength = lay.strength
    if pos.lead >= 0:
        beaters = lay.beaters[pos.lead]

        def follow_key(cls: list[int]) -> tuple:
            c = cls[0]
            return (not (1 << c) & beaters, bool((1 << c) & lay.trumps), strength[c])

        return sorted(classes, key=follow_key)
    remaining = pos.hands[0] | pos.hands[1]

    def lead_key(cls: list[int]) -> tuple:
        c = cls[0]
        top = not lay.above[c] & remaining & ~pos.hands[pos.to_play]
        return (not top, bool((1 << c) & lay.trumps), strength[c])

    return sorted(classes, key=lead_key)
