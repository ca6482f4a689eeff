"""The batched Fünfzehnern engine plays exactly the scalar engine's game.

`compare` forces the same random deals into `FuenfzehnernBatch` and into one scalar
rules engine (`Fuenfzehnern`, the rules the env wraps) per game, plays the same random
legal actions (cards and Zwang announcements) in both and compares, at every play, the
player to act, the legal mask, every seat's observation, the rewards (the change in the
engine's returns, as the env pays them) and the terminal flags. When a batched deal
ends, the batched engine deals the next one itself (a match's next deal, or a new
episode); its cards are applied to the scalar engine as the chance outcomes, so the
automatic re-deals are compared too. `compare_env` does the same through the env
(``envs.make("fuenfzehnern_v0")``) for the trained four-player variant. The scalar
engine is the reference: its own tests check it against the seed rule by rule.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from parlour import envs
from parlour.envs import IllegalActionError
from parlour.envs.batch import ENGINES, FuenfzehnernBatch
from parlour.envs.core.cards import GERMAN_32
from parlour.envs.core.engine import CHANCE, TERMINAL
from parlour.envs.fuenfzehnern.rules import Fuenfzehnern
from parlour.envs.fuenfzehnern.state import Phase

ENV = "fuenfzehnern_v0"
VARIANTS = envs.VARIANTS[ENV]
IDS = ["-".join(f"{k}={v}" for k, v in opts.items()) for opts in VARIANTS]


def random_deals(
    rng: np.random.Generator, n: int, players: int = 4, removed_suit: str | None = None
) -> list:
    """``n`` random deals in the scalar env's forced-deal format."""
    game = Fuenfzehnern(players=players, removed_suit=removed_suit)
    pack = [c for c in range(32) if game.in_play >> c & 1]
    out = []
    for _ in range(n):
        names = [GERMAN_32.format(int(c)) for c in rng.permutation(pack)]
        out.append(
            {
                "dealer": int(rng.integers(players)),
                "hands": [names[s::players] for s in range(players)],
            }
        )
    return out


def _bits(mask: int, n: int = 36) -> list[int]:
    return [a for a in range(n) if mask >> a & 1]


def compare(games: int, batch_size: int, seed: int, **options) -> int:
    """Play at least ``games`` episodes in both engines, comparing every step; returns
    the number of plays compared."""
    rng = np.random.default_rng(seed)
    batch = FuenfzehnernBatch(batch_size, seed=seed, **options)
    game = Fuenfzehnern(**options)
    P = game.num_players
    batch.reset(deals=random_deals(rng, batch_size, P, options.get("removed_suit")))

    def deal_into(state, i: int, first: bool) -> None:
        if first:
            game.apply(state, int(batch.dealer[i]))
        assert state.dealer == int(batch.dealer[i]), f"game {i}: dealer"
        for card in batch.cards[i].tolist():
            game.apply(state, card)

    states = []
    for i in range(batch_size):
        states.append(game.new_state())
        deal_into(states[i], i, first=True)
    finished = plays = 0
    while finished < games:
        mask = batch.legal_mask().numpy()
        obs = [batch.observe(seat).numpy() for seat in range(P)]
        own = batch.observe().numpy()
        actions = np.empty(batch_size, dtype=np.int64)
        before = []
        for i, state in enumerate(states):
            seat = game.current_player(state)
            assert seat == int(batch.to_play[i]), f"game {i}: player to act"
            legal = np.flatnonzero(mask[i])
            assert _bits(game.legal_bits(state)) == legal.tolist(), f"game {i}: mask"
            for s in range(P):
                expected = game.observe(state, s)
                diff = np.flatnonzero(expected != obs[s][i])
                assert diff.size == 0, (
                    f"game {i}, seat {s}: observation differs at {diff.tolist()}: "
                    f"{expected[diff].tolist()} != {obs[s][i][diff].tolist()}"
                )
            assert np.array_equal(own[i], obs[seat][i])
            actions[i] = legal[rng.integers(len(legal))]
            before.append(game.returns(state))
        rewards, terminated = batch.step(torch.from_numpy(actions))
        for i, state in enumerate(states):
            game.apply(state, int(actions[i]))
            after = game.returns(state)
            expected = [a - b for a, b in zip(after, before[i], strict=True)]
            assert rewards[i].tolist() == expected, f"game {i}: rewards"
            over = game.current_player(state) == TERMINAL
            assert bool(terminated[i]) == over, f"game {i}: terminal flag"
            if over:
                finished += 1
                states[i] = game.new_state()
                deal_into(states[i], i, first=True)
            elif game.current_player(state) == CHANCE:  # a match's next deal
                assert state.phase == Phase.DEAL
                deal_into(state, i, first=False)
        plays += batch_size
    return plays


