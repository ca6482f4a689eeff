"""The batched German Whist engine plays exactly the scalar engine's game.

`compare` forces the same random deals into `GermanWhistBatch` and into one scalar env
(``envs.make("german_whist_v0", ...)``) per game, plays the same random legal cards in
both and compares, at every card play, the player to act, the legal mask, both seats'
observations, the rewards and the terminal flags. When a batched game ends it is dealt
again automatically; the scalar env is then reset to that new deal
(`GermanWhistBatch.deal`), so the automatic reset is compared too. A Honeymoon match
deals again inside the episode, which the env cannot be told in advance, so
`compare_match` drives the scalar engine (`GermanWhist`, the env's rules) and applies
the batched engine's next deal as the chance outcomes. The scalar engine is the
reference: its own tests check it against the seed rule by rule.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from parlour import envs
from parlour.envs import IllegalActionError, batch
from parlour.envs.batch import GermanWhistBatch
from parlour.envs.core.cards import FRENCH_52, FRENCH_54, cards_in
from parlour.envs.core.engine import CHANCE, TERMINAL
from parlour.envs.german_whist.rules import GermanWhist
from parlour.envs.german_whist.state import Phase

AGENTS = ("player_0", "player_1")


def random_deals(rng: np.random.Generator, n: int, honeymoon: bool = False) -> list:
    """``n`` random deals in the scalar env's forced-deal format."""
    deck = FRENCH_54 if honeymoon else FRENCH_52
    out = []
    for _ in range(n):
        names = [deck.format(int(c)) for c in rng.permutation(deck.size)]
        out.append(
            {
                "dealer": int(rng.integers(2)),
                "hands": [names[:13], names[13:26]],
                "stock": names[26:],
            }
        )
    return out


def compare(games: int, batch_size: int, seed: int, **options: str) -> int:
    """Play at least ``games`` games in both engines, comparing every step; returns
    the number of card plays compared."""
    rng = np.random.default_rng(seed)
    batch = GermanWhistBatch(batch_size, seed=seed, **options)
    deals = random_deals(rng, batch_size, batch.honeymoon)
    batch.reset(deals=deals)
    scalar = [envs.make("german_whist_v0", **options) for _ in range(batch_size)]
    for env, deal in zip(scalar, deals, strict=True):
        env.reset(options={"deal": deal})
    finished = plays = 0
    while finished < games:
        to_play = batch.to_play.numpy().copy()
        mask = batch.legal_mask().numpy()
        obs = [batch.observe(seat).numpy() for seat in (0, 1)]
        actions = np.empty(batch_size, dtype=np.int64)
        for i, env in enumerate(scalar):
            seat = int(to_play[i])
            assert env.agent_selection == AGENTS[seat], f"game {i}: player to act"
            legal = np.flatnonzero(mask[i])
            assert np.array_equal(
                env.unwrapped.observe(AGENTS[seat])["action_mask"],
                mask[i].astype(np.int8),
            ), f"game {i}: legal mask"
            for s in (0, 1):
                expected = env.unwrapped.observe(AGENTS[s])["observation"]
                diff = np.flatnonzero(expected != obs[s][i])
                assert diff.size == 0, (
                    f"game {i}, seat {s}: observation differs at {diff.tolist()}: "
                    f"{expected[diff].tolist()} != {obs[s][i][diff].tolist()}"
                )
            actions[i] = legal[rng.integers(len(legal))]
        rewards, terminated = batch.step(torch.from_numpy(actions))
        rewards, terminated = rewards.numpy(), terminated.numpy()
        for i, env in enumerate(scalar):
            env.step(int(actions[i]))
            expected = [env.rewards[a] for a in AGENTS]
            assert rewards[i].tolist() == expected, f"game {i}: rewards"
            done = all(env.terminations[a] for a in AGENTS)
            assert bool(terminated[i]) == done, f"game {i}: terminal flag"
            if done:
                finished += 1
                # the batch has dealt game i again: replay that deal in the scalar env
                env.reset(options={"deal": batch.deal(i)})
        plays += batch_size
    return plays


def compare_match(games: int, batch_size: int, seed: int) -> int:
    """`compare` for Honeymoon matches, on the scalar engine (see the module
    docstring); returns the number of card plays compared."""
    rng = np.random.default_rng(seed)
    batch = GermanWhistBatch(batch_size, variant="honeymoon", seed=seed)
    game = GermanWhist(variant="honeymoon", episode="match")

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
        obs = [batch.observe(seat).numpy() for seat in (0, 1)]
        actions = np.empty(batch_size, dtype=np.int64)
        before = []
        for i, state in enumerate(states):
            assert game.current_player(state) == int(batch.to_play[i]), f"game {i}"
            legal = np.flatnonzero(mask[i])
            assert cards_in(game.legal_bits(state)) == legal.tolist(), f"game {i}"
            for s in (0, 1):
                expected = game.observe(state, s)
                diff = np.flatnonzero(expected != obs[s][i])
                assert diff.size == 0, f"game {i}, seat {s}: {diff.tolist()}"
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
            elif game.current_player(state) == CHANCE:  # the match's next deal
                assert state.phase == Phase.DEAL
                deal_into(state, i, first=False)
        plays += batch_size
    return plays


