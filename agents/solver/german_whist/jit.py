"""The stage-2 search of `search.Stage2Solver` compiled with numba.

The same alpha-beta, line for line, over the same relative-rank group words: the word
tables become numpy arrays, the transposition table fixed-size open-addressing arrays,
and ``rec`` an ``@njit`` function that calls itself. It answers every question exactly
as the pure-Python search does (``tests/test_stage2_jit.py`` checks this), so the bots
play the same cards with either; only the speed differs.

Transposition table: one int64 array of slots, each a key (0 = empty; a key ``word <<
1 | leader`` is never 0) and its entry (packed as in `search.Stage2Solver._build`, with
its generation above bit 32), side by side so that a look-up reads one cache line;
probed linearly over `PROBE` slots from the key's hash. Where the Python table is
cleared (more than ``tt_limit`` entries), this one starts a new generation: the older
entries are still read, and a new key takes the first slot of its probes that is empty
or of an older generation; one whose slots all hold current entries replaces the first
of them. Every entry is a proven bound, so an entry lost to a replacement costs only
search time, never a wrong answer; keeping the older generation rather than clearing it
saves the positions of the deal being played (a fifth of a Honeymoon match's CPU). The
table grows from small (`Kernel`), so a fresh solver does not pay for the pages of a
large one. ``stats`` counts the positions expanded (`Stage2Solver.nodes`), the slots
holding the current generation, the entries dropped and the generation.

PIMC's stage 1 (`pimc_deals`) runs here too: the `pimc.Rollout` policy and the loop of
`pimc.pimc_values` over a decision's sampled deals, each card played out and its stage 2
solved, so a decision crosses from Python once, not once a card and deal. The deals are
drawn in Python (the bot's generator, as before) and the rollout's card values are
doubles computed there, so every card gets the same value either way.

This module imports numba; `search` imports it only when the compiled backend is
chosen. Compiled code is cached in ``NUMBA_CACHE_DIR`` where that is set, else next to
this file, or, when the package directory is read-only (an installed wheel), in numba's
per-user cache (``~/.cache/numba``); when no cache location is writable the functions
are compiled afresh in each process (about 10 s of CPU) rather than failing.
"""

from __future__ import annotations

import warnings

import numpy as np

from ....envs.german_whist.rules import TRICKS_TO_WIN as _TRICKS_TO_WIN
from ..backend import KernelCounters, slots_for
from ..backend import njit_cached as _jit
from . import search
from .pimc import _HIDDEN_VALUE, _HONEYMOON_TRICK, _LEAD_FOR_PRIZE
from .search import _COUNT, _RUN, _TOPS
from .search import STAGE2_TRICKS as _STAGE2_TRICKS

PROBE = 8  # slots tried for one key
NODES, FILLED, DROPPED, GEN = 0, 1, 2, 3  # the counters in ``stats``
_ENTRY = 0xFFFFFFFF  # a slot's entry; its generation is stored above it
#: a new table's slots (2 MB): a fresh solver's first searches would pay more for the
#: pages of a full-size table than for the search itself
FIRST_SLOTS = 1 << 17
_SCRATCH = 48  # leads or answers of one position (at most 32 of either)
_DEPTH = 16  # frames: a search is at most 13 tricks deep, indexed by tricks left


def compiled() -> bool:
    """True when the functions here are compiled (numba's JIT was on when this module
    was imported, which ``NUMBA_DISABLE_JIT=1`` turns off)."""
    return hasattr(rec, "py_func")


def tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`search._TOPS`, ``_RUN`` and ``_COUNT`` as arrays: ``tops[seat, v, :ntops[seat,
    v]]`` (strongest first), ``ntops``, ``run`` and ``count``, each indexed ``[seat,
    v]``."""
    size = 1 << 16
    tops = np.zeros((2, size, 8), dtype=np.int8)
    ntops = np.zeros((2, size), dtype=np.int8)
    for seat in (0, 1):
        for v, t in enumerate(_TOPS[seat]):
            ntops[seat, v] = len(t)
            tops[seat, v, : len(t)] = t
    run = np.array(_RUN, dtype=np.int8)
    count = np.array(_COUNT, dtype=np.int8)
    return tops, ntops, run, count


_MIX = -0x61C8864680B583EB  # 0x9E3779B97F4A7C15 (Fibonacci hashing) as an int64


@_jit
def _slot0(key, size):
    """The first slot of ``key`` (``size`` a power of two): the key's high half folded
    onto its low half (so every word counts in a small table), times `_MIX`, bits 40
    and up of the wrapped 64-bit product; the same with or without the JIT."""
    x = int(key)
    x ^= x >> 31
    return ((x * _MIX) >> 40) & (size - 1)


@_jit
def _find(tt, key):
    """The index of the slot holding ``key``, else of the first empty slot of its
    probes, else -1 (every one taken by another key)."""
    size = tt.size >> 1
    h = _slot0(key, size)
    for p in range(PROBE):
        slot = 2 * ((h + p) & (size - 1))
        if tt[slot] == key or tt[slot] == 0:
            return slot
    return -1


@_jit
def tt_get(tt, key):
    """The entry of ``key`` (of any generation: every entry is a proven bound), or
    -1."""
    slot = _find(tt, key)
    if slot >= 0 and tt[slot] == key:
        return tt[slot + 1] & _ENTRY
    return np.int64(-1)


@_jit
def tt_put(tt, stats, key, val):
    """Store ``val`` for ``key``, of the current generation: in its slot, else the
    first empty or older-generation slot of its probes, else over the first."""
    size = tt.size >> 1
    h = _slot0(key, size)
    gen = stats[GEN]
    slot = -1
    for p in range(PROBE):
        at = 2 * ((h + p) & (size - 1))
        held = tt[at]
        if held == key:
            slot = at
            break
        if held == 0:  # nothing was ever stored past an empty slot
            if slot < 0:
                slot = at
            break
        if slot < 0 and tt[at + 1] >> 32 != gen:
            slot = at
    if slot < 0:
        slot = 2 * h
        stats[DROPPED] += 1
    elif tt[slot] == 0 or tt[slot + 1] >> 32 != gen:
        stats[FILLED] += 1
    tt[slot] = key
    tt[slot + 1] = val | gen << 32


@_jit
def rehash(old, new, stats):
    """Copy the entries of table ``old`` into the empty, larger ``new`` (all of the
    current generation there)."""
    stats[FILLED] = 0
    for slot in range(0, old.size, 2):
        if old[slot] != 0:
            tt_put(new, stats, old[slot], old[slot + 1] & _ENTRY)


# the word helpers of the Python search, compiled (the same code, so the same keys)
_remove = _jit(search._remove)
_canon = _jit(search._canon)


@_jit
def _follow_answers(tops, ntops, seat, v, i, out):
    """``seat``'s answers in group word ``v`` to a lead at position ``i``, into
    ``out`` (their number returned): the cheapest card that wins, the losers from the
    lowest up, then the dearer winners (`search._follows`)."""
    m = ntops[seat, v]
    na = 0
    first_win = -1
    for t in range(m - 1, -1, -1):  # tops are strongest first: weakest up
        j = np.int64(tops[seat, v, t])
        if j > i:
            first_win = j
            break
    if first_win >= 0:
        out[na] = first_win
        na += 1
    for t in range(m - 1, -1, -1):
        j = np.int64(tops[seat, v, t])
        if j < i:
            out[na] = j
            na += 1
    for t in range(m - 1, -1, -1):
        j = np.int64(tops[seat, v, t])
        if first_win >= 0 and j > first_win:
            out[na] = j
            na += 1
    return na


@_jit
def _void_answers(tops, ntops, seat, vs, g, out):
    """``seat``'s answers ``g2 << 4 | j`` to a lead in group ``g`` he is void in, into
    ``out`` (their number returned): the lowest ruff, the lowest card of each other
    plain suit, their higher cards, then the higher ruffs."""
    na = 0
    ruffs = g != 0 and ntops[seat, vs[0]] != 0
    if ruffs:
        out[na] = np.int64(tops[seat, vs[0], ntops[seat, vs[0]] - 1])
        na += 1
    for g2 in range(1, 4):
        m = ntops[seat, vs[g2]]
        if g2 != g and m:
            out[na] = g2 << 4 | np.int64(tops[seat, vs[g2], m - 1])
            na += 1
    for g2 in range(1, 4):
        if g2 != g:
            for t in range(ntops[seat, vs[g2]] - 2, -1, -1):
                out[na] = g2 << 4 | np.int64(tops[seat, vs[g2], t])
                na += 1
    if ruffs:
        for t in range(ntops[seat, vs[0]] - 2, -1, -1):
            out[na] = np.int64(tops[seat, vs[0], t])
            na += 1
    return na


@_jit
def _with(ws, g, w):
    """The four group words ``ws`` with group ``g``'s word replaced by ``w`` (a tuple,
    not a list: a list would be allocated for every child)."""
    w0, w1, w2, w3 = ws
    if g == 0:
        return (w, w1, w2, w3)
    if g == 1:
        return (w0, w, w2, w3)
    if g == 2:
        return (w0, w1, w, w3)
    return (w0, w1, w2, w)


@_jit
def _after(s, vs, g, i, answer, follows, lead_seat):
    """The position after a lead at ``(g, i)`` and ``answer`` (a position in group
    ``g`` when he follows, else ``g2 << 4 | j``), and who took the trick."""
    if follows:  # one group loses two cards
        v = vs[g]
        j = answer
        if i > j:
            nv = _remove(_remove(v, i), j)
            winner = lead_seat
        else:
            nv = _remove(_remove(v, j), i)
            winner = 1 - lead_seat
        if g == 0:
            return s ^ v ^ nv, winner
        w = _with(vs, g, nv)
    else:
        g2 = answer >> 4
        j = answer & 15
        winner = 1 - lead_seat if g2 == 0 else lead_seat  # a ruff wins, a discard not
        w = _with(vs, g, _remove(vs[g], i))
        w = _with(w, g2, _remove(w[g2], j))
    return _canon(w[0], w[1], w[2], w[3]), winner


@_jit
def rec(ctx, s, lead_seat, k, n):
    """Can seat 0 take at least ``k`` of the ``n`` tricks left in position ``s``,
    ``lead_seat`` to lead? `search.Stage2Solver._build`'s ``rec``, compiled; ``ctx``
    is `Kernel.ctx`."""
    tt, stats, tops, ntops, run, count, scratch = ctx
    if k <= 0:
        return True
    if k > n:
        return False
    key = s << 1 | lead_seat
    entry = tt_get(tt, key)
    if entry < 0:
        lo, hi, best = np.int64(0), np.int64(n + 1), np.int64(-1)
    else:
        lo, hi, best = entry & 31, (entry >> 5) & 31, (entry >> 10) - 1
        if k <= lo:
            return True
        if k >= hi:
            return False
    other = 1 - lead_seat
    v0 = s & 0xFFFF
    v1 = (s >> 16) & 0xFFFF
    v2 = (s >> 32) & 0xFFFF
    v3 = s >> 48
    # quick tricks (see the Python search for the reasoning)
    r_t = np.int64(run[lead_seat, v0])
    o_t = np.int64(count[other, v0])
    if o_t == 0 or r_t >= o_t:
        q = (
            np.int64(count[lead_seat, v0])
            + run[lead_seat, v1]
            + run[lead_seat, v2]
            + run[lead_seat, v3]
        )
    else:
        q = r_t
        for v in (v1, v2, v3):
            a = np.int64(run[lead_seat, v])
            c = np.int64(count[other, v])
            q += a if a < c else c
    q_other = np.int64(run[other, v0])
    if lead_seat == 0:
        if q >= k:
            tt_put(tt, stats, key, q | hi << 5 | (best + 1) << 10)
            return True
        if k > n - q_other:
            hi = n - q_other + 1
            tt_put(tt, stats, key, lo | hi << 5 | (best + 1) << 10)
            return False
    else:
        if k > n - q:
            hi = n - q + 1
            tt_put(tt, stats, key, lo | hi << 5 | (best + 1) << 10)
            return False
        if k <= q_other:
            tt_put(tt, stats, key, q_other | hi << 5 | (best + 1) << 10)
            return True
    stats[NODES] += 1
    vs = (v0, v1, v2, v3)
    # leads, ``g << 4 | i``: sure winners first, then the lower cards from the bottom
    # up; the table's best lead before all (this frame's rows of ``scratch``)
    leads = scratch[n, 0]
    rest = scratch[n, 1]
    answers = scratch[n, 2]
    nl = 0
    nr = 0
    for g in range(4):
        v = vs[g]
        m = ntops[lead_seat, v]
        if m == 0:
            continue
        start = 0
        i0 = np.int64(tops[lead_seat, v, 0])
        top = np.int64(count[0, v]) + count[1, v] - 1
        if i0 == top and (g == 0 or o_t == 0 or count[other, v] != 0):
            leads[nl] = g << 4 | i0
            nl += 1
            start = 1
        for t in range(m - 1, start - 1, -1):
            rest[nr] = g << 4 | np.int64(tops[lead_seat, v, t])
            nr += 1
    for t in range(nr):
        leads[nl + t] = rest[t]
    nl += nr
    if best >= 0 and nl > 0 and leads[0] != best:
        for p in range(1, nl):
            if leads[p] == best:  # to the front, the others in order
                for r in range(p, 0, -1):
                    leads[r] = leads[r - 1]
                leads[0] = best
                break
    want = lead_seat == 0  # seat 0 leads: one good lead is enough
    success = False
    for li in range(nl):
        lead = leads[li]
        g = lead >> 4
        i = lead & 15
        follows = count[other, vs[g]] != 0  # else void: he ruffs or discards
        if follows:
            na = _follow_answers(tops, ntops, other, vs[g], i, answers)
        else:
            na = _void_answers(tops, ntops, other, vs, g, answers)
        ok = True
        for a in range(na):
            s2, winner = _after(s, vs, g, i, answers[a], follows, lead_seat)
            if winner == 0:
                ck, cs = k - 1, 0
            else:
                ck, cs = k, 1
            # the child's table entry, read here: most children are settled by it,
            # and a call costs more than the look-up
            e = tt_get(tt, s2 << 1 | cs)
            if e < 0 or (e & 31) < ck < ((e >> 5) & 31):
                r = rec(ctx, s2, cs, ck, n - 1)
            else:
                r = ck <= (e & 31)
            if r != want:  # the follower refutes this lead
                ok = False
                break
        if ok:
            success = True
            best = lead
            break
    result = success if want else not success
    if result:
        lo = k if k > lo else lo
    elif k < hi:
        hi = k
    tt_put(tt, stats, key, lo | hi << 5 | (best + 1) << 10)
    return result


@_jit
def _cards(count, word):
    """Cards in each hand of the position ``word``."""
    n = np.int64(0)
    for g in range(4):
        v = (word >> (16 * g)) & 0xFFFF
        n += np.int64(count[0, v]) + count[1, v]
    return n // 2


@_jit
def reach(ctx, word, leader, k, limit):
    """`Stage2Solver.reach`: start a new generation of the table when more than
    ``limit`` slots hold the current one, then search."""
    stats = ctx[1]
    if stats[FILLED] > limit:
        # the entries so far stay readable, and are the first to be replaced
        stats[GEN] += 1
        stats[FILLED] = 0
    return rec(ctx, word, leader, k, _cards(ctx[5], word))


@_jit
def max_tricks(ctx, word, leader, guess, limit):
    """`Stage2Solver.max_tricks`: from ``guess`` one trick at a time, or (``guess``
    negative) by binary search."""
    n = _cards(ctx[5], word)
    if guess >= 0:
        g = min(guess, n)
        if reach(ctx, word, leader, g, limit):
            while g < n and reach(ctx, word, leader, g + 1, limit):
                g += 1
            return g
        g -= 1
        while g > 0 and not reach(ctx, word, leader, g, limit):
            g -= 1
        return g
    lo, hi = np.int64(0), n + 1
    while hi - lo > 1:  # reach(lo) holds, reach(hi) does not
        mid = (lo + hi) // 2
        if reach(ctx, word, leader, mid, limit):
            lo = mid
        else:
            hi = mid
    return lo


class Kernel(KernelCounters):
    """The compiled search's state for one `Stage2Solver`: the tables (shared by every
    kernel), its transposition table and its counters.

    The table starts at `FIRST_SLOTS` slots and doubles, between calls, whenever it is
    over half full, up to `slots_for` ``tt_limit``.
    """

    _tables: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def __init__(self) -> None:
        if Kernel._tables is None:
            Kernel._tables = tables()
        self.tables = Kernel._tables
        self.stats = np.zeros(4, dtype=np.int64)
        self.scratch = np.zeros((_DEPTH, 3, _SCRATCH), dtype=np.int64)
        self.tt = np.zeros(0, dtype=np.int64)
        self._ctx: tuple = ()

    def _new(self, slots: int) -> None:
        self.tt = np.zeros(2 * slots, dtype=np.int64)
        self._ctx = (self.tt, self.stats, *self.tables, self.scratch)

    def ctx(self, tt_limit: int) -> tuple:
        """What the compiled functions share, ``(tt, stats, tops, ntops, run, count,
        scratch)``, the table grown (or shrunk) to fit ``tt_limit``."""
        slots = self.tt.size // 2
        most = slots_for(tt_limit)
        if slots > most or slots == 0:  # first use, or a smaller limit
            self.stats[FILLED] = 0
            self._new(min(FIRST_SLOTS, most))
        elif 2 * self.stats[FILLED] > slots and slots < most:
            old = self.tt
            self._new(2 * slots)
            rehash(old, self.tt, self.stats)
        return self._ctx

    def clear(self) -> None:
        """Forget the transposition table (and give its memory back)."""
        self.tt = np.zeros(0, dtype=np.int64)
        self.stats[FILLED] = 0

    def reach(self, word: int, leader: int, k: int, tt_limit: int) -> bool:
        """`Stage2Solver.reach`, compiled."""
        return bool(reach(self.ctx(tt_limit), word, leader, k, tt_limit))

    def max_tricks(self, word: int, leader: int, guess: int | None, tt_limit: int):
        """`Stage2Solver.max_tricks`, compiled (``guess`` None: binary search)."""
        g = -1 if guess is None else max(guess, 0)
        return int(max_tricks(self.ctx(tt_limit), word, leader, g, tt_limit))

    def pimc_deals(
        self,
        lay: tuple,
        deals: np.ndarray,
        stocks: np.ndarray,
        cards: np.ndarray,
        know: np.ndarray,
        tt_limit: int,
        totals: np.ndarray,
    ) -> None:
        """`pimc_deals` over every deal with this kernel's table, grown between deals
        as between searches."""
        done, guess = 0, -1  # no first guess: the first solve searches by halving
        while done < deals.shape[0]:
            ctx = self.ctx(tt_limit)
            done, guess = pimc_deals(
                ctx,
                lay,
                deals,
                stocks,
                cards,
                know,
                done,
                guess,
                tt_limit,
                slots_for(tt_limit),
                totals,
            )


def warm_up() -> None:
    """Compile (or load from the cache) every entry point on a tiny position."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = Kernel()
        k.max_tricks(0b110 | 1 << 16 | 1 << 32 | 1 << 48, 0, None, 64)


