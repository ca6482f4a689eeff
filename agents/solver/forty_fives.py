"""Exact trick-play solver and PIMC bots for Forty-Fives and its variants.

*Forty-Fives: Ausführliche Regeln* as the engine `parlour.envs.forty_fives` plays it
(every variant, 2 to 6 players); ``docs/solvers.md`` is the user's page.

**The objective** is the solving side's points in the deal: 5 for each trick it takes
plus the 5 bonus for the trick with the highest trump played in the deal (none in the
Twenty-Five variant). With partners (4 or 6 players) the side is the partnership and
the search is exact; with 2 players it is exact too; with 3 or 5 players each for
himself it is *paranoid* (the seat against all the others together), a lower bound.
What the points are worth in a match (the target, an auction contract, Twenty-Five's
stop at 25) is not modelled.

**The bonus without search state.** Every card in a hand is played by the end of the
deal, and a trick's highest trump always wins it, so the bonus goes to the trick whose
highest trump is above every trump still in a hand after it, provided it beats the best
trump played before the search began (else the engine has already given it). The
pending rob is searched: the eligible seat, at its first card of trick 1, chooses to
rob (burying any card) or not; for the seat to act, `move_values` gives each ``rob:X``
and each card (a card declines) its value.

**Equivalences** (`FortyFivesSolver.equivalent`): two cards of one hand in the same
trick group (the trumps with the A♥, or one plain suit without it) with no card still
out between them in that group's order, and both or neither a top trump (5, J, A♥:
they may renege), are interchangeable.

**Speed.** `FortyFivesSolver` searches compiled with numba (`forty_fives_jit`: the
same values from the same search) where numba imports and its JIT is on, else with the
pure-Python `TrickSolver`; ``PARLOUR_JIT=0`` keeps the latter.

**The bots.** ``pimc:N`` samples ``N`` deals consistent with what the seat knows
(`knowledge`: its hand and put-away cards, all cards played, the turned card and who
robbed it, and the suits each seat has shown it lacks: a plain card other than the suit
led shows a void in that suit, and with ``void_must_trump`` no trumps either; a plain
card on a trump lead shows no trump but the top trumps above the led card), and plays
the card with the best mean exact value; ``solver`` is ``pimc:DEFAULT_SAMPLES``.
Robbing (whether to rob and what to bury; on a decline PIMC picks the first card),
bidding, naming trumps and discarding are the heuristic bot's
(`parlour.agents.forty_fives.FortyFivesHeuristic`). The trick history is not part of
the engine state, so the bot remembers the tricks it sees between its turns
(`FortyFivesPIMC.observe`); called on a state it did not follow, it uses the current
trick only.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...envs.core.cards import FRENCH_52, cards_in
from ...envs.forty_fives import rules
from ...envs.forty_fives.rules import FortyFives
from ...envs.forty_fives.state import Phase, State
from ..base import Agent, Turn
from .backend import CompiledSearch, requested_backend
from .tricks import (
    INF,
    TT_LIMIT,
    Knowledge,
    PIMCAgent,
    TrickSolver,
    acting_seat,
    solver_agents,
)

DECK = FRENCH_52
DEFAULT_SAMPLES = 16  # pimc:16 beat the heuristic clearly, pimc:8 did not (docs)
TRUMP_GROUP = 4


class Tables:
    """Per-trump lookups: strength, trick groups and the cards above each card."""

    _cache: dict[int, Tables] = {}

    def __init__(self, trump: int):
        self.trump = trump
        self.strength = rules.STRENGTH[trump]
        self.tm = rules.TRUMP_MASK[trump]
        self.plain = rules.PLAIN_MASK[trump]
        self.top = rules.TOP_TRUMPS[trump]
        self.protected = rules.PROTECTED[trump]
        self.group = [
            TRUMP_GROUP if self.tm >> c & 1 else DECK.suit[c] for c in range(DECK.size)
        ]
        self.group_mask = [
            self.tm if g == TRUMP_GROUP else self.plain[g] for g in self.group
        ]
        self.above = [
            sum(
                1 << x
                for x in cards_in(self.group_mask[c])
                if self.strength[x] > self.strength[c]
            )
            for c in range(DECK.size)
        ]
        #: trumps, strongest first
        self.trumps_desc = sorted(cards_in(self.tm), key=lambda c: -self.strength[c])
        #: sort key: group, then strength high to low (equivalent cards adjacent)
        self.key = [self.group[c] * 256 - self.strength[c] for c in range(DECK.size)]

    @classmethod
    def of(cls, trump: int) -> Tables:
        if trump not in cls._cache:
            cls._cache[trump] = cls(trump)
        return cls._cache[trump]

    def beats(self, lead: int, best: int, card: int) -> bool:
        """Whether ``card`` beats ``best`` (the card winning so far) in a trick led with
        ``lead``: the highest trump wins, else the highest card of the led suit."""
        follow = self.tm | self.group_mask[lead]
        return bool(follow >> card & 1) and self.strength[card] > self.strength[best]


class FortyFivesSolver(CompiledSearch, TrickSolver):
    """Exact (paranoid with 3 or 5 players) trick play of one open Forty-Fives deal.

    ``hands``: every seat's cards; ``side``: bitmask of the solving seats;
    ``trump``: the trump suit; ``best_before``: strength of the best trump played
    before the search (-1: none); ``rob_seat`` / ``turned``: a rob still to decide at
    that seat's first card of trick 1 (-1: none). The search's ``ext`` is the card
    that will take the bonus (`bonus_card`), -1 once it is given or if there is none.

    Two backends give the same values: the search compiled with numba
    (`parlour.agents.solver.forty_fives_jit`) and the pure-Python `TrickSolver`.
    ``backend``: ``"numba"``, ``"python"``, or ``"auto"`` (numba when it imports and
    its JIT is on); None reads ``PARLOUR_JIT`` (`parlour.agents.solver.backend`).
    """

    kernel_module = f"{__package__}.forty_fives_jit"
    kernel_what = "Forty-Fives search"

    def __init__(
        self,
        game: FortyFives,
        hands: list[int],
        side: int,
        trump: int,
        best_before: int = -1,
        rob_seat: int = -1,
        turned: int = -1,
        tt_limit: int = TT_LIMIT,
        backend: str | None = None,
    ):
        super().__init__(game.num_players, hands, side, tt_limit)
        self.choose_backend(backend)
        self.game = game
        self.t = Tables.of(trump)
        self.void_must_trump = game.void_must_trump
        self.bonus = 0 if game.twenty_five else rules.BONUS_POINTS
        self.best_before = best_before
        self.rob_seat = rob_seat
        self.turned = turned

    def new_kernel(self, jit: Any) -> Any:
        return jit.Kernel(self, self.tt_limit)

    def kernel_search(
        self, leader: int, trick: list[int], ext: Any, alpha: int, beta: int
    ) -> int:
        return self._kernel.search(
            self.hands, leader, trick, ext, alpha, beta, self.rob_seat
        )

    # --- rules ------------------------------------------------------------------------
    def legal_mask(self, seat: int, trick: list[int], ext: Any = None) -> int:
        """The engine's `FortyFives.legal_mask` for ``seat`` holding its hand."""
        hand = self.hands[seat]
        if not trick:
            return hand
        t = self.t
        lead = trick[0]
        tm = t.tm
        trumps = hand & tm
        if tm >> lead & 1:
            if not trumps:
                return hand
            protected = trumps & t.protected[lead]
            if trumps & ~protected:
                return trumps
            return hand
        follow = hand & t.plain[DECK.suit[lead]]
        if follow:
            return follow | trumps
        if self.void_must_trump and trumps:
            return trumps
        return hand

    def equivalent(self, a: int, b: int, remaining: int) -> bool:
        t = self.t
        if t.group[a] != t.group[b] or (t.top >> a & 1) != (t.top >> b & 1):
            return False
        hi, lo = (a, b) if t.strength[a] > t.strength[b] else (b, a)
        between = t.above[lo] & ~t.above[hi] & ~(1 << hi)
        return not between & remaining

    def _winning(self, trick: list[int]) -> int:
        """Index in ``trick`` of the card winning it so far."""
        t = self.t
        strength = t.strength
        lead = trick[0]
        follow = t.tm | t.group_mask[lead]
        best_i, best = 0, strength[lead]
        for i in range(1, len(trick)):
            c = trick[i]
            if follow >> c & 1 and strength[c] > best:
                best_i, best = i, strength[c]
        return best_i

    def legal(self, seat: int, trick: list[int], ext: Any) -> list[int]:
        mask = self.legal_mask(seat, trick)
        t = self.t
        key = t.key
        cards = self.distinct(sorted(cards_in(mask), key=key.__getitem__), trick)
        if len(cards) < 2:
            return cards
        strength = t.strength
        if not trick:
            # leads: cards nobody can beat first, then the rest from the lowest
            out = 0  # every card still in a hand
            for h in self.hands:
                out |= h
            return sorted(cards, key=lambda c: (t.above[c] & out != 0, -strength[c]))
        n = self.n
        i = self._winning(trick)
        leader = (seat - len(trick)) % n
        best = trick[i]
        ours = self.is_max[(leader + i) % n] == self.is_max[seat]
        lead = trick[0]
        win = [c for c in cards if t.beats(lead, best, c)]
        lose = [c for c in cards if not t.beats(lead, best, c)]
        win.sort(key=strength.__getitem__)
        lose.sort(key=strength.__getitem__)
        return lose + win if ours else win + lose

    def finish(self, trick: list[int], leader: int, ext: Any) -> tuple[int, int, Any]:
        # ext: the card that will take the bonus (the highest trump still to be
        # played, if it beats the best one played before), -1 once given or if none.
        i = self._winning(trick)
        winner = (leader + i) % self.n
        pts = rules.TRICK_POINTS
        if ext >= 0:
            for c in trick:
                if c == ext:
                    pts += self.bonus
                    ext = -1
                    break
        return winner, pts if self.is_max[winner] else 0, ext

    def bonus_card(self, trick: list[int]) -> int:
        """The card that will take the bonus: the highest trump in a hand or on the
        table if it beats the best trump played before (-1: none)."""
        if not self.bonus:
            return -1
        held = 0
        for h in self.hands:
            held |= h
        for c in trick:
            held |= 1 << c
        held &= self.t.tm
        if not held:
            return -1
        top = _top_card(self.t, held)
        return top if self.t.strength[top] > self.best_before else -1

    def bounds(self, leader: int, ext: Any) -> tuple[int, int]:
        left = self.hands[leader].bit_count()
        return 0, rules.TRICK_POINTS * left + (self.bonus if ext >= 0 else 0)

    # --- the pending rob --------------------------------------------------------------
    def _ply(self, seat, trick, leader, ext, alpha, beta):
        if seat != self.rob_seat or len(trick) == self.n:
            return TrickSolver._ply(self, seat, trick, leader, ext, alpha, beta)
        hand = self.hands[seat]
        options = [hand] + [hand ^ (1 << b) | 1 << self.turned for b in cards_in(hand)]
        self.rob_seat = -1
        maximizing = self.is_max[seat]
        best = -INF if maximizing else INF
        try:
            for h in options:
                self.hands[seat] = h
                ext = self.bonus_card(trick)
                v = TrickSolver._ply(self, seat, trick, leader, ext, alpha, beta)
                if maximizing:
                    if v > best:
                        best = v
                        alpha = max(alpha, v)
                else:
                    if v < best:
                        best = v
                        beta = min(beta, v)
                if alpha >= beta:
                    break
        finally:
            self.hands[seat] = hand
            self.rob_seat = seat
        return best