@pytest.mark.parametrize(
    "opts",
    [{"variant": "german"}, {"variant": "honeymoon", "episode": "deal"}],
    ids=["german", "honeymoon-deal"],
)
def test_same_game_as_scalar_engine(opts: dict) -> None:
    assert compare(games=200, batch_size=64, seed=1, **opts) > 0


def test_same_honeymoon_match_as_scalar_engine() -> None:
    assert compare_match(games=40, batch_size=32, seed=1) > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "opts",
    [{"variant": "german"}, {"variant": "honeymoon", "episode": "deal"}],
    ids=["german", "honeymoon-deal"],
)
def test_same_game_as_scalar_engine_10000_games(opts: dict) -> None:
    assert compare(games=10_000, batch_size=256, seed=2, **opts) > 0


@pytest.mark.slow
def test_same_honeymoon_match_as_scalar_engine_10000_games() -> None:
    assert compare_match(games=10_000, batch_size=512, seed=2) > 0


def test_deals_as_arrays_match_deal_dicts() -> None:
    """The (B, 53) chance-outcome form and the dict form give the same games."""
    deals = random_deals(np.random.default_rng(3), 8)
    rules = envs.make("german_whist_v0").unwrapped.game
    rows = np.array([rules.forced_chance({"deal": d}) for d in deals])
    a, b = GermanWhistBatch(8, seed=0), GermanWhistBatch(8, seed=99)
    a.reset(deals=deals)
    b.reset(deals=rows)
    for name in ("cards", "hands", "dealer", "to_play", "trump"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert [a.deal(i) for i in range(8)] == [b.deal(i) for i in range(8)]
    assert torch.equal(a.observe(), b.observe())


def test_deal_dicts_without_dealer_draw_one() -> None:
    deals = random_deals(np.random.default_rng(4), 64)
    for d in deals:
        del d["dealer"]
    batch = GermanWhistBatch(64, seed=0)
    batch.reset(deals=deals)
    assert set(batch.dealer.tolist()) == {0, 1}


def test_seeding() -> None:
    a, b, c = (GermanWhistBatch(16, seed=s) for s in (5, 5, 6))
    assert torch.equal(a.cards, b.cards) and torch.equal(a.dealer, b.dealer)
    assert not torch.equal(a.cards, c.cards)
    first = a.cards.clone()
    a.reset()  # the generator runs on: new deals
    assert not torch.equal(a.cards, first)
    a.reset(seed=5)
    assert torch.equal(a.cards, first)
    for i in range(16):
        assert sorted(a.cards[i].tolist()) == list(range(52))


def test_automatic_reset() -> None:
    """A game dealt again after its last trick starts like a fresh deal; the others
    go on; two engines with one seed deal the same new games."""
    a, b = GermanWhistBatch(32, seed=7), GermanWhistBatch(32, seed=7)
    pick = torch.Generator().manual_seed(0)
    ended = torch.zeros(32, dtype=torch.bool)
    while not ended.all():
        old = a.cards.clone()
        actions = (torch.rand(32, 52, generator=pick) + 2 * a.legal_mask()).argmax(1)
        ra, ta = a.step(actions)
        rb, tb = b.step(actions)
        assert torch.equal(ra, rb) and torch.equal(ta, tb)
        assert torch.equal(a.cards, b.cards)
        assert torch.equal(ra.sum(1), torch.zeros(32))  # zero-sum
        assert torch.equal(ra.abs().sum(1) > 0, ta)
        if ta.any():
            i = ta.nonzero()[0].item()
            assert not torch.equal(a.cards[i], old[i])
            assert a.played[i] == 0 and a.stock_pos[i] == 0
            assert a.to_play[i] == 1 - a.dealer[i]
            assert [bin(int(h)).count("1") for h in a.hands[i]] == [13, 13]
        assert torch.equal(a.cards[~ta], old[~ta])
        ended |= ta


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "8"])
def test_bad_batch_size(bad: object) -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        GermanWhistBatch(bad)  # type: ignore[arg-type]


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="variant must be one of"):
        GermanWhistBatch(4, variant="skat")
    with pytest.raises(ValueError, match="episode must be one of"):
        GermanWhistBatch(4, variant="honeymoon", episode="rubber")
    with pytest.raises(ValueError, match="episode='match' needs variant='honeymoon'"):
        GermanWhistBatch(4, episode="match")
    with pytest.raises(ValueError, match="match_target"):
        GermanWhistBatch(4, variant="honeymoon", match_target=0)
    with pytest.raises(ValueError, match="device 'abacus'"):
        GermanWhistBatch(4, device="abacus")


