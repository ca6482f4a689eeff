"""Exact double-dummy solver and PIMC bots for German Whist and Honeymoon Whist.

Implements the seed's last strategy tip for ``004_d8444d2889c5bb38.txt`` — "Play stage 2
with both hands face up. … There's nothing left to guess, only to calculate." — over the
engine in `parlour.envs.german_whist` (both ``variant="german"`` and
``variant="honeymoon"``), and bots built on it. ``docs/solvers.md`` is the user's page.

**The solver** (`Stage2Solver`). Stage 2 is perfect information: the stock is empty, so
every card not played is in one of the two hands. A position is searched trick by trick
with alpha-beta over the question "can seat 0 take at least ``k`` of the tricks left?":

* *Relative ranks.* Inside each suit only the order of the cards still out matters, so a
  group (the trump suit with the jokers, then each plain suit) is stored as a 16-bit
  word ``(1 << n) | b`` where bit ``i`` of ``b`` says that seat 0 holds the ``i``-th
  weakest of the ``n`` cards left in it. Four words make one int; the three plain-suit
  words are sorted, since plain suits are interchangeable. Positions that differ only in
  which small cards were played, or in which plain suit is which, share one key.
* *Equivalent cards.* Cards of one hand adjacent in rank among the cards left are
  interchangeable; only the highest of each run is searched (``_TOPS``). The led card
  counts while the trick is open, so a follower's K and J around a led Q stay distinct.
* *Transposition table* keyed on (position word, leader), holding proven bounds on seat
  0's tricks and the best lead; it is shared by every search (relative keys never go
  stale), and cleared when it outgrows ``TT_LIMIT`` entries.
* *Quick tricks* give a lower bound on the leader's tricks (top trumps, and top cards of
  suits the opponent must follow), cutting many nodes without searching.
* *Move ordering*: the leader tries sure winners first, then low cards; the follower the
  cheapest card that wins, then its lowest cards; the table's best lead first of all.

German Whist asks one question (``k = 7 - stage-2 tricks so far``): whoever takes 7 of
the 13 wins, and the game stopping at the 7th trick does not change who gets there.
Honeymoon Whist counts every trick, so `Stage2Solver.max_tricks` finds the most tricks
by a binary search over ``k`` whose probes share the table (a null-window search in
MTD(f) style). The trick rule is copied from ``GermanWhist._beats``;
``tests/test_solver.py`` checks the solver against brute force over the engine itself so
the two cannot drift.

**The bots** (``parlour.agents.make("solver" | "pimc:N", "german_whist_v0")``):

* `SolverAgent` (``solver``): stage 2 exactly (see `SolverAgent` for the tie-breaks);
  stage 1 as ``pimc:DEFAULT_SAMPLES``.
* `PIMCAgent` (``pimc:N``): stage 1 by Perfect Information Monte Carlo: ``N`` deals of
  the unseen cards consistent with what the seat knows (`Knowledge`, `sample_world`);
  in each, every legal card is played, the opponent's answer and the rest of stage 1
  by a fast `Rollout` policy, and stage 2 solved exactly. PIMC is used as a
  policy-improvement step over the heuristic bot: its card is kept unless another card
  wins at least `default_margin` more of the sampled deals. Stage 2 has one consistent
  deal, so there it plays as the solver does.

`stage2_quality` measures any agent's stage-2 play against perfect play.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...envs.core.cards import cards_in, mask_of
from ...envs.german_whist.rules import TRICKS_TO_WIN, GermanWhist
from ...envs.german_whist.state import Phase, State
from ..base import Agent, Turn

#: PIMC samples per stage-1 decision of the ``solver`` bot (see ``docs/solvers.md``)
DEFAULT_SAMPLES = 8
#: the shared transposition table is cleared when it holds more entries than this (about
#: 120 bytes an entry, so some 60 MB at the limit).
TT_LIMIT = 500_000
STAGE2_TRICKS = 13
#: the most PIMC samples a spec may ask for (a guard against typos like ``pimc:4000``).
MAX_SAMPLES = 1000

_MASK16 = 0xFFFF  # one group word; a search is at most 13 tricks (frames) deep


# --- tables over one group word -------------------------------------------------------
def _word_tables() -> tuple[
    list[list[tuple[int, ...]]], list[list[int]], list[list[int]]
]:
    """For every group word ``v = (1 << n) | seat-0 bits`` and each seat: the top card
    of each run of that seat's equivalent cards (strongest first), the length of its
    unbroken run of top cards, and its number of cards."""
    size = 1 << 16
    tops: list[list[tuple[int, ...]]] = [[()] * size, [()] * size]
    run = [[0] * size, [0] * size]
    count = [[0] * size, [0] * size]
    for v in range(1, size):
        n = v.bit_length() - 1
        full = (1 << n) - 1
        own0 = v ^ (1 << n)
        for seat, mine in ((0, own0), (1, full ^ own0)):
            # the heads of runs: bit i set, bit i+1 (the next stronger card) not
            heads = mine & ~(mine >> 1)
            tops[seat][v] = tuple(i for i in range(n - 1, -1, -1) if heads >> i & 1)
            run[seat][v] = n - (full ^ mine).bit_length()
            count[seat][v] = mine.bit_count()
    return tops, run, count


_TOPS, _RUN, _COUNT = _word_tables()
_FOLLOWS: dict[tuple[int, int, int], tuple[int, ...]] = {}


def _remove(v: int, i: int) -> int:
    """The group word ``v`` without its card at relative position ``i``."""
    return ((v >> (i + 1)) << i) | (v & ((1 << i) - 1))


def _canon(v0: int, v1: int, v2: int, v3: int) -> int:
    """One int for a position: the trump word, then the plain-suit words sorted."""
    if v1 < v2:
        v1, v2 = v2, v1
    if v2 < v3:
        v2, v3 = v3, v2
    if v1 < v2:
        v1, v2 = v2, v1
    return v0 | v1 << 16 | v2 << 32 | v3 << 48


def _follows(seat: int, v: int, i: int) -> tuple[int, ...]:
    """``seat``'s answers in a group it holds, to a lead at position ``i``: the cheapest
    card that wins first, then its cards that lose from the lowest up, then the dearer
    winners."""
    key = (seat, v, i)
    out = _FOLLOWS.get(key)
    if out is None:
        mine = _TOPS[seat][v][::-1]  # weakest first
        win = [j for j in mine if j > i]
        lose = [j for j in mine if j < i]
        out = _FOLLOWS[key] = tuple(win[:1] + lose + win[1:])
    return out


# --- the pack seen by the search ------------------------------------------------------
class Layout:
    """The cards of one pack and trump suit arranged for the search.

    Group 0 is the trump suit with the jokers (Honeymoon); groups 1.. are the plain
    suits. Each group lists its cards from the weakest up. `beats` is
    ``GermanWhist._beats``.
    """

    _cache: dict[tuple[int, int], Layout] = {}

    def __init__(self, game: GermanWhist, trump_mask: int):
        deck = game.deck
        self.size = deck.size
        self.trumps = trump_mask
        self.strength: list[int] = list(game._strength)
        groups = [trump_mask] + [
            deck.suit_mask[s] for s in range(4) if deck.suit_mask[s] & ~trump_mask
        ]
        self.group_masks = groups
        self.groups = [
            sorted(cards_in(g), key=self.strength.__getitem__) for g in groups
        ]
        self.group_of = [0] * deck.size
        for g, cards in enumerate(self.groups):
            for c in cards:
                self.group_of[c] = g
        # cards of the same group stronger than c
        self.above = [
            mask_of(
                d
                for d in self.groups[self.group_of[c]]
                if self.strength[d] > self.strength[c]
            )
            for c in range(deck.size)
        ]
        # the cards that beat c when c is led: its stronger group-mates, and any trump
        self.beaters = [
            self.above[c] | (0 if (1 << c) & trump_mask else trump_mask)
            for c in range(deck.size)
        ]

    @classmethod
    def of(cls, game: GermanWhist, trump_mask: int) -> Layout:
        key = (game.deck.size, trump_mask)
        lay = cls._cache.get(key)
        if lay is None:
            lay = cls._cache[key] = cls(game, trump_mask)
        return lay

    def group_mask(self, card: int) -> int:
        """The cards that follow ``card``: its suit, or every trump and joker."""
        return self.group_masks[self.group_of[card]]

    def beats(self, lead: int, follow: int) -> bool:
        """True when the led card wins against the card that followed it (the engine's
        ``_beats``: a trump beats any plain card; otherwise an off-suit card cannot
        win)."""
        trumps = self.trumps
        if (1 << follow) & trumps:
            if not (1 << lead) & trumps:
                return False
            return self.strength[lead] > self.strength[follow]
        if (1 << lead) & trumps or self.group_of[follow] != self.group_of[lead]:
            return True
        return self.strength[lead] > self.strength[follow]

    def word(self, h0: int, h1: int) -> int:
        """The search's position int for hands ``h0`` (seat 0) and ``h1``."""
        words = []
        for cards in self.groups:
            v = 0
            n = 0
            both = h0 | h1
            for c in cards:
                bit = 1 << c
                if bit & both:
                    if bit & h0:
                        v |= 1 << n
                    n += 1
            words.append(v | 1 << n)
        words.extend([1] * (4 - len(words)))
        return _canon(*words)

    def classes(self, legal: int, remaining: int, prefer: int = 0) -> list[list[int]]:
        """The ``legal`` cards split into classes of equivalent cards: cards of one
        group adjacent in rank among ``remaining`` (every card that can still be
        played). Each class lists its cards in the order a bot would play them: the
        cards of ``prefer`` first (the Seen row: the opponent knows them already), then
        the weakest."""
        out: list[list[int]] = []
        for cards in self.groups:
            run: list[int] = []
            for c in cards:
                bit = 1 << c
                if not bit & remaining:
                    continue
                if bit & legal:
                    run.append(c)
                elif run:  # a card of the other hand (or the led card) ends the run
                    out.append(run)
                    run = []
            if run:
                out.append(run)
        for run in out:
            run.sort(key=lambda c: (not (1 << c) & prefer, self.strength[c]))
        return out


