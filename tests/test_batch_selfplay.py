"""The vectorised self-play environment (`parlour.training.batch_selfplay`): the learner
acts exactly at its seat's turns with a legal mask, opponents play only legal cards,
and every episode's return reaches the learner's seat as the scalar env pays it (the
same deals and cards replayed in ``envs.make``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from parlour import envs
from parlour.envs.batch import ENGINES, GermanWhistBatch
from parlour.training.batch_selfplay import (
    BatchSelfPlay,
    check_opponents,
    engine_class,
    make_engine,
    sample_masked,
)
from parlour.training.policy import NumpyPolicy
from parlour.training.selfplay import OpponentPool


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def random_policy(obs: int, actions: int, seed: int, activation="relu") -> NumpyPolicy:
    """An untrained actor with random weights (a snapshot that plays real logits)."""
    rng = np.random.default_rng(seed)
    sd = {
        "mlp_extractor.policy_net.0.weight": rng.normal(0, 0.3, (16, obs)),
        "mlp_extractor.policy_net.0.bias": rng.normal(0, 0.3, 16),
        "action_net.weight": rng.normal(0, 1.0, (actions, 16)),
        "action_net.bias": rng.normal(0, 1.0, actions),
    }
    return NumpyPolicy({k: v.astype(np.float32) for k, v in sd.items()}, activation)


def make_env(options=None, batch=64, seed=0, weights=None, snapshots=2, **kw):
    pool = OpponentPool(
        "german_whist_v0", weights or {"self": 0.5, "random": 0.5}, seed=seed
    )
    probe = GermanWhistBatch(1, **(options or {}))
    for i in range(snapshots):
        pool.add_snapshot(
            random_policy(probe.observation_size, probe.num_actions, seed + i),
            f"s{i}",
        )
    return BatchSelfPlay("german_whist_v0", options, batch, pool, seed=seed, **kw)


def test_registry_names_the_german_whist_engine():
    assert ENGINES["german_whist_v0"] is GermanWhistBatch
    assert engine_class("german_whist_v0") is GermanWhistBatch


def test_an_env_without_a_batched_engine_is_one_line(monkeypatch):
    # whichever engines exist by now: this one is taken away
    monkeypatch.delitem(ENGINES, "forty_fives_v0", raising=False)
    with pytest.raises(ValueError, match=r"^forty_fives_v0 has no batched engine") as e:
        engine_class("forty_fives_v0")
    assert "\n" not in str(e.value) and "german_whist_v0" in str(e.value)


def test_engine_options_are_the_scalar_envs():
    engine = make_engine(
        "german_whist_v0", {"variant": "honeymoon", "illegal_action": "penalize"}, 4
    )
    assert engine.honeymoon and engine.batch_size == 4
    with pytest.raises(ValueError, match="unknown option 'trumps'"):
        make_engine("german_whist_v0", {"trumps": 1}, 4)


def test_scalar_bots_are_refused_in_the_batched_rollout():
    check_opponents({"self": 1.0, "random": 0.5, "heuristic": 0.0})
    with pytest.raises(ValueError, match=r"^opponents\.heuristic: .*--preset batch"):
        check_opponents({"self": 0.5, "heuristic": 0.5})
    pool = OpponentPool("german_whist_v0", {"heuristic": 1.0})
    with pytest.raises(ValueError, match="opponents.heuristic"):
        BatchSelfPlay("german_whist_v0", {}, 4, pool)


@pytest.mark.parametrize("variant", ["german", "honeymoon"])
def test_learner_acts_at_its_seat_with_a_legal_mask_and_opponents_play_legally(
    variant,
):
    env = make_env({"variant": variant}, batch=64, seed=3)
    g = torch.Generator().manual_seed(0)
    learner_turns = opponent_turns = 0
    for _ in range(150):
        turn = env.turn
        e = env.engine
        assert torch.equal(turn.learner, e.to_play == env.seat)
        assert torch.equal(turn.mask, e.legal_mask())
        assert turn.mask.any(dim=1).all()  # someone always has a legal card
        opp = env.opponent_actions()
        others = ~turn.learner
        assert turn.mask[others.nonzero().squeeze(1), opp[others]].all()
        learner_turns += int(turn.learner.sum())
        opponent_turns += int(others.sum())
        env.step(sample_masked(torch.zeros(turn.mask.shape), turn.mask, g))
    # both seats, both kinds of player, are exercised
    assert learner_turns > 1000 and opponent_turns > 1000
    assert set(env.seat.tolist()) == {0, 1}
    assert set(env.opponent.tolist()) >= {0, 1, 2}


def test_snapshots_sample_from_their_own_masked_policy():
    """A snapshot opponent's cards follow its softmax: with one snapshot and a
    deterministic-looking policy, it plays its argmax almost always."""
    env = make_env(batch=256, weights={"self": 1.0}, snapshots=0)
    probe = GermanWhistBatch(1)
    sharp = random_policy(probe.observation_size, probe.num_actions, 7)
    sharp.out = (sharp.out[0] * 200, sharp.out[1] * 200)
    env.pool.add_snapshot(sharp, "sharp")
    env.reset(seed=5)
    turn = env.turn
    rows = (~turn.learner).nonzero().squeeze(1)
    acts = env.opponent_actions()[rows]
    obs, mask = turn.observation[rows].numpy(), turn.mask[rows].numpy()
    greedy = [sharp.act(o, m) for o, m in zip(obs, mask, strict=True)]
    assert np.mean(acts.numpy() == np.array(greedy)) > 0.95


def test_snapshots_leaving_the_pool_finish_their_games():
    env = make_env(batch=32, weights={"self": 1.0}, snapshots=1)
    env.pool.max_snapshots = 1
    first = env._slots[1]
    probe = GermanWhistBatch(1)
    env.pool.add_snapshot(
        random_policy(probe.observation_size, probe.num_actions, 99), "new"
    )
    env.refresh()
    assert len(env.pool.snapshots) == 1
    # the games in progress still play the snapshot that left the pool
    assert all(env._slots[s] is first for s in env.opponent.tolist())
    assert env._n_pool == 1 and env._slots[1].policy is env.pool.snapshots[0].policy


def replay_return(options, deal, actions, seat) -> float:
    """The seat's return when the scalar env plays ``actions`` on ``deal``."""
    env = envs.make("german_whist_v0", **options)
    env.reset(options={"deal": deal})
    for a in actions:
        env.step(a)
    game = env.unwrapped.game
    assert game.is_terminal(env.unwrapped.game_state)
    return float(game.returns(env.unwrapped.game_state)[seat])