def compare_env(games: int, batch_size: int, seed: int) -> int:
    """`compare` through the scalar env (four players, one deal per episode)."""
    rng = np.random.default_rng(seed)
    batch = FuenfzehnernBatch(batch_size, seed=seed)
    deals = random_deals(rng, batch_size)
    batch.reset(deals=deals)
    agents = [f"player_{s}" for s in range(4)]
    scalar = [envs.make(ENV) for _ in range(batch_size)]
    for env, deal in zip(scalar, deals, strict=True):
        env.reset(options={"deal": deal})
    finished = plays = 0
    while finished < games:
        to_play = batch.to_play.numpy().copy()
        mask = batch.legal_mask().numpy()
        obs = [batch.observe(seat).numpy() for seat in range(4)]
        actions = np.empty(batch_size, dtype=np.int64)
        for i, env in enumerate(scalar):
            seat = int(to_play[i])
            assert env.agent_selection == agents[seat], f"game {i}: player to act"
            assert np.array_equal(
                env.unwrapped.observe(agents[seat])["action_mask"],
                mask[i].astype(np.int8),
            ), f"game {i}: legal mask"
            for s in range(4):
                expected = env.unwrapped.observe(agents[s])["observation"]
                assert np.array_equal(expected, obs[s][i]), f"game {i}, seat {s}"
            legal = np.flatnonzero(mask[i])
            actions[i] = legal[rng.integers(len(legal))]
        rewards, terminated = batch.step(torch.from_numpy(actions))
        rewards, terminated = rewards.numpy(), terminated.numpy()
        for i, env in enumerate(scalar):
            env.step(int(actions[i]))
            assert rewards[i].tolist() == [env.rewards[a] for a in agents], f"game {i}"
            done = all(env.terminations[a] for a in agents)
            assert bool(terminated[i]) == done, f"game {i}: terminal flag"
            if done:
                finished += 1
                env.reset(options={"deal": batch.deal(i)})
        plays += batch_size
    return plays


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_same_game_as_scalar_engine(opts: dict) -> None:
    # a match of P deals counts as one episode: fewer of them keep the test short
    games = 50 if opts.get("episode") == "match" else 200
    assert compare(games=games, batch_size=64, seed=1, **opts) > 0


def test_same_game_as_scalar_env() -> None:
    assert compare_env(games=100, batch_size=32, seed=1) > 0


@pytest.mark.parametrize(
    "opts",
    [
        {"players": 3, "removed_suit": "H"},
        {"lead_rules": "strict", "unbeatable_duty_on_first_suit": False},
        {"tying_scoring": True},
        {"episode": "match", "num_hands": 3, "lead_rules": "relaxed", "players": 3},
    ],
    ids=["3p-strict-removed-H", "duty-off", "tying-strict", "3p-match-3"],
)
def test_other_option_combinations(opts: dict) -> None:
    assert compare(games=60, batch_size=32, seed=3, **opts) > 0


