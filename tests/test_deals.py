"""Forced deals of the card games (``reset(options={"deal": …})`` / ``{"deals": […]}``)
across games: errors name the deal they are about, and an episode with more deals than
were forced says (once per env) that the later ones are random.

The per-game formats and their single-deal errors are tested in each game's file and in
``tests/test_generic.py``; the scripted dice of Fünfzehn – tot in
``tests/test_fuenfzehn_tot.py``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from parlour import envs
from parlour.envs.core.deal import LaterDealsRandomWarning

#: (env, options) of multi-deal episodes, with the number of deals a test forces
MULTI_DEAL = [
    ("forty_fives_v0", {"players": 4}),
    ("forty_fives_v0", {"players": 3, "variant": "auction"}),
    ("german_whist_v0", {"variant": "honeymoon"}),
    ("herzeln_v0", {}),
    ("fuenfzehnern_v0", {"episode": "match"}),
]
SINGLE_DEAL = [
    ("forty_fives_v0", {"episode": "deal"}),
    ("german_whist_v0", {"variant": "german"}),
    ("herzeln_v0", {"contract": "tricks"}),
    ("fuenfzehnern_v0", {}),
]


def random_deal(game: Any, rng: np.random.Generator, dealer: int | None) -> dict:
    """A valid forced deal of ``game`` (its format, see each game's docs)."""
    in_play = getattr(game, "in_play", game.deck.all_mask)
    names = [game.deck.format(c) for c in range(game.deck.size) if in_play >> c & 1]
    rng.shuffle(names)
    n = game.num_players
    size = {"german_whist_v0": 13, "forty_fives_v0": 5}.get(game.name, 8)
    deal: dict[str, Any] = {
        "hands": [names[size * i : size * (i + 1)] for i in range(n)]
    }
    rest = names[size * n :]
    if getattr(game, "auction", False):
        deal["kitty"], rest = rest[:3], rest[3:]
    if rest:
        deal["stock"] = rest
    if dealer is not None:
        deal["dealer"] = dealer
    return deal


def two_deals(env: Any, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    game = env.unwrapped.game
    return [random_deal(game, rng, 0), random_deal(game, rng, None)]


@pytest.mark.parametrize(("name", "options"), MULTI_DEAL)
def test_bad_card_in_a_later_deal_names_that_deal(name: str, options: dict) -> None:
    """A bad card, a duplicate or a short hand in the second entry of ``deals`` is
    reported as ``deals[1]…``, so the user knows which deal to fix."""
    env = envs.make(name, **options)
    deals = two_deals(env)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LaterDealsRandomWarning)
        env.reset(options={"deals": deals})  # both fine
        bad = two_deals(env)
        bad[1]["hands"][1][2] = "XQ"
        with pytest.raises(ValueError, match=r"^deals\[1\]\['hands'\]\[1\]: .*'XQ'"):
            env.reset(options={"deals": bad})
        bad = two_deals(env)
        bad[1]["hands"][0][0] = bad[1]["hands"][1][0]
        with pytest.raises(ValueError, match=r"^deals\[1\]: card\(s\) dealt twice"):
            env.reset(options={"deals": bad})
        bad = two_deals(env)
        bad[1]["hands"][1].pop()
        with pytest.raises(ValueError, match=r"^deals\[1\]\['hands'\]\[1\] must have"):
            env.reset(options={"deals": bad})
        bad = two_deals(env)
        bad[1]["dealer"] = 0  # the deal passes to the left: deal 1 is dealt by seat 1
        with pytest.raises(ValueError, match=r"^deals\[1\]: dealer 0 breaks the"):
            env.reset(options={"deals": bad})
        bad = two_deals(env)
        bad[0]["hands"][0][0] = "XQ"  # the single-deal option is named "deal"
        with pytest.raises(ValueError, match=r"^deal\['hands'\]\[0\]: .*'XQ'"):
            env.reset(options={"deal": bad[0]})


@pytest.mark.parametrize(("name", "options"), MULTI_DEAL)
def test_forced_deal_of_a_longer_episode_warns_once(name: str, options: dict) -> None:
    """A forced deal fixes only the first deal of a match or partie: the later ones are
    random, and the env says so with a `LaterDealsRandomWarning`, once per env."""
    env = envs.make(name, **options)
    deal = two_deals(env)[0]
    with pytest.warns(LaterDealsRandomWarning, match="later deals are dealt at random"):
        env.reset(seed=0, options={"deal": deal})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env.reset(seed=1, options={"deal": deal})
        env.reset(seed=2, options={"deals": two_deals(env)})
    assert not [w for w in caught if w.category is LaterDealsRandomWarning]


@pytest.mark.parametrize(("name", "options"), SINGLE_DEAL)
def test_no_warning_when_every_deal_is_forced(name: str, options: dict) -> None:
    env = envs.make(name, **options)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env.reset(seed=0, options={"deal": two_deals(env)[0]})
        env.reset(seed=0)  # nothing forced: random by design, nothing to say
        env.reset(seed=0, options={"dealer": 0})
    assert not [w for w in caught if w.category is LaterDealsRandomWarning]


def test_no_warning_when_the_deals_cover_the_episode() -> None:
    env = envs.make("fuenfzehnern_v0", episode="match", num_hands=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env.reset(seed=0, options={"deals": two_deals(env)})
    assert not [w for w in caught if w.category is LaterDealsRandomWarning]


def test_later_deals_are_random() -> None:
    """What the warning says: after the forced first deal of a Fünfzehnern match, the
    second deal comes from the env's seed (seen in player_0's hand, observation entries
    0..31)."""
    hands = []
    for seed in (0, 1):
        env = envs.make("fuenfzehnern_v0", episode="match", num_hands=2)
        deal = two_deals(env)[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LaterDealsRandomWarning)
            env.reset(seed=seed, options={"deal": deal})
        first = np.flatnonzero(env.observe("player_0")["observation"][:32])
        assert [env.unwrapped.action_name(c) for c in first] == sorted(
            deal["hands"][0], key=env.unwrapped.action_id
        )
        while env.unwrapped.details()["deal"] == 0:  # play the first deal out
            env.step(
                int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
            )
        hands.append(np.flatnonzero(env.observe("player_0")["observation"][:32]))
    assert len(hands[0]) == len(hands[1]) == 8
    assert not np.array_equal(hands[0], hands[1])
