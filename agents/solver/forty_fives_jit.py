"""Forty-Fives' trick-play search (`forty_fives.FortyFivesSolver`) compiled with numba.

The same paranoid alpha-beta as `tricks.TrickSolver` with Forty-Fives' rules, move for
move: the same legal cards (following, trumping, the reneging top trumps,
``void_must_trump``), the same equivalent cards, the same move ordering (the table's
best lead, the killer answers), the same bounds, the same pending rob and the same
table clearing; so it returns the same values and, while no table entry is lost,
expands the same positions (``tests/test_forty_fives_jit.py`` checks both). Only the
speed differs. Built as `fuenfzehnern_jit` is; what differs:

State: up to six hands of the 52-card pack and the open trick in small int64 arrays;
``ext`` is the card that will take the bonus (-1: none); a rob still to decide is a
seat in ``par`` (-1 while its options are searched, as the Python solver does).
The card orders of the trump suit are rows of one array (`card_tables`, from
`forty_fives.Tables`): strength, group, the group's cards, the cards above each card in
its group, the protected top trumps, each group's cards, and each group's cards
strongest first.

Transposition table: 8-word slots (six hands, ``generation << 16 | leader << 8 |
ext + 1``, the entry ``lo | hi << 8 | (best lead + 1) << 16``), shared by the solvers
of a process with generations, as Fünfzehnern's. The killer answers are keyed on the
seat and the trick so far, up to five cards of 52, so they live in a numba dict of
their own per solver, which, like the Python one, never loses an entry.

A full-window search (each move of `TrickSolver.move_values`) enters through `search`,
the arrays as plain arguments: numba types a tuple argument in Python, array by array,
which cost as much as a PIMC sample's search. The alpha-beta loops repeat
`fuenfzehnern_jit`'s rather than share them: numba's cache does not see a change to a
compiled function of another module, so a shared one could leave a stale kernel.
"""

from __future__ import annotations

import warnings

import numpy as np
from numba import types
from numba.typed import Dict

from .backend import KernelCounters, SlotTable
from .backend import njit_cached as _jit

PROBE = 16  # slots tried for one key
WORDS = 8  # int64 words a slot
FIRST_SLOTS = 1 << 15  # 2 MB
INF = 1 << 30
TRICK_POINTS = 5
#: the per-solver counters in ``stats``, as `fuenfzehnern_jit`'s
NODES, FILLED, DROPPED, GEN, LIMIT = 0, 1, 2, 3, 4
#: ``par``: players, the solving side (bit per seat), the trump mask, the top trumps,
#: the bonus points, the best trump's strength before the search, the seat with a rob
#: to decide (-1: none), the turned card, ``void_must_trump``
N_, SIDE, TM, TOP, BONUS, BEST_BEFORE, ROB, TURNED, VOID_MUST = range(9)
#: rows of the card tables
STRENGTH, GROUP, GROUP_MASK, ABOVE, PROTECTED, GROUPS, ORDER = range(7)
TRUMP_GROUP = 4
_DEPTH = 64  # move lists of the nested calls (at most 30 cards and 6 tricks deep)
#: odd multipliers of the hash (the first is 0x9E3779B97F4A7C15 as an int64)
_M = (
    -0x61C8864680B583EB,
    0x2545F4914F6CDD1D,
    0x27D4EB2F165667C5,
    0x165667B19E3779F9,
    0x61C8864E7A143579,
    0x5851F42D4C957F2D,
    0x14057B7EF767814F,
)


def compiled() -> bool:
    """True when the functions here are compiled (numba's JIT was on when this module
    was imported, which ``NUMBA_DISABLE_JIT=1`` turns off)."""
    return hasattr(rec, "py_func")


