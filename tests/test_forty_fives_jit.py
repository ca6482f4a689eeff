"""The compiled Forty-Fives search (``parlour.agents.solver.forty_fives_jit``) against
the pure-Python `TrickSolver` it copies: the same value of every move, and of the
position in narrow windows, on random positions of every player count (2 to 6) and
the options the solver reads (``void_must_trump`` off, Twenty-Five's missing bonus, the
auction variants without a rob), mid-trick and at deal starts with a rob still to
decide, with the table kept along a deal or fresh for each position, or so small that
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

from parlour.agents.solver import backend as jb
from parlour.agents.solver import forty_fives as sff
from parlour.agents.solver.tricks import INF, TT_LIMIT, advance_random
from parlour.envs.core.engine import TERMINAL
from parlour.envs.forty_fives.rules import ROB, FortyFives
from parlour.envs.forty_fives.state import Phase

PLAY = Phase.PLAY

numba = pytest.importorskip("numba")

OPTIONS = [
    {},
    {"players": 2},
    {"players": 3},
    {"players": 5},
    {"players": 6},
    {"void_must_trump": False},
    {"variant": "twenty_five"},
    {"players": 2, "variant": "auction"},
]


@pytest.fixture(scope="module")
def compiled():
    """The kernel module compiled (loaded from numba's cache after the first run)."""
    from parlour.agents.solver import forty_fives_jit as jit

    with jit_on(jit) as module:
        yield module


def deal_game(**options) -> FortyFives:
    """One deal of Forty-Fives with ``options``."""
    return FortyFives(episode="deal", **options)


def pair(game, st, tt_limit: int = TT_LIMIT):
    """A compiled and a pure-Python solver of ``st`` for the seat to act, as
    `forty_fives.move_values` sets them up (the seat's own rob taken out)."""
    base = sff.solver_for(game, st, st.to_play)
    rob = -1 if base.rob_seat == st.to_play else base.rob_seat
    fast, slow = (
        sff.FortyFivesSolver(
            game,
            list(st.hands),
            base.side,
            st.trump,
            st.best_trump,
            rob,
            st.turned,
            tt_limit,
            backend=b,
        )
        for b in ("numba", "python")
    )
    assert (fast.backend, slow.backend) == ("numba", "python")
    return fast, slow


def check_position(fast, slow, game, st) -> None:
    """Every card's value, and the position's value in the full window and in windows
    around it (fail-soft bounds), agree."""
    leader, trick = st.leader, list(st.trick)
    ext = slow.bonus_card(trick)
    moves = [a for a in game.legal_actions(st) if a < ROB]
    values = slow.move_values(leader, trick, ext, moves)
    assert fast.move_values(leader, trick, ext, moves) == values
    v = slow.value(leader, trick, ext)
    assert fast.value(leader, trick, ext) == v == max(values.values())
    for alpha, beta in ((v - 1, v + 1), (v, v + 1), (-INF, v - 3), (v + 2, INF)):
        assert fast.value(leader, trick, ext, alpha, beta) == slow.value(
            leader, trick, ext, alpha, beta
        )


def random_play_states(game, rng, count: int):
    """For each of ``count`` deals played at random, its trick-play decisions with a
    choice (open tricks included)."""
    for _ in range(count):
        st = game.new_state()
        states = []
        while game.advance_chance(st, rng) != TERMINAL:
            legal = game.legal_actions(st)
            if st.phase == Phase.PLAY and len(legal) > 1:
                states.append(st.clone())
            game.apply(st, legal[int(rng.integers(len(legal)))])
        yield states


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: str(o) or "default")
@pytest.mark.parametrize("keep", [True, False], ids=["kept", "fresh"])
def test_every_value_is_the_python_one(compiled, options, keep: bool) -> None:
    """Two deals played at random, every trick-play decision: the values of every
    card and of the position agree, with a fresh solver pair for each position, or
    (the table and killers kept) one pair for the decisions of the deal's first seat
    to act. While the compiled table has dropped no entry the two searches expand the
    same positions."""
    game = deal_game(**options)
    rng = np.random.default_rng(len(options) * 2 + keep)
    seen = same = 0
    for states in random_play_states(game, rng, 2):
        kept = None
        for st in states:
            if not keep:
                fast, slow = pair(game, st)
            elif st.to_play != states[0].to_play:
                continue
            elif kept is None:
                fast, slow = kept = pair(game, st)
            else:
                fast, slow = kept
                fresh = pair(game, st)[1]
                for solver in kept:
                    solver.hands[:] = st.hands
                    solver.best_before = fresh.best_before
                    solver.rob_seat = fresh.rob_seat
            check_position(fast, slow, game, st)
            seen += 1
            if fast._kernel.dropped == 0:
                assert fast.nodes == slow.nodes
                same += 1
    assert seen >= 4
    assert same >= 0.8 * seen


