"""Fünfzehnern's trick-play search (`fuenfzehnern.FuenfzehnernSolver`) compiled with
numba.

The same paranoid alpha-beta as `tricks.TrickSolver` with Fünfzehnern's rules, move for
move: the same legal moves (lead rules, Zwang, the capture chain), the same equivalent
cards, the same move ordering (the table's best lead, the killer answers), the same
bounds and the same table clearing; so it returns the same values and, while no table
entry is lost, expands the same positions (``tests/test_fuenfzehnern_jit.py`` checks
both). Only the speed differs.

State: the hands and the open trick in small int64 arrays (a search makes and unmakes
moves in place); the capture chain (`fuenfzehnern.canonical_chain`, at most four suits)
packed in one int, its length in bits 0–2 and suit ``i`` in bits ``3 + 2i``; ``rec``
is one ``@njit`` function that calls itself for every card (a trick boundary is a call
with no card on the table).

Transposition table: one int64 array of 4-word slots (the hands of seats 0–1, of seats
2–3, ``generation << 16 | leader << 12 | chain``, and the entry ``lo | hi << 8 |
(best lead + 1) << 16``), probed linearly over `PROBE` slots; a key that finds them all
taken overwrites the first. Every solver of a process shares one table (`Table`) and
owns a *generation*: a slot of another generation is free, so a new solver, or a
solver clearing its table (at ``tt_limit`` entries, as the Python table is), starts
empty at no cost and the table's pages stay warm across PIMC's many small solves. An
entry is a proven bound, so one lost costs only search time, never a wrong answer. The
table starts at `FIRST_SLOTS` slots and doubles between searches while a solver fills
over half of it, up to `slots_for` ``tt_limit``; a solver whose limit is smaller than
the shared table gets a table of its own.

Compiled code is cached as for German Whist (`backend.njit_cached`).
"""

from __future__ import annotations

import warnings

import numpy as np

from ...envs.fuenfzehnern.rules import ACE, KING, OBER
from .backend import KernelCounters, SlotTable
from .backend import njit_cached as _jit

PROBE = 16  # slots tried for one key
FIRST_SLOTS = 1 << 16  # 2 MB
ZW = 64  # the Zwang flag of a move (`fuenfzehnern.ZW`)
INF = 1 << 30
#: the per-solver counters in ``stats``: positions searched (`TrickSolver.nodes`), the
#: entries of its generation, entries overwritten, its generation, its table limit
NODES, FILLED, DROPPED, GEN, LIMIT = 0, 1, 2, 3, 4
#: ``par``: players, the solving side (bit per seat), strict rules, the first suit's
#: unbeatable duty
N_, SIDE, STRICT, DUTY = 0, 1, 2, 3
_DEPTH = 64  # move lists of the nested calls (a deal is at most 32 cards, 40 calls)
_KILLERS = 4 * 64 * (1 + 32 + 32 * 32)  # (seat, first card + Zwang, 2nd, 3rd card)

#: the cards of each rank (bit ``r`` of every suit's byte): ranks A K O U 10 are worth
#: 5 4 3 2 1 points (`CARD_POINTS`), 9 8 7 nothing
_RANK = 0x01010101
_NO_POINTS = 0xE0E0E0E0
_M1 = -0x61C8864680B583EB  # 0x9E3779B97F4A7C15 as an int64
_M2 = 0x2545F4914F6CDD1D
_M3 = 0x27D4EB2F165667C5


def compiled() -> bool:
    """True when the functions here are compiled (numba's JIT was on when this module
    was imported, which ``NUMBA_DISABLE_JIT=1`` turns off)."""
    return hasattr(rec, "py_func")


@_jit
def _index(low):
    """The card of a one-bit mask ``low`` (below bit 32): the bits below it, counted."""
    x = low - 1
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


@_jit
def _points(c):
    """`CARD_POINTS` of card ``c``."""
    r = c & 7
    return 5 - r if r < 5 else 0