@_jit
def _count(x):
    """The set bits of ``x`` (below bit 63), summed byte by byte (no overflow, so
    Python ints give the same with the JIT off)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    x += x >> 8
    x += x >> 16
    x += x >> 32
    return x & 127


@_jit
def _index(low):
    """The card of a one-bit mask ``low``."""
    return _count(low - 1)


@_jit
def _slot0(hands, k, size):
    """The first slot of a key (the hands and the key word ``k``; ``size`` a power of
    two): the words mixed by multiplication, folded, multiplied again, bits 40 and up
    (with the JIT off the arithmetic is on Python ints, a different but equally good
    hash)."""
    x = (
        int(k) * _M[0]
        + int(hands[0]) * _M[1]
        + int(hands[1]) * _M[2]
        + int(hands[2]) * _M[3]
        + int(hands[3]) * _M[4]
        + int(hands[4]) * _M[5]
        + int(hands[5]) * _M[6]
    )
    x ^= x >> 31
    x *= _M[1]
    return (x >> 40) & (size - 1)


@_jit
def _find(tt, hands, k, gen):
    """The index of the slot holding the key, else of the first free slot of its
    probes (empty or of another generation), else -1."""
    size = tt.size // WORDS
    h = _slot0(hands, k, size)
    for p in range(PROBE):
        slot = WORDS * ((h + p) & (size - 1))
        kk = tt[slot + 6]
        if kk == k:
            same = True
            for i in range(6):
                if tt[slot + i] != hands[i]:
                    same = False
                    break
            if same:
                return slot
        if kk >> 16 != gen:
            return slot
    return -1


@_jit
def _put(tt, stats, hands, k, val):
    """Store ``val`` for the key: in its slot, a free one, or over the first."""
    slot = _find(tt, hands, k, stats[GEN])
    if slot < 0:
        slot = WORDS * _slot0(hands, k, tt.size // WORDS)
        stats[DROPPED] += 1
    elif tt[slot + 6] >> 16 != stats[GEN]:
        stats[FILLED] += 1
    for i in range(6):
        tt[slot + i] = hands[i]
    tt[slot + 6] = k
    tt[slot + 7] = val


@_jit
def rehash(old, new, stats):
    """Copy the entries of ``stats``'s generation from table ``old`` into ``new``."""
    stats[FILLED] = 0
    gen = stats[GEN]
    for slot in range(0, old.size, WORDS):
        if old[slot + 6] >> 16 == gen:
            _put(new, stats, old[slot : slot + 6], old[slot + 6], old[slot + 7])


# --- the rules (`FortyFivesSolver`) ---------------------------------------------------
@_jit
def _legal_mask(hands, trick, tlen, seat, par, tab):
    """`FortyFivesSolver.legal_mask`."""
    hand = hands[seat]
    if tlen == 0:
        return hand
    lead = trick[0]
    tm = par[TM]
    trumps = hand & tm
    if (tm >> lead) & 1:
        if not trumps:
            return hand
        protected = trumps & tab[PROTECTED, lead]
        if trumps & ~protected:
            return trumps
        return hand
    follow = hand & tab[GROUP_MASK, lead]
    if follow:
        return follow | trumps
    if par[VOID_MUST] and trumps:
        return trumps
    return hand


@_jit
def _winning(trick, tlen, tab, tm):
    """`FortyFivesSolver._winning`: the index of the card winning the trick so far."""
    lead = trick[0]
    follow = tm | tab[GROUP_MASK, lead]
    best_i = 0
    best = tab[STRENGTH, lead]
    for i in range(1, tlen):
        c = trick[i]
        if (follow >> c) & 1 and tab[STRENGTH, c] > best:
            best_i, best = i, tab[STRENGTH, c]
    return best_i


@_jit
def _sort(out, keys, k):
    """Sort ``out[:k]`` by ``keys[:k]``, ascending and stable (as Python's sort)."""
    for i in range(1, k):
        m, key = out[i], keys[i]
        j = i - 1
        while j >= 0 and keys[j] > key:
            out[j + 1], keys[j + 1] = out[j], keys[j]
            j -= 1
        out[j + 1], keys[j + 1] = m, key


@_jit
def _legal(hands, trick, tlen, seat, par, tab, out, keys):
    """`FortyFivesSolver.legal` into ``out`` (their number returned): one card of each
    run of equivalent cards, in the groups' order, strongest first; leads: the cards
    nobody can beat first, each part strongest first; answers: the other side winning,
    the winners then the losers, else the losers then the winners, each weakest
    first."""
    n = par[N_]
    mask = _legal_mask(hands, trick, tlen, seat, par, tab)
    remaining = np.int64(0)
    for s in range(n):
        remaining |= hands[s]
    held = remaining
    for i in range(tlen):
        remaining |= np.int64(1) << trick[i]
    top = par[TOP]
    k = 0
    prev = -1
    for g in range(5):
        if not mask & tab[GROUPS, g]:
            continue
        for j in range(14):
            c = tab[ORDER + g, j]
            if c < 0:
                break
            if not (mask >> c) & 1:
                continue
            # `equivalent` to the last card kept (same group, stronger)
            if (
                prev >= 0
                and tab[GROUP, prev] == g
                and ((top >> prev) & 1) == ((top >> c) & 1)
            ):
                between = tab[ABOVE, c] & ~tab[ABOVE, prev] & ~(np.int64(1) << prev)
                if not between & remaining:
                    continue
            out[k] = c
            k += 1
            prev = c
    if k < 2:
        return k
    if tlen == 0:
        for i in range(k):
            c = out[i]
            keys[i] = (1024 if tab[ABOVE, c] & held else 0) - tab[STRENGTH, c]
        _sort(out, keys, k)
        return k
    tm = par[TM]
    w = _winning(trick, tlen, tab, tm)
    leader = (seat - tlen) % n
    side = par[SIDE]
    ours = ((side >> ((leader + w) % n)) & 1) == ((side >> seat) & 1)
    lead = trick[0]
    best = tab[STRENGTH, trick[w]]
    follow = tm | tab[GROUP_MASK, lead]
    for i in range(k):
        c = out[i]
        beats = (follow >> c) & 1 == 1 and tab[STRENGTH, c] > best
        keys[i] = (1024 if beats == ours else 0) + tab[STRENGTH, c]
    _sort(out, keys, k)
    return k


