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
from parlour.envs import IllegalActionError
from parlour.envs.batch import HerzelnBatch
from parlour.envs.core.cards import GERMAN_32, SHORT_24
from parlour.envs.herzeln.rules import CONTRACTS, Herzeln

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
    games = 4 if partie else 24
    assert compare(games, batch_size=games, seed=3, **options) > 0


@pytest.mark.slow
@pytest.mark.parametrize("options", VARIANTS, ids=_id)
def test_same_game_as_scalar_engine_10000_games(options: dict) -> None:
    assert compare(10_000, batch_size=256, seed=2, **options) > 0


def test_deals_as_arrays_match_deal_dicts() -> None:
    """The chance-outcome array form and the dict form give the same games."""
    deals = random_deals(np.random.default_rng(3), 8, 4, deals=3)
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
    deals = random_deals(np.random.default_rng(4), 16, 3, deals=2)
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


def test_deal_dicts_without_dealer_draw_one() -> None:
    deals = random_deals(np.random.default_rng(5), 64, 4)
    for d in deals:
        del d[0]["dealer"]
    batch = HerzelnBatch(64, seed=0)
    batch.reset(deals=deals)
    assert set(batch.dealer.tolist()) == {0, 1, 2, 3}
    assert torch.equal(batch.to_play, (batch.dealer + 1) % 4)


def test_seeding() -> None:
    a, b, c = (HerzelnBatch(16, seed=s) for s in (5, 5, 6))
    assert torch.equal(a.deal_hands, b.deal_hands)
    assert torch.equal(a.dealer, b.dealer)
    assert not torch.equal(a.deal_hands, c.deal_hands)
    first = a.deal_hands.clone()
    a.reset()  # the generator runs on: new deals
    assert not torch.equal(a.deal_hands, first)
    a.reset(seed=5)
    assert torch.equal(a.deal_hands, first)


