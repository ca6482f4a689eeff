"""Exact trick-play solver and PIMC bots for Fünfzehnern.

*How to Play Fünfzehnern* as the engine `parlour.envs.fuenfzehnern` plays it (3
or 4 players, strict or relaxed lead rules, Zwang); ``docs/solvers.md`` is the user's
page.

**The objective** is the seat's card points in the deal (A 5, K 4, O 3, U 2, 10 1),
which the deal's game points (points − 15) follow one for one. Everyone plays for
himself, so the search is *paranoid*: the seat against all the others together, who
are taken to want the seat's points as low as possible. It is exact in that two-sided
game and a lower bound on what the seat takes against any opponents; real opponents
chase their own points, so the bot is pessimistic (``docs/solvers.md``). The tying
option's ±15 scoring is not modelled.

**Search state.** The lead rules depend on the capture chain; only the distinct suits
in order of their latest capture matter (strict rules; the relaxed rules read the last
one only), so that tuple is the search's ``ext`` and part of the table key. A Zwang
lead is its own move (the Ober's id with bit 6 set), and a follower holding the Ace must
then play it. "Unbeatable" (the strict lead duty) is computed against the cards in the
other hands, which is what the engine's unplayed-cards-outside-my-hand is at a lead.

**Equivalences**: cards of one suit and the same points (only 9, 8, 7 share a value)
with no card still out between them are interchangeable.

**Speed.** `FuenfzehnernSolver` searches compiled with numba (`fuenfzehnern_jit`: the
same values from the same search, about 20 times faster) where numba imports and its
JIT is on, else with the pure-Python `TrickSolver`; ``PARLOUR_JIT=0`` keeps the latter.

**The bots.** ``pimc:N`` samples ``N`` deals of the unseen cards consistent with what
the seat knows (`knowledge`: its hand, every card played, the voids each seat showed —
the engine's public ``voids`` —, and Zwang: the announcer holds the King until he plays
it and, once the Zwang trick is over with the Ace unplayed, the Ace; a seat that
followed a Zwang trick without the Ace does not hold it) and plays the move with the
best mean exact value; ``solver`` is ``pimc:DEFAULT_SAMPLES``.
"""

from __future__ import annotations

from typing import Any

from ...envs.core.cards import GERMAN_32, cards_in
from ...envs.fuenfzehnern.rules import (
    ACE,
    CARD_POINTS,
    KING,
    OBER,
    SUIT_MASK,
    ZWANG,
    Fuenfzehnern,
)
from ...envs.fuenfzehnern.state import Phase, State
from .backend import CompiledSearch, requested_backend
from .tricks import (
    TT_LIMIT,
    Knowledge,
    PIMCAgent,
    TrickSolver,
    acting_seat,
    solver_agents,
)

DECK = GERMAN_32
DEFAULT_SAMPLES = 8
ZW = 64  # the Zwang flag of a move: the Ober led announcing Zwang

#: ``BETWEEN[a][b]``: the cards of a's suit strictly between cards a and b
BETWEEN = [
    [
        sum(1 << x for x in range(min(a, b) + 1, max(a, b))) if a >> 3 == b >> 3 else 0
        for b in range(32)
    ]
    for a in range(32)
]


#: card points of the cards of one suit, by the suit's byte of a card mask
BYTE_POINTS = [sum(CARD_POINTS[i] for i in range(8) if b >> i & 1) for b in range(256)]


def canonical_chain(game: Fuenfzehnern, chain: list[int]) -> tuple[int, ...]:
    """The part of the capture chain the lead rules read: distinct suits, latest
    capture first (strict), or the latest capture only (relaxed)."""
    out: list[int] = []
    for s in reversed(chain):
        if s not in out:
            out.append(s)
    return tuple(out) if game.strict else tuple(out[:1])


#: cards no card in ``others`` beats: the engine's own rule, so the two cannot differ
unbeatable = Fuenfzehnern.unbeatable


