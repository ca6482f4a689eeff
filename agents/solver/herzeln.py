"""Exact trick-play solver and PIMC bots for Herzeln's seven trick contracts.

*Herzeln* (English Wikipedia) as the engine `parlour.envs.herzeln` plays it (3 or 4
players); ``docs/solvers.md`` is the user's page.

**The objective** is the seat's points in the deal under the current contract: the
penalties of the hearts, Queens or the K♥ it takes, 10 per trick (+ in Tricks, − in No
Tricks), or the 40 of the last trick (+ / −). Everyone plays for himself, so the search
is *paranoid*: the seat against all the others together, who are taken to want the
seat's score as low as possible. In the penalty contracts that is pessimistic: real
opponents duck the penalties themselves rather than load them on the seat.

**Domino** (Unteranlegen) is not a trick game: it is not solved, and the bots play the
heuristic bot's lay there.

**Equivalences**: cards of one suit worth the same under the contract with no card still
out between them in the trick order are interchangeable.

**The bots.** ``pimc:N`` samples ``N`` deals of the unseen cards consistent with what
the seat knows (`knowledge`: its hand, every card played, the voids each seat showed —
the engine's public ``voids``, exact since there are no trumps) and plays the card with
the best mean exact value; ``solver`` is ``pimc:DEFAULT_SAMPLES``.

**Speed.** `HerzelnSolver` searches compiled with numba (`herzeln_jit`: the same values
from the same search, many times faster) where numba imports and its JIT is on, else
with the pure-Python `TrickSolver`; ``PARLOUR_JIT=0`` keeps the latter.
"""

from __future__ import annotations

from typing import Any

from ...envs.core.cards import cards_in
from ...envs.herzeln.rules import DOMINO, TRICKS_PER_DEAL, Herzeln
from ...envs.herzeln.state import Phase, State
from ..herzeln import PackTables
from .backend import CompiledSearch, requested_backend
from .tricks import (
    TT_LIMIT,
    Knowledge,
    PIMCAgent,
    TrickSolver,
    acting_seat,
    solver_agents,
)

DEFAULT_SAMPLES = 8


class HerzelnSolver(CompiledSearch, TrickSolver):
    """Paranoid trick play of one open Herzeln deal: seat ``seat``'s points under the
    deal's contract against all the others.

    Two backends give the same values: the search compiled with numba
    (`parlour.agents.solver.herzeln_jit`) and the pure-Python `TrickSolver`.
    ``backend``: ``"numba"``, ``"python"``, or ``"auto"`` (numba when it imports and its
    JIT is on); None reads ``PARLOUR_JIT`` (`parlour.agents.solver.backend`).
    """

    kernel_module = f"{__package__}.herzeln_jit"
    kernel_what = "Herzeln search"

    def __init__(
        self,
        game: Herzeln,
        hands: list[int],
        seat: int,
        contract: int,
        tt_limit: int = TT_LIMIT,
        backend: str | None = None,
    ):
        if contract == DOMINO:
            raise ValueError(
                "Domino is not a trick contract; the solver cannot play it"
            )
        super().__init__(game.num_players, hands, 1 << seat, tt_limit)
        self.choose_backend(backend)
        self.game = game
        self.seat = seat
        self.contract = contract
        self.values = game.card_value[contract]
        self.per_trick = game.trick_value[contract]
        self.last = game.last_trick_value[contract]
        self.strength = game.strength
        self.suit = game.suit
        self.suit_mask = game.suit_mask
        n = game.deck.size
        # the cards of each card's suit that beat it: the heuristic's per-pack table
        self.above = PackTables.of(game).above
        #: sort key: suit, then strength high to low
        self.key = [self.suit[c] * 64 - self.strength[c] for c in range(n)]
        self.negative = sum(1 << c for c in range(n) if self.values[c] < 0)

    def new_kernel(self, jit: Any) -> Any:
        return jit.Kernel(self, self.tt_limit)

    def legal_mask(self, seat: int, trick: list[int], ext: Any = None) -> int:
        """The engine's `Herzeln.legal_mask`: follow suit, else anything."""
        hand = self.hands[seat]
        if not trick:
            return hand
        return hand & self.suit_mask[self.suit[trick[0]]] or hand

    def equivalent(self, a: int, b: int, remaining: int) -> bool:
        if self.suit[a] != self.suit[b] or self.values[a] != self.values[b]:
            return False
        hi, lo = (a, b) if self.strength[a] > self.strength[b] else (b, a)
        return not self.above[lo] & ~self.above[hi] & ~(1 << hi) & remaining

    def _winning(self, trick: list[int]) -> int:
        strength, suit = self.strength, self.suit
        led = suit[trick[0]]
        best_i, best = 0, strength[trick[0]]
        for i in range(1, len(trick)):
            c = trick[i]
            if suit[c] == led and strength[c] > best:
                best_i, best = i, strength[c]
        return best_i

    def legal(self, seat: int, trick: list[int], ext: Any) -> list[int]:
        mask = self.legal_mask(seat, trick)
        key = self.key
        cards = self.distinct(sorted(cards_in(mask), key=key.__getitem__), trick)
        if len(cards) < 2:
            return cards
        strength = self.strength
        if not trick:
            return sorted(cards, key=strength.__getitem__)  # low leads first
        best = trick[self._winning(trick)]
        led = self.suit[trick[0]]
        win = [c for c in cards if self.suit[c] == led and strength[c] > strength[best]]
        lose = [c for c in cards if c not in win]
        # the seat wants good tricks and the others want it to take bad ones; try the
        # seat's ducks (highest losers) and the others' overtakes first
        lose.sort(key=lambda c: (self.values[c], -strength[c]))
        win.sort(key=strength.__getitem__)
        return lose + win if self.is_max[seat] else win + lose

    def finish(self, trick: list[int], leader: int, ext: Any) -> tuple[int, int, Any]:
        winner = (leader + self._winning(trick)) % self.n
        if not self.is_max[winner]:
            return winner, 0, ext
        pts = self.per_trick
        values = self.values
        for c in trick:
            pts += values[c]
        if not self.hands[winner]:
            pts += self.last  # the eighth trick
        return winner, pts, ext

    def bounds(self, leader: int, ext: Any) -> tuple[int, int]:
        held = 0
        for h in self.hands:
            held |= h
        neg = 0
        bad = held & self.negative
        values = self.values
        while bad:
            low = bad & -bad
            neg += values[low.bit_length() - 1]
            bad ^= low
        left = self.hands[leader].bit_count()
        per, last = self.per_trick, self.last
        lo = neg + min(per, 0) * left + min(last, 0)
        hi = max(per, 0) * left + max(last, 0)
        return lo, hi


