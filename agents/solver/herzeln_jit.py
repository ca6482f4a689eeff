"""Herzeln's trick-play search (`herzeln.HerzelnSolver`) compiled with numba.

The same paranoid alpha-beta as `tricks.TrickSolver` with Herzeln's rules, move for
move: the same legal cards (follow suit), the same equivalent cards, the same move
ordering (low leads first, the table's best lead, the killer answers), the same bounds
and the same table clearing; so it returns the same values and, while no table entry
is lost, expands the same positions (``tests/test_herzeln_jit.py`` checks both). Only
the speed differs.

It is `fuenfzehnern_jit`'s search with Herzeln's rules: the same state (hands and open
trick in small int64 arrays, ``rec`` one ``@njit`` function calling itself for every
card), the same transposition table with generations (`Table`, shared by the Herzeln
solvers of a process; an entry of another generation is a free slot) and the same
growth and clearing (`backend.KernelCounters`). Herzeln has no ``ext``: the table key's
third word is ``generation << 16 | leader``, and an entry is ``lo + 128 | (hi + 128)
<< 8 | (best lead + 1) << 16`` (a deal's points lie within ±80). The contract's card
values, the trick order and the cards above each card are a table of int64 rows
(`card_table`).

Compiled code is cached as for German Whist (`backend.njit_cached`).
"""

from __future__ import annotations

import warnings

import numpy as np

from .backend import KernelCounters, SlotTable
from .backend import njit_cached as _jit

# The table's layout, probing and generations are `fuenfzehnern_jit`'s, and so are
# its helpers here: copied, not imported (as in `forty_fives_jit`), since numba's cache
# does not see a change to a compiled function of another module (a stale kernel)
PROBE = 16  # slots tried for one key
FIRST_SLOTS = 1 << 16  # 2 MB
INF = 1 << 30
#: the per-solver counters in ``stats``: positions searched (`TrickSolver.nodes`), the
#: entries of its generation, entries overwritten, its generation, its table limit
NODES, FILLED, DROPPED, GEN, LIMIT = 0, 1, 2, 3, 4
_DEPTH = 64  # move lists of the nested calls (a deal is at most 32 cards, 40 calls)
_M1 = -0x61C8864680B583EB  # 0x9E3779B97F4A7C15 as an int64
_M2 = 0x2545F4914F6CDD1D
_M3 = 0x27D4EB2F165667C5
#: ``par``: players, the solving side (bit per seat), points a trick, points of the
#: last trick, cards a suit, the cards worth points below zero, the suits' masks
N_, SIDE, PER, LAST, RANKS, NEGATIVE, SUIT_MASK = 0, 1, 2, 3, 4, 5, 6
#: rows of ``tab`` (one column per card): trick strength, value under the contract,
#: the cards of its suit above it, its suit; `ORDER`: the cards suit by suit, each
#: suit's strongest first (`HerzelnSolver.legal`'s first sort)
STRENGTH, VALUE, ABOVE, SUIT, ORDER = 0, 1, 2, 3, 4
_OFFSET = 128  # an entry's bounds are stored plus this, as bytes
#: killer slots: (seat, first card), (seat, first, second), (seat, first, second,
#: third) of the open trick, 32 cards each
_K1 = 4 * 32
_K2 = _K1 + 4 * 32 * 32
_KILLERS = _K2 + 4 * 32 * 32 * 32


def compiled() -> bool:
    """True when the functions here are compiled (numba's JIT was on when this module
    was imported, which ``NUMBA_DISABLE_JIT=1`` turns off)."""
    return hasattr(rec, "py_func")


# --- the rules (`HerzelnSolver`) ------------------------------------------------------


@_jit
def _popcount(x):
    """The set bits of ``x`` (below bit 32)."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


@_jit
def _index(low):
    """The card of a one-bit mask ``low`` (below bit 32): the bits below it, counted."""
    return _popcount(low - 1)


@_jit
def _slot0(k1, k2, k3, size):
    """The first slot of a key (``size`` a power of two, at most ``1 << 24``): the
    three words mixed by multiplication, folded, multiplied again, bits 40 and up."""
    x = int(k1) * _M1 + int(k2) * _M2 + int(k3) * _M3
    x ^= x >> 31
    x *= _M2
    return (x >> 40) & (size - 1)


@_jit
def _find(tt, k1, k2, k3, gen):
    """The index of the slot holding the key, else of the first free slot of its
    probes (empty or of another generation), else -1."""
    size = tt.size >> 2
    h = _slot0(k1, k2, k3, size)
    for p in range(PROBE):
        slot = 4 * ((h + p) & (size - 1))
        k = tt[slot + 2]
        if k == k3 and tt[slot] == k1 and tt[slot + 1] == k2:
            return slot
        if k >> 16 != gen:
            return slot
    return -1


@_jit
def _put(tt, stats, k1, k2, k3, val):
    """Store ``val`` for the key: in its slot, a free one, or over the first."""
    slot = _find(tt, k1, k2, k3, stats[GEN])
    if slot < 0:
        slot = 4 * _slot0(k1, k2, k3, tt.size >> 2)
        stats[DROPPED] += 1
    elif tt[slot + 2] >> 16 != stats[GEN]:
        stats[FILLED] += 1
    tt[slot] = k1
    tt[slot + 1] = k2
    tt[slot + 2] = k3
    tt[slot + 3] = val


@_jit
def rehash(old, new, stats):
    """Copy the entries of ``stats``'s generation from table ``old`` into ``new``."""
    stats[FILLED] = 0
    gen = stats[GEN]
    for slot in range(0, old.size, 4):
        if old[slot + 2] >> 16 == gen:
            _put(new, stats, old[slot], old[slot + 1], old[slot + 2], old[slot + 3])


