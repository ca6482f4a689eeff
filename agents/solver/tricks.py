"""A paranoid alpha-beta solver and a PIMC bot shared by the 3-6-player trick games.

Used by `parlour.agents.solver.forty_fives`, `parlour.agents.solver.fuenfzehnern` and
`parlour.agents.solver.herzeln`; ``docs/solvers.md`` is the user's page.

**The question.** A perfect-information position of trick play (every hand known) is
searched for the most points the *solving side* (one seat, or its partnership) can be
sure of taking in the tricks still to play, against all other seats playing together to
give it the fewest: the *paranoid* reduction of a many-player game to a two-player
zero-sum one (Sturtevant & Korf 2000). It is exact for a partnership game with two
sides; with more sides it is a lower bound on what the seat gets against any opponents.

**The search** (`TrickSolver`), card by card, alpha-beta with fail-soft values:

* *Transposition table* at trick boundaries, keyed on every hand, the leader and a small
  game-specific extra (``ext``: Fünfzehnern's capture chain), holding proven lower and
  upper bounds on the side's points from the tricks left and the best lead.
* *Bounds without search*: a game gives cheap limits on the points left (`bounds`), so a
  window outside them cuts at once.
* *Equivalent cards*: two cards of one hand with no other card still out (in a hand or
  on the table) between them in their trick group, of the same value class (points,
  special status), are the same card for the outcome; only one of each run is searched.
* *Move ordering*: the table's best lead first; a follower tries the cheapest card that
  takes the trick when the other side is winning it and its cheapest card otherwise
  (the game's `order`), then a history table of earlier cut-offs.

Subclasses say what the rules are: `legal` (the playable moves, a bitmask or moves),
`finish` (who wins a trick and what it is worth to the solving side) and the card
tables for the equivalences.

**PIMC** (`PIMCAgent`): ``N`` worlds of the unseen cards consistent with what the seat
knows (`deal_hidden`, from `Knowledge`: hand sizes, cards a seat must hold, cards it
cannot hold), each solved for every legal move; the move with the best mean wins, ties
to the game's heuristic bot (or the base policy given; with a ``margin``, the base's
move stands unless the best mean beats its mean by at least the margin). Decisions
that are not trick play go to the heuristic bot (or the base policy).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...envs.core.cards import cards_in
from ..base import Agent, Turn

INF = 1 << 30
#: entries of the transposition table before it is cleared
TT_LIMIT = 400_000
#: the most worlds a PIMC bot may sample per decision
MAX_SAMPLES = 1000


class TrickSolver:
    """Paranoid alpha-beta over the trick play of one perfect-information position.

    A subclass sets ``n`` (players), ``hands`` (one bitmask per seat, mutated in place
    during a search and restored), ``side`` (bit ``s`` set when seat ``s`` is on the
    solving side) and implements `legal`, `finish` and optionally `order`, `bounds`,
    `equivalent`.

    Moves are ints: the card id in the low 6 bits, game-specific flags above
    (Fünfzehnern marks a Zwang lead with bit 6). ``CARD`` masks the card.
    """

    CARD = 63

    def __init__(self, n: int, hands: list[int], side: int, tt_limit: int = TT_LIMIT):
        self.n = n
        self.hands = list(hands)
        self.side = side
        self.is_max = [bool(side >> s & 1) for s in range(n)]
        self.tt: dict[tuple, tuple[int, int, int]] = {}
        self.tt_limit = tt_limit
        self.killers: dict[tuple, int] = {}
        self.nodes = 0

    # --- the rules (subclasses) -------------------------------------------------------
    def legal(self, seat: int, trick: list[int], ext: Any) -> list[int]:
        """The moves ``seat`` may make with ``trick`` on the table, representatives of
        equivalent moves only, in a good search order."""
        raise NotImplementedError

    def finish(self, trick: list[int], leader: int, ext: Any) -> tuple[int, int, Any]:
        """(winner, points for the solving side, ext after the trick) of a full
        trick."""
        raise NotImplementedError

    def bounds(self, leader: int, ext: Any) -> tuple[int, int]:
        """Cheap lower and upper bounds on the solving side's points from the tricks
        left (at a trick boundary)."""
        return -INF, INF

    # --- the search -------------------------------------------------------------------
    def value(
        self,
        leader: int,
        trick: list[int],
        ext: Any,
        alpha: int = -INF,
        beta: int = INF,
    ) -> int:
        """The solving side's points from the rest of the deal, the open trick (its
        cards ``trick``, led by ``leader``) included."""
        return self._search(leader, list(trick), ext, alpha, beta)

    def _search(
        self, leader: int, trick: list[int], ext: Any, alpha: int, beta: int
    ) -> int:
        """`value` of the hands as they are (a subclass may search elsewhere, say in
        compiled code, for the same values)."""
        if not trick:
            return self._node(leader, ext, alpha, beta)
        seat = (leader + len(trick)) % self.n
        return self._ply(seat, trick, leader, ext, alpha, beta)

    def move_values(
        self, leader: int, trick: list[int], ext: Any, moves: list[int] | None = None
    ) -> dict[int, int]:
        """The exact value (as `value`) after each move of the seat to play: every
        move of ``moves`` (default: every legal move), equivalent moves sharing one
        search."""
        seat = (leader + len(trick)) % self.n
        reps = self.legal(seat, trick, ext)
        if moves is None:
            moves = self.all_moves(seat, trick, ext)
        out: dict[int, int] = {}
        for m in reps:
            out[m] = self._after(seat, m, leader, trick, ext)
        for m in moves:
            if m not in out:
                rep = self.representative(seat, m, reps, trick)
                out[m] = out[rep]
        return {m: out[m] for m in moves}

    def all_moves(self, seat: int, trick: list[int], ext: Any) -> list[int]:
        """Every legal move, equivalent ones included (subclasses with flagged moves
        override)."""
        return cards_in(self.legal_mask(seat, trick, ext))

    def legal_mask(self, seat: int, trick: list[int], ext: Any) -> int:
        raise NotImplementedError

    def representative(self, seat: int, move: int, reps: list[int], trick) -> int:
        """The searched move equivalent to ``move``."""
        remaining = self._remaining(trick)
        for r in reps:
            if (r & ~self.CARD) == (move & ~self.CARD) and self.equivalent(
                move & self.CARD, r & self.CARD, remaining
            ):
                return r
        raise ValueError(f"move {move} has no searched equivalent among {reps}")

    def _after(self, seat: int, move: int, leader: int, trick: list[int], ext) -> int:
        bit = 1 << (move & self.CARD)
        self.hands[seat] ^= bit
        t = list(trick)
        t.append(move)
        try:
            return self._search(leader, t, ext, -INF, INF)
        finally:
            self.hands[seat] ^= bit

    def _remaining(self, trick: list[int]) -> int:
        out = 0
        for h in self.hands:
            out |= h
        for m in trick:
            out |= 1 << (m & self.CARD)
        return out

    def equivalent(self, a: int, b: int, remaining: int) -> bool:
        """Cards ``a`` and ``b`` of one hand are interchangeable (default: never)."""
        return a == b

    def distinct(self, cards: list[int], trick: list[int]) -> list[int]:
        """One card of each run of `equivalent` cards among ``cards`` (in the game's
        rank order), judged against every card still in a hand or on the table
        (``trick`` moves may carry flags above bit 6)."""
        if len(cards) < 2:
            return cards
        remaining = 0
        for h in self.hands:
            remaining |= h
        for m in trick:
            remaining |= 1 << (m & 63)
        reps = [cards[0]]
        for c in cards[1:]:
            if not self.equivalent(reps[-1], c, remaining):
                reps.append(c)
        return reps

    def _node(self, leader: int, ext: Any, alpha: int, beta: int) -> int:
        hands = self.hands
        left = hands[leader]
        if left & (left - 1) == 0:
            if not left:
                return 0
            # the last trick: every card is forced
            n = self.n
            trick = [hands[(leader + i) % n].bit_length() - 1 for i in range(n)]
            self.nodes += 1
            saved = hands[:]
            hands[:] = [0] * n
            pts = self.finish(trick, leader, ext)[1]
            hands[:] = saved
            return pts
        key = (*hands, leader, ext)
        entry = self.tt.get(key)
        if entry is None:
            lo, hi = self.bounds(leader, ext)
            best_lead = -1
        else:
            lo, hi, best_lead = entry
        if lo >= beta:
            return lo
        if hi <= alpha:
            return hi
        if lo == hi:
            return lo
        a = max(alpha, lo)
        b = min(beta, hi)
        v, lead = self._lead(leader, ext, a, b, best_lead)
        if v <= a:
            hi = min(hi, v)
        elif v >= b:
            lo = max(lo, v)
        else:
            lo = hi = v
        if len(self.tt) >= self.tt_limit:
            self.tt.clear()
        self.tt[key] = (lo, hi, lead)
        return v

    def _lead(
        self, seat: int, ext: Any, alpha: int, beta: int, first: int
    ) -> tuple[int, int]:
        moves = self.legal(seat, [], ext)
        if first >= 0 and first in moves and moves[0] != first:
            moves.remove(first)
            moves.insert(0, first)
        hands = self.hands
        nxt = (seat + 1) % self.n
        best_move = moves[0]
        if self.is_max[seat]:
            best = -INF
            for m in moves:
                bit = 1 << (m & 63)
                hands[seat] ^= bit
                v = self._ply(nxt, [m], seat, ext, alpha, beta)
                hands[seat] ^= bit
                if v > best:
                    best, best_move = v, m
                    if v > alpha:
                        alpha = v
                        if alpha >= beta:
                            break
        else:
            best = INF
            for m in moves:
                bit = 1 << (m & 63)
                hands[seat] ^= bit
                v = self._ply(nxt, [m], seat, ext, alpha, beta)
                hands[seat] ^= bit
                if v < best:
                    best, best_move = v, m
                    if v < beta:
                        beta = v
                        if alpha >= beta:
                            break
        return best, best_move

    def _ply(
        self,
        seat: int,
        trick: list[int],
        leader: int,
        ext: Any,
        alpha: int,
        beta: int,
    ) -> int:
        self.nodes += 1
        if len(trick) == self.n:
            winner, pts, ext2 = self.finish(trick, leader, ext)
            return pts + self._node(winner, ext2, alpha - pts, beta - pts)
        moves = self.legal(seat, trick, ext)
        hands = self.hands
        nxt = (seat + 1) % self.n
        # killer move: the answer that last refuted this trick so far
        killers = self.killers
        kkey = (seat, *trick)
        killer = killers.get(kkey, -1)
        if killer >= 0 and moves[0] != killer and killer in moves:
            moves.remove(killer)
            moves.insert(0, killer)
        if self.is_max[seat]:
            best = -INF
            for m in moves:
                bit = 1 << (m & 63)
                hands[seat] ^= bit
                trick.append(m)
                v = self._ply(nxt, trick, leader, ext, alpha, beta)
                trick.pop()
                hands[seat] ^= bit
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
                        if alpha >= beta:
                            killers[kkey] = m
                            break
            return best
        best = INF
        for m in moves:
            bit = 1 << (m & 63)
            hands[seat] ^= bit
            trick.append(m)
            v = self._ply(nxt, trick, leader, ext, alpha, beta)
            trick.pop()
            hands[seat] ^= bit
            if v < best:
                best = v
                if v < beta:
                    beta = v
                    if alpha >= beta:
                        killers[kkey] = m
                        break
        return best


def runs(cards: list[int], equivalent, remaining: int) -> list[int]:
    """One card of each run of equivalent cards (``cards`` in trick order within each
    group, so equivalent cards are neighbours)."""
    out: list[int] = []
    prev = -1
    for c in cards:
        if prev >= 0 and equivalent(prev, c, remaining):
            continue
        out.append(c)
        prev = c
    return out


# --- what a seat knows, and worlds that agree with it ---------------------------------
@dataclass
class Knowledge:
    """What one seat knows about the hidden cards of one deal.

    ``sizes[s]``: cards seat ``s`` holds now (public); ``known[s]``: cards seat ``s``
    surely holds (own hand for the seat itself, a robbed turned card, …);
    ``allowed[s]``: cards seat ``s`` may hold beyond ``known[s]`` (the unseen cards
    minus what its shown voids exclude); ``pool``: every unseen card (the hidden hands
    plus cards out of play such as the stock, a buried card or discards).
    """

    seat: int
    sizes: list[int]
    known: list[int]
    allowed: list[int]
    pool: int
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        seat: int,
        hands: list[int],
        known: list[int],
        allowed: list[int],
        pool: int,
    ) -> Knowledge:
        """The knowledge of ``seat`` with the public hand sizes of ``hands``, checked
        (`check`)."""
        know = cls(
            seat=seat,
            sizes=[h.bit_count() for h in hands],
            known=known,
            allowed=allowed,
            pool=pool,
        )
        know.check()
        return know

    def check(self) -> None:
        """ValueError when the constraints cannot be met by any deal."""
        n = len(self.sizes)
        need = sum(self.sizes[s] - self.known[s].bit_count() for s in range(n))
        if need > self.pool.bit_count():
            raise ValueError(
                f"{need} hidden cards to deal but only {self.pool.bit_count()} unseen"
            )
        for s in range(n):
            if self.known[s].bit_count() > self.sizes[s]:
                raise ValueError(f"seat {s} is known to hold more cards than it has")


def deal_hidden(know: Knowledge, rng: np.random.Generator) -> list[int]:
    """The hands of one world: each seat's known cards plus unseen cards it may hold, in
    its public count; the rest of the pool stays out of the hands.

    Cards go to seats at random with weights proportional to the room left (a uniform
    deal when nothing constrains it); a dead end restarts, and after many restarts a
    matching search finds a consistent deal (one always exists: the real one).
    """
    n = len(know.sizes)
    hands = list(know.known)
    room = [know.sizes[s] - hands[s].bit_count() for s in range(n)]
    pool = know.pool
    for s in range(n):
        pool &= ~hands[s]
    cards = cards_in(pool)
    spare = len(cards) - sum(room)
    if spare < 0:
        raise ValueError("more hidden cards to deal than unseen cards")
    # most constrained cards first, so dead ends are rare
    who = [[s for s in range(n) if room[s] and know.allowed[s] >> c & 1] for c in cards]
    order = sorted(range(len(cards)), key=lambda i: len(who[i]))
    for _ in range(200):
        h = hands[:]
        r = room[:]
        out = spare
        perm = rng.permutation(len(order)).tolist()
        # random order among equally constrained cards
        idx = sorted(range(len(order)), key=lambda i: (len(who[order[i]]), perm[i]))
        ok = True
        for i in idx:
            ci = order[i]
            c = cards[ci]
            options = [s for s in who[ci] if r[s]]
            weights = [r[s] for s in options]
            total = sum(weights) + out
            if total == 0:
                ok = False
                break
            x = rng.random() * total
            pick = -1
            for s, w in zip(options, weights, strict=True):
                if x < w:
                    pick = s
                    break
                x -= w
            if pick < 0:
                out -= 1
                continue
            h[pick] |= 1 << c
            r[pick] -= 1
        if ok and not any(r):
            return h
    return _match(know, hands, room, cards, rng)


def _match(
    know: Knowledge,
    hands: list[int],
    room: list[int],
    cards: list[int],
    rng: np.random.Generator,
) -> list[int]:
    """A consistent deal by augmenting paths (bipartite matching of cards to seat
    slots)."""
    slots = [s for s in range(len(room)) for _ in range(room[s])]
    order = rng.permutation(len(cards)).tolist()
    slot_card = [-1] * len(slots)

    def augment(ci: int, seen: set[int]) -> bool:
        c = cards[ci]
        for j, s in enumerate(slots):
            if j in seen or not know.allowed[s] >> c & 1:
                continue
            seen.add(j)
            if slot_card[j] < 0 or augment(slot_card[j], seen):
                slot_card[j] = ci
                return True
        return False

    for ci in order:
        augment(ci, set())
    if any(x < 0 for x in slot_card):
        raise ValueError("no deal of the unseen cards agrees with what the seat knows")
    h = hands[:]
    for j, s in enumerate(slots):
        h[s] |= 1 << cards[slot_card[j]]
    return h


def consistent(know: Knowledge, hands: list[int]) -> bool:
    """A world's hands agree with the knowledge: counts, known cards, allowed cards."""
    used = 0
    for s, h in enumerate(hands):
        if h.bit_count() != know.sizes[s] or h & know.known[s] != know.known[s]:
            return False
        if h & ~know.known[s] & ~(know.allowed[s] & know.pool):
            return False
        if used & h:
            return False
        used |= h
    return True