@_jit
def _class(p):
    """The cards worth ``p`` points (0..5)."""
    return _NO_POINTS if p == 0 else _RANK << (5 - p)


@_jit
def _slot0(k1, k2, k3, size):
    """The first slot of a key (``size`` a power of two, at most ``1 << 24``): the
    three words mixed by multiplication, folded, multiplied again, bits 40 and up
    (with the JIT off the arithmetic is on Python ints, a different but equally
    good hash)."""
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


# --- the rules (`FuenfzehnernSolver`) -------------------------------------------------
@_jit
def _suit(s):
    return np.int64(0xFF) << (8 * s)


@_jit
def _unbeatable(cards, others):
    """`Fuenfzehnern.unbeatable`."""
    out = np.int64(0)
    for s in range(4):
        held = cards & _suit(s)
        if held:
            rivals = others & _suit(s)
            if rivals:
                out |= held & ((rivals & -rivals) - 1)
            else:
                out |= held
    return out


@_jit
def _lead_mask(hands, seat, ext, par):
    """`FuenfzehnernSolver.lead_mask`."""
    hand = hands[seat]
    length = ext & 7
    if length == 0:
        return hand
    others = np.int64(0)
    for s in range(par[N_]):
        if s != seat:
            others |= hands[s]
    if not par[STRICT]:
        held = hand & _suit((ext >> 3) & 3)
        if not held:
            return hand
        return held | _unbeatable(hand, others)
    for i in range(length):
        held = hand & _suit((ext >> (3 + 2 * i)) & 3)
        if held:
            if i == 0 and not par[DUTY]:
                return held
            u = _unbeatable(held, others)
            return u if u else held
    return hand


@_jit
def _emit(cards, out, k):
    """Append the cards of ``cards`` to ``out`` from the lowest id up."""
    while cards:
        low = cards & -cards
        out[k] = _index(low)
        k += 1
        cards ^= low
    return k


@_jit
def _emit_down(cards, out, k):
    """Append the cards of ``cards`` to ``out`` from the highest id down."""
    first = k
    k = _emit(cards, out, k)
    i, j = first, k - 1
    while i < j:
        out[i], out[j] = out[j], out[i]
        i += 1
        j -= 1
    return k


@_jit
def _legal(hands, trick, tlen, seat, ext, par, out):
    """`FuenfzehnernSolver.legal` into ``out`` (their number returned): one card of
    each run of equivalent cards; leads: the Zwang leads, then the richest cards first;
    answers: the lowest card that takes the trick first when the other side is winning
    it, the cheapest losers after; the richest losers first when the own side is."""
    n = par[N_]
    hand = hands[seat]
    remaining = np.int64(0)
    for s in range(n):
        remaining |= hands[s]
    if tlen == 0:
        mask = _lead_mask(hands, seat, ext, par)
    else:
        lead = trick[0]
        mask = np.int64(0)
        if lead & ZW:
            ace = np.int64(1) << ((lead & 63) - OBER + ACE)
            if hand & ace:
                mask = ace
        if not mask:
            follow = hand & _suit((lead & 63) >> 3)
            mask = follow if follow else hand
        for i in range(tlen):
            remaining |= np.int64(1) << (trick[i] & 63)
    # one card of each run: a card equivalent to the last one kept is skipped
    reps = np.int64(0)
    count = 0
    prev = -1
    m = mask
    while m:
        low = m & -m
        m ^= low
        c = _index(low)
        if prev >= 0 and c >> 3 == prev >> 3 and _points(c) == _points(prev):
            between = ((np.int64(1) << c) - 1) ^ ((np.int64(1) << (prev + 1)) - 1)
            if not between & remaining:
                continue
        reps |= low
        count += 1
        prev = c
    k = 0
    if tlen == 0:
        for s in range(4):
            ober = 8 * s + OBER
            if (mask >> ober) & 1 and (hand >> (8 * s + KING)) & 1:
                out[k] = ober | ZW
                k += 1
        for p in range(5, -1, -1):
            k = _emit(reps & _class(p), out, k)
        return k
    if count < 2:
        return _emit(reps, out, np.int64(0))
    led = (trick[0] & 63) >> 3
    best = np.int64(64)
    best_i = 0
    for i in range(tlen):
        c = trick[i] & 63
        if c >> 3 == led and c < best:
            best, best_i = c, i
    leader = (seat - tlen) % n
    winner = (leader + best_i) % n
    side = par[SIDE]
    ours = ((side >> winner) & 1) == ((side >> seat) & 1)
    win = reps & _suit(led) & ((np.int64(1) << best) - 1)
    lose = reps & ~win
    if ours:
        for p in range(5, -1, -1):
            k = _emit(lose & _class(p), out, k)
        return _emit(win, out, k)
    k = _emit_down(win, out, k)
    for p in range(6):
        k = _emit(lose & _class(p), out, k)
    return k