@_jit
def _finish(trick, leader, ext, par, tab):
    """`FortyFivesSolver.finish`: (winner, points for the side, ext after)."""
    n = par[N_]
    winner = (leader + _winning(trick, n, tab, par[TM])) % n
    pts = np.int64(TRICK_POINTS)
    if ext >= 0:
        for i in range(n):
            if trick[i] == ext:
                pts += par[BONUS]
                ext = np.int64(-1)
                break
    if not (par[SIDE] >> winner) & 1:
        pts = np.int64(0)
    return winner, pts, ext


@_jit
def _bonus_card(hands, trick, tlen, par, tab):
    """`FortyFivesSolver.bonus_card`: the highest trump held or on the table if it
    beats the best one played before the search (-1: none, or no bonus)."""
    if not par[BONUS]:
        return np.int64(-1)
    held = np.int64(0)
    for s in range(par[N_]):
        held |= hands[s]
    for i in range(tlen):
        held |= np.int64(1) << trick[i]
    held &= par[TM]
    if not held:
        return np.int64(-1)
    for j in range(14):
        c = tab[ORDER + TRUMP_GROUP, j]
        if c >= 0 and (held >> c) & 1:
            if tab[STRENGTH, c] > par[BEST_BEFORE]:
                return c
            return np.int64(-1)
    return np.int64(-1)


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


# --- the search (`TrickSolver._node`, `_lead`, `_ply`, the rob) -----------------------
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
    else ``_ply`` (`FortyFivesSolver._ply` at a rob still to decide)."""
    tt, tstats, stats, killers, hands, trick, scratch, par, tab = ctx
    n = par[N_]
    moves = scratch[d, 0]
    keys = scratch[d, 1]
    if tlen == n:  # a full trick
        stats[NODES] += 1
        winner, pts, ext2 = _finish(trick, leader, ext, par, tab)
        for i in range(n):
            moves[i] = trick[i]
        v = pts + rec(ctx, d + 1, _NONE, winner, ext2, alpha - pts, beta - pts)
        for i in range(n):
            trick[i] = moves[i]
        return v
    if tlen == 0:
        left = hands[leader]
        if left & (left - 1) == 0:
            if left == 0:
                return np.int64(0)
            # the last trick: every card is forced
            for i in range(n):
                trick[i] = _index(hands[(leader + i) % n])
            stats[NODES] += 1
            return _finish(trick, leader, ext, par, tab)[1]
        key = leader << 8 | (ext + 1)
        gen = stats[GEN]
        k = gen << 16 | key
        slot = _find(tt, hands, k, gen)
        if slot >= 0 and tt[slot + 6] == k:
            e = tt[slot + 7]
            lo, hi, first = e & 255, (e >> 8) & 255, (e >> 16) - 1
        else:
            lo = np.int64(0)
            hi = TRICK_POINTS * _count(left) + (par[BONUS] if ext >= 0 else 0)
            first = np.int64(-1)
        if lo >= beta:
            return lo
        if hi <= alpha:
            return hi
        if lo == hi:
            return lo
        a = max(alpha, lo)
        b = min(beta, hi)
        nm = _legal(hands, trick, _NONE, leader, par, tab, moves, keys)
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
        _put(tt, stats, hands, stats[GEN] << 16 | key, entry)
        return v
    seat = (leader + tlen) % n
    maxing = (par[SIDE] >> seat) & 1
    best = -INF if maxing else INF
    if seat == par[ROB]:
        # `FortyFivesSolver._ply`: keep the hand, or rob burying each card in turn
        hand = hands[seat]
        turned = np.int64(1) << par[TURNED]
        par[ROB] = -1
        h = hand
        rest = hand
        while True:
            hands[seat] = h
            e = _bonus_card(hands, trick, tlen, par, tab)
            v = rec(ctx, d, tlen, leader, e, alpha, beta)
            if maxing:
                if v > best:
                    best = v
                    alpha = max(alpha, v)
            elif v < best:
                best = v
                beta = min(beta, v)
            if alpha >= beta or not rest:
                break
            low = rest & -rest
            rest ^= low
            h = (hand ^ low) | turned
        hands[seat] = hand
        par[ROB] = seat
        return best
    stats[NODES] += 1
    nm = _legal(hands, trick, tlen, seat, par, tab, moves, keys)
    # killer move: the answer that last refuted this trick so far
    kkey = seat | tlen << 3
    for i in range(tlen):
        kkey |= trick[i] << (6 + 6 * i)
    killer = killers.get(kkey, -1)
    if killer >= 0:
        _to_front(moves, nm, killer)
    nxt = tlen + 1
    for i in range(nm):
        m = moves[i]
        bit = np.int64(1) << m
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
                        killers[kkey] = m
                        break
        elif v < best:
            best = v
            if v < beta:
                beta = v
                if alpha >= beta:
                    killers[kkey] = m
                    break
    return best


@_jit
def search(
    tt, tstats, stats, killers, hands, trick, scratch, par, tab, tlen, leader, e
):
    """`rec` of the position in the full window (``e``: the bonus card), the arrays
    passed one by one: numba types a tuple argument in Python, each array slowly, but
    plain array arguments in C (the cost of a small search otherwise)."""
    ctx = (tt, tstats, stats, killers, hands, trick, scratch, par, tab)
    return rec(ctx, _NONE, tlen, leader, e, np.int64(-INF), np.int64(INF))


@_jit
def new_killers():
    """An empty killer table (seat and trick so far -> the refuting card)."""
    return Dict.empty(key_type=types.int64, value_type=types.int64)


class Table(SlotTable):
    """The shared table's class (see the module docstring)."""

    words = WORDS


