"""Fünfzehnern's own scenarios for its batched engine. What every engine shares is
tested in `test_batch_conformance.py`, the step-by-step agreement with the scalar
engine and env (every variant and four more option combinations) in
`test_batch_scalar.py`."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from parlour.envs.batch import FuenfzehnernBatch


def test_zwang_is_played_and_compared() -> None:
    """Random play announces Zwang and forces Aces: the comparison above covers it."""
    batch = FuenfzehnernBatch(256, seed=4)
    pick = torch.Generator().manual_seed(0)
    announced = forced = 0
    for _ in range(64):
        mask = batch.legal_mask()
        forced += int(((batch.zwang >= 0) & (mask[:, :32].sum(1) == 1)).sum())
        actions = (torch.rand(256, 36, generator=pick) + 2 * mask).argmax(1)
        announced += int((actions >= 32).sum())
        batch.step(actions)
    assert announced > 0 and forced > 0


@pytest.mark.parametrize("removed", ["S", "C"])
def test_seeding_and_three_player_pack(removed: str) -> None:
    a, b, c = (
        FuenfzehnernBatch(16, players=3, removed_suit=removed, seed=s)
        for s in (5, 5, 6)
    )
    assert torch.equal(a.cards, b.cards) and torch.equal(a.dealer, b.dealer)
    assert not torch.equal(a.cards, c.cards)
    first = a.cards.clone()
    a.reset()  # the generator runs on: new deals
    assert not torch.equal(a.cards, first)
    a.reset(seed=5)
    assert torch.equal(a.cards, first)
    pack = [c for c in range(32) if c >> 3 != "SHDC".index(removed)]
    for i in range(16):
        assert sorted(a.cards[i].tolist()) == pack
    # a forced array must deal the 3-player pack, not the removed suit
    removed_cards = [c for c in range(32) if c not in pack]
    rows = np.tile([0, *removed_cards, *pack[8:]], (16, 1))
    message = r"deals\[0\]: the 24 cards must be each card id (0..23|of the pack)"
    with pytest.raises(ValueError, match=message):
        a.reset(deals=rows)