@pytest.mark.slow
@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_same_game_as_scalar_engine_10000_games(opts: dict) -> None:
    assert compare(games=10_000, batch_size=512, seed=2, **opts) > 0


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


def test_deals_as_arrays_match_deal_dicts() -> None:
    """The (B, 33) chance-outcome form and the dict form give the same games."""
    deals = random_deals(np.random.default_rng(3), 8)
    rules = Fuenfzehnern()
    rows = np.array([rules.forced_chance({"deal": d}) for d in deals])
    a, b = FuenfzehnernBatch(8, seed=0), FuenfzehnernBatch(8, seed=99)
    a.reset(deals=deals)
    b.reset(deals=rows)
    for name in ("cards", "hands", "dealer", "to_play"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert [a.deal(i) for i in range(8)] == deals
    assert torch.equal(a.observe(), b.observe())


def test_deal_dicts_without_dealer_draw_one() -> None:
    deals = random_deals(np.random.default_rng(4), 64)
    for d in deals:
        del d["dealer"]
    batch = FuenfzehnernBatch(64, seed=0)
    batch.reset(deals=deals)
    assert set(batch.dealer.tolist()) == {0, 1, 2, 3}


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


def test_automatic_reset_in_a_match() -> None:
    """A match deals again inside the episode (the deal passing clockwise) and starts
    a new episode after its last deal; two engines with one seed deal the same."""
    opts = {"episode": "match", "num_hands": 2}
    a, b = FuenfzehnernBatch(16, seed=7, **opts), FuenfzehnernBatch(16, seed=7, **opts)
    pick = torch.Generator().manual_seed(0)
    ended = torch.zeros(16, dtype=torch.bool)
    while not ended.all():
        old_dealer, old_deal_no = a.dealer.clone(), a.deal_no.clone()
        actions = (torch.rand(16, 36, generator=pick) + 2 * a.legal_mask()).argmax(1)
        ra, ta = a.step(actions)
        rb, tb = b.step(actions)
        assert torch.equal(ra, rb) and torch.equal(ta, tb)
        assert torch.equal(a.cards, b.cards)
        assert torch.equal(ra.sum(1), torch.zeros(16))  # zero-sum
        next_deal = (a.deal_no == 1) & (old_deal_no == 0)
        assert torch.equal(a.dealer[next_deal], (old_dealer[next_deal] + 1) % 4)
        assert (a.deal_no[ta] == 0).all() and (a.scores[ta] == 0).all()
        fresh = ta | next_deal
        assert (a.played[fresh] == 0).all()
        assert torch.equal(a.to_play[fresh], (a.dealer[fresh] + 1) % 4)
        ended |= ta


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "8"])
def test_bad_batch_size(bad: object) -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        FuenfzehnernBatch(bad)  # type: ignore[arg-type]


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="players must be one of"):
        FuenfzehnernBatch(4, players=5)
    with pytest.raises(ValueError, match="removed_suit is only for players=3"):
        FuenfzehnernBatch(4, removed_suit="S")
    with pytest.raises(ValueError, match="tying_scoring needs players=4"):
        FuenfzehnernBatch(4, players=3, tying_scoring=True)
    with pytest.raises(ValueError, match="unbeatable_duty_on_first_suit applies"):
        FuenfzehnernBatch(4, lead_rules="relaxed", unbeatable_duty_on_first_suit=True)
    with pytest.raises(ValueError, match="num_hands=2 needs episode='match'"):
        FuenfzehnernBatch(4, num_hands=2)
    with pytest.raises(ValueError, match="device 'abacus'"):
        FuenfzehnernBatch(4, device="abacus")