# --- stage-1 PIMC: the rollout and the stage-2 solve of one sampled deal --------------
# `pimc.Rollout` and the loop of `pimc.pimc_values` over the cards, compiled. ``lay`` is
# `pimc.compiled_rollout`'s tuple ``(above, beaters, strength, group_of, group_mask,
# groups, values, consts)``: per-card arrays of the `search.Layout`, the group rows
# (cards weakest first, -1 after the last), the rollout's card values ``values[trump,
# h]`` (computed in Python, so the same doubles) and ``consts``: the trump mask, the
# pack's mask and Honeymoon (1) or not.
_BYTE_BITS = np.array([bin(b).count("1") for b in range(256)], dtype=np.int64)


@_jit
def _popcount(x):
    """Set bits of ``x`` (a card mask), a byte at a time: the same with numba's JIT
    off, where int64 products would overflow."""
    n = np.int64(0)
    while x:
        n += _BYTE_BITS[x & 0xFF]
        x >>= 8
    return n


@_jit
def _card_value(lay, card, out):
    """`pimc.Rollout._value`."""
    above, values, trumps = lay[0], lay[6], lay[7][0]
    h = _popcount(above[card] & out)
    return values[1, h] if (np.int64(1) << card) & trumps else values[0, h]


@_jit
def _cheapest(lay, cards, out):
    """`pimc.Rollout._cheapest`: the first card, ascending, of least (value,
    strength)."""
    strength = lay[2]
    best = np.int64(-1)
    best_v = 0.0
    best_s = np.int64(0)
    while cards:
        low = cards & -cards
        cards ^= low
        c = _popcount(low - 1)
        v = _card_value(lay, c, out)
        s = np.int64(strength[c])
        if best < 0 or v < best_v or (v == best_v and s < best_s):
            best, best_v, best_s = c, v, s
    return best


