"""Forty-Fives' own scenarios for its batched engine. What every engine shares is
tested in `test_batch_conformance.py`, the step-by-step agreement with the scalar
engine (every variant and six more option sets) in `test_batch_scalar.py`."""

from __future__ import annotations

import torch

from parlour.envs.batch import FortyFivesBatch
from parlour.envs.core.cards import FRENCH_52


def test_robbing_a_turned_ace_is_the_dealers() -> None:
    """Seed: "Ist die aufgedeckte Karte selbst ein Ass, darf der Geber sie auf dieselbe
    Weise rauben." The dealer (seat 3) robs the turned AD at his first turn, burying
    a card, and plays on."""
    names = [FRENCH_52.format(c) for c in range(52) if FRENCH_52.format(c) != "AD"]
    deal = {
        "dealer": 3,
        "hands": [names[5 * s : 5 * s + 5] for s in range(4)],
        "stock": ["AD", *names[20:]],
    }
    batch = FortyFivesBatch(1, seed=0)
    batch.reset(deals=[deal])
    assert int(batch.rob_seat[0]) == 3 and int(batch.to_play[0]) == 0
    for _ in range(3):  # seats 0, 1, 2 play a card each; no rob actions for them
        mask = batch.legal_mask()[0]
        assert not mask[52:].any()
        batch.step(mask.float().argmax()[None])
    mask = batch.legal_mask()[0]
    hand = [FRENCH_52.card(c) for c in deal["hands"][3]]
    assert sorted((mask[52:104].nonzero().flatten()).tolist()) == sorted(hand)
    bury = hand[0]
    batch.step(torch.tensor([52 + bury]))
    assert int(batch.to_play[0]) == 3 and int(batch.robbed_by[0]) == 3
    assert int(batch.hands[0, 3]) >> FRENCH_52.card("AD") & 1
    assert not int(batch.hands[0, 3]) >> bury & 1
    assert not batch.legal_mask()[0, 52:].any()  # robbing was his first turn only