def _top_card(t: Tables, trumps: int) -> int:
    for c in t.trumps_desc:
        if trumps >> c & 1:
            return c
    raise ValueError("no trump")


# --- engine states -> solver positions ------------------------------------------------
def side_mask(game: FortyFives, seat: int) -> int:
    """The seats of ``seat``'s side as a bitmask."""
    team = game.team_of[seat]
    return sum(1 << s for s in game.teams()[team])


def pending_rob(game: FortyFives, state: State, hands: list[int]) -> int:
    """The seat that may still rob at its first card of trick 1 in a deal with these
    ``hands`` (-1: none): the trump ace's holder, or the dealer when the ace was turned;
    only while nobody robbed and that seat has not played yet (the seat to act
    included: it robs or plays at its first turn)."""
    if game.auction or state.trick_no or state.robbed_by >= 0 or state.turned < 0:
        return -1
    turned = state.turned
    if DECK.rank[turned] == 0:
        seat = state.dealer
    else:
        ace = 1 << DECK.card("A" + "SHDC"[state.trump])
        seat = next((s for s in range(game.num_players) if hands[s] & ace), -1)
    if seat < 0 or state.played_by[seat]:
        return -1
    return seat


def solver_for(
    game: FortyFives, state: State, seat: int, hands: list[int] | None = None
) -> FortyFivesSolver:
    """A solver for ``state`` (or the world ``hands`` of it) with ``seat``'s side
    solving."""
    if state.phase != Phase.PLAY:
        raise ValueError(f"no trick play to solve in phase {state.phase.name}")
    hands = list(state.hands if hands is None else hands)
    return FortyFivesSolver(
        game,
        hands,
        side_mask(game, seat),
        state.trump,
        best_before=state.best_trump,
        rob_seat=pending_rob(game, state, hands),
        turned=state.turned,
    )