@pytest.mark.parametrize(
    "options", [{}, {"players": 2}, {"players": 6}], ids=["4p", "2p", "6p"]
)
def test_deal_starts(compiled, options, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole deals from their first lead: the same values and positions searched, and
    `forty_fives.move_values` (the robber's ``rob:X`` included) gives the same with
    ``PARLOUR_JIT=1`` and ``0``."""
    game = deal_game(**options)
    rng = np.random.default_rng(3)
    robs = 0
    for _ in range(3):
        st = advance_random(game, rng, 5, lambda s: s.phase == Phase.PLAY)
        fast, slow = pair(game, st)
        check_position(fast, slow, game, st)
        assert fast._kernel.dropped == 0
        assert fast.nodes == slow.nodes > 50
        runs = []
        for jit in ("1", "0"):
            monkeypatch.setenv(jb.JIT_ENV, jit)
            runs.append(sff.move_values(game, st))
        assert runs[0] == runs[1]
        robs += sff.pending_rob(game, st, st.hands) >= 0
    assert robs > 0


def test_a_table_that_is_cleared_and_drops_entries_keeps_every_value(
    compiled,
) -> None:
    """With a limit of 40 entries both tables are cleared in the middle of searches;
    the compiled one, of its own, starts at 8 slots, so keys find their slots taken
    and entries are dropped, and it grows between searches, up to 128 (twice the
    limit, a power of two). Every value still equals the Python search's."""
    game = deal_game()
    rng = np.random.default_rng(5)
    dropped = 0
    for _ in range(4):
        st = advance_random(game, rng, 5, lambda s: s.phase == Phase.PLAY)
        fast, slow = pair(game, st, tt_limit=40)
        dropped += tiny_table_drops(
            compiled, fast, check_position, fast, slow, game, st
        )
    assert dropped > 0


def test_the_bots_play_the_same_moves_with_either_backend(
    compiled, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pimc:3`` on every seat, the same seeds, whole matches (4 players) and deals
    (2 and 6 players): the same moves and the same mean values at every decision,
    whichever backend searched (``PARLOUR_JIT``)."""
    runs = pimc_logs(
        monkeypatch,
        "forty_fives_v0",
        [
            {"target": 15},
            {"players": 2, "episode": "deal"},
            {"players": 6, "episode": "deal"},
        ],
    )
    assert runs[0] == runs[1]
    assert sum(1 for _, _, values in runs[0] if values) > 20


def test_the_backend_is_chosen_by_argument_or_environment(
    compiled, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``PARLOUR_JIT`` or the argument picks the backend; a bad value is a one-line
    error, found before any search (`helpers.check_backend_choice`)."""
    game = deal_game()
    st = advance_random(game, np.random.default_rng(0), 2, lambda s: s.phase == PLAY)

    def solver(backend=None):
        return sff.FortyFivesSolver(game, list(st.hands), 1, st.trump, backend=backend)

    check_backend_choice(
        monkeypatch, solver, lambda: sff.move_values(game, st), "forty_fives_v0"
    )


def test_without_numba_the_python_search_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where numba does not import, ``auto`` falls back to pure Python and asking for
    numba is a one-line error saying what to do."""
    game = deal_game()
    st = advance_random(game, np.random.default_rng(1), 3, lambda s: s.phase == PLAY)
    ext = sff.solver_for(game, st, st.to_play).bonus_card(list(st.trick))

    def solver(backend):
        return sff.FortyFivesSolver(game, list(st.hands), 1, st.trump, backend=backend)

    check_without_numba(
        monkeypatch,
        "parlour.agents.solver.forty_fives_jit",
        solver,
        lambda s: s.value(st.leader, list(st.trick), ext),
    )