# --- the PIMC bot ---------------------------------------------------------------------
def parse_samples(arg: str, env_name: str) -> int:
    """``N`` of ``pimc:N``; ValueError with the accepted form."""
    try:
        n = int(arg)
    except ValueError:
        raise ValueError(
            f"write pimc:N with N the number of sampled deals (1..{MAX_SAMPLES}) for "
            f"{env_name}, got {arg!r}"
        ) from None
    if not 1 <= n <= MAX_SAMPLES:
        raise ValueError(f"PIMC samples must be 1..{MAX_SAMPLES}, got {n}")
    return n


def check_margin(margin: float) -> float:
    """A PIMC margin as a float: a finite number at least 0 (ValueError otherwise)."""
    if (
        isinstance(margin, bool)
        or not isinstance(margin, int | float | np.integer | np.floating)
        or not 0 <= margin < float("inf")
    ):
        raise ValueError(
            f"the PIMC margin must be a finite number at least 0, got {margin!r}"
        )
    return float(margin)


class PIMCAgent(Agent):
    """Perfect Information Monte Carlo over a game's `TrickSolver`.

    A game sets the class attributes below, or overrides the hooks they serve:
    `is_trick_play` (decisions PIMC makes; the rest go to the heuristic bot),
    `knowledge` (what the seat knows), `solve_world` (every legal move's value in one
    sampled deal, the seat's side solving) and `heuristic` (the fallback bot).

    ``margin`` (default 0: the best mean wins, the base move on ties only) makes PIMC a
    cautious improvement step over the base policy: the base's move is kept unless the
    best move's mean value over the sampled deals beats the base move's by at least
    ``margin``, in the units of the game's values (the side's points in the deal in
    Forty-Fives). The ``solver`` and ``pimc:N`` bots play without one.
    """

    env_name = ""
    #: players -> the most cards in hand at which PIMC searches; with more, the
    #: heuristic bot decides (an exact search of a full 8-card deal per sample is too
    #: slow for play; ``docs/solvers.md`` has the times)
    max_cards: dict[int, int] = {}
    #: the engine class the bot can play, and the phase of trick play in its state
    game_class: type | None = None
    trick_phase: Any = None
    #: ``knowledge_of(game, state, seat)`` and ``values_of(game, state, hands, seat)``
    #: (as staticmethods): the module's knowledge and move-value functions
    knowledge_of: Any = None
    values_of: Any = None

    def __init__(
        self,
        samples: int,
        seed: int | None = None,
        max_cards: int | None = None,
        base: Agent | None = None,
        margin: float = 0.0,
    ):
        if isinstance(samples, bool) or not isinstance(samples, int | np.integer):
            raise ValueError(f"PIMC samples must be an integer, got {samples!r}")
        if not 1 <= samples <= MAX_SAMPLES:
            raise ValueError(f"PIMC samples must be 1..{MAX_SAMPLES}, got {samples}")
        self.samples = int(samples)
        if max_cards is not None and (
            isinstance(max_cards, bool)
            or not isinstance(max_cards, int)
            or max_cards < 1
        ):
            raise ValueError(f"max_cards must be a positive integer, got {max_cards!r}")
        self.cards_limit = max_cards
        self.margin = check_margin(margin)
        # the policy PIMC improves on (default: the game's heuristic bot); the
        # ``expert`` agent gives the shipped network (`parlour.agents.expert`)
        self._given_base = base
        self.spec = f"pimc:{self.samples}"
        self.last_values: dict[int, float] = {}
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None or not hasattr(self, "rng"):
            self.rng = np.random.default_rng(seed)
            if self._given_base is None:
                self.base = self.heuristic(seed)
            else:
                self.base = self._given_base
                self.base.reset(seed)

    def search_settings(self) -> dict[str, Any]:
        """Samples, the hand-size limit (given, or the class's by players) and the
        margin."""
        limit = self.cards_limit
        return {
            "samples": self.samples,
            "max_cards": limit if limit is not None else dict(self.max_cards),
            "margin": self.margin,
        }

    # --- game hooks -------------------------------------------------------------------
    def heuristic(self, seed: int | None) -> Agent:
        """The game's heuristic bot with its default switches."""
        from .. import make

        return make("heuristic", self.env_name, seed=seed)

    def is_trick_play(self, turn: Turn) -> bool:
        if self.game_class is None or not isinstance(turn.game, self.game_class):
            raise ValueError(
                f"the {self.env_name} solver bots cannot play {turn.game!r}"
            )
        return turn.state.phase == self.trick_phase

    def knowledge(self, turn: Turn) -> Knowledge:
        return self.knowledge_of(turn.game, turn.state, turn.seat)

    def solve_world(self, turn: Turn, hands: list[int], legal: list[int]) -> dict:
        """Each legal action's value for the seat's side in the world ``hands``."""
        return self.values_of(turn.game, turn.state, hands, turn.seat)

    # --- the decision -----------------------------------------------------------------
    def act(self, turn: Turn) -> int:
        values = self.search(turn)
        # the base bot decides every turn, searched or not (its own generator)
        base = self.base.act(turn)
        if values is None:
            return base
        best = max(values.values())
        # both moves are valued in the same sampled deals, so the difference of their
        # means is the mean of the paired differences; below the margin it is taken
        # for sampling noise and the base move stands (no margin: on ties only)
        gain = best - values[base]
        if gain <= 1e-9 or gain < self.margin - 1e-9:
            return base
        legal = turn.legal_actions()
        return next(a for a in legal if values[a] >= best - 1e-9)

    def search(self, turn: Turn) -> dict[int, float] | None:
        """Each legal move's mean value over the sampled worlds where PIMC decides
        (trick play within the card limit, more than one legal move), else None; the
        turn is observed (`observe`) either way. `act` plays the best, ties to the
        base bot; DAgger's search teacher (`parlour.training.dagger`) labels with
        every best move."""
        legal = turn.legal_actions()
        self.observe(turn)
        if len(legal) == 1 or not self.is_trick_play(turn):
            return None
        limit = self.cards_limit or self.max_cards.get(turn.game.num_players, 99)
        if turn.state.hands[turn.seat].bit_count() > limit:
            return None
        know = self.knowledge(turn)
        totals = dict.fromkeys(legal, 0.0)
        for _ in range(self.samples):
            hands = deal_hidden(know, self.rng)
            values = self.solve_world(turn, hands, legal)
            for a in legal:
                totals[a] += values[a]
        self.last_values = {a: v / self.samples for a, v in totals.items()}
        return self.last_values

    def observe(self, turn: Turn) -> None:
        """Hook: games that must remember what they saw between turns update here."""


