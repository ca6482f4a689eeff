"""Fünfzehn – tot's own scenarios for its batched engine: forced dice and the dice
tapes. What every engine shares is tested in `test_batch_conformance.py`, the
decision-by-decision agreement with the scalar engine and env (the dice replayed as
chance outcomes, or forced through the env's reset options) in
`test_batch_scalar.py`."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from parlour.envs.batch import FuenfzehnTotBatch


def test_forced_dice_as_options_and_as_arrays() -> None:
    """Reset options (``dice``, ``starter``) and the (B, L) chance-outcome array give
    the same games; the forced faces are the ones rolled."""
    rng = np.random.default_rng(3)
    rows = rng.integers(1, 7, size=(8, 300))
    a, b = FuenfzehnTotBatch(8, seed=0), FuenfzehnTotBatch(8, seed=99)
    a.reset(deals=[{"dice": r.tolist()} for r in rows])
    b.reset(deals=rows)
    assert torch.equal(a.tape[:, :300], b.tape[:, :300])
    assert a.tape[:, :300].tolist() == rows.tolist()
    assert torch.equal(a.observe(), b.observe())
    assert a.dice_rolled(0) == rows[0, : len(a.dice_rolled(0))].tolist()
    c = FuenfzehnTotBatch(4, seed=0)
    c.reset(deals=[{"starter": s, "dice": [None, 6]} for s in (3, 2, 1, 0)])
    assert c.to_play.tolist() == [3, 2, 1, 0]
    assert [c.tape[i, 4 + 1].item() for i in range(4)] == [6] * 4


def test_tape_overflow_goes_on_with_fresh_dice() -> None:
    """A game that reads past its tape keeps its unread faces and goes on; `deal`
    then refuses to pretend the tape replays it."""
    batch = FuenfzehnTotBatch(2, players=2, seed=0)
    batch.ptr[0] = batch.tape_width - 1
    last = int(batch.tape[0, -1])
    batch.step(torch.zeros(2, dtype=torch.int64))  # both roll: the last face
    assert batch.dice_rolled(0) == [last]
    assert batch.overflowed.tolist() == [False, False]
    batch.step(torch.zeros(2, dtype=torch.int64))  # past the tape's end
    assert batch.overflowed.tolist() == [True, False]
    # nothing was left unread: a fresh tape, read from its start
    assert batch.ptr[0] == 1 and batch.dice_rolled(0) == [int(batch.tape[0, 0])]
    with pytest.raises(ValueError, match="game 0 used more than its"):
        batch.deal(0)
    assert batch.deal(1)["dice"] == batch.tape[1].tolist()