# --- the search -----------------------------------------------------------------------
class Stage2Solver:
    """Exact double-dummy search of open-handed stage-2 positions (see the module
    docstring).

    ``reach(word, leader, k)`` is the core question; the card-level helpers below answer
    it for engine positions. One instance keeps its transposition table between calls.
    """

    def __init__(self, tt_limit: int = TT_LIMIT):
        self.tt: dict[int, int] = {}
        self.tt_limit = tt_limit
        self.nodes = 0  # positions expanded (for benchmarks)
        self._rec = self._build()

    def clear(self) -> None:
        """Forget the transposition table."""
        self.tt.clear()

    def reach(self, word: int, leader: int, k: int) -> bool:
        """True if seat 0 can take at least ``k`` of the tricks left in the position
        ``word`` (a trick boundary, ``leader`` to lead), against any defence."""
        if len(self.tt) > self.tt_limit:
            self.tt.clear()
        if len(_FOLLOWS) > self.tt_limit:
            _FOLLOWS.clear()
        n = _COUNT[0][word & _MASK16] + _COUNT[1][word & _MASK16]
        for g in (16, 32, 48):
            v = (word >> g) & _MASK16
            n += _COUNT[0][v] + _COUNT[1][v]
        return self._rec(word, leader, k, n // 2)

    def _build(self):
        """The recursive search as a closure (local names are the fastest in CPython).

        A table entry packs ``lo | hi << 5 | (best + 1) << 10``: seat 0 can take ``lo``
        tricks, cannot take ``hi``, and ``best`` (group << 4 | position) was the last
        lead that worked.
        """
        tt = self.tt
        tops, run, count = _TOPS, _RUN, _COUNT
        follows, remove, canon = _follows, _remove, _canon
        mask = _MASK16
        solver = self

        def rec(s: int, lead_seat: int, k: int, n: int) -> bool:
            if k <= 0:
                return True
            if k > n:
                return False
            key = s << 1 | lead_seat
            entry = tt.get(key)
            if entry is None:
                lo, hi, best = 0, n + 1, -1
            else:
                lo, hi, best = entry & 31, (entry >> 5) & 31, (entry >> 10) - 1
                if k <= lo:
                    return True
                if k >= hi:
                    return False
            other = 1 - lead_seat
            v0 = s & mask
            v1 = (s >> 16) & mask
            v2 = (s >> 32) & mask
            v3 = s >> 48
            # Bounds without search. Quick tricks of the leader: his top trumps; with
            # the opponent's trumps drawn (or none), every trump and every top card;
            # else the top cards of suits the opponent must follow. The opponent's top
            # trumps win whenever he plays them, so they are his whatever the lead.
            mine_run = run[lead_seat]
            their_count = count[other]
            r_t = mine_run[v0]
            o_t = their_count[v0]
            if o_t == 0 or r_t >= o_t:
                q = count[lead_seat][v0] + mine_run[v1] + mine_run[v2] + mine_run[v3]
            else:
                q = r_t
                for v in (v1, v2, v3):
                    a = mine_run[v]
                    c = their_count[v]
                    q += a if a < c else c
            q_other = run[other][v0]
            if lead_seat == 0:
                if q >= k:
                    tt[key] = q | hi << 5 | (best + 1) << 10
                    return True
                if k > n - q_other:
                    tt[key] = lo | (n - q_other + 1) << 5 | (best + 1) << 10
                    return False
            else:
                if k > n - q:
                    tt[key] = lo | (n - q + 1) << 5 | (best + 1) << 10
                    return False
                if k <= q_other:
                    tt[key] = q_other | hi << 5 | (best + 1) << 10
                    return True
            solver.nodes += 1
            vs = (v0, v1, v2, v3)
            # Leads: sure winners first (a top card he must follow, or cannot ruff),
            # then the lower cards from the bottom up; the table's best lead before all.
            tops_l = tops[lead_seat]
            first: list[tuple[int, int]] = []
            rest: list[tuple[int, int]] = []
            for g in (0, 1, 2, 3):
                v = vs[g]
                reps = tops_l[v]
                if not reps:
                    continue
                i0 = reps[0]
                if i0 == v.bit_length() - 2 and (g == 0 or not o_t or their_count[v]):
                    first.append((g, i0))
                    reps = reps[1:]
                for i in reps[::-1]:
                    rest.append((g, i))
            leads = first + rest
            if best >= 0:
                m = (best >> 4, best & 15)
                if m in leads and leads[0] != m:
                    leads.remove(m)
                    leads.insert(0, m)
            tops_o = tops[other]
            want = lead_seat == 0  # seat 0 leads: one good lead is enough
            success = False
            voids: dict[int, list[tuple[int, int]]] = {}
            for g, i in leads:
                v = vs[g]
                ok = True
                if their_count[v]:  # he follows suit: one group loses two cards
                    for j in follows(other, v, i):
                        if i > j:
                            nv = ((v >> (i + 1)) << i) | (v & ((1 << i) - 1))
                            nv = ((nv >> (j + 1)) << j) | (nv & ((1 << j) - 1))
                            winner = lead_seat
                        else:
                            nv = ((v >> (j + 1)) << j) | (v & ((1 << j) - 1))
                            nv = ((nv >> (i + 1)) << i) | (nv & ((1 << i) - 1))
                            winner = other
                        if g == 0:
                            s2 = s ^ v ^ nv
                        elif g == 1:
                            s2 = canon(v0, nv, v2, v3)
                        elif g == 2:
                            s2 = canon(v0, v1, nv, v3)
                        else:
                            s2 = canon(v0, v1, v2, nv)
                        if winner == 0:
                            r = rec(s2, 0, k - 1, n - 1)
                        else:
                            r = rec(s2, 1, k, n - 1)
                        if r != want:  # the follower refutes this lead
                            ok = False
                            break
                else:  # void: ruff with the lowest trump, else discard low cards
                    answers = voids.get(g)
                    if answers is None:
                        answers = []
                        ruffs: list[tuple[int, int]] = []
                        if g and o_t:
                            t = tops_o[v0]
                            answers.append((0, t[-1]))
                            ruffs = [(0, j) for j in t[-2::-1]]
                        high: list[tuple[int, int]] = []
                        for g2 in (1, 2, 3):
                            if g2 != g:
                                t = tops_o[vs[g2]]
                                if t:
                                    answers.append((g2, t[-1]))
                                    high.extend((g2, j) for j in t[-2::-1])
                        answers += high
                        answers += ruffs
                        voids[g] = answers
                    words = list(vs)
                    words[g] = remove(v, i)
                    for g2, j in answers:
                        w2 = words[g2]
                        words[g2] = remove(w2, j)
                        s2 = canon(words[0], words[1], words[2], words[3])
                        words[g2] = w2
                        winner = other if g2 == 0 else lead_seat
                        if winner == 0:
                            r = rec(s2, 0, k - 1, n - 1)
                        else:
                            r = rec(s2, 1, k, n - 1)
                        if r != want:
                            ok = False
                            break
                if ok:
                    success = True
                    best = g << 4 | i
                    break
            result = success if want else not success
            if result:
                lo = k if k > lo else lo
            elif k < hi:
                hi = k
            tt[key] = lo | hi << 5 | (best + 1) << 10
            return result

        return rec

    def max_tricks(self, word: int, leader: int, guess: int | None = None) -> int:
        """The most tricks seat 0 can take of those left. With a ``guess`` (say the
        value of a similar position), step from it one trick at a time, as MTD(f) does,
        otherwise a binary search; the probes share the table, so the later ones are
        cheap."""
        n = self._cards(word)
        if guess is not None:
            g = min(max(guess, 0), n)
            if self.reach(word, leader, g):
                while g < n and self.reach(word, leader, g + 1):
                    g += 1
                return g
            g -= 1
            while g > 0 and not self.reach(word, leader, g):
                g -= 1
            return g
        lo, hi = 0, n + 1
        while hi - lo > 1:  # reach(lo) holds, reach(hi) does not
            mid = (lo + hi) // 2
            if self.reach(word, leader, mid):
                lo = mid
            else:
                hi = mid
        return lo

    @staticmethod
    def _cards(word: int) -> int:
        n = 0
        for g in (0, 16, 32, 48):
            v = (word >> g) & _MASK16
            n += _COUNT[0][v] + _COUNT[1][v]
        return n // 2


#: the solver the bots and helpers share (its table persists across games)
SHARED = Stage2Solver()


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
        lo, hi = 0, pos.tricks_left + 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.can_take(pos, seat, mid):
                lo = mid
            else:
                hi = mid
        return lo

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


# --- stage 1: what the seat knows, and deals consistent with it -----------------------
@dataclass(frozen=True)
class Knowledge:
    """Everything a seat knows in stage 1, read from the engine state by `from_state`,
    which touches only the seat's own hand and public facts: the opponent's Seen row
    (face-up prizes he still holds), the cards played, the face-up card, the opponent's
    shown voids, the open trick, trick counts and the number of stock cards left. The
    opponent's hidden cards and the stock below the face-up card are never read."""

    seat: int
    pack: int  # every card of the pack
    hand: int
    opp_seen: int
    played: int
    face_up: int
    opp_voids: int  # bit s: he holds no card of suit s outside his Seen row
    lead: int
    leader: int
    trump: int
    trump_mask: int
    tricks1: tuple[int, int]
    stock_left: int  # the face-up card included

    @classmethod
    def from_state(cls, game: GermanWhist, state: State, seat: int) -> Knowledge:
        if state.phase != Phase.PLAY or state.stage != 1:
            raise ValueError("PIMC sampling is for stage 1 (the stock not yet empty)")
        opp = 1 - seat
        return cls(
            seat=seat,
            pack=game.deck.all_mask,
            hand=state.hands[seat],
            opp_seen=state.seen[opp],
            played=state.played,
            face_up=state.face_up,
            opp_voids=state.voids[opp],
            lead=state.lead,
            leader=state.leader,
            trump=state.trump,
            trump_mask=state.trump_mask,
            tricks1=(state.tricks1[0], state.tricks1[1]),
            stock_left=len(state.stock) - state.stock_pos,
        )

    def opp_cards(self) -> int:
        """The opponent's hand size: 13 between tricks, 12 once he has led to this
        one."""
        return 13 - (1 if self.lead >= 0 and self.leader != self.seat else 0)

    def unseen(self) -> int:
        """Cards the seat cannot place: each is in the opponent's hidden hand or in the
        stock below the face-up card."""
        known = self.hand | self.played | self.opp_seen | (1 << self.face_up)
        return self.pack & ~known

    def void_cards(self, game: GermanWhist) -> int:
        """Cards the opponent cannot hold hidden: the suits he has shown void in (the
        trump suit with its jokers)."""
        out = 0
        for s in range(4):
            if self.opp_voids >> s & 1:
                out |= self.trump_mask if s == self.trump else game.deck.suit_mask[s]
        return out


@dataclass
class World:
    """One deal consistent with a `Knowledge`: both hands and the stock still to come
    (``stock[0]`` is the face-up card)."""

    hands: list[int]
    stock: list[int]


def sample_world(game: GermanWhist, know: Knowledge, rng: np.random.Generator) -> World:
    """A deal drawn uniformly from those consistent with what the seat knows: the
    opponent holds his Seen row plus hidden cards drawn from the unseen cards outside
    his shown voids; the other unseen cards make the stock below the face-up card, in
    random order.

    (Known simplification: the opponent's play so far is not used as evidence, and
    neither are voids shown before his last hidden draw, which cap his cards in that
    suit at one.)
    """
    unseen = know.unseen()
    hidden_n = know.opp_cards() - know.opp_seen.bit_count()
    allowed = cards_in(unseen & ~know.void_cards(game))
    if len(allowed) < hidden_n or unseen.bit_count() != hidden_n + know.stock_left - 1:
        raise ValueError("the seat's knowledge is inconsistent with the engine state")
    picks = rng.choice(len(allowed), size=hidden_n, replace=False) if hidden_n else []
    hidden = mask_of(allowed[i] for i in picks)
    rest = cards_in(unseen & ~hidden)
    order = rng.permutation(len(rest)).tolist() if rest else []
    hands = [0, 0]
    hands[know.seat] = know.hand
    hands[1 - know.seat] = know.opp_seen | hidden
    return World(hands, [know.face_up] + [rest[i] for i in order])


# --- stage 1: the rollout policy ------------------------------------------------------
# Card values for the rollout (roughly "stage-2 tricks this card is worth"): a card
# with h stronger cards of its group still out is worth _TOP[h]; a trump adds a base
# for ruffing.
_TOP = (1.0, 0.55, 0.3, 0.15, 0.08, 0.04, 0.02) + (0.0,) * 10
_TRUMP_BASE, _TRUMP_TOP = 0.7, 0.5
_HIDDEN_VALUE = 0.25  # what the hidden draw is worth on average
_HONEYMOON_TRICK = 0.5  # Honeymoon: a stage-1 trick scores too
# the leader plays for a prize worth this much more than the hidden draw
_LEAD_FOR_PRIZE = 0.45


class Rollout:
    """A fast, deterministic stage-1 policy for both seats, and the stage-1 play-out.

    The policy reads only the player's own hand, the card led, the prize and the cards
    played (what a player knows; it does not peek at the sampled opponent hand).
    Follower: win with the cheapest winning card when the prize is worth more than the
    draw by more than that card costs over the cheapest loser, else play the cheapest
    card. Leader: when the prize is worth playing for, lead the cheapest card that no
    card still out can beat in its suit (if any), else the cheapest card. "Cheapest" by
    `_value` (the constants above). Its parameters were checked in 1000-game sweeps
    against the heuristic; the values here were the best of those tried.
    """

    def __init__(self, game: GermanWhist, trump_mask: int):
        self.game = game
        self.honeymoon = game.honeymoon
        self.lay = Layout.of(game, trump_mask)
        self.all = game.deck.all_mask

    def _value(self, card: int, out: int) -> float:
        lay = self.lay
        top = _TOP[(lay.above[card] & out).bit_count()]
        if (1 << card) & lay.trumps:
            return _TRUMP_BASE + _TRUMP_TOP * top
        return top

    def _cheapest(self, cards: int, out: int) -> int:
        strength = self.lay.strength
        return min(cards_in(cards), key=lambda c: (self._value(c, out), strength[c]))

    def lead(self, hand: int, prize: int, played: int) -> int:
        out = self.all & ~played & ~hand
        gain = self._value(prize, out & ~(1 << prize)) - _HIDDEN_VALUE
        if self.honeymoon:
            gain += _HONEYMOON_TRICK
        if gain > _LEAD_FOR_PRIZE:
            masters = 0
            for c in cards_in(hand):
                if not self.lay.above[c] & out:
                    masters |= 1 << c
            if masters:
                return self._cheapest(masters, out)
        return self._cheapest(hand, out)

    def follow(self, hand: int, lead: int, prize: int, played: int) -> int:
        lay = self.lay
        legal = hand if self.honeymoon else (hand & lay.group_mask(lead)) or hand
        out = self.all & ~played & ~hand
        winners = legal & lay.beaters[lead]
        losers = legal & ~winners
        if not winners:
            return self._cheapest(legal, out)
        w = self._cheapest(winners, out)
        if not losers:
            return w
        loser = self._cheapest(losers, out)
        gain = self._value(prize, out & ~(1 << prize)) - _HIDDEN_VALUE
        if self.honeymoon:
            gain += _HONEYMOON_TRICK
        if gain > self._value(w, out) - self._value(loser, out):
            return w
        return loser

    def trick(
        self,
        hands: list[int],
        stock: list[int],
        pos: int,
        leader: int,
        lead: int,
        card: int,
        played: int,
        won: list[int],
    ) -> tuple[int, int, int]:
        """Finish a stage-1 trick (``lead`` by ``leader``, ``card`` by the other seat):
        the winner takes the face-up card, the loser the next one (the engine's
        ``_draw``). Returns (next stock position, next leader, cards played)."""
        follower = 1 - leader
        hands[follower] &= ~(1 << card)
        played |= 1 << card
        winner = leader if self.lay.beats(lead, card) else follower
        hands[winner] |= 1 << stock[pos]
        hands[1 - winner] |= 1 << stock[pos + 1]
        won[winner] += 1
        return pos + 2, winner, played

    def play_out(
        self,
        hands: list[int],
        stock: list[int],
        pos: int,
        leader: int,
        played: int,
        won: list[int],
    ) -> int:
        """Play the rest of stage 1 from a trick boundary; returns the stage-2
        leader."""
        while pos < len(stock):
            prize = stock[pos]
            lead = self.lead(hands[leader], prize, played)
            hands[leader] &= ~(1 << lead)
            played |= 1 << lead
            card = self.follow(hands[1 - leader], lead, prize, played)
            pos, leader, played = self.trick(
                hands, stock, pos, leader, lead, card, played, won
            )
        return leader


# --- PIMC -----------------------------------------------------------------------------
def _deal_score(total: int) -> int:
    """Honeymoon: the deal's match points from one player's side, for his 27-trick total
    ("1 match point for each trick over 13"; the other player scores when he has 13 or
    fewer)."""
    return total - 13 if total >= 14 else total - 14


def _stage1_classes(
    game: GermanWhist, state: State, seat: int, know: Knowledge
) -> list[list[int]]:
    """The seat's legal stage-1 cards in classes of equivalent cards: adjacent in rank
    among every card not yet played (the led card included), so nothing still to come
    can fall between them. Each class lists Seen-row cards first, then the weakest."""
    lay = Layout.of(game, know.trump_mask)
    legal = mask_of(game.legal_actions(state))
    remaining = know.pack & ~know.played
    if know.lead >= 0:
        remaining |= 1 << know.lead
    return lay.classes(legal, remaining, prefer=state.seen[seat])


def pimc_values(
    game: GermanWhist,
    state: State,
    seat: int,
    samples: int,
    rng: np.random.Generator,
    solver: Stage2Solver | None = None,
) -> dict[int, float]:
    """PIMC values of the seat's legal stage-1 cards: the mean over ``samples``
    consistent deals (`sample_world`) of the result of playing the card, the opponent's
    answer and the rest of stage 1 played by `Rollout`, stage 2 solved exactly. German:
    the chance of winning; Honeymoon: the deal's match points (negative when the
    opponent scores). Equivalent cards share one value; the same deals serve every card,
    so the comparison between cards is paired."""
    know = Knowledge.from_state(game, state, seat)
    solver = solver or SHARED
    roll = Rollout(game, know.trump_mask)
    lay = roll.lay
    classes = _stage1_classes(game, state, seat, know)
    totals = [0.0] * len(classes)
    opp = 1 - seat
    for _ in range(samples):
        world = sample_world(game, know, rng)
        guess = None  # Honeymoon: the last card's stage-2 tricks, a good first probe
        for idx, cls in enumerate(classes):
            card = cls[0]
            hands = list(world.hands)
            won = [0, 0]
            if know.lead >= 0:  # we complete the trick
                pos, leader, played = roll.trick(
                    hands, world.stock, 0, opp, know.lead, card, know.played, won
                )
            else:  # we lead; the opponent answers by the rollout policy
                hands[seat] &= ~(1 << card)
                played = know.played | (1 << card)
                answer = roll.follow(hands[opp], card, world.stock[0], played)
                pos, leader, played = roll.trick(
                    hands, world.stock, 0, seat, card, answer, played, won
                )
            leader = roll.play_out(hands, world.stock, pos, leader, played, won)
            word = lay.word(hands[0], hands[1])
            if game.honeymoon:
                guess = t0 = solver.max_tricks(word, leader, guess)
                mine = t0 if seat == 0 else STAGE2_TRICKS - t0
                totals[idx] += _deal_score(know.tricks1[seat] + won[seat] + mine)
            else:
                win0 = solver.reach(word, leader, TRICKS_TO_WIN)
                totals[idx] += 1.0 if win0 == (seat == 0) else 0.0
    out: dict[int, float] = {}
    for idx, cls in enumerate(classes):
        for c in cls:
            out[c] = totals[idx] / samples
    return out


def rollout_card(game: GermanWhist, state: State, seat: int) -> int:
    """The card the `Rollout` policy plays for ``seat`` (its own hand and public
    facts)."""
    roll = Rollout(game, state.trump_mask)
    hand = state.hands[seat]
    if state.lead < 0:
        return roll.lead(hand, state.face_up, state.played)
    return roll.follow(hand, state.lead, state.face_up, state.played)


def default_margin(samples: int) -> int:
    """How many more sampled deals another card must win than the base card before PIMC
    plays it: a quarter of the samples, at least two (``pimc:4`` and ``pimc:8`` need 2).
    One was too noisy in the arena (``docs/solvers.md``); with a single sample PIMC
    therefore never overrides the base card in German Whist."""
    return max(2, samples // 4)


def pimc_card(
    game: GermanWhist,
    state: State,
    seat: int,
    samples: int,
    rng: np.random.Generator,
    base: int | None = None,
    margin: int | None = None,
    solver: Stage2Solver | None = None,
) -> int:
    """The PIMC bot's stage-1 card, by `pimc_values`.

    PIMC here is a policy-improvement step over a base policy: ``base`` (the base
    policy's card; default: the `Rollout` policy's) is kept unless another card wins at
    least ``margin`` more of the ``samples`` deals (German; Honeymoon: scores ``margin``
    more match points over them), default `default_margin`. The margin keeps sampling
    noise from overriding a sound card. Among cards of the best value, the card the
    rollout policy values least is played (keep the better cards), then the weaker. Of
    equivalent cards, one from the Seen row (the opponent knows it already), else the
    weakest.
    """
    if base is None:
        base = rollout_card(game, state, seat)
    if margin is None:
        margin = default_margin(samples)
    values = pimc_values(game, state, seat, samples, rng, solver)
    know = Knowledge.from_state(game, state, seat)
    classes = _stage1_classes(game, state, seat, know)
    best = max(values.values())
    if (best - values[base]) * samples < margin - 1e-9:
        return next(cls[0] for cls in classes if base in cls)
    tied = [cls for cls in classes if values[cls[0]] >= best - 1e-9]
    roll = Rollout(game, state.trump_mask)
    out = know.pack & ~know.played & ~know.hand
    strength = roll.lay.strength

    def cost(cls: list[int]) -> tuple:
        return (roll._value(cls[0], out), strength[cls[0]], cls[0])

    return min(tied, key=cost)[0]


# --- the bots -------------------------------------------------------------------------
BASES = ("heuristic", "rollout")


class PIMCAgent(Agent):
    """``pimc:N``: stage 1 by PIMC over ``N`` sampled deals (`pimc_card`), stage 2
    exactly (`best_stage2_card`: with the hands open there is one consistent deal, so
    PIMC and the solver coincide).

    Options: ``base`` is the policy PIMC improves on: ``"heuristic"`` (default, the
    registry's `parlour.agents.german_whist.GermanWhistHeuristic`, seeded like this bot)
    or ``"rollout"`` (the fast `Rollout` policy); ``margin`` the sampled-deal margin a
    card needs over the base card (default `default_margin`).

    Known weaknesses of PIMC (Frank & Basin 1998; Long et al. 2010): *strategy fusion* —
    each sampled deal is played as if the cards were known, so a card that is right in
    every deal for a different follow-up looks better than it is; *non-locality* — the
    opponent's earlier choices carry information about his hand that uniform sampling
    ignores, and what our card reveals is not valued. Stage 1 after the current trick is
    played out by the simple `Rollout` policy, not searched, so values are only as good
    as that policy (``docs/solvers.md``).
    """

    def __init__(
        self,
        samples: int,
        seed: int | None = None,
        base: str = "heuristic",
        margin: int | None = None,
        solver: Stage2Solver | None = None,
    ):
        if isinstance(samples, bool) or not isinstance(samples, int | np.integer):
            raise ValueError(f"PIMC samples must be an integer, got {samples!r}")
        if not 1 <= samples <= MAX_SAMPLES:
            raise ValueError(f"PIMC samples must be 1..{MAX_SAMPLES}, got {samples}")
        if base not in BASES:
            raise ValueError(f"PIMC base must be one of {list(BASES)}, got {base!r}")
        self.samples = int(samples)
        self.margin = default_margin(self.samples) if margin is None else int(margin)
        if self.margin < 1:
            raise ValueError(f"PIMC margin must be at least 1, got {margin!r}")
        self.base = base
        self.solver = solver or SHARED
        self.spec = f"pimc:{self.samples}"
        self._base_agent: Agent | None = None
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None or not hasattr(self, "rng"):
            self.rng = np.random.default_rng(seed)
            if self.base == "heuristic":
                from ..german_whist import GermanWhistHeuristic

                self._base_agent = GermanWhistHeuristic(seed=seed)

    def act(self, turn: Turn) -> int:
        legal = turn.legal_actions()
        if len(legal) == 1:
            return legal[0]
        game, state = turn.game, turn.state
        if not isinstance(game, GermanWhist):
            raise ValueError(f"the German Whist solver bots cannot play {game!r}")
        if state.stage == 2:
            return best_stage2_card(game, state, self.solver)
        if self._base_agent is not None:
            base = self._base_agent.act(turn)
        else:
            base = rollout_card(game, state, turn.seat)
        return pimc_card(
            game,
            state,
            turn.seat,
            self.samples,
            self.rng,
            base,
            self.margin,
            self.solver,
        )


class SolverAgent(PIMCAgent):
    """``solver``: exact in stage 2, PIMC with ``DEFAULT_SAMPLES`` samples over the
    heuristic bot in stage 1.

    Stage 2 (`best_stage2_card`): German Whist — a card that keeps a won position won
    (the first in natural order: the cheapest card that wins the trick, then the lowest;
    leading, a top card, then low cards); in a lost position, the card after which the
    most tricks can still be taken, all 13 played out (the opponent must work hardest
    for his 7). Honeymoon Whist — the card that takes the most tricks, which maximises
    the deal's match points. Ties go to the natural order; of equivalent cards the
    weakest is played.
    """

    def __init__(self, seed: int | None = None, solver: Stage2Solver | None = None):
        super().__init__(DEFAULT_SAMPLES, seed=seed, solver=solver)
        self.spec = "solver"


def make_agent(kind: str, arg: str, seed: int | None = None) -> Agent:
    """The solver bots for ``german_whist_v0`` (`parlour.agents.make`): ``solver`` and
    ``pimc:N``. ValueError for anything else."""
    if kind == "solver":
        if arg:
            raise ValueError(
                "the solver bot takes no options (use pimc:N to set the samples)"
            )
        return SolverAgent(seed=seed)
    if kind == "pimc":
        try:
            n = int(arg)
        except ValueError:
            raise ValueError(
                f"write pimc:N with N the number of sampled deals (1..{MAX_SAMPLES}), "
                f"got {arg!r}"
            ) from None
        return PIMCAgent(n, seed=seed)
    raise ValueError(
        f"unknown agent kind {kind!r} for german_whist_v0; use random, heuristic, "
        "heuristic:-tip,+tip, ckpt:PATH, endgame:SPEC, solver or pimc:N"
    )


# --- test and benchmark positions -----------------------------------------------------
def random_stage2_state(
    game: GermanWhist,
    cards: int,
    rng: np.random.Generator,
    leader: int | None = None,
    tricks: tuple[int, int] | None = None,
) -> State:
    """A consistent engine state at a stage-2 trick boundary with ``cards`` cards in
    each hand, dealt at random from the pack (the rest played; trumps from a random
    first stock card). ``tricks``: each seat's stage-2 tricks so far (default: a random
    split of the ``13 - cards`` played that leaves German Whist undecided)."""
    if not 1 <= cards <= STAGE2_TRICKS:
        raise ValueError(f"cards must be 1..13, got {cards}")
    deck = game.deck
    perm = rng.permutation(deck.size).tolist()
    top, rest = perm[0], perm[1:]
    h0, h1 = mask_of(rest[:cards]), mask_of(rest[cards : 2 * cards])
    st = State()
    st.phase = Phase.PLAY
    st.dealer = int(rng.integers(2))
    st.trump = 0 if (1 << top) & game.jokers else deck.suit[top]
    st.trump_mask = deck.suit_mask[st.trump] | game.jokers
    st.hands = [h0, h1]
    # the deal as the engine records it: hands, then the stock (first face-up card
    # first)
    played = rest[2 * cards :]
    hand0 = cards_in(h0) + played[: 13 - cards]
    hand1 = cards_in(h1) + played[13 - cards : 26 - 2 * cards]
    st.stock = [top] + played[26 - 2 * cards :]
    st.dealt = hand0 + hand1 + st.stock
    st.stock_pos = len(st.stock)
    st.played = deck.all_mask & ~(h0 | h1)
    done = STAGE2_TRICKS - cards
    if tricks is None:
        low, high = max(0, done - (TRICKS_TO_WIN - 1)), min(TRICKS_TO_WIN - 1, done)
        a = int(rng.integers(low, high + 1))
        tricks = (a, done - a)
    if sum(tricks) != done:
        raise ValueError(f"tricks {tricks} must add up to the {done} tricks played")
    st.tricks2 = list(tricks)
    stage1 = game.stock_size // 2
    a1 = int(rng.integers(stage1 + 1))
    st.tricks1 = [a1, stage1 - a1]
    st.leader = st.to_play = int(rng.integers(2)) if leader is None else leader
    return st


# --- agent quality in stage 2 ---------------------------------------------------------
@dataclass(frozen=True)
class DecisionScore:
    """One stage-2 decision scored against perfect play (`score_decision`)."""

    choice: bool  # the legal cards were not all equivalent
    critical: bool  # some legal card would have changed the exact value
    optimal: bool  # the card kept the exact value
    won: bool  # German: the position was won before the card
    tricks_lost: int  # see `Stage2Quality.mean_tricks_lost`


@dataclass(frozen=True)
class Stage2Quality:
    """How close an agent's stage-2 play is to perfect play (`stage2_quality`).

    Counts are over the agent's stage-2 *decisions with a choice*: positions where its
    legal cards are not all equivalent (cards adjacent in rank among those left are the
    same card for the outcome), so forced plays do not dilute the figures. *Critical*
    decisions are those where some legal card would change the exact value (German: a
    won position with a losing card; Honeymoon: cards worth different trick counts).
    """

    agent: str
    variant: str
    games: int
    decisions: int
    optimal: int  # the card kept the position's exact value
    critical: int  # decisions where a card could change the value
    critical_optimal: int  # of those, the card kept it
    won_positions: int  # German: decisions taken in a won position
    blunders: int  # German: of those, the card turned the win into a loss
    tricks_lost: int  # summed over decisions (see `mean_tricks_lost`)

    @property
    def optimal_fraction(self) -> float:
        """Fraction of decisions whose card keeps the exact value: German Whist, a won
        position stays won (any card is optimal in a lost one); Honeymoon, the most
        tricks."""
        return self.optimal / self.decisions if self.decisions else 1.0

    @property
    def critical_optimal_fraction(self) -> float:
        """The same over critical decisions only: the sharper measure, since a decision
        where every card has the same value cannot go wrong."""
        return self.critical_optimal / self.critical if self.critical else 1.0

    @property
    def blunder_rate(self) -> float:
        """German Whist: fraction of all decisions that turned a won position into a
        lost one (0 for Honeymoon)."""
        return self.blunders / self.decisions if self.decisions else 0.0

    @property
    def mean_tricks_lost(self) -> float:
        """Tricks given away per decision against perfect play: the most tricks the seat
        could still take minus the most it can take after its card. Honeymoon counts
        every trick; German Whist counts tricks toward 7 only (both numbers capped at
        the tricks still needed), so a winning card loses nothing and a losing one what
        it gives up."""
        return self.tricks_lost / self.decisions if self.decisions else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "variant": self.variant,
            "games": self.games,
            "decisions": self.decisions,
            "optimal_fraction": self.optimal_fraction,
            "critical": self.critical,
            "critical_optimal_fraction": self.critical_optimal_fraction,
            "won_positions": self.won_positions,
            "blunders": self.blunders,
            "blunder_rate": self.blunder_rate,
            "mean_tricks_lost": self.mean_tricks_lost,
        }


def score_decision(game: GermanWhist, state: State, card: int) -> DecisionScore:
    """Score one stage-2 decision (the seat to play plays ``card``) against perfect
    play; ValueError if ``card`` is not legal."""
    pos = Stage2Position.from_state(state)
    ps = PositionSolver(game, state.trump_mask)
    classes = ps.classes(pos)
    if not any(card in cls for cls in classes):
        raise ValueError(f"{game.action_name(card)} is not a legal card here")
    if len(classes) == 1:
        return DecisionScore(False, False, True, False, 0)
    seat = pos.to_play
    cap = german_target(pos, seat) if not game.honeymoon else STAGE2_TRICKS
    chosen = next(cls for cls in classes if card in cls)
    values = {
        cls[0]: min(ps.max_tricks_after(pos, cls[0], seat), cap) for cls in classes
    }
    best = max(values.values())
    mine = values[chosen[0]]
    if game.honeymoon:
        critical = min(values.values()) < best
        return DecisionScore(True, critical, mine == best, False, best - mine)
    won = best >= cap
    critical = won and min(values.values()) < cap
    return DecisionScore(True, critical, (mine >= cap) == won, won, best - mine)


def stage2_quality(
    agent: str | Agent,
    games: int = 100,
    seed: int = 0,
    *,
    opponent: str | Agent = "heuristic",
    env_options: Mapping[str, Any] | None = None,
) -> Stage2Quality:
    """Play ``games`` games of ``agent`` against ``opponent`` (the agent's seat
    alternates) and score each of the agent's stage-2 decisions against perfect play.

    Args:
        agent: an agent spec for ``german_whist_v0`` (``"heuristic"``, ``"ckpt:PATH"``,
            …) or an `Agent`.
        games: games to play (a Honeymoon match counts every deal's stage 2).
        seed: seeds the deals and the agents: game ``i`` uses the ``i``-th seed drawn
            from ``SeedSequence(seed)``, so equal seeds give equal deals.
        opponent: the other seat's agent (spec or `Agent`); the positions the agent
            faces depend on it.
        env_options: options of ``german_whist_v0``, e.g. ``{"variant": "honeymoon"}``.

    Returns:
        A `Stage2Quality` with ``optimal_fraction``, ``critical_optimal_fraction``,
        ``blunder_rate`` (German: won positions turned into lost ones) and
        ``mean_tricks_lost``, per decision with a choice.
    """
    from ... import agents as agents_mod
    from ... import envs

    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive integer, got {games!r}")
    env_options = dict(env_options or {})
    env = envs.make("german_whist_v0", **env_options)
    raw = env.unwrapped
    game = raw.game

    def build(spec: str | Agent, agent_seed: int) -> Agent:
        if isinstance(spec, Agent):
            return spec
        return agents_mod.make(
            spec, "german_whist_v0", seed=agent_seed, env_options=env_options
        )

    me = build(agent, seed)
    other = build(opponent, seed + 1)
    scores: list[DecisionScore] = []
    seeds = np.random.SeedSequence(seed).generate_state(games, dtype=np.uint32).tolist()
    for i, game_seed in enumerate(seeds):
        seat = i % 2
        me.reset(seed=game_seed)
        other.reset(seed=game_seed + 7919)
        env.reset(seed=game_seed)
        for name in env.agent_iter():
            p = raw.agent_name_mapping[name]
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            turn = Turn(game, raw.game_state, p, obs["observation"], obs["action_mask"])
            action = (me if p == seat else other).act(turn)
            if p == seat and raw.game_state.stage == 2:
                score = score_decision(game, raw.game_state, action)
                if score.choice:
                    scores.append(score)
            env.step(action)
    env.close()
    return Stage2Quality(
        agent=agent if isinstance(agent, str) else agent.spec,
        variant=game.variant,
        games=games,
        decisions=len(scores),
        optimal=sum(d.optimal for d in scores),
        critical=sum(d.critical for d in scores),
        critical_optimal=sum(d.critical and d.optimal for d in scores),
        won_positions=sum(d.won for d in scores),
        blunders=sum(d.won and not d.optimal for d in scores),
        tricks_lost=sum(d.tricks_lost for d in scores),
    )


__all__ = [
    "DEFAULT_SAMPLES",
    "SHARED",
    "Knowledge",
    "Layout",
    "MoveValue",
    "PIMCAgent",
    "PositionSolver",
    "Rollout",
    "SolverAgent",
    "Stage2Position",
    "Stage2Quality",
    "Stage2Solver",
    "BASES",
    "DecisionScore",
    "World",
    "best_stage2_card",
    "default_margin",
    "make_agent",
    "move_values",
    "optimal_moves",
    "pimc_card",
    "pimc_values",
    "random_stage2_state",
    "rollout_card",
    "sample_world",
    "score_decision",
    "solve",
    "stage2_quality",
]