def solver_factory_error(kind: str, env_name: str) -> ValueError:
    """The error for an unknown agent kind of a solver-backed env."""
    return ValueError(
        f"unknown agent kind {kind!r} for {env_name}; use random, heuristic, "
        "heuristic:-tip,+tip, ckpt:PATH, solver or pimc:N"
    )


def solver_agents(cls: type[PIMCAgent], default_samples: int) -> Callable[..., Agent]:
    """A solver module's ``make_agent(kind, arg, seed=None)`` (`parlour.agents.make`):
    ``solver`` (= ``pimc:default_samples``) or ``pimc:N`` of the PIMC class ``cls``."""

    def make_agent(kind: str, arg: str, seed: int | None = None) -> Agent:
        if kind == "solver":
            if arg:
                raise ValueError(
                    "the solver bot takes no options (use pimc:N to set the samples)"
                )
            agent = cls(default_samples, seed=seed)
            agent.spec = "solver"
            return agent
        if kind == "pimc":
            return cls(parse_samples(arg, cls.env_name), seed=seed)
        raise solver_factory_error(kind, cls.env_name)

    make_agent.__doc__ = f"``solver`` and ``pimc:N`` for ``{cls.env_name}``."
    return make_agent


def acting_seat(state: Any, seat: int | None) -> int:
    """``seat``, which must be the one to act in ``state`` (None: that one)."""
    if seat is None:
        return state.to_play
    if seat != state.to_play:
        raise ValueError(f"seat {seat} is not to act (player_{state.to_play} is)")
    return seat