@pytest.mark.parametrize(
    "options", [{"variant": "german"}, {"variant": "honeymoon", "episode": "deal"}]
)
def test_returns_reach_the_learner_seat_as_in_the_scalar_env(options):
    """Every finished episode: the learner's summed rewards and the return passed to
    ``on_episode`` equal the scalar env's return for the learner's seat on the same
    deal and cards, whoever played the last card."""
    finished: list[tuple[str, float]] = []
    env = make_env(
        options, batch=32, seed=11, on_episode=lambda k, f: finished.append((k, f))
    )
    B = env.batch_size
    deals = [env.engine.deal(i) for i in range(B)]
    played: list[list[int]] = [[] for _ in range(B)]
    summed = torch.zeros(B)
    g = torch.Generator().manual_seed(1)
    checked = last_by_opponent = 0
    for _ in range(250):
        turn = env.turn
        seat = env.seat.clone()
        learner = sample_masked(torch.zeros(turn.mask.shape), turn.mask, g)
        # the opponents' cards as the env will draw them inside step
        state = env.generator.get_state()
        acted = torch.where(turn.learner, learner, env.opponent_actions())
        env.generator.set_state(state)
        before = len(finished)
        _, rewards, dones = env.step(learner)
        summed += rewards
        for i in range(B):
            played[i].append(int(acted[i]))
        for j, i in enumerate(dones.nonzero().squeeze(1).tolist()):
            expected = replay_return(options, deals[i], played[i], int(seat[i]))
            assert float(summed[i]) == pytest.approx(expected)
            assert finished[before + j][1] == pytest.approx(expected)
            last_by_opponent += not bool(turn.learner[i])
            checked += 1
            deals[i], played[i], summed[i] = env.engine.deal(i), [], 0.0
        # rewards arrive only with the end of an episode
        assert not rewards[~dones].any()
    assert checked > 100 and last_by_opponent > 10