class FuenfzehnernSolver(CompiledSearch, TrickSolver):
    """Paranoid trick play of one open Fünfzehnern deal: seat ``seat``'s card points
    against all the others.

    Two backends give the same values: the search compiled with numba
    (`parlour.agents.solver.fuenfzehnern_jit`, several times faster) and the pure-Python
    `TrickSolver`. ``backend``: ``"numba"``, ``"python"``, or ``"auto"`` (numba when it
    imports and its JIT is on); None reads ``PARLOUR_JIT``
    (`parlour.agents.solver.backend`). It is settled at the first search, so building a
    solver imports nothing.
    """

    kernel_module = f"{__package__}.fuenfzehnern_jit"
    kernel_what = "Fünfzehnern search"

    def __init__(
        self,
        game: Fuenfzehnern,
        hands: list[int],
        seat: int,
        tt_limit: int = TT_LIMIT,
        backend: str | None = None,
    ):
        super().__init__(game.num_players, hands, 1 << seat, tt_limit)
        self.game = game
        self.seat = seat
        self.strict = game.strict
        self.duty_on_first = game.duty_on_first
        self.choose_backend(backend)  # validated now, else read at the first search

    def new_kernel(self, jit: Any) -> Any:
        return jit.Kernel(
            self.n, self.side, self.strict, self.duty_on_first, self.tt_limit
        )

    def lead_mask(self, seat: int, ext: tuple[int, ...]) -> int:
        """The engine's `Fuenfzehnern.lead_mask` with the canonical chain ``ext``."""
        hand = self.hands[seat]
        if not ext:
            return hand
        others = 0
        for s, h in enumerate(self.hands):
            if s != seat:
                others |= h
        if not self.strict:
            held = hand & SUIT_MASK[ext[0]]
            if not held:
                return hand
            return held | unbeatable(hand, others)
        for s in ext:
            held = hand & SUIT_MASK[s]
            if held:
                if s == ext[0] and not self.duty_on_first:
                    return held
                return unbeatable(held, others) or held
        return hand

    def legal_mask(self, seat: int, trick: list[int], ext: Any = ()) -> int:
        hand = self.hands[seat]
        if not trick:
            return self.lead_mask(seat, ext)
        lead = trick[0]
        if lead & ZW:
            ace = 1 << ((lead & 63) - OBER + ACE)
            if hand & ace:
                return ace
        follow = hand & SUIT_MASK[(lead & 63) >> 3]
        return follow or hand

    def all_moves(self, seat: int, trick: list[int], ext: Any) -> list[int]:
        mask = self.legal_mask(seat, trick, ext)
        out = cards_in(mask)
        if not trick:
            hand = self.hands[seat]
            for s in range(4):
                ober = 8 * s + OBER
                if mask >> ober & 1 and hand >> (8 * s + KING) & 1:
                    out.append(ober | ZW)
        return out

    def equivalent(self, a: int, b: int, remaining: int) -> bool:
        return (
            a >> 3 == b >> 3
            and CARD_POINTS[a] == CARD_POINTS[b]
            and not BETWEEN[a][b] & remaining
        )

    def legal(self, seat: int, trick: list[int], ext: Any) -> list[int]:
        mask = self.legal_mask(seat, trick, ext)
        cards = self.distinct(cards_in(mask), trick)
        if not trick:
            hand = self.hands[seat]
            zw = [
                8 * s + OBER | ZW
                for s in range(4)
                if mask >> (8 * s + OBER) & 1 and hand >> (8 * s + KING) & 1
            ]
            # leads: Zwang, then rich cards first
            cards.sort(key=lambda c: -CARD_POINTS[c])
            return zw + cards
        if len(cards) < 2:
            return cards
        n = self.n
        led = (trick[0] & 63) >> 3
        best = min(m & 63 for m in trick if (m & 63) >> 3 == led)
        leader = (seat - len(trick)) % n
        winner = (leader + [m & 63 for m in trick].index(best)) % n
        ours = self.is_max[winner] == self.is_max[seat]
        win = [c for c in cards if c >> 3 == led and c < best]
        lose = [c for c in cards if not (c >> 3 == led and c < best)]
        if ours:
            # the side takes it: add points (smear), keep winners for later
            lose.sort(key=lambda c: -CARD_POINTS[c])
            return lose + win
        win.sort(reverse=True)  # the lowest winner first
        lose.sort(key=lambda c: CARD_POINTS[c])
        return win + lose

    def finish(self, trick: list[int], leader: int, ext: Any) -> tuple[int, int, Any]:
        lead = trick[0] & 63
        led = lead >> 3
        best_i, best = 0, lead
        pts = CARD_POINTS[lead]
        for i in range(1, len(trick)):
            c = trick[i] & 63
            pts += CARD_POINTS[c]
            if c >> 3 == led and c < best:
                best_i, best = i, c
        winner = (leader + best_i) % self.n
        if winner != leader:
            ext = (led, *(s for s in ext if s != led)) if self.strict else (led,)
        return winner, pts if self.is_max[winner] else 0, ext

    def bounds(self, leader: int, ext: Any) -> tuple[int, int]:
        held = 0
        for h in self.hands:
            held |= h
        return 0, (
            BYTE_POINTS[held & 255]
            + BYTE_POINTS[held >> 8 & 255]
            + BYTE_POINTS[held >> 16 & 255]
            + BYTE_POINTS[held >> 24]
        )


