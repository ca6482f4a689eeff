"""The compiled Fünfzehnern search (``parlour.agents.solver.fuenfzehnern_jit``) against
the pure-Python `TrickSolver` it copies: the same value of every move, and of the
position in narrow windows, on random positions of every variant (4 and 3 players,
strict and relaxed lead rules, the first suit's duty off, open and Zwang tricks, deal
starts), with the table kept along a deal or fresh for each position, or so small that
it is cleared and entries are dropped; and so the same moves from the bots. Skipped
where numba does not import.

The test set-up turns numba's JIT off for the suite (``tests/conftest.py``); the
``compiled`` fixture turns it back on for this module while the kernel is imported.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    check_backend_choice,
    check_without_numba,
    jit_on,
    pimc_logs,
    tiny_table_drops,
)

from parlour.agents.solver import fuenfzehnern as sfz
from parlour.agents.solver.tricks import INF, advance_random
from parlour.envs.core.engine import TERMINAL
from parlour.envs.fuenfzehnern.rules import ZWANG, Fuenfzehnern
from parlour.envs.fuenfzehnern.state import Phase

numba = pytest.importorskip("numba")

OPTIONS = [
    {},
    {"players": 3},
    {"lead_rules": "relaxed"},
    {"players": 3, "lead_rules": "relaxed"},
    {"unbeatable_duty_on_first_suit": False},
]


@pytest.fixture(scope="module")
def compiled():
    """The kernel module compiled (loaded from numba's cache after the first run)."""
    from parlour.agents.solver import fuenfzehnern_jit as jit

    with jit_on(jit) as module:
        yield module


def pair(game, st, seat: int, tt_limit: int = sfz.TT_LIMIT):
    """A compiled and a pure-Python solver of ``st``'s hands, ``seat`` solving."""
    fast, slow = (
        sfz.FuenfzehnernSolver(game, list(st.hands), seat, tt_limit, backend=b)
        for b in ("numba", "python")
    )
    assert (fast.backend, slow.backend) == ("numba", "python")
    return fast, slow


def root(game, st):
    """(leader, open trick as solver moves, canonical chain) of ``st``."""
    return st.leader, sfz._root(st), sfz.canonical_chain(game, st.chain)


def play_state(game, seed: int, cards: int):
    """A trick-play state of a random deal with ``cards`` in the hand to act."""
    rng = np.random.default_rng(seed)
    return advance_random(game, rng, cards, lambda s: s.phase == Phase.PLAY)


def check_position(fast, slow, game, st) -> None:
    """Every legal move's value, and the position's value in the full window and in
    windows around it (fail-soft bounds), agree."""
    leader, trick, ext = root(game, st)
    moves = [sfz._move(a) for a in game.legal_actions(st)]
    values = slow.move_values(leader, trick, ext, moves)
    assert fast.move_values(leader, trick, ext, moves) == values
    v = slow.value(leader, trick, ext)
    assert fast.value(leader, trick, ext) == v == max(values.values())
    for alpha, beta in ((v - 1, v + 1), (v, v + 1), (-INF, v - 3), (v + 2, INF)):
        assert fast.value(leader, trick, ext, alpha, beta) == slow.value(
            leader, trick, ext, alpha, beta
        )


def random_play_states(game, rng, count: int):
    """For each of ``count`` deals played at random (Zwang announced whenever it may
    be), its trick-play states from 6 cards in hand (4 players) or 8 (3 players) on,
    open tricks and Zwang tricks included."""
    top = 6 if game.num_players == 4 else 8
    for _ in range(count):
        st = game.new_state()
        states = []
        while (p := game.advance_chance(st, rng)) != TERMINAL:
            if st.phase == Phase.PLAY and st.hands[p].bit_count() <= top:
                states.append(st.clone())
            legal = game.legal_actions(st)
            # Zwang whenever it may be announced, so Zwang tricks are common
            zw = [a for a in legal if a >= ZWANG]
            game.apply(st, zw[0] if zw else legal[int(rng.integers(len(legal)))])
        yield states


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: str(o) or "default")
@pytest.mark.parametrize("keep", [True, False], ids=["kept", "fresh"])
def test_every_value_is_the_python_one(compiled, options, keep: bool) -> None:
    """Two deals played at random, every decision from 6 cards (4 players) or 8 (3
    players) on: the values of every move and of the position agree, with a fresh
    solver pair for each position, or (the table and killers kept) one pair for the
    decisions of the deal's first seat to act. While the compiled table has dropped
    no entry (a key finding all its slots taken: rare) the two searches expand the
    same positions. (Solvers that take turns on the shared table would lose each
    other's entries, which costs only time; so one seat's.)"""
    game = Fuenfzehnern(**options)
    rng = np.random.default_rng(len(options) * 2 + keep)
    seen = same = 0
    for states in random_play_states(game, rng, 2):
        kept = None
        for st in states:
            if not keep:
                fast, slow = pair(game, st, st.to_play)
            elif st.to_play != states[0].to_play:
                continue
            elif kept is None:
                fast, slow = kept = pair(game, st, st.to_play)
            else:
                fast, slow = kept
                fast.hands[:] = slow.hands[:] = st.hands
            check_position(fast, slow, game, st)
            seen += 1
            if fast._kernel.dropped == 0:
                assert fast.nodes == slow.nodes
                same += 1
    assert seen >= 10
    assert same >= 0.8 * seen