def test_illegal_action_names_game_and_legal_moves() -> None:
    batch = FuenfzehnernBatch(4, seed=0)
    mask = batch.legal_mask()
    actions = mask.float().argmax(1)
    # after a capture the lead is bound; here the first lead is free, so take a card
    # that game 2's leader does not hold
    illegal = int((~mask[2, :32]).nonzero()[0])
    actions[2] = illegal
    before = batch.hands.clone()
    legal = " ".join(
        Fuenfzehnern().action_name(int(x)) for x in mask[2].nonzero().flatten()
    )
    with pytest.raises(IllegalActionError) as err:
        batch.step(actions)
    message = str(err.value)
    assert message.startswith(f"game 2: action {illegal} ")
    assert message.endswith(f"legal: {legal}")
    assert torch.equal(batch.hands, before)  # nothing was played
    actions[2] = 36
    with pytest.raises(IllegalActionError, match="game 2: action 36 .out of range"):
        batch.step(actions)


@pytest.mark.parametrize("actions", [[0, 1, 2], [[0, 1, 2, 3]], [0.0, 1.0, 2.0, 3.0]])
def test_bad_action_shapes(actions: list) -> None:
    with pytest.raises(ValueError, match="actions must be 4 integers"):
        FuenfzehnernBatch(4, seed=0).step(actions)


def test_bad_deals() -> None:
    batch = FuenfzehnernBatch(2, seed=0)
    deals = random_deals(np.random.default_rng(0), 2)
    before = batch.cards.clone(), batch.generator.get_state()
    with pytest.raises(ValueError, match="must give 2 deals, got 1"):
        batch.reset(seed=3, deals=deals[:1])
    assert torch.equal(batch.cards, before[0])  # refused before anything changed
    assert torch.equal(batch.generator.get_state(), before[1])
    broken = [deals[0], {**deals[1], "hands": deals[1]["hands"][:3]}]
    with pytest.raises(ValueError, match=r"deals\[1\]: "):
        batch.reset(deals=broken)
    with pytest.raises(ValueError, match=r"shape \(2, 33\)"):
        batch.reset(deals=np.zeros((2, 32), dtype=np.int64))
    rows = np.tile(np.arange(-1, 32), (2, 1))
    rows[:, 0] = 0
    rows[1, 5] = 7  # card 7 twice, card 4 missing
    with pytest.raises(ValueError, match=r"deals\[1\]: the 32 cards"):
        batch.reset(deals=rows)
    rows[1, 5], rows[1, 0] = 4, 4
    with pytest.raises(ValueError, match=r"deals\[1\]: dealer must be a seat 0..3"):
        batch.reset(deals=rows)
    three = FuenfzehnernBatch(2, players=3, removed_suit="S", seed=0)
    rows = np.tile(np.arange(-1, 24), (2, 1))  # cards 0..23 hold the removed spades
    rows[:, 0] = 0
    with pytest.raises(ValueError, match=r"deals\[0\]: the 24 cards"):
        three.reset(deals=rows)


def test_state_size() -> None:
    """B = 65,536 games fit in 4 GB (the issue's memory target), with room."""
    per_game = FuenfzehnernBatch(8, seed=0).state_bytes()
    assert per_game * 65_536 < 4 * 2**30


@pytest.mark.parametrize("opts", VARIANTS[:2], ids=IDS[:2])
def test_torch_unpacking_path_matches_numpy_path(opts: dict) -> None:
    """Off CPU the bits are unpacked by torch, on CPU by numpy: the same arrays (the
    torch path is forced here, so a machine without a GPU checks it too)."""
    a, b = (FuenfzehnernBatch(64, seed=8, **opts) for _ in range(2))
    b._cpu = False
    pick = torch.Generator().manual_seed(1)
    for _ in range(60):
        assert torch.equal(a.legal_mask(), b.legal_mask())
        for seat in (None, 0, 1, 2):
            assert torch.equal(a.observe(seat), b.observe(seat))
        actions = (torch.rand(64, 36, generator=pick) + 2 * a.legal_mask()).argmax(1)
        a.step(actions)
        b.step(actions)


def test_engine_registry() -> None:
    assert ENGINES[ENV] is FuenfzehnernBatch
