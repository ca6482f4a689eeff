"""The compiled Herzeln search (``parlour.agents.solver.herzeln_jit``) against the
pure-Python `TrickSolver` it copies: the same value of every move, and of the position
in narrow windows, on random positions of every trick contract with 4 and 3 players
(open tricks, deal starts, the early end of the penalty-card deals on), with the table
kept along a deal or fresh for each position, or so small that it is cleared and
entries are dropped; and so the same moves from the bots. Skipped where numba does not
import.

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

from parlour.agents.solver import herzeln as sh
from parlour.agents.solver.backend import slots_for
from parlour.agents.solver.tricks import INF, advance_random
from parlour.envs.core.engine import TERMINAL
from parlour.envs.herzeln.rules import CONTRACTS, DOMINO, Herzeln
from parlour.envs.herzeln.state import Phase

numba = pytest.importorskip("numba")

TRICK_CONTRACTS = [c for c in CONTRACTS if CONTRACTS.index(c) != DOMINO]
EARLY_END = ("no_hearts", "no_queens", "king_of_hearts")


@pytest.fixture(scope="module")
def compiled():
    """The kernel module compiled (loaded from numba's cache after the first run)."""
    from parlour.agents.solver import herzeln_jit as jit

    with jit_on(jit) as module:
        yield module


def pair(game, st, seat: int, tt_limit: int = sh.TT_LIMIT):
    """A compiled and a pure-Python solver of ``st``'s hands, ``seat`` solving."""
    fast, slow = (
        sh.HerzelnSolver(game, list(st.hands), seat, st.contract, tt_limit, backend=b)
        for b in ("numba", "python")
    )
    assert (fast.backend, slow.backend) == ("numba", "python")
    return fast, slow


def check_position(fast, slow, game, st) -> None:
    """Every legal card's value, and the position's value in the full window and in
    windows around it (fail-soft bounds), agree."""
    leader, trick = st.leader, list(st.trick)
    moves = game.legal_actions(st)
    values = slow.move_values(leader, trick, None, moves)
    assert fast.move_values(leader, trick, None, moves) == values
    v = slow.value(leader, trick, None)
    assert fast.value(leader, trick, None) == v == max(values.values())
    for alpha, beta in ((v - 1, v + 1), (v, v + 1), (-INF, v - 3), (v + 2, INF)):
        assert fast.value(leader, trick, None, alpha, beta) == slow.value(
            leader, trick, None, alpha, beta
        )


def random_trick_states(game, rng, count: int):
    """For each of ``count`` deals played at random, its trick-play states from 5
    cards in hand (4 players) or 7 (3 players) on, open tricks included."""
    top = 5 if game.num_players == 4 else 7
    for _ in range(count):
        st = game.new_state()
        states = []
        while (p := game.advance_chance(st, rng)) != TERMINAL:
            if st.phase == Phase.TRICKS and st.hands[p].bit_count() <= top:
                states.append(st.clone())
            legal = game.legal_actions(st)
            game.apply(st, legal[int(rng.integers(len(legal)))])
        yield states


def game_of(players: int, contract: str) -> Herzeln:
    """A one-deal game of ``contract``; the penalty-card deals end early (the
    engine's option) with 3 players, so both readings are searched."""
    early = players == 3 and contract in EARLY_END
    return Herzeln(players=players, contract=contract, early_end=early)


@pytest.mark.parametrize("players", [4, 3])
@pytest.mark.parametrize("contract", TRICK_CONTRACTS)
@pytest.mark.parametrize("keep", [True, False], ids=["kept", "fresh"])
def test_every_value_is_the_python_one(
    compiled, players: int, contract: str, keep: bool
) -> None:
    """Two deals played at random, every decision from 5 cards (4 players) or 7 (3
    players) on: the values of every card and of the position agree, with a fresh
    solver pair for each position, or (the table and killers kept) one pair for the
    decisions of the deal's first seat to act. While the compiled table has dropped
    no entry the two searches expand the same positions."""
    game = game_of(players, contract)
    rng = np.random.default_rng(players * 10 + CONTRACTS.index(contract) * 2 + keep)
    seen = same = 0
    for states in random_trick_states(game, rng, 2):
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
    assert seen >= 4
    assert same >= 0.8 * seen


@pytest.mark.parametrize(
    ("players", "contract"),
    [(3, "no_hearts"), (3, "tricks"), (3, "no_last_trick"), (4, "no_queens")],
)
def test_deal_starts(compiled, monkeypatch, players: int, contract: str) -> None:
    """Whole deals from their first lead (3 players) or from 6 cards in hand (4
    players: a full 4-player deal takes the Python search seconds): the same values
    and positions searched. The counts agree only where no entry is dropped, so the
    solvers get a fresh shared table of the most slots their limit allows (the process's
    own is as large as earlier tests left it: at its first size a whole 3-player deal
    can fill it to half and drop an entry)."""
    fresh = compiled.Table(slots_for(sh.TT_LIMIT))
    monkeypatch.setattr(compiled.Table, "_shared", fresh, raising=False)
    game = game_of(players, contract)
    rng = np.random.default_rng(3)
    cards = 8 if players == 3 else 6
    for _ in range(2):
        st = advance_random(
            game, rng, cards, lambda s: s.phase == Phase.TRICKS and not s.trick
        )
        fast, slow = pair(game, st, st.to_play)
        check_position(fast, slow, game, st)
        assert fast._kernel.dropped == 0
        assert fast.nodes == slow.nodes > 500


def test_a_table_that_is_cleared_and_drops_entries_keeps_every_value(
    compiled,
) -> None:
    """With a limit of 40 entries both tables are cleared in the middle of searches;
    the compiled one, of its own, starts at 8 slots, so keys find their slots taken
    and entries are dropped, and it grows between searches, up to 128 (twice the
    limit, a power of two). Every value still equals the Python search's."""
    dropped = 0
    for i, contract in enumerate(("no_hearts", "no_tricks", "no_queens", "tricks")):
        game = game_of(4, contract)
        rng = np.random.default_rng(5 + i)
        st = advance_random(game, rng, 5, lambda s: s.phase == Phase.TRICKS)
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
        "herzeln_v0",
        [
            {"contract": "no_hearts"},
            {"contract": "tricks"},
            {"players": 3, "contract": "last_trick"},
        ],
    )
    assert runs[0] == runs[1]
    assert sum(1 for _, _, values in runs[0] if values) > 10


def test_the_backend_is_chosen_by_argument_or_environment(
    compiled, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``PARLOUR_JIT`` or the argument picks the backend; a bad value is a one-line
    error, found before any search (`helpers.check_backend_choice`)."""
    game = Herzeln(contract="no_hearts")
    st = advance_random(game, np.random.default_rng(0), 2, lambda s: True)

    def solver(backend=None):
        return sh.HerzelnSolver(game, list(st.hands), 0, st.contract, backend=backend)

    check_backend_choice(
        monkeypatch, solver, lambda: sh.move_values(game, st), "herzeln_v0"
    )


def test_without_numba_the_python_search_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where numba does not import, ``auto`` falls back to pure Python and asking for
    numba is a one-line error saying what to do."""
    game = Herzeln(contract="tricks")
    st = advance_random(game, np.random.default_rng(1), 3, lambda s: True)

    def solver(backend):
        return sh.HerzelnSolver(
            game, list(st.hands), st.to_play, st.contract, backend=backend
        )

    check_without_numba(
        monkeypatch,
        "parlour.agents.solver.herzeln_jit",
        solver,
        lambda s: s.value(st.leader, list(st.trick), None),
    )