@_jit
def _to_front(moves, nm, first):
    """Move ``first`` to the front of ``moves[:nm]`` (if there, the rest in order)."""
    if nm == 0 or moves[0] == first:
        return
    for p in range(1, nm):
        if moves[p] == first:
            for r in range(p, 0, -1):
                moves[r] = moves[r - 1]
            moves[0] = first
            return


@_jit
def _winning(trick, tlen, tab):
    """`HerzelnSolver._winning`: the index of the card taking ``trick[:tlen]``."""
    led = tab[SUIT, trick[0]]
    best_i = 0
    best = tab[STRENGTH, trick[0]]
    for i in range(1, tlen):
        c = trick[i]
        if tab[SUIT, c] == led and tab[STRENGTH, c] > best:
            best_i, best = i, tab[STRENGTH, c]
    return best_i


@_jit
def _sort(out, lo, hi, keys):
    """Sort ``out[lo:hi]`` by ``keys`` of its cards, stably (insertion: a few cards)."""
    for i in range(lo + 1, hi):
        c = out[i]
        k = keys[c]
        j = i
        while j > lo and keys[out[j - 1]] > k:
            out[j] = out[j - 1]
            j -= 1
        out[j] = c


@_jit
def _legal(hands, trick, tlen, seat, par, tab, keys, out):
    """`HerzelnSolver.legal` into ``out`` (their number returned): one card of each
    run of equivalent cards; leads lowest first (suit by suit on ties); answers: the
    seat's losers first, the lowest value and the strongest card first, then its
    winners lowest first, and the other way round for the other side. ``keys``:
    scratch for the sort keys."""
    n = par[N_]
    hand = hands[seat]
    remaining = np.int64(0)
    for s in range(n):
        remaining |= hands[s]
    mask = hand
    if tlen > 0:
        follow = hand & par[SUIT_MASK + tab[SUIT, trick[0]]]
        if follow:
            mask = follow
        for i in range(tlen):
            remaining |= np.int64(1) << trick[i]
    # suit by suit, strongest first; a card equivalent to the last one kept skipped
    ranks = par[RANKS]
    k = 0
    prev = -1
    for s in range(4):
        if not mask & par[SUIT_MASK + s]:
            continue
        for j in range(s * ranks, (s + 1) * ranks):
            c = tab[ORDER, j]
            if not (mask >> c) & 1:
                continue
            if prev >= 0 and tab[SUIT, c] == tab[SUIT, prev]:
                if tab[VALUE, c] == tab[VALUE, prev]:
                    between = tab[ABOVE, c] & ~tab[ABOVE, prev] & ~(np.int64(1) << prev)
                    if not between & remaining:
                        continue
            out[k] = c
            k += 1
            prev = c
    if k < 2:
        return k
    if tlen == 0:  # low leads first; on ties the suits in order
        for i in range(k):
            c = out[i]
            keys[c] = tab[STRENGTH, c] * 4 + tab[SUIT, c]
        _sort(out, 0, k, keys)
        return k
    best = tab[STRENGTH, trick[_winning(trick, tlen, tab)]]
    led = tab[SUIT, trick[0]]
    # losers by value, then strongest first (then suit, their order so far);
    # winners (of the led suit, so far strongest first) lowest first
    nwin = 0
    nlose = 0
    wins = out[k : 2 * k]
    for i in range(k):
        c = out[i]
        if tab[SUIT, c] == led and tab[STRENGTH, c] > best:
            wins[nwin] = c
            nwin += 1
        else:
            out[nlose] = c
            keys[c] = (tab[VALUE, c] + _OFFSET) * 256 + (63 - tab[STRENGTH, c]) * 4
            keys[c] += tab[SUIT, c]
            nlose += 1
    _sort(out, 0, nlose, keys)
    if (par[SIDE] >> seat) & 1:  # losers, then winners
        for i in range(nwin):
            out[nlose + i] = wins[nwin - 1 - i]
        return k
    for i in range(nlose - 1, -1, -1):  # winners, then losers
        out[nwin + i] = out[i]
    for i in range(nwin):
        out[i] = wins[nwin - 1 - i]
    return k