@_jit
def _prize_gain(lay, prize, out):
    """What playing for ``prize`` gains over the hidden draw (`pimc.Rollout.lead`)."""
    gain = _card_value(lay, prize, out & ~(np.int64(1) << prize)) - _HIDDEN_VALUE
    if lay[7][2]:
        gain += _HONEYMOON_TRICK
    return gain


@_jit
def _lead(lay, hand, prize, played):
    """`pimc.Rollout.lead`."""
    above = lay[0]
    out = lay[7][1] & ~played & ~hand
    if _prize_gain(lay, prize, out) > _LEAD_FOR_PRIZE:
        masters = np.int64(0)
        rest = hand
        while rest:
            low = rest & -rest
            rest ^= low
            if not above[_popcount(low - 1)] & out:
                masters |= low
        if masters:
            return _cheapest(lay, masters, out)
    return _cheapest(lay, hand, out)


@_jit
def _follow(lay, hand, lead, prize, played):
    """`pimc.Rollout.follow`."""
    legal = hand
    if not lay[7][2]:
        legal = hand & lay[4][lead]
        if not legal:
            legal = hand
    out = lay[7][1] & ~played & ~hand
    winners = legal & lay[1][lead]
    losers = legal & ~winners
    if not winners:
        return _cheapest(lay, legal, out)
    w = _cheapest(lay, winners, out)
    if not losers:
        return w
    loser = _cheapest(lay, losers, out)
    gain = _prize_gain(lay, prize, out)
    if gain > _card_value(lay, w, out) - _card_value(lay, loser, out):
        return w
    return loser