def _move(action: int) -> int:
    """A solver move of an engine action (Zwang: the Ober with the flag)."""
    if action >= ZWANG:
        return 8 * (action - ZWANG) + OBER | ZW
    return action


def _action(move: int) -> int:
    if move & ZW:
        return ZWANG + ((move & 63) >> 3)
    return move


def solver_for(
    game: Fuenfzehnern, state: State, seat: int, hands: list[int] | None = None
) -> FuenfzehnernSolver:
    """A solver for ``state`` (or the world ``hands`` of it), ``seat`` solving."""
    if state.phase != Phase.PLAY:
        raise ValueError(f"no trick play to solve in phase {state.phase.name}")
    return FuenfzehnernSolver(game, list(state.hands if hands is None else hands), seat)


def _root(state: State) -> list[int]:
    trick = list(state.trick)
    if trick and state.zwang >= 0:
        trick[0] |= ZW
    return trick


def move_values(
    game: Fuenfzehnern,
    state: State,
    hands: list[int] | None = None,
    seat: int | None = None,
) -> dict[int, int]:
    """Each legal action's exact (paranoid) value: the acting seat's card points in the
    deal, those taken so far included, all hands open (``hands``: a world instead of the
    state's)."""
    seat = acting_seat(state, seat)
    solver = solver_for(game, state, seat, hands)
    ext = canonical_chain(game, state.chain)
    legal = game.legal_actions(state)
    values = solver.move_values(
        state.leader, _root(state), ext, [_move(a) for a in legal]
    )
    base = state.points[seat]
    return {_action(m): base + v for m, v in values.items()}


def solve(game: Fuenfzehnern, state: State, hands: list[int] | None = None) -> int:
    """The seat to act's card points in the deal with best (paranoid) play."""
    return max(move_values(game, state, hands).values())


# --- knowledge ------------------------------------------------------------------------
def knowledge(game: Fuenfzehnern, state: State, seat: int) -> Knowledge:
    """What ``seat`` knows in trick play (read from public state only)."""
    n = game.num_players
    pool = game.in_play & ~state.played & ~state.hands[seat]
    known = [0] * n
    known[seat] = state.hands[seat]
    forbid = [0] * n
    for s in range(n):
        for suit in range(4):
            if state.voids[s] >> suit & 1:
                forbid[s] |= SUIT_MASK[suit]
    for suit in range(4):
        if not state.zwang_suits >> suit & 1:
            continue
        ober, king, ace = 8 * suit + OBER, 8 * suit + KING, 8 * suit + ACE
        caller = next(s for s in range(n) if state.played_by[s] >> ober & 1)
        if caller != seat and pool >> king & 1:
            known[caller] |= 1 << king
        if not pool >> ace & 1 or caller == seat:
            continue
        open_trick = state.zwang == suit
        if not open_trick:
            known[caller] |= 1 << ace  # no follower had it
        else:
            for i in range(1, len(state.trick)):
                forbid[(state.leader + i) % n] |= 1 << ace
    for s in range(n):
        if s != seat:
            pool &= ~known[s]
    allowed = [pool & ~forbid[s] for s in range(n)]
    allowed[seat] = 0
    return Knowledge.of(seat, state.hands, known, allowed, pool)


class FuenfzehnernPIMC(PIMCAgent):
    """``pimc:N`` for ``fuenfzehnern_v0`` (see the module docstring)."""

    env_name = "fuenfzehnern_v0"
    max_cards = {3: 8, 4: 6}  # PIMC from this hand size down; the heuristic before
    game_class = Fuenfzehnern
    trick_phase = Phase.PLAY
    knowledge_of = staticmethod(knowledge)
    values_of = staticmethod(move_values)

    def __init__(self, samples: int, seed: int | None = None, **kwargs: Any):
        requested_backend()  # a bad PARLOUR_JIT is refused here, before any game
        super().__init__(samples, seed=seed, **kwargs)


make_agent = solver_agents(FuenfzehnernPIMC, DEFAULT_SAMPLES)


__all__ = [
    "DEFAULT_SAMPLES",
    "FuenfzehnernPIMC",
    "FuenfzehnernSolver",
    "canonical_chain",
    "knowledge",
    "make_agent",
    "move_values",
    "solve",
    "solver_for",
]