@pytest.mark.parametrize("options", OPTIONS[:3], ids=lambda o: str(o) or "default")
def test_deal_starts(compiled, options) -> None:
    """Whole deals from their first lead (3 players) or from 7 cards in hand with
    the chain started (4 players: a full 4-player deal takes the Python search about
    a second): the same values and positions searched."""
    game = Fuenfzehnern(**options)
    rng = np.random.default_rng(3)
    cards = 8 if game.num_players == 3 else 7
    for _ in range(2):
        st = advance_random(
            game, rng, cards, lambda s: s.phase == Phase.PLAY and not s.trick
        )
        fast, slow = pair(game, st, st.to_play)
        check_position(fast, slow, game, st)
        assert fast._kernel.dropped == 0
        assert fast.nodes == slow.nodes > 1000


def test_a_table_that_is_cleared_and_drops_entries_keeps_every_value(
    compiled,
) -> None:
    """With a limit of 40 entries both tables are cleared in the middle of searches;
    the compiled one, of its own, starts at 8 slots, so keys find their slots taken
    and entries are dropped, and it grows between searches, up to 128 (twice the
    limit, a power of two). Every value still equals the Python search's."""
    game = Fuenfzehnern(players=3)
    rng = np.random.default_rng(5)
    dropped = 0
    for _ in range(4):
        st = advance_random(game, rng, 6, lambda s: s.phase == Phase.PLAY)
        fast, slow = pair(game, st, st.to_play, tt_limit=40)
        dropped += tiny_table_drops(
            compiled, fast, check_position, fast, slow, game, st
        )
    assert dropped > 0


def test_the_bots_play_the_same_moves_with_either_backend(
    compiled, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pimc:3`` on every seat, the same seeds: the same moves and the same mean
    values at every decision, whichever backend searched (``PARLOUR_JIT``)."""
    runs = pimc_logs(
        monkeypatch,
        "fuenfzehnern_v0",
        [{}, {"players": 3, "lead_rules": "relaxed"}],
    )
    assert runs[0] == runs[1]
    assert sum(1 for _, _, values in runs[0] if values) > 10


def test_the_backend_is_chosen_by_argument_or_environment(
    compiled, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``PARLOUR_JIT`` or the argument picks the backend; a bad value is a one-line
    error, found before any search (`helpers.check_backend_choice`)."""
    game = Fuenfzehnern()
    st = play_state(game, 0, 2)

    def solver(backend=None):
        return sfz.FuenfzehnernSolver(game, list(st.hands), 0, backend=backend)

    check_backend_choice(
        monkeypatch, solver, lambda: sfz.move_values(game, st), "fuenfzehnern_v0"
    )


def test_without_numba_the_python_search_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where numba does not import, ``auto`` falls back to pure Python and asking for
    numba is a one-line error saying what to do."""
    game = Fuenfzehnern()
    st = play_state(game, 1, 3)

    def solver(backend):
        return sfz.FuenfzehnernSolver(game, list(st.hands), st.to_play, backend=backend)

    check_without_numba(
        monkeypatch,
        "parlour.agents.solver.fuenfzehnern_jit",
        solver,
        lambda s: s.value(*root(game, st)),
    )