_TABLES: dict[int, np.ndarray] = {}


def shared_table() -> Table:
    """The table the solvers of this process share (made at the first call)."""
    return Table.shared(FIRST_SLOTS)


def card_tables(t) -> np.ndarray:
    """The rows the kernel reads of `forty_fives.Tables` ``t`` (one per trump suit)."""
    if t.trump not in _TABLES:
        tab = np.full((ORDER + 5, 52), -1, dtype=np.int64)
        tab[STRENGTH] = t.strength
        tab[GROUP] = t.group
        tab[GROUP_MASK] = t.group_mask
        tab[ABOVE] = t.above
        tab[PROTECTED] = t.protected
        for g in range(5):
            tab[GROUPS, g] = t.tm if g == TRUMP_GROUP else t.plain[g]
            cards = sorted(
                (c for c in range(52) if t.group[c] == g), key=lambda c: -t.strength[c]
            )
            tab[ORDER + g, : len(cards)] = cards
        _TABLES[t.trump] = tab
    return _TABLES[t.trump]


class Kernel(KernelCounters):
    """The compiled search's state for one `FortyFivesSolver`: its generation of the
    table, its counters, its killer table and the position's arrays."""

    def __init__(self, solver, tt_limit: int):
        self.take_table(shared_table(), FIRST_SLOTS, tt_limit)
        self.killers = new_killers()
        self.hands = np.zeros(6, dtype=np.int64)
        self.trick = np.zeros(6, dtype=np.int64)
        self.scratch = np.zeros((_DEPTH, 2, 16), dtype=np.int64)
        t = solver.t
        self.par = np.array(
            [
                solver.n,
                solver.side,
                t.tm,
                t.top,
                solver.bonus,
                solver.best_before,
                -1,
                solver.turned,
                solver.void_must_trump,
            ],
            dtype=np.int64,
        )
        self.tab = card_tables(t)

    def search(
        self,
        hands: list[int],
        leader: int,
        trick: list[int],
        ext: int,
        alpha: int,
        beta: int,
        rob_seat: int,
    ) -> int:
        """`TrickSolver.value` of ``hands`` (``trick`` on the table, led by
        ``leader``; ``ext`` the bonus card; ``rob_seat`` a rob still to decide)."""
        self.grow(rehash)
        for s, h in enumerate(hands):
            self.hands[s] = h
        for i, m in enumerate(trick):
            self.trick[i] = m
        self.par[ROB] = rob_seat
        arrays = (
            self.table.tt,
            self.table.next_gen,
            self.stats,
            self.killers,
            self.hands,
            self.trick,
            self.scratch,
            self.par,
            self.tab,
        )
        if alpha <= -INF and beta >= INF:
            return int(search(*arrays, len(trick), leader, ext))
        return int(rec(arrays, 0, len(trick), leader, ext, alpha, beta))


def warm_up() -> None:
    """Compile (or load from the cache) the search on a tiny position."""
    from ...envs.forty_fives.rules import FortyFives
    from .forty_fives import FortyFivesSolver

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game = FortyFives(players=2, episode="deal")
        solver = FortyFivesSolver(game, [3, 12], 1, 0, backend="numba")
        solver.value(0, [], solver.bonus_card([]))
