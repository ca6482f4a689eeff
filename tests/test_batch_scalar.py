"""Every batched engine plays exactly the scalar engine's game, step by step, on random
play from random forced deals (the harnesses: `batch_cases.compare_engine`, through
the scalar rules engine with the batched engine's chance outcomes, and
`batch_cases.compare_env`, through one scalar env per game). Default suite: every
registered variant and the option sets its variants do not reach, 24-200 episodes
each; ``-m slow``: 10,000 episodes of every registered variant."""

from __future__ import annotations

import pytest
from batch_cases import comparison_id, comparisons, run_comparison, slow_comparisons


@pytest.mark.parametrize("row", comparisons(), ids=comparison_id)
def test_same_game_as_scalar_engine(row: tuple) -> None:
    assert run_comparison(row) > 0


@pytest.mark.slow
@pytest.mark.parametrize("row", slow_comparisons(), ids=comparison_id)
def test_same_game_as_scalar_engine_10000_episodes(row: tuple) -> None:
    assert run_comparison(row) > 0