@_jit
def _beats(lay, lead, follow):
    """`search.Layout.beats`."""
    strength, group_of, trumps = lay[2], lay[3], lay[7][0]
    if (np.int64(1) << follow) & trumps:
        if not (np.int64(1) << lead) & trumps:
            return False
        return strength[lead] > strength[follow]
    if (np.int64(1) << lead) & trumps or group_of[follow] != group_of[lead]:
        return True
    return strength[lead] > strength[follow]


@_jit
def _trick(lay, hands, stock, pos, leader, lead, card, played, won):
    """`pimc.Rollout.trick` (``hands`` and ``won`` updated in place): (next stock
    position, next leader, cards played)."""
    follower = 1 - leader
    hands[follower] &= ~(np.int64(1) << card)
    played |= np.int64(1) << card
    winner = leader if _beats(lay, lead, card) else follower
    hands[winner] |= np.int64(1) << stock[pos]
    hands[1 - winner] |= np.int64(1) << stock[pos + 1]
    won[winner] += 1
    return pos + 2, winner, played


@_jit
def _play_out(lay, hands, stock, pos, leader, played, won):
    """`pimc.Rollout.play_out`: the rest of stage 1; the stage-2 leader."""
    while pos < stock.size:
        prize = stock[pos]
        lead = _lead(lay, hands[leader], prize, played)
        hands[leader] &= ~(np.int64(1) << lead)
        played |= np.int64(1) << lead
        card = _follow(lay, hands[1 - leader], lead, prize, played)
        pos, leader, played = _trick(
            lay, hands, stock, pos, leader, lead, card, played, won
        )
    return leader


