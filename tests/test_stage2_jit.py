"""The compiled stage-2 search (``parlour.agents.solver.german_whist.jit``) against the
pure-Python one it copies: the same answer to every question, on random positions of
German and Honeymoon Whist (jokers in the trump group), from both leaders and for
every ``k``, with the table kept between questions, cleared, or so small that entries
are dropped; and so the same cards from the bots. Skipped where numba does not
import (a platform without its wheels).

The test set-up turns numba's JIT off for the suite (``tests/conftest.py``); the
``compiled`` fixture turns it back on for this module while the kernel is imported.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from helpers import jit_on
from test_solver import make_game, stage1_states

from parlour import agents
from parlour.agents.solver import german_whist as sg

numba = pytest.importorskip("numba")

VARIANTS = ("german", "honeymoon")


@pytest.fixture(scope="module")
def compiled():
    """The kernel module compiled (loaded from numba's cache after the first run)."""
    from parlour.agents.solver.german_whist import jit

    with jit_on(jit) as module:
        yield module


def solvers(tt_limit: int = sg.TT_LIMIT) -> tuple[sg.Stage2Solver, sg.Stage2Solver]:
    """A compiled and a pure-Python solver with the same table limit."""
    fast = sg.Stage2Solver(tt_limit, backend="numba")
    slow = sg.Stage2Solver(tt_limit, backend="python")
    assert (fast.backend, slow.backend) == ("numba", "python")
    return fast, slow


def positions(variant: str, count: int, seed: int, cards: range = range(1, 14)):
    """``count`` random stage-2 positions as (word, number of cards a hand)."""
    game = make_game(variant)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(rng.choice(cards))
        st = sg.random_stage2_state(game, n, rng)
        out.append((sg.Layout.of(game, st.trump_mask).word(*st.hands), n))
    return out


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("keep", [True, False])
def test_every_answer_is_the_python_one(compiled, variant: str, keep: bool) -> None:
    """``reach`` for every leader and ``k`` (0 to one more than the cards), and
    ``max_tricks`` by binary search and from every first guess, agree on 40 positions
    of 1 to 13 cards a hand; with the table kept between positions, or cleared before
    each. While no entry is dropped the two searches expand the same positions."""
    fast, slow = solvers()
    for word, n in positions(variant, 40, seed=1 if keep else 2):
        if not keep:
            fast.clear()
            slow.clear()
        for leader in (0, 1):
            for k in range(n + 2):
                assert fast.reach(word, leader, k) == slow.reach(word, leader, k)
            best = slow.max_tricks(word, leader)
            assert fast.max_tricks(word, leader) == best
            for guess in (None, -1, 0, best, n, n + 3):
                assert fast.max_tricks(word, leader, guess) == best, guess
    assert fast._kernel.dropped == 0  # the table grew in time, so:
    assert fast.nodes == slow.nodes > 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_table_that_drops_entries_keeps_every_answer(compiled, variant: str) -> None:
    """With room for a few dozen entries the compiled table overwrites and clears
    entries in the middle of searches (13-card positions need thousands); every answer
    still equals the pure-Python search's."""
    fast, slow = solvers(tt_limit=40)
    for word, _ in positions(variant, 6, seed=3, cards=range(9, 14)):
        for leader in (0, 1):
            assert fast.max_tricks(word, leader) == slow.max_tricks(word, leader)
            assert fast.reach(word, leader, 7) == slow.reach(word, leader, 7)
    assert fast._kernel.tt.size == 2 * 128  # twice the limit, a power of two
    assert fast._kernel.dropped > 0
    assert fast._kernel.stats[compiled.GEN] > 0  # the limit started new generations


def test_a_new_generation_keeps_the_old_entries_until_their_slots_are_needed(
    compiled,
) -> None:
    """In a table of 8 slots (every key probes them all): entries of an older
    generation are still read, a new key takes the slot of an old entry before any
    current one is dropped, and only a key that finds every slot current drops one."""
    tt = np.zeros(2 * 8, dtype=np.int64)
    stats = np.zeros(4, dtype=np.int64)
    old = list(range(2, 18, 2))  # keys are never 0
    for key in old:
        compiled.tt_put(tt, stats, key, key + 1)
    assert stats[compiled.FILLED] == 8 and stats[compiled.DROPPED] == 0
    stats[compiled.GEN] += 1  # what `reach` does past the limit
    stats[compiled.FILLED] = 0
    assert [compiled.tt_get(tt, key) for key in old] == [key + 1 for key in old]
    new = list(range(101, 117, 2))
    compiled.tt_put(tt, stats, new[0], 7)
    assert compiled.tt_get(tt, new[0]) == 7
    assert sum(compiled.tt_get(tt, key) == key + 1 for key in old) == 7
    for key in new[1:]:
        compiled.tt_put(tt, stats, key, key)
    assert stats[compiled.FILLED] == 8 and stats[compiled.DROPPED] == 0
    assert all(compiled.tt_get(tt, key) == -1 for key in old)
    compiled.tt_put(tt, stats, old[0], 5)  # every slot current: one is dropped
    assert stats[compiled.DROPPED] == 1 and compiled.tt_get(tt, old[0]) == 5
    compiled.tt_put(tt, stats, old[0], 6)  # its own slot: updated, nothing dropped
    assert stats[compiled.DROPPED] == 1 and compiled.tt_get(tt, old[0]) == 6


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_bots_play_the_same_cards_with_either_backend(
    compiled, variant: str
) -> None:
    """Stage 2: the solver bot's card and every card's exact value; stage 1: the PIMC
    values of every card (the same sampled deals), are the same whichever backend
    searched."""
    fast, slow = solvers()
    game = make_game(variant)
    rng = np.random.default_rng(4)
    for _ in range(12):
        st = sg.random_stage2_state(game, int(rng.integers(2, 14)), rng)
        if rng.random() < 0.5:  # a card led, the other seat to answer
            legal = game.legal_actions(st)
            game.apply(st, legal[int(rng.integers(len(legal)))])
        assert sg.best_stage2_card(game, st, fast) == sg.best_stage2_card(
            game, st, slow
        )
        assert sg.move_values(game, st, solver=fast) == sg.move_values(
            game, st, solver=slow
        )
        assert sg.optimal_moves(game, st, fast) == sg.optimal_moves(game, st, slow)
    game, states = stage1_states(variant, 3, seed=5)
    for st in states:
        seat = st.to_play
        values = [
            sg.pimc_values(game, st, seat, 3, np.random.default_rng(6), solver)
            for solver in (fast, slow)
        ]
        assert values[0] == values[1]


def test_the_backend_is_chosen_by_argument_or_environment(
    compiled, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``PARLOUR_JIT=0`` picks pure Python, ``1`` or unset the compiled search (when
    numba's JIT is on); the argument overrides the environment; anything else is a
    one-line error, found before any search (when a bot is made)."""
    monkeypatch.setenv(sg.search.JIT_ENV, "0")
    assert sg.Stage2Solver().backend == "python"
    assert sg.Stage2Solver(backend="auto").backend == "numba"
    monkeypatch.setenv(sg.search.JIT_ENV, "1")
    assert sg.Stage2Solver().backend == "numba"
    assert sg.Stage2Solver(backend="python").backend == "python"
    monkeypatch.delenv(sg.search.JIT_ENV)
    assert sg.Stage2Solver().backend == "numba"
    with pytest.raises(ValueError, match="backend must be one of"):
        sg.Stage2Solver(backend="cuda")
    monkeypatch.setenv(sg.search.JIT_ENV, "yes")
    with pytest.raises(ValueError, match="PARLOUR_JIT must be 0 or 1"):
        sg.Stage2Solver().reach(1 | 1 << 16 | 1 << 32 | 1 << 48, 0, 0)
    with pytest.raises(ValueError, match="PARLOUR_JIT must be 0 or 1"):
        agents.make("solver", "german_whist_v0", seed=0)  # before any game


def test_without_numba_the_python_search_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where numba does not import, ``auto`` falls back to pure Python and asking for
    numba is a one-line error saying what to do."""
    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.delitem(sys.modules, sg.__name__ + ".jit", raising=False)
    monkeypatch.delattr(sg, "jit", raising=False)
    solver = sg.Stage2Solver(backend="auto")
    word, _ = positions("honeymoon", 1, seed=7, cards=range(5, 6))[0]
    assert solver.max_tricks(word, 0) >= 0
    assert solver.backend == "python"
    with pytest.raises(ImportError, match=r"install numba, or set PARLOUR_JIT=0"):
        sg.Stage2Solver(backend="numba").reach(word, 0, 1)


def test_each_backend_has_its_table_limit(compiled) -> None:
    """Unless given, the limit is `TT_LIMIT` for the pure-Python table and the larger
    `JIT_TT_LIMIT` for the compiled one (a sixth of the memory an entry); a given or
    set limit holds for either."""
    fast, slow = solvers(tt_limit=None)
    assert (fast.tt_limit, slow.tt_limit) == (sg.JIT_TT_LIMIT, sg.TT_LIMIT)
    assert sg.JIT_TT_LIMIT > sg.TT_LIMIT
    fast.tt_limit = 1234
    assert fast.tt_limit == 1234
    assert sg.Stage2Solver(99, backend="python").tt_limit == 99


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_compiled_rollout_plays_the_python_one(compiled, variant: str) -> None:
    """`jit._play_out` plays every sampled deal of stage-1 states to the same hands,
    tricks and stage-2 leader as `Rollout.play_out`, and `jit._word` gives `Layout.word`
    of the hands."""
    game, states = stage1_states(variant, 30, seed=8)
    states = [st for st in states if st.lead < 0][:12]  # trick boundaries
    assert len(states) == 12
    rng = np.random.default_rng(9)
    checked = 0
    for st in states:
        seat = st.to_play
        know = sg.Knowledge.from_state(game, st, seat)
        roll = sg.Rollout(game, st.trump_mask)
        lay = sg.pimc.compiled_rollout(game, st.trump_mask)
        for _ in range(5):
            world = sg.sample_world(game, know, rng)
            leader = int(rng.integers(2))
            hands, won = list(world.hands), [0, 0]
            want_leader = roll.play_out(hands, world.stock, 0, leader, st.played, won)
            got_hands = np.array(world.hands, dtype=np.int64)
            got_won = np.zeros(2, dtype=np.int64)
            stock = np.array(world.stock, dtype=np.int64)
            got_leader = compiled._play_out(
                lay, got_hands, stock, 0, leader, st.played, got_won
            )
            assert (got_leader, got_hands.tolist(), got_won.tolist()) == (
                want_leader,
                hands,
                won,
            )
            word = roll.lay.word(*hands)
            assert compiled._word(lay, got_hands[0], got_hands[1]) == word
            checked += 1
    assert checked == 60


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("tt_limit", [40, 100_000])
def test_compiled_pimc_values_are_the_python_ones(
    compiled, variant: str, tt_limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pimc_values` with the compiled rollouts and solves (`jit.pimc_deals`) gives
    every card the value the pure-Python loop gives it, from the same seed: with a
    table that drops entries (limit 40), and with one that grows in the middle of a
    decision (limit 100 000, from 64 slots: the kernel stops after a deal to let
    `Kernel.ctx` double it, and goes on from the next deal)."""
    monkeypatch.setattr(compiled, "FIRST_SLOTS", 64)
    calls = []
    kernel_fn = compiled.pimc_deals

    def counted(*args):
        calls.append(args[6])  # the first deal of this call
        return kernel_fn(*args)

    monkeypatch.setattr(compiled, "pimc_deals", counted)
    fast, slow = solvers(tt_limit)
    game, states = stage1_states(variant, 10, seed=10)
    for i, st in enumerate(states):
        seat = st.to_play
        got, want = (
            sg.pimc_values(game, st, seat, 6, np.random.default_rng(i), solver)
            for solver in (fast, slow)
        )
        assert got == want
        assert all(type(v) is float for v in got.values())
    if tt_limit == 40:
        assert fast.kernel.dropped > 0
    else:
        assert fast.kernel.tt.size // 2 > 64
        assert any(first > 0 for first in calls)  # resumed after growing