@_jit
def _prepend(ext, led):
    """The chain ``ext`` after a capture in suit ``led`` (strict rules)."""
    out = np.int64(led) << 3
    k = 1
    for i in range(ext & 7):
        s = (ext >> (3 + 2 * i)) & 3
        if s != led:
            out |= s << (3 + 2 * k)
            k += 1
    return out | k


@_jit
def _finish(trick, leader, ext, par):
    """`FuenfzehnernSolver.finish`: (winner, points for the side, chain after)."""
    n = par[N_]
    lead = trick[0] & 63
    led = lead >> 3
    best_i = 0
    best = lead
    pts = _points(lead)
    for i in range(1, n):
        c = trick[i] & 63
        pts += _points(c)
        if c >> 3 == led and c < best:
            best_i, best = i, c
    winner = (leader + best_i) % n
    if winner != leader:
        ext = _prepend(ext, led) if par[STRICT] else 1 | led << 3
    if not (par[SIDE] >> winner) & 1:
        pts = 0
    return winner, pts, ext


@_jit
def _points_left(hands, n):
    """`FuenfzehnernSolver.bounds`' upper bound: the card points in the hands."""
    held = np.int64(0)
    for s in range(n):
        held |= hands[s]
    total = 0
    for r in range(5):  # the cards of rank r, counted by summing the bytes
        count = ((((held >> r) & _RANK) * _RANK) >> 24) & 255
        total += (5 - r) * count
    return total


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


# --- the search (`TrickSolver._node`, `_lead`, `_ply`) --------------------------------
# ``rec``'s own calls pass int64s, never literal ints: numba would compile a version
# of ``rec`` per literal, and such versions load from its cache broken (a crash)
_NONE = np.int64(0)
_ONE = np.int64(1)