@pytest.mark.parametrize(
    "options",
    [{"players": 4}, {"players": 3, "contract": "domino"}],
    ids=["partie", "domino"],
)
def test_automatic_reset(options: dict) -> None:
    """A finished episode starts afresh (scores zero, first deal, a new deal drawn);
    the others go on; two engines with one seed deal the same new games."""
    a, b = HerzelnBatch(16, seed=7, **options), HerzelnBatch(16, seed=7, **options)
    P, A = a.num_players, a.num_actions
    pick = torch.Generator().manual_seed(0)
    ended = torch.zeros(16, dtype=torch.bool)
    while not ended.all():
        old = a.deal_hands.clone()
        actions = (torch.rand(16, A, generator=pick) + 2 * a.legal_mask()).argmax(1)
        ra, ta = a.step(actions)
        rb, tb = b.step(actions)
        assert torch.equal(ra, rb) and torch.equal(ta, tb)
        assert torch.equal(a.deal_hands, b.deal_hands)
        if ta.any():
            for i in ta.nonzero().flatten().tolist():
                assert not torch.equal(a.deal_hands[i], old[i])
                assert a.deal_no[i] == 0 and a.scores[i].abs().sum() == 0
                assert a.held[i].tolist() == [8] * P
                assert a.to_play[i] == (a.dealer[i] + 1) % P
        assert torch.equal(a.deal_hands[~ta], old[~ta])
        ended |= ta


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


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "8"])
def test_bad_batch_size(bad: object) -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        HerzelnBatch(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"players": 5}, r"players must be one of \[3, 4\], got 5"),
        ({"contract": "misere"}, "unknown contract 'misere'; valid contracts"),
        ({"episode": "deal"}, "episode='deal' needs contract=NAME"),
        ({"episode": "rubber"}, "episode"),
        ({"contract": "tricks", "domino_layout": "per_suit_rows"}, "has no effect"),
        ({"contract": "tricks", "early_end": True}, "has no effect"),
        ({"domino_layout": "spiral"}, "domino_layout"),
        ({"early_end": 1}, "early_end must be True or False"),
        ({"device": "abacus"}, "device 'abacus'"),
    ],
)
def test_bad_options(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HerzelnBatch(4, **options)


def test_illegal_action_names_game_and_legal_moves() -> None:
    batch = HerzelnBatch(4, seed=0)
    mask = batch.legal_mask()
    actions = mask.float().argmax(1)
    illegal = int((~mask[2]).nonzero()[0])
    actions[2] = illegal
    before = batch.hands.clone()
    g = Herzeln()
    legal = " ".join(g.action_name(int(c)) for c in mask[2].nonzero().flatten())
    with pytest.raises(IllegalActionError) as err:
        batch.step(actions)
    message = str(err.value)
    assert message.startswith(f"game 2: action {illegal} ({g.action_name(illegal)}) ")
    assert message.endswith(f"legal: {legal}")
    assert torch.equal(batch.hands, before)  # nothing was played
    actions[2] = 97
    with pytest.raises(IllegalActionError, match=r"game 2: action 97 \(out of range"):
        batch.step(actions)
    actions[2] = 96
    with pytest.raises(IllegalActionError, match=r"game 2: action 96 \(pass\)"):
        batch.step(actions)


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


@pytest.mark.parametrize(
    ("seat", "message"),
    [
        (4, r"seat must be 0..3, got 4"),
        ([0, 1], "seat must be an int or 4 ints"),
        (1.0, "seat must be an int or 4 ints"),
        (torch.tensor([0, 1, 2, -1]), "0..3"),
    ],
)
def test_bad_seat(seat: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HerzelnBatch(4, seed=0).observe(seat)  # type: ignore[arg-type]
    assert torch.equal(
        HerzelnBatch(4, seed=0).observe(torch.tensor([0, 1, 2, 3]))[2],
        HerzelnBatch(4, seed=0).observe(2)[2],
    )


@pytest.mark.parametrize("actions", [[0, 1, 2], [[0, 1, 2, 3]], [0.0, 1.0, 2.0, 3.0]])
def test_bad_action_shapes(actions: list) -> None:
    with pytest.raises(ValueError, match="actions must be 4 integers"):
        HerzelnBatch(4, seed=0).step(actions)


def test_bad_deals() -> None:
    batch = HerzelnBatch(2, seed=0)
    deals = random_deals(np.random.default_rng(0), 2, 4, deals=2)
    before = batch.deal_hands.clone(), batch.generator.get_state()
    with pytest.raises(ValueError, match="must give 2 deals, got 1"):
        batch.reset(seed=3, deals=deals[:1])
    assert torch.equal(batch.deal_hands, before[0])  # refused before anything changed
    assert torch.equal(batch.generator.get_state(), before[1])
    short = {**deals[1][0], "hands": [*deals[1][0]["hands"][:3], ["7S"]]}
    with pytest.raises(ValueError, match=r"deals\[1\]: .*must have 8 cards"):
        batch.reset(deals=[deals[0], [short]])
    rotated = [deals[1][0], {**deals[1][1], "dealer": deals[1][0]["dealer"]}]
    with pytest.raises(ValueError, match=r"deals\[1\]: "):
        batch.reset(deals=[deals[0], rotated])
    nine = [deals[0][0]] + [{"hands": deals[0][1]["hands"]}] * 8
    with pytest.raises(ValueError, match=r"deals\[0\]: .*gives 9 deals"):
        batch.reset(deals=[nine, deals[1]])
    with pytest.raises(ValueError, match=r"deals\[1\] must be a deal dict"):
        batch.reset(deals=[deals[0], "AS KS"])
    with pytest.raises(ValueError, match=r"shape \(2, 1 \+ k\*32\)"):
        batch.reset(deals=np.zeros((2, 32), dtype=np.int64))
    rows = np.tile(np.arange(-1, 32), (2, 1))
    rows[:, 0] = 0
    rows[1, 5] = 7  # card 7 twice, card 4 missing
    with pytest.raises(ValueError, match=r"deals\[1\]: deal 0's 32 cards"):
        batch.reset(deals=rows)
    rows[1, 5], rows[1, 0] = 4, 4
    with pytest.raises(ValueError, match=r"deals\[1\]: dealer must be a seat 0..3"):
        batch.reset(deals=rows)
    with pytest.raises(ValueError, match="give 9 deals per game; the episode has 8"):
        batch.reset(deals=np.zeros((2, 1 + 9 * 32), dtype=np.int64))
    assert torch.equal(batch.deal_hands, before[0])


def test_state_size() -> None:
    """B = 65,536 games fit in 4 GB (the issue's memory target), with room."""
    per_game = HerzelnBatch(8, seed=0).state_bytes()
    assert per_game * 65_536 < 4 * 2**30


@pytest.mark.parametrize(
    "options",
    [{"players": 4}, {"players": 4, "domino_layout": "per_suit_rows"}],
    ids=["partie", "per_suit_rows"],
)
def test_torch_unpacking_path_matches_numpy_path(options: dict) -> None:
    """Off CPU the bits are unpacked by torch, on CPU by numpy: the same arrays (the
    torch path is forced here, so a machine without a GPU checks it too)."""
    a, b = (HerzelnBatch(16, seed=8, **options) for _ in range(2))
    b._cpu = False
    pick = torch.Generator().manual_seed(1)
    domino = torch.zeros(16, dtype=torch.bool)
    for _ in range(320):
        assert torch.equal(a.legal_mask(), b.legal_mask())
        for seat in (None, 3):
            assert torch.equal(a.observe(seat), b.observe(seat))
        actions = (torch.rand(16, 97, generator=pick) + 2 * a.legal_mask()).argmax(1)
        a.step(actions)
        b.step(actions)
        domino |= a.contract == 7
    assert domino.all()  # every game reached the Domino deal


def test_engine_registry() -> None:
    from parlour.envs import batch

    games = batch.make("herzeln_v0", 3, players=3, contract="domino", seed=1)
    assert isinstance(games, HerzelnBatch) and games.num_actions == 73
    assert (
        games.observation_size
        == envs.make("herzeln_v0", players=3, contract="domino")
        .observation_space("player_0")["observation"]
        .shape[0]
    )