def points_so_far(
    game: FortyFives, state: State, seat: int, hands: list[int], rob_seat: int
) -> int:
    """The side's points already certain: its tricks, and the bonus once no trump left
    in a hand, on the table or to be robbed can beat the best one played."""
    team = game.team_of[seat]
    pts = state.deal_points[team]
    if not game.twenty_five and state.bonus_team == team:
        held = 0
        for h in hands:
            held |= h
        for c in state.trick:
            held |= 1 << c
        if rob_seat >= 0:
            held |= 1 << state.turned
        held &= state.trump_mask
        t = Tables.of(state.trump)
        if not held or t.strength[_top_card(t, held)] < state.best_trump:
            pts += rules.BONUS_POINTS
    return pts


def move_values(
    game: FortyFives,
    state: State,
    hands: list[int] | None = None,
    seat: int | None = None,
    actions: list[int] | None = None,
) -> dict[int, int]:
    """Each legal action's exact value (``actions``: only these legal ones): the acting
    seat's side's points in the deal (tricks so far included) with best play after it,
    all hands open (``hands``: a world to use instead of the state's). Covers trick
    play and the robber's first turn (``rob:X``, or a card that declines)."""
    seat = acting_seat(state, seat)
    solver = solver_for(game, state, seat, hands)
    base = points_so_far(game, state, seat, solver.hands, solver.rob_seat)
    leader, trick = state.leader, list(state.trick)
    if actions is None:
        actions = game.legal_actions(state)
    out: dict[int, int] = {}
    plays = [a for a in actions if a < rules.ROB]
    if solver.rob_seat == seat:
        # Robbing or playing a card both end the seat's right to rob.
        solver.rob_seat = -1
        hand = solver.hands[seat]
        for a in actions:
            if a >= rules.ROB:
                solver.hands[seat] = hand ^ 1 << (a - rules.ROB) | 1 << state.turned
                out[a] = base + solver.value(leader, trick, solver.bonus_card(trick))
        solver.hands[seat] = hand
    if plays:
        ext = solver.bonus_card(trick)
        values = solver.move_values(leader, trick, ext, plays)
        out.update((a, base + v) for a, v in values.items())
    return {a: out[a] for a in actions}