def solver_for(
    game: Herzeln, state: State, seat: int, hands: list[int] | None = None
) -> HerzelnSolver:
    """A solver for ``state`` (or the world ``hands`` of it), ``seat`` solving."""
    if state.phase != Phase.TRICKS:
        raise ValueError(f"no trick play to solve in phase {state.phase.name}")
    hands = list(state.hands if hands is None else hands)
    return HerzelnSolver(game, hands, seat, state.contract)


def move_values(
    game: Herzeln,
    state: State,
    hands: list[int] | None = None,
    seat: int | None = None,
) -> dict[int, int]:
    """Each legal card's exact (paranoid) value: the acting seat's points in the deal
    (those scored so far included), all hands open (``hands``: a world instead of the
    state's)."""
    seat = acting_seat(state, seat)
    solver = solver_for(game, state, seat, hands)
    legal = game.legal_actions(state)
    values = solver.move_values(state.leader, list(state.trick), None, legal)
    base = state.points[seat]
    return {a: base + v for a, v in values.items()}


def solve(game: Herzeln, state: State, hands: list[int] | None = None) -> int:
    """The seat to act's points in the deal with best (paranoid) play."""
    return max(move_values(game, state, hands).values())


def knowledge(game: Herzeln, state: State, seat: int) -> Knowledge:
    """What ``seat`` knows in trick play (read from public state only)."""
    n = game.num_players
    played = 0
    for p in state.played_by:
        played |= p
    pool = game.deck.all_mask & ~played & ~state.hands[seat]
    allowed = []
    for s in range(n):
        forbid = 0
        for suit in range(4):
            if state.voids[s] >> suit & 1:
                forbid |= game.suit_mask[suit]
        allowed.append(0 if s == seat else pool & ~forbid)
    known = [0] * n
    known[seat] = state.hands[seat]
    return Knowledge.of(seat, state.hands, known, allowed, pool)


class HerzelnPIMC(PIMCAgent):
    """``pimc:N`` for ``herzeln_v0`` (see the module docstring)."""

    env_name = "herzeln_v0"
    max_cards = {3: 7, 4: 5}  # PIMC from this hand size down; the heuristic before
    game_class = Herzeln
    trick_phase = Phase.TRICKS
    knowledge_of = staticmethod(knowledge)
    values_of = staticmethod(move_values)

    def __init__(self, samples: int, seed: int | None = None, **kwargs: Any):
        requested_backend()  # a bad PARLOUR_JIT is refused here, before any game
        super().__init__(samples, seed=seed, **kwargs)


make_agent = solver_agents(HerzelnPIMC, DEFAULT_SAMPLES)


__all__ = [
    "DEFAULT_SAMPLES",
    "TRICKS_PER_DEAL",
    "HerzelnPIMC",
    "HerzelnSolver",
    "knowledge",
    "make_agent",
    "move_values",
    "solve",
    "solver_for",
]