def test_illegal_action_names_game_and_legal_cards() -> None:
    batch = GermanWhistBatch(4, seed=0)
    mask = batch.legal_mask()
    actions = mask.float().argmax(1)
    illegal = int((~mask[2]).nonzero()[0])
    actions[2] = illegal
    before = batch.hands.clone()
    legal = " ".join(FRENCH_52.format(int(c)) for c in mask[2].nonzero().flatten())
    with pytest.raises(IllegalActionError) as err:
        batch.step(actions)
    message = str(err.value)
    assert message.startswith(f"game 2: action {illegal} ")
    assert message.endswith(f"legal: {legal}")
    assert torch.equal(batch.hands, before)  # nothing was played
    actions[2] = 52
    with pytest.raises(IllegalActionError, match="game 2: action 52 .out of range"):
        batch.step(actions)


@pytest.mark.parametrize("actions", [[0, 1, 2], [[0, 1, 2, 3]], [0.0, 1.0, 2.0, 3.0]])
def test_bad_action_shapes(actions: list) -> None:
    with pytest.raises(ValueError, match="actions must be 4 integers"):
        GermanWhistBatch(4, seed=0).step(actions)


def test_bad_deals() -> None:
    batch = GermanWhistBatch(2, seed=0)
    deals = random_deals(np.random.default_rng(0), 2)
    before = batch.cards.clone(), batch.generator.get_state()
    with pytest.raises(ValueError, match="must give 2 deals, got 1"):
        batch.reset(seed=3, deals=deals[:1])
    assert torch.equal(batch.cards, before[0])  # refused before anything changed
    assert torch.equal(batch.generator.get_state(), before[1])
    broken = [deals[0], {**deals[1], "stock": deals[1]["stock"][:-1]}]
    with pytest.raises(ValueError, match=r"deals\[1\]: .*stock"):
        batch.reset(deals=broken)
    with pytest.raises(ValueError, match=r"shape \(2, 53\)"):
        batch.reset(deals=np.zeros((2, 52), dtype=np.int64))
    rows = np.tile(np.arange(-1, 52), (2, 1))
    rows[:, 0] = 0
    rows[1, 5] = 7  # card 7 twice, card 4 missing
    with pytest.raises(ValueError, match=r"deals\[1\]: the 52 cards"):
        batch.reset(deals=rows)
    rows[1, 5], rows[1, 0] = 4, 2
    with pytest.raises(ValueError, match=r"deals\[1\]: dealer must be a seat 0..1"):
        batch.reset(deals=rows)


def test_state_size() -> None:
    """B = 65,536 games fit in 4 GB (the issue's memory target), with room."""
    per_game = GermanWhistBatch(8, seed=0).state_bytes()
    assert per_game * 65_536 < 4 * 2**30


@pytest.mark.parametrize("variant", ["german", "honeymoon"])
def test_torch_unpacking_path_matches_numpy_path(variant: str) -> None:
    """Off CPU the bits are unpacked by torch, on CPU by numpy: the same arrays (the
    torch path is forced here, so a machine without a GPU checks it too)."""
    a, b = (GermanWhistBatch(64, variant=variant, seed=8) for _ in range(2))
    b._cpu = False
    n = a.num_actions
    pick = torch.Generator().manual_seed(1)
    for _ in range(80):
        assert torch.equal(a.legal_mask(), b.legal_mask())
        for seat in (None, 0, 1):
            assert torch.equal(a.observe(seat), b.observe(seat))
        actions = (torch.rand(64, n, generator=pick) + 2 * a.legal_mask()).argmax(1)
        a.step(actions)
        b.step(actions)


def test_engine_registry() -> None:
    assert set(batch.ENGINES) <= set(envs.names())
    games = batch.make("german_whist_v0", 3, variant="honeymoon", seed=1)
    assert isinstance(games, GermanWhistBatch) and games.num_actions == 54
    with pytest.raises(ValueError, match="has no batched engine"):
        batch.make("no_such_env_v0", 3)


def test_batch_speed_benchmark_writes_rows_for_every_covered_variant(tmp_path) -> None:
    """benchmarks/batch_speed.py runs every engine of the registry (tiny budget: the
    figures are not checked, only that the table and the JSON rows are there)."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "batch_speed.py"
    out = tmp_path / "sub" / "rows.json"
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            "--seconds",
            "0.05",
            "--repeats",
            "1",
            "--sizes",
            "8",
            "--variants",
            "first",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())["rows"]
    assert {r["env"] for r in rows} == set(batch.ENGINES)
    assert {r["kind"] for r in rows} == {"scalar", "batch"}
    assert all(r["card_plays_per_s"] > 0 for r in rows)
    bad = subprocess.run(
        [sys.executable, str(script), "--json", str(Path(__file__)) + "/x.json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "is a file, not a directory" in bad.stderr