def solve(game: FortyFives, state: State, hands: list[int] | None = None) -> int:
    """The side to act's points in the deal with best play by all, hands open."""
    return max(move_values(game, state, hands).values())


# --- knowledge ------------------------------------------------------------------------
def trick_constraint(game: FortyFives, trump: int, lead: int, card: int) -> int:
    """Cards a seat cannot hold after playing ``card`` to a trick led with ``lead``."""
    t = Tables.of(trump)
    if t.tm >> lead & 1:
        if t.tm >> card & 1:
            return 0
        # no trump but, perhaps, top trumps above the led card (renege)
        return t.tm & ~t.protected[lead]
    if t.tm >> card & 1 or t.plain[DECK.suit[lead]] >> card & 1:
        return 0
    out = t.plain[DECK.suit[lead]]
    if game.void_must_trump:
        out |= t.tm
    return out


def knowledge(
    game: FortyFives, state: State, seat: int, forbidden: list[int] | None = None
) -> Knowledge:
    """What ``seat`` knows in trick play; ``forbidden[s]``: cards seat ``s`` showed it
    cannot hold in earlier tricks (the current trick is read from the state)."""
    n = game.num_players
    forbid = list(forbidden) if forbidden else [0] * n
    trick = state.trick
    for i in range(1, len(trick)):
        s = (state.leader + i) % n
        forbid[s] |= trick_constraint(game, state.trump, trick[0], trick[i])
    known = [0] * n
    known[seat] = state.hands[seat]
    robber = state.robbed_by
    seen = state.hands[seat] | state.played | state.put_away[seat]
    if state.turned >= 0:
        seen |= 1 << state.turned
        if robber >= 0 and robber != seat and not state.played >> state.turned & 1:
            known[robber] |= 1 << state.turned
    pool = DECK.all_mask & ~seen
    allowed = [pool & ~forbid[s] for s in range(n)]
    allowed[seat] = 0
    return Knowledge.of(seat, state.hands, known, allowed, pool)


