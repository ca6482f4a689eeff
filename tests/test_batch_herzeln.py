"""Herzeln's own scenarios for its batched engine. What every engine shares is tested
in `test_batch_conformance.py`, the step-by-step agreement with the scalar env (every
variant and a sweep of 21 more option sets) in `test_batch_scalar.py`."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from batch_cases import hz_deals

from parlour.envs import IllegalActionError
from parlour.envs.batch import HerzelnBatch
from parlour.envs.core.cards import GERMAN_32, SHORT_24
from parlour.envs.herzeln.rules import Herzeln


def first_deals(rng: np.random.Generator, games: int, players: int, k: int) -> list:
    """``games`` random lists of the first ``k`` deals of a partie."""
    return [d[:k] for d in hz_deals(rng, HerzelnBatch(games, players=players))]


def test_deals_as_arrays_match_deal_dicts() -> None:
    """The chance-outcome array form and the dict form give the same games."""
    deals = first_deals(np.random.default_rng(3), 8, 4, 3)
    rules = Herzeln()
    rows = np.array([rules.forced_chance({"deals": d}) for d in deals])
    assert rows.shape == (8, 1 + 3 * 32)
    a, b = HerzelnBatch(8, seed=0), HerzelnBatch(8, seed=0)
    a.reset(deals=deals)
    b.reset(deals=rows)
    for name in ("deal_hands", "hands", "dealer", "to_play", "contract"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert torch.equal(a.observe(), b.observe())
    for i in range(8):
        assert a.episode_deals(i)[:3] == [
            {**d, "hands": [sorted(h, key=GERMAN_32.card) for h in d["hands"]]}
            for d in deals[i]
        ]
        assert a.deal(i) == a.episode_deals(i)[0]


def test_forced_first_deals_then_drawn() -> None:
    """Deals not forced are drawn; a single dict forces the first deal only."""
    deals = first_deals(np.random.default_rng(4), 16, 3, 2)
    batch = HerzelnBatch(16, players=3, seed=0)
    batch.reset(deals=[d[0] if i % 2 else d for i, d in enumerate(deals)])
    hands = batch.deal_hands
    for i in range(16):
        given = batch.episode_deals(i)
        assert given[0]["hands"] == [
            sorted(h, key=SHORT_24.card) for h in deals[i][0]["hands"]
        ]
        assert (
            given[1]["hands"]
            == [sorted(h, key=SHORT_24.card) for h in deals[i][1]["hands"]]
        ) == (i % 2 == 0)
        # every drawn deal deals every card once
        assert int(hands[i].sum(1).eq(2**24 - 1).all())
        for d in hands[i].tolist():
            assert sum(bin(h).count("1") for h in d) == 24


def test_rewards_add_up_to_the_deal_totals() -> None:
    """Each finished partie distributed the sum of its deals' totals (rules-notes
    §4.3 "Per-deal totals"): -33 + 80 - 80 - 80 - 40 + 40 - 40 - 60 with 4 players."""
    batch = HerzelnBatch(32, seed=8)
    pick = torch.Generator().manual_seed(2)
    paid = torch.zeros(32)
    ended = torch.zeros(32, dtype=torch.bool)
    while not ended.all():
        mask = batch.legal_mask()
        rewards, terminated = batch.step(
            (torch.rand(32, batch.num_actions, generator=pick) + 2 * mask).argmax(1)
        )
        paid += rewards.sum(1)
        for i in (terminated & ~ended).nonzero().flatten().tolist():
            assert paid[i] == -33 + 80 - 80 - 80 - 40 + 40 - 40 - 60
        paid[terminated] = 0
        ended |= terminated


def test_illegal_domino_actions() -> None:
    """Passing while a card fits, and laying a card at an end it does not fit."""
    batch = HerzelnBatch(8, contract="domino", seed=1)
    mask = batch.legal_mask()
    holds_jack = mask[:, :32].any(1)
    i = int(holds_jack.nonzero()[0])
    actions = mask.float().argmax(1)
    actions[i] = 96
    with pytest.raises(IllegalActionError, match=rf"game {i}: action 96 \(pass\)"):
        batch.step(actions)
    jack = int(mask[i, :32].nonzero()[0])
    actions[i] = 32 + jack  # a Jack at the top end of a line not yet opened
    with pytest.raises(IllegalActionError, match=rf"game {i}: action {32 + jack} "):
        batch.step(actions)