def turn_for(game, state, seat: int | None = None) -> Turn:
    """A `Turn` for the seat to act in ``state`` (tests and benchmarks)."""
    if seat is None:
        seat = game.current_player(state)
    mask = np.zeros(game.num_actions, dtype=np.int8)
    mask[game.legal_actions(state)] = 1
    return Turn(game, state, seat, np.zeros(0, dtype=np.float32), mask)


def advance_random(game, rng: np.random.Generator, cards: int | None, ready) -> Any:
    """A state of a random deal after random play: the first decision where
    ``ready(state)`` holds and the seat to act holds ``cards`` cards (``None``: stop at
    a random such decision). Tests and benchmarks use it."""
    from ...envs.core.engine import TERMINAL

    for _ in range(100):
        st = game.new_state()
        stops = []
        while (p := game.advance_chance(st, rng)) != TERMINAL:
            if ready(st):
                size = st.hands[p].bit_count()
                if cards is None:
                    stops.append(st.clone())
                elif size == cards:
                    return st
                elif size < cards:
                    break
            legal = game.legal_actions(st)
            game.apply(st, legal[int(rng.integers(len(legal)))])
            if stops and cards is None and rng.random() < 0.15:
                return stops[-1]
        if stops:
            return stops[int(rng.integers(len(stops)))]
    raise ValueError(f"no state with {cards} cards in hand reached")