@_jit
def _finish(trick, leader, hands, forced, par, tab):
    """`HerzelnSolver.finish`: (winner, points for the side); the last trick's points
    when the winner's hand is empty or ``forced`` (the last trick played out)."""
    n = par[N_]
    winner = (leader + _winning(trick, n, tab)) % n
    if not (par[SIDE] >> winner) & 1:
        return winner, np.int64(0)
    pts = par[PER]
    for i in range(n):
        pts += tab[VALUE, trick[i]]
    if forced or hands[winner] == 0:
        pts += par[LAST]
    return winner, pts


@_jit
def _bounds(hands, leader, par, tab):
    """`HerzelnSolver.bounds`: the penalties left, and the tricks' points."""
    held = np.int64(0)
    for s in range(par[N_]):
        held |= hands[s]
    neg = np.int64(0)
    bad = held & par[NEGATIVE]
    while bad:
        low = bad & -bad
        neg += tab[VALUE, _index(low)]
        bad ^= low
    left = _popcount(hands[leader])
    per, last = par[PER], par[LAST]
    lo = neg + min(per, 0) * left + min(last, 0)
    hi = max(per, 0) * left + max(last, 0)
    return lo, hi


# --- the search (`TrickSolver._node`, `_lead`, `_ply`) --------------------------------
# ``rec``'s own calls pass int64s, never literal ints: numba would compile a version
# of ``rec`` per literal, and such versions load from its cache broken (a crash)
_NONE = np.int64(0)
_ONE = np.int64(1)


@_jit
def rec(ctx, d, tlen, leader, alpha, beta):
    """The side's points from the rest of the deal with ``tlen`` cards of the open
    trick (led by ``leader``) in ``ctx``'s trick array, within the window
    (``alpha``, ``beta``), fail-soft; ``d`` is the call depth (the row of scratch
    moves). With no card on the table it is `TrickSolver._node` (and ``_lead``),
    else ``_ply``."""
    tt, tstats, stats, killers, hands, trick, scratch, par, tab, keys = ctx
    n = par[N_]
    if tlen == n:  # a full trick
        stats[NODES] += 1
        winner, pts = _finish(trick, leader, hands, False, par, tab)
        t0, t1, t2, t3 = trick[0], trick[1], trick[2], trick[3]
        v = pts + rec(ctx, d + 1, _NONE, winner, alpha - pts, beta - pts)
        trick[0], trick[1], trick[2], trick[3] = t0, t1, t2, t3
        return v
    moves = scratch[d]
    if tlen == 0:
        left = hands[leader]
        if left & (left - 1) == 0:
            if left == 0:
                return np.int64(0)
            # the last trick: every card is forced
            for i in range(n):
                trick[i] = _index(hands[(leader + i) % n])
            stats[NODES] += 1
            return _finish(trick, leader, hands, True, par, tab)[1]
        k1 = hands[0] | hands[1] << 32
        k2 = hands[2] | hands[3] << 32
        gen = stats[GEN]
        slot = _find(tt, k1, k2, gen << 16 | leader, gen)
        if slot >= 0 and tt[slot + 2] == gen << 16 | leader:
            e = tt[slot + 3]
            lo = (e & 255) - _OFFSET
            hi = ((e >> 8) & 255) - _OFFSET
            first = (e >> 16) - 1
        else:
            lo, hi = _bounds(hands, leader, par, tab)
            first = np.int64(-1)
        if lo >= beta:
            return lo
        if hi <= alpha:
            return hi
        if lo == hi:
            return lo
        a = max(alpha, lo)
        b = min(beta, hi)
        nm = _legal(hands, trick, _NONE, leader, par, tab, keys, moves)
        if first >= 0:
            _to_front(moves, nm, first)
        maxing = (par[SIDE] >> leader) & 1
        best = -INF if maxing else INF
        best_move = moves[0]
        for i in range(nm):
            m = moves[i]
            bit = np.int64(1) << m
            hands[leader] ^= bit
            trick[0] = m
            v = rec(ctx, d + 1, _ONE, leader, a, b)
            hands[leader] ^= bit
            if maxing:
                if v > best:
                    best, best_move = v, m
                    if v > a:
                        a = v
                        if a >= b:
                            break
            elif v < best:
                best, best_move = v, m
                if v < b:
                    b = v
                    if a >= b:
                        break
        # the window of the table's search, as `TrickSolver._node` reads it
        a = max(alpha, lo)
        b = min(beta, hi)
        v = best
        if v <= a:
            hi = min(hi, v)
        elif v >= b:
            lo = max(lo, v)
        else:
            lo = hi = v
        if stats[FILLED] >= stats[LIMIT]:  # clear: a new generation
            stats[GEN] = tstats[0]
            tstats[0] += 1
            stats[FILLED] = 0
        entry = (lo + _OFFSET) | (hi + _OFFSET) << 8 | (best_move + 1) << 16
        _put(tt, stats, k1, k2, stats[GEN] << 16 | leader, entry)
        return v
    stats[NODES] += 1
    seat = (leader + tlen) % n
    nm = _legal(hands, trick, tlen, seat, par, tab, keys, moves)
    # killer move: the answer that last refuted this trick so far
    kidx = seat * 32 + trick[0]
    if tlen >= 2:
        kidx = _K1 + kidx * 32 + trick[1]
    if tlen >= 3:
        kidx = _K2 - _K1 * 32 + kidx * 32 + trick[2]
    killer = np.int64(killers[kidx])
    if killer >= 0:
        _to_front(moves, nm, killer)
    maxing = (par[SIDE] >> seat) & 1
    best = -INF if maxing else INF
    nxt = tlen + 1
    for i in range(nm):
        m = moves[i]
        bit = np.int64(1) << m
        hands[seat] ^= bit
        trick[tlen] = m
        v = rec(ctx, d + 1, nxt, leader, alpha, beta)
        hands[seat] ^= bit
        if maxing:
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        killers[kidx] = m
                        break
        elif v < best:
            best = v
            if v < beta:
                beta = v
                if alpha >= beta:
                    killers[kidx] = m
                    break
    return best


