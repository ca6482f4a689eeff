"""The batched Herzeln engine plays exactly the scalar engine's game.

`compare` deals random episodes in `HerzelnBatch` (whose deals are forced here from
numpy, or drawn by the engine after an automatic reset), replays each game's deals in
one scalar env (``envs.make("herzeln_v0", ...)``, reset with ``options={"deals":
batch.episode_deals(i)}``: every deal of the partie, so nothing there is random), plays
the same random legal actions in both and compares at every action the player to act,
the legal mask, every seat's observation (every float), the rewards and the terminal
flags. When a batched episode ends it is dealt again automatically and the scalar env
is reset to that new episode, so automatic resets and the partie's deal-to-deal
transitions (dealer rotation, next contract, Domino starts) are compared too. The
scalar engine is the reference: its own tests check it against the seed rule by rule.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from parlour import envs
from parlour.envs.batch import HerzelnBatch
from parlour.envs.core.cards import GERMAN_32, SHORT_24
from parlour.envs.herzeln.rules import CONTRACTS

VARIANTS = [dict(v) for v in envs.VARIANTS["herzeln_v0"]]
# Every contract alone, both sizes, and the options the variants do not reach.
EXTRA = [
    *({"players": n, "contract": k} for n in (3, 4) for k in CONTRACTS),
    {"players": 3},
    {"players": 4, "early_end": True},
    {"players": 3, "domino_layout": "per_suit_rows", "early_end": True},
    {"players": 3, "contract": "no_queens", "early_end": True},
    {"players": 3, "contract": "domino", "domino_layout": "per_suit_rows"},
]


def _id(options: dict) -> str:
    return "-".join(f"{v}" for v in options.values())


def random_deals(
    rng: np.random.Generator, games: int, players: int, deals: int = 1
) -> list:
    """``games`` random lists of ``deals`` deals in the scalar env's format."""
    deck = SHORT_24 if players == 3 else GERMAN_32
    out = []
    for _ in range(games):
        episode = []
        for j in range(deals):
            names = [deck.format(int(c)) for c in rng.permutation(deck.size)]
            deal = {"hands": [names[8 * p : 8 * p + 8] for p in range(players)]}
            if j == 0:
                deal = {"dealer": int(rng.integers(players)), **deal}
            episode.append(deal)
        out.append(episode)
    return out


def compare(games: int, batch_size: int, seed: int, **options) -> int:
    """Play at least ``games`` episodes in both engines, comparing every action;
    returns the number of actions compared."""
    rng = np.random.default_rng(seed)
    batch = HerzelnBatch(batch_size, seed=seed, **options)
    players = batch.num_players
    agents = [f"player_{p}" for p in range(players)]
    batch.reset(deals=random_deals(rng, batch_size, players, deals=batch.C))
    scalar = [envs.make("herzeln_v0", **options) for _ in range(batch_size)]
    for i, env in enumerate(scalar):
        env.reset(options={"deals": batch.episode_deals(i)})
    finished = actions_done = 0
    while finished < games:
        to_play = batch.to_play.numpy().copy()
        mask = batch.legal_mask().numpy()
        obs = [batch.observe(seat).numpy() for seat in range(players)]
        actions = np.empty(batch_size, dtype=np.int64)
        for i, env in enumerate(scalar):
            seat = int(to_play[i])
            assert env.agent_selection == agents[seat], f"game {i}: player to act"
            expected_mask = env.unwrapped.observe(agents[seat])["action_mask"]
            assert np.array_equal(expected_mask, mask[i].astype(np.int8)), (
                f"game {i}: legal mask {np.flatnonzero(expected_mask).tolist()} != "
                f"{np.flatnonzero(mask[i]).tolist()}"
            )
            for s in range(players):
                expected = env.unwrapped.observe(agents[s])["observation"]
                diff = np.flatnonzero(expected != obs[s][i])
                assert diff.size == 0, (
                    f"game {i}, seat {s}: observation differs at {diff.tolist()}: "
                    f"{expected[diff].tolist()} != {obs[s][i][diff].tolist()}"
                )
            legal = np.flatnonzero(mask[i])
            actions[i] = legal[rng.integers(len(legal))]
        rewards, terminated = batch.step(torch.from_numpy(actions))
        rewards, terminated = rewards.numpy(), terminated.numpy()
        for i, env in enumerate(scalar):
            env.step(int(actions[i]))
            expected = [env.rewards[a] for a in agents]
            assert rewards[i].tolist() == expected, f"game {i}: rewards"
            done = all(env.terminations[a] for a in agents)
            assert bool(terminated[i]) == done, f"game {i}: terminal flag"
            if done:
                finished += 1
                # the batch has dealt game i again: replay that episode in the env
                env.reset(options={"deals": batch.episode_deals(i)})
        actions_done += batch_size
    return actions_done


# a partie is eight deals: fewer episodes keep the default suite fast
DEFAULT_GAMES = {True: 32, False: 200}


@pytest.mark.parametrize("options", VARIANTS, ids=_id)
def test_same_game_as_scalar_engine(options: dict) -> None:
    partie = "contract" not in options
    games = DEFAULT_GAMES[partie]
    assert compare(games, batch_size=32 if partie else 64, seed=1, **options) > 0


@pytest.mark.parametrize("options", EXTRA, ids=_id)
def test_same_game_other_options(options: dict) -> None:
    partie = "contract" not in options
    assert (
        compare(8 if partie else 40, batch_size=8 if partie else 32, seed=3, **options)
        > 0
    )


@pytest.mark.slow
@pytest.mark.parametrize("options", VARIANTS, ids=_id)
def test_same_game_as_scalar_engine_10000_games(options: dict) -> None:
    assert compare(10_000, batch_size=256, seed=2, **options) > 0
