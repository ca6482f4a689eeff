"""The double-dummy search of German Whist's stage 2: `Stage2Solver`.

Positions are relative-rank group words (`Layout` maps the engine's cards to them);
the search is alpha-beta over "can seat 0 take at least ``k`` of the tricks left?" with
a shared transposition table (`SHARED`). The package docstring
(`parlour.agents.solver.german_whist`) describes the algorithm; `jit` is the same
search compiled with numba, which `Stage2Solver` uses when it can.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....envs.core.cards import cards_in, mask_of
from ....envs.german_whist.rules import GermanWhist
from ..backend import BACKENDS as BACKENDS  # the backends (re-exported)
from ..backend import JIT_ENV as JIT_ENV
from ..backend import compiled_module, requested_backend

#: the pure-Python search's table is cleared when it holds more entries than this (about
#: 95 bytes an entry, so some 190 MB at the limit). One Honeymoon match of ``expert``
#: against ``solver`` stores some 4 to 8 million; 500 000 (the limit until 2026-12)
#: cleared it every few decisions and cost a quarter more search.
TT_LIMIT = 2_000_000
#: the compiled search's limit (16 bytes a slot, twice as many slots as the limit: 256
#: MB at most), past which it starts a new generation of its table rather than clearing
#: it (`jit`). Against 2 million it saves a third of the positions searched in a
#: Honeymoon match (``docs/solvers.md``); 16 million searched no fewer in 2 matches.
JIT_TT_LIMIT = 8_000_000
STAGE2_TRICKS = 13
_MASK16 = 0xFFFF  # one group word; a search is at most 13 tricks (frames) deep


def most_reached(reach: Callable[[int], bool], most: int) -> int:
    """The largest ``k`` in ``0..most`` with ``reach(k)``, by binary search: ``reach``
    must hold at 0 and, once false, stay false for larger ``k`` (taking ``k`` tricks
    means taking every smaller number)."""
    lo, hi = 0, most + 1
    while hi - lo > 1:  # reach(lo) holds, reach(hi) does not
        mid = (lo + hi) // 2
        if reach(mid):
            lo = mid
        else:
            hi = mid
    return lo


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
#: `_follows` answers by ``seat << 20 | word << 4 | position``, filled as they are asked
#: (a list: indexing it is cheaper than hashing a tuple; 2M slots, 16 MB)
_FOLLOWS: list[tuple[int, ...] | None] = [None] * (2 << 20)


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
    key = seat << 20 | v << 4 | i
    out = _FOLLOWS[key]
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

    Two backends give the same answers: the search compiled with numba (`jit`; some
    ten times faster) and the pure-Python one below. ``backend``:
    ``"numba"``, ``"python"``, or ``"auto"`` (numba when it imports and its JIT is on);
    None reads `JIT_ENV`. It is settled at the first search, so building a solver
    imports nothing.
    """

    def __init__(self, tt_limit: int | None = None, backend: str | None = None):
        self.tt: dict[int, int] = {}  # the pure-Python backend's table
        self._tt_limit = tt_limit
        self._nodes = 0  # positions expanded by the pure-Python backend
        self._rec = self._build()
        # validated now; None reads the environment at the first search
        self._requested = None if backend is None else requested_backend(backend)
        self._backend: str | None = None  # settled at the first search
        self._kernel: Any = None  # the compiled backend's `jit.Kernel`

    @property
    def tt_limit(self) -> int:
        """The most table entries kept before the table is cleared (the compiled one:
        before it starts a new generation): as given, else `TT_LIMIT` for the
        pure-Python backend and `JIT_TT_LIMIT` for the compiled one (whose entries take
        a sixth of the memory)."""
        if self._tt_limit is not None:
            return self._tt_limit
        return JIT_TT_LIMIT if self.backend == "numba" else TT_LIMIT

    @tt_limit.setter
    def tt_limit(self, value: int | None) -> None:
        self._tt_limit = value

    def requested(self) -> str:
        """The backend asked for: the argument, else `JIT_ENV`'s (ValueError for a bad
        value, so callers can refuse it before any work)."""
        return self._requested or requested_backend()

    @property
    def backend(self) -> str:
        """The backend that searches: ``"numba"`` or ``"python"``."""
        if self._backend is None:
            self._settle()
        return self._backend  # type: ignore[return-value]

    def _settle(self) -> None:
        jit = compiled_module(self.requested(), f"{__package__}.jit", "stage-2 search")
        if jit is not None:
            self._kernel = jit.Kernel()
        self._backend = "python" if self._kernel is None else "numba"

    @property
    def kernel(self) -> Any:
        """The compiled search's `jit.Kernel`, None with the pure-Python backend."""
        if self._backend is None:
            self._settle()
        return self._kernel

    @property
    def nodes(self) -> int:
        """Positions expanded so far, by either backend (for benchmarks): the same
        count for the same questions while neither table has dropped an entry."""
        return self._nodes + (self._kernel.nodes if self._kernel is not None else 0)

    def clear(self) -> None:
        """Forget the transposition table."""
        self.tt.clear()
        if self._kernel is not None:
            self._kernel.clear()

    def reach(self, word: int, leader: int, k: int) -> bool:
        """True if seat 0 can take at least ``k`` of the tricks left in the position
        ``word`` (a trick boundary, ``leader`` to lead), against any defence."""
        if self._backend is None:
            self._settle()
        if self._kernel is not None:
            return self._kernel.reach(word, leader, k, self.tt_limit)
        if len(self.tt) > self.tt_limit:
            self.tt.clear()
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
        tt_get = tt.get
        tops, run, count = _TOPS, _RUN, _COUNT
        follows, follows_tab, remove, canon = _follows, _FOLLOWS, _remove, _canon
        mask = _MASK16
        solver = self

        def rec(s: int, lead_seat: int, k: int, n: int) -> bool:
            if k <= 0:
                return True
            if k > n:
                return False
            key = s << 1 | lead_seat
            entry = tt_get(key)
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
            solver._nodes += 1
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
                    fol = follows_tab[other << 20 | v << 4 | i]
                    if fol is None:
                        fol = follows(other, v, i)
                    for j in fol:
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
                        else:  # `_canon`, inlined: sort the plain-suit words
                            if g == 1:
                                a, b, c = nv, v2, v3
                            elif g == 2:
                                a, b, c = v1, nv, v3
                            else:
                                a, b, c = v1, v2, nv
                            if a < b:
                                a, b = b, a
                            if b < c:
                                b, c = c, b
                            if a < b:
                                a, b = b, a
                            s2 = v0 | a << 16 | b << 32 | c << 48
                        if winner == 0:
                            ck, cs = k - 1, 0
                        else:
                            ck, cs = k, 1
                        # the child's table entry, read here: most children are
                        # settled by it, and a call costs more than the look-up
                        e = tt_get(s2 << 1 | cs)
                        if e is None or (e & 31) < ck < ((e >> 5) & 31):
                            r = rec(s2, cs, ck, n - 1)
                        else:
                            r = ck <= (e & 31)
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
                            ck, cs = k - 1, 0
                        else:
                            ck, cs = k, 1
                        e = tt_get(s2 << 1 | cs)
                        if e is None or (e & 31) < ck < ((e >> 5) & 31):
                            r = rec(s2, cs, ck, n - 1)
                        else:
                            r = ck <= (e & 31)
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
        if self._backend is None:
            self._settle()
        if self._kernel is not None:
            return self._kernel.max_tricks(word, leader, guess, self.tt_limit)
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
        return most_reached(lambda k: self.reach(word, leader, k), n)

    @staticmethod
    def _cards(word: int) -> int:
        n = 0
        for g in (0, 16, 32, 48):
            v = (word >> g) & _MASK16
            n += _COUNT[0][v] + _COUNT[1][v]
        return n // 2


#: the solver the bots and helpers share (its table persists across games)
SHARED = Stage2Solver()