class FortyFivesPIMC(PIMCAgent):
    """``pimc:N`` for ``forty_fives_v0`` (see the module docstring)."""

    env_name = "forty_fives_v0"

    def __init__(self, samples: int, seed: int | None = None, **kwargs: Any):
        requested_backend()  # a bad PARLOUR_JIT is refused here, before any game
        super().__init__(samples, seed=seed, **kwargs)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._memory: dict[int, dict[str, Any]] = {}  # per seat (partners share a bot)

    def heuristic(self, seed: int | None) -> Agent:
        from ..forty_fives import FortyFivesHeuristic

        return FortyFivesHeuristic(seed=seed)

    def is_trick_play(self, turn: Turn) -> bool:
        if not isinstance(turn.game, FortyFives):
            raise ValueError(f"the Forty-Fives solver bots cannot play {turn.game!r}")
        return turn.state.phase == Phase.PLAY

    def observe(self, turn: Turn) -> None:
        """Remember the tricks seen: the cards the others played after this seat in the
        trick just finished, with what each shows about its hand."""
        state, seat, game = turn.state, turn.seat, turn.game
        if not isinstance(game, FortyFives) or state.phase != Phase.PLAY:
            return
        deal = (id(state), state.deal_no, state.dealer, tuple(state.dealt[:3]))
        mem = self._memory.get(seat)
        if mem is None or mem["deal"] != deal:
            mem = {"deal": deal, "forbid": [0] * game.num_players}
        elif mem["trick_no"] == state.trick_no - 1:
            prev_trick, prev_leader = mem["trick"], mem["leader"]
            n = game.num_players
            mine = state.played_by[seat] & ~mem["played_by"][seat]
            now = 0
            for c in state.trick:
                now |= 1 << c
            lead = prev_trick[0] if prev_trick else (mine.bit_length() - 1)
            pos = (seat - prev_leader) % n
            for k in range(pos + 1, n):
                s = (prev_leader + k) % n
                new = state.played_by[s] & ~mem["played_by"][s] & ~now
                if new.bit_count() == 1:
                    card = new.bit_length() - 1
                    mem["forbid"][s] |= trick_constraint(game, state.trump, lead, card)
        elif mem["trick_no"] != state.trick_no:
            mem["forbid"] = [0] * game.num_players  # a gap: forget what was inferred
        mem.update(
            trick_no=state.trick_no,
            trick=list(state.trick),
            leader=state.leader,
            played_by=list(state.played_by),
        )
        self._memory[seat] = mem

    def knowledge(self, turn: Turn) -> Knowledge:
        mem = self._memory.get(turn.seat)
        forbid = mem["forbid"] if mem else None
        return knowledge(turn.game, turn.state, turn.seat, forbid)

    def solve_world(self, turn: Turn, hands: list[int], legal: list[int]) -> dict:
        return move_values(turn.game, turn.state, hands, turn.seat, legal)

    def act(self, turn: Turn) -> int:
        """As `PIMCAgent.act`; at the robber's first turn the heuristic bot decides
        whether to rob (as it did when robbing was a phase of its own), and PIMC picks
        the card when it does not."""
        legal = turn.legal_actions()
        if legal and legal[-1] >= rules.ROB:
            choice = self.base.act(turn)
            if choice >= rules.ROB:
                self.observe(turn)
                return choice
            mask = turn.mask.copy()
            mask[rules.ROB :] = 0
            turn = replace(turn, mask=mask)
        return super().act(turn)

    def search(self, turn: Turn) -> dict[int, float] | None:
        """As `PIMCAgent.search`; None at the robber's first turn, where whether to
        rob is the heuristic bot's call (`act`)."""
        legal = turn.legal_actions()
        if legal and legal[-1] >= rules.ROB:
            self.observe(turn)
            return None
        return super().search(turn)


make_agent = solver_agents(FortyFivesPIMC, DEFAULT_SAMPLES)


def random_play_state(
    game: FortyFives, rng: np.random.Generator, cards: int | None = None
) -> State:
    """A trick-play state of a random deal after random play, with ``cards`` cards
    (default: random) still in the hand of the seat to play."""
    from .tricks import advance_random

    return advance_random(game, rng, cards, lambda st: st.phase == Phase.PLAY)


__all__ = [
    "DEFAULT_SAMPLES",
    "FortyFivesPIMC",
    "FortyFivesSolver",
    "Tables",
    "knowledge",
    "make_agent",
    "move_values",
    "pending_rob",
    "points_so_far",
    "solve",
    "solver_for",
    "trick_constraint",
]