def test_same_seed_same_games():
    def run(seed):
        env = make_env(batch=16, seed=seed)
        g = torch.Generator().manual_seed(0)
        out = []
        for _ in range(40):
            turn = env.turn
            _, r, d = env.step(
                sample_masked(torch.zeros(turn.mask.shape), turn.mask, g)
            )
            out.append((turn.observation.sum().item(), r.tolist(), d.tolist()))
        return out

    assert run(4) == run(4)
    assert run(4) != run(5)


class ToyTeams:
    """A made-up 4-player partnership game with the batched-engine interface, to run
    the self-play env over more than two seats: 8 plays in seat order from a random
    first seat, actions 0..2 (2 is illegal on odd plays), and the partnership (seats
    0 and 2, or 1 and 3) whose plays sum higher gets +1 on both seats, the other -1."""

    num_players, num_actions, observation_size, length = 4, 3, 4, 8

    def __init__(self, batch_size, device="cpu", seed=None, **options):
        self.batch_size = batch_size
        self.generator = torch.Generator().manual_seed(seed or 0)
        self.reset()

    def reset(self, seed=None, deals=None):
        if seed is not None:
            self.generator.manual_seed(seed)
        self._deal(torch.arange(self.batch_size))

    def _deal(self, idx):
        B = self.batch_size
        if not hasattr(self, "to_play"):
            self.to_play = torch.zeros(B, dtype=torch.int64)
            self.count = torch.zeros(B, dtype=torch.int64)
            self.totals = torch.zeros(B, 2, dtype=torch.int64)
        self.to_play[idx] = torch.randint(4, (len(idx),), generator=self.generator)
        self.count[idx] = 0
        self.totals[idx] = 0

    def legal_mask(self):
        mask = torch.ones(self.batch_size, 3, dtype=torch.bool)
        mask[:, 2] = self.count % 2 == 0
        return mask

    def observe(self, seat=None):
        p = (
            self.to_play
            if seat is None
            else torch.as_tensor(seat).expand(self.batch_size)
        )
        mine = self.totals.gather(1, (p % 2)[:, None]).squeeze(1)
        other = self.totals.gather(1, (1 - p % 2)[:, None]).squeeze(1)
        return torch.stack([self.count / 8, p / 3, mine / 16, other / 16], 1).float()

    def step(self, actions):
        actions = torch.as_tensor(actions)
        legal = self.legal_mask().gather(1, actions[:, None]).squeeze(1)
        if not legal.all():
            raise ValueError("illegal action")
        team = self.to_play % 2
        self.totals[torch.arange(self.batch_size), team] += actions
        self.count += 1
        self.to_play = (self.to_play + 1) % 4
        done = self.count == self.length
        diff = (self.totals[:, 0] - self.totals[:, 1]).sign().float()
        seat_sign = torch.tensor([1.0, -1.0, 1.0, -1.0])
        rewards = torch.where(done[:, None], diff[:, None] * seat_sign, 0.0)
        self.result = rewards.clone()
        self._deal(done.nonzero().squeeze(1))
        return rewards, done


def test_four_seats_with_partners(monkeypatch):
    """Over a 4-player partnership engine: the learner acts at its own seat only (a
    quarter of the plays), opponents' cards are legal, and a finished episode pays
    the learner its partnership's result."""
    monkeypatch.setitem(ENGINES, "forty_fives_v0", ToyTeams)
    pool = OpponentPool("forty_fives_v0", {"self": 0.5, "random": 0.5}, seed=0)
    pool.add_snapshot(random_policy(4, 3, 1), "s0")
    finished = []
    env = BatchSelfPlay(
        "forty_fives_v0",
        {},
        64,
        pool,
        seed=2,
        on_episode=lambda kind, final: finished.append(final),
    )
    g = torch.Generator().manual_seed(0)
    learner_plays = plays = 0
    for _ in range(80):
        turn = env.turn
        assert torch.equal(turn.learner, env.engine.to_play == env.seat)
        seat = env.seat.clone()
        before = len(finished)
        _, rewards, dones = env.step(
            sample_masked(torch.zeros(turn.mask.shape), turn.mask, g)
        )
        result = env.engine.result.gather(1, seat[:, None]).squeeze(1)
        assert torch.equal(rewards, torch.where(dones, result, 0.0))
        assert finished[before:] == result[dones].tolist()
        learner_plays += int(turn.learner.sum())
        plays += 64
    assert set(env.seat.tolist()) == {0, 1, 2, 3}
    assert 0.2 < learner_plays / plays < 0.3 and len(finished) == 640