@_jit
def rec(ctx, d, tlen, leader, ext, alpha, beta):
    """The side's points from the rest of the deal with ``tlen`` cards of the open
    trick (led by ``leader``) in ``ctx``'s trick array, within the window
    (``alpha``, ``beta``), fail-soft; ``d`` is the call depth (the row of scratch
    moves). With no card on the table it is `TrickSolver._node` (and ``_lead``),
    else ``_ply``."""
    tt, tstats, stats, killers, hands, trick, scratch, par = ctx
    n = par[N_]
    if tlen == n:  # a full trick
        stats[NODES] += 1
        winner, pts, ext2 = _finish(trick, leader, ext, par)
        t0, t1, t2, t3 = trick[0], trick[1], trick[2], trick[3]
        v = pts + rec(ctx, d + 1, _NONE, winner, ext2, alpha - pts, beta - pts)
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
            return _finish(trick, leader, ext, par)[1]
        k1 = hands[0] | hands[1] << 32
        k2 = hands[2] | hands[3] << 32
        key = leader << 12 | ext
        gen = stats[GEN]
        slot = _find(tt, k1, k2, gen << 16 | key, gen)
        if slot >= 0 and tt[slot + 2] == gen << 16 | key:
            e = tt[slot + 3]
            lo, hi, first = e & 255, (e >> 8) & 255, (e >> 16) - 1
        else:
            lo, hi, first = np.int64(0), _points_left(hands, n), np.int64(-1)
        if lo >= beta:
            return lo
        if hi <= alpha:
            return hi
        if lo == hi:
            return lo
        a = max(alpha, lo)
        b = min(beta, hi)
        nm = _legal(hands, trick, _NONE, leader, ext, par, moves)
        if first >= 0:
            _to_front(moves, nm, first)
        maxing = (par[SIDE] >> leader) & 1
        best = -INF if maxing else INF
        best_move = moves[0]
        for i in range(nm):
            m = moves[i]
            bit = np.int64(1) << (m & 63)
            hands[leader] ^= bit
            trick[0] = m
            v = rec(ctx, d + 1, _ONE, leader, ext, a, b)
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
        entry = lo | hi << 8 | (best_move + 1) << 16
        _put(tt, stats, k1, k2, stats[GEN] << 16 | key, entry)
        return v
    stats[NODES] += 1
    seat = (leader + tlen) % n
    nm = _legal(hands, trick, tlen, seat, ext, par, moves)
    # killer move: the answer that last refuted this trick so far
    c0 = trick[0]
    kidx = seat * 64 + (c0 & 31) + ((c0 >> 1) & 32)
    if tlen >= 2:
        kidx = 256 + kidx * 32 + trick[1]
    if tlen >= 3:
        kidx = 256 + 8192 - 256 * 32 + kidx * 32 + trick[2]
    killer = np.int64(killers[kidx])
    if killer >= 0:
        _to_front(moves, nm, killer)
    maxing = (par[SIDE] >> seat) & 1
    best = -INF if maxing else INF
    nxt = tlen + 1
    for i in range(nm):
        m = moves[i]
        bit = np.int64(1) << (m & 63)
        hands[seat] ^= bit
        trick[tlen] = m
        v = rec(ctx, d + 1, nxt, leader, ext, alpha, beta)
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


class Table(SlotTable):
    """The shared table's class (see the module docstring)."""

    words = 4


def shared_table() -> Table:
    """The table the solvers of this process share (made at the first call)."""
    return Table.shared(FIRST_SLOTS)


class Kernel(KernelCounters):
    """The compiled search's state for one `FuenfzehnernSolver`: its generation of
    the table, its counters, its killer table and the position's arrays."""

    def __init__(self, n: int, side: int, strict: bool, duty: bool, tt_limit: int):
        self.take_table(shared_table(), FIRST_SLOTS, tt_limit)
        self.killers = np.full(_KILLERS, -1, dtype=np.int8)
        self.hands = np.zeros(4, dtype=np.int64)
        self.trick = np.zeros(4, dtype=np.int64)
        self.scratch = np.zeros((_DEPTH, 16), dtype=np.int64)
        self.par = np.array([n, side, strict, duty], dtype=np.int64)

    def search(
        self,
        hands: list[int],
        leader: int,
        trick: list[int],
        ext: tuple[int, ...],
        alpha: int,
        beta: int,
    ) -> int:
        """`TrickSolver.value` of ``hands`` (``trick`` on the table, led by
        ``leader``; ``ext`` the canonical capture chain)."""
        self.grow(rehash)
        for s, h in enumerate(hands):
            self.hands[s] = h
        for i, m in enumerate(trick):
            self.trick[i] = m
        code = len(ext)
        for i, s in enumerate(ext):
            code |= s << (3 + 2 * i)
        ctx = (
            self.table.tt,
            self.table.next_gen,
            self.stats,
            self.killers,
            self.hands,
            self.trick,
            self.scratch,
            self.par,
        )
        return int(rec(ctx, 0, len(trick), leader, code, alpha, beta))


def warm_up() -> None:
    """Compile (or load from the cache) the search on a tiny position."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Kernel(4, 1, True, True, 64).search([1, 2, 4, 8], 0, [], (), -INF, INF)