@_jit
def _word(lay, h0, h1):
    """`search.Layout.word`."""
    groups = lay[5]
    both = h0 | h1
    w = np.ones(4, dtype=np.int64)
    for g in range(groups.shape[0]):
        v = np.int64(0)
        n = 0
        for t in range(groups.shape[1]):
            c = groups[g, t]
            if c < 0:
                break
            bit = np.int64(1) << c
            if bit & both:
                if bit & h0:
                    v |= np.int64(1) << n
                n += 1
        w[g] = v | np.int64(1) << n
    return _canon(w[0], w[1], w[2], w[3])


@_jit
def pimc_deals(ctx, lay, deals, stocks, cards, know, first, guess, limit, most, totals):
    """The sampled deals of `pimc.pimc_values` from ``first`` on: in each, for each of
    ``cards`` (a class's first card, in order) play it, the opponent's answer and the
    rest of stage 1 by the rollout, solve stage 2 and add the seat's result to
    ``totals``. ``deals[d]`` holds both hands and ``stocks[d]`` the stock; ``know`` is
    (seat, card led or -1, cards played, the seat's stage-1 tricks); ``guess`` the
    first Honeymoon probe (-1: none). Stops early, after a deal, when the table is over
    half full and has fewer than ``most`` slots (`Kernel.ctx` then grows it). Returns
    (the next deal, the last Honeymoon solve's tricks)."""
    seat, led, played0, tricks1 = know[0], know[1], know[2], know[3]
    tt, stats = ctx[0], ctx[1]
    opp = 1 - seat
    hands = np.empty(2, dtype=np.int64)
    won = np.zeros(2, dtype=np.int64)
    d = first
    while d < deals.shape[0]:
        stock = stocks[d]
        for idx in range(cards.size):
            card = cards[idx]
            hands[0], hands[1] = deals[d, 0], deals[d, 1]
            won[0], won[1] = 0, 0
            if led >= 0:  # we complete the trick
                pos, leader, played = _trick(
                    lay, hands, stock, np.int64(0), opp, led, card, played0, won
                )
            else:  # we lead; the opponent answers by the rollout policy
                hands[seat] &= ~(np.int64(1) << card)
                played = played0 | np.int64(1) << card
                answer = _follow(lay, hands[opp], card, stock[0], played)
                pos, leader, played = _trick(
                    lay, hands, stock, np.int64(0), seat, card, answer, played, won
                )
            leader = _play_out(lay, hands, stock, pos, leader, played, won)
            word = _word(lay, hands[0], hands[1])
            if lay[7][2]:
                guess = t0 = max_tricks(ctx, word, leader, guess, limit)
                mine = t0 if seat == 0 else _STAGE2_TRICKS - t0
                total = tricks1 + won[seat] + mine
                totals[idx] += total - 13 if total >= 14 else total - 14
            else:
                # a literal ``k`` would compile a second `rec`, and numba's cache does
                # not load a recursive function of two signatures safely (it crashes)
                win0 = reach(ctx, word, leader, np.int64(_TRICKS_TO_WIN), limit)
                totals[idx] += 1.0 if win0 == (seat == 0) else 0.0
        d += 1
        slots = tt.size >> 1
        if 2 * stats[FILLED] > slots and slots < most:
            break
    return d, guess