def card_table(strength, values, above, suit) -> np.ndarray:
    """``tab``: the rows `STRENGTH`, `VALUE`, `ABOVE`, `SUIT` of the pack's cards
    (up to 32 columns) and `ORDER`."""
    size = len(strength)
    tab = np.zeros((5, 32), dtype=np.int64)
    tab[STRENGTH, :size] = strength
    tab[VALUE, :size] = values
    tab[ABOVE, :size] = above
    tab[SUIT, :size] = suit
    order = sorted(range(size), key=lambda c: (suit[c], -strength[c]))
    tab[ORDER, :size] = order
    return tab


class Table(SlotTable):
    """The shared table's class (4-word slots, `fuenfzehnern_jit`'s layout)."""

    words = 4


def shared_table() -> Table:
    """The table the Herzeln solvers of this process share (made at the first call)."""
    return Table.shared(FIRST_SLOTS)


class Kernel(KernelCounters):
    """The compiled search's state for one `HerzelnSolver`: its generation of the
    table, its counters, its killer table, the contract's card table and parameters
    and the position's arrays."""

    def __init__(self, solver, tt_limit: int):
        self.take_table(shared_table(), FIRST_SLOTS, tt_limit)
        self.killers = np.full(_KILLERS, -1, dtype=np.int8)
        self.hands = np.zeros(4, dtype=np.int64)
        self.trick = np.zeros(4, dtype=np.int64)
        self.scratch = np.zeros((_DEPTH, 16), dtype=np.int64)
        self.keys = np.zeros(32, dtype=np.int64)
        self.tab = card_table(solver.strength, solver.values, solver.above, solver.suit)
        self.par = np.array(
            [
                solver.n,
                solver.side,
                solver.per_trick,
                solver.last,
                len(solver.strength) // 4,
                solver.negative,
                *solver.suit_mask[:4],
            ],
            dtype=np.int64,
        )

    def search(
        self,
        hands: list[int],
        leader: int,
        trick: list[int],
        ext: None,
        alpha: int,
        beta: int,
    ) -> int:
        """`TrickSolver.value` of ``hands`` (``trick`` on the table, led by
        ``leader``; Herzeln has no ``ext``)."""
        self.grow(rehash)
        for s, h in enumerate(hands):
            self.hands[s] = h
        for i, m in enumerate(trick):
            self.trick[i] = m
        ctx = (
            self.table.tt,
            self.table.next_gen,
            self.stats,
            self.killers,
            self.hands,
            self.trick,
            self.scratch,
            self.par,
            self.tab,
            self.keys,
        )
        return int(rec(ctx, 0, len(trick), leader, alpha, beta))


def warm_up() -> None:
    """Compile (or load from the cache) the search on a tiny position."""
    from ...envs.herzeln.rules import NO_HEARTS, Herzeln
    from .herzeln import HerzelnSolver

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = HerzelnSolver(Herzeln(), [1, 2, 4, 8], 0, NO_HEARTS)
        Kernel(solver, 64).search([1, 2, 4, 8], 0, [], None, -INF, INF)
