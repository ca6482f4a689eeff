"""The batched Forty-Fives engine plays exactly the scalar engine's game.

`compare` forces the same random deals into `FortyFivesBatch` and into the scalar
engine (`FortyFives`, the rules the ``forty_fives_v0`` env wraps), plays the same random
legal actions in both (cards and ``rob:X``) and compares, at every step, the player to
act, the legal mask (the env's mask is ``legal_bits`` unpacked), every seat's
observation (every float), the rewards (the env pays the change in the engine's
returns) and the terminal flags. A match deals again inside the episode and a finished
episode is dealt again by the batched engine; the scalar engine is then given the
batched engine's new deal as its chance outcomes, so the automatic re-deals are compared
too. The scalar engine is the reference: its own tests check it against the seed rule by
rule.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from parlour import envs
from parlour.envs import IllegalActionError
from parlour.envs.batch import FortyFivesBatch
from parlour.envs.core.cards import FRENCH_52
from parlour.envs.core.engine import CHANCE, TERMINAL
from parlour.envs.forty_fives.rules import FortyFives
from parlour.envs.forty_fives.state import Phase

VARIANTS = envs.VARIANTS["forty_fives_v0"]
#: options no registered variant sets: Hoyle's 30-for-60 and "counts out first", 5
#: players (five sides: the flags pass bit 63), the 2+3 packets with a kitty, a
#: two-player Forty-Fives match, Twenty-Five one deal at a time
OTHERS = [
    {"players": 4, "variant": "auction", "episode": "deal", "thirty_for_sixty": True},
    {"players": 3, "variant": "one_ten", "bidder_out_first": True, "max_deals": 4},
    {"players": 5, "episode": "deal"},
    {"players": 5, "variant": "auction", "episode": "deal", "packets": "2+3"},
    {"players": 2, "max_deals": 3},
    {"players": 4, "variant": "twenty_five", "episode": "deal", "target": 15},
]


def ident(opts: dict) -> str:
    return "-".join(f"{v}" for v in opts.values())


def random_deals(
    rng: np.random.Generator, k: int, players: int, auction: bool = False
) -> list:
    """``k`` random deals in the scalar env's forced-deal format."""
    out = []
    kitty = 3 if auction else 0
    for _ in range(k):
        names = [FRENCH_52.format(int(c)) for c in rng.permutation(52)]
        deal = {
            "dealer": int(rng.integers(players)),
            "hands": [names[5 * s : 5 * s + 5] for s in range(players)],
            "stock": names[5 * players + kitty :],
        }
        if auction:
            deal["kitty"] = names[5 * players : 5 * players + kitty]
        out.append(deal)
    return out


def unpack(bits: int) -> np.ndarray:
    raw = np.frombuffer(bits.to_bytes(21, "little"), dtype=np.uint8)
    return np.unpackbits(raw, count=168, bitorder="little").astype(bool)


def compare(games: int, batch_size: int, seed: int, **options) -> int:
    """Play at least ``games`` episodes in both engines, comparing every step; returns
    the number of steps compared."""
    rng = np.random.default_rng(seed)
    batch = FortyFivesBatch(batch_size, seed=seed, **options)
    game = FortyFives(**options)
    n = game.num_players
    deals = random_deals(rng, batch_size, n, game.auction)
    batch.reset(deals=deals)
    assert [batch.deal(i) for i in range(batch_size)] == deals

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
    finished = steps = 0
    while finished < games:
        mask = batch.legal_mask().numpy()
        obs = [batch.observe(seat).numpy() for seat in range(n)]
        assert np.array_equal(
            batch.observe().numpy(),
            np.stack([obs[int(s)][i] for i, s in enumerate(batch.to_play)]),
        )
        actions = np.empty(batch_size, dtype=np.int64)
        before = []
        for i, state in enumerate(states):
            assert game.current_player(state) == int(batch.to_play[i]), f"game {i}"
            expected_mask = unpack(game.legal_bits(state))
            assert np.array_equal(expected_mask, mask[i]), (
                f"game {i}: legal mask {np.flatnonzero(expected_mask).tolist()} != "
                f"{np.flatnonzero(mask[i]).tolist()}"
            )
            for s in range(n):
                expected = game.observe(state, s)
                diff = np.flatnonzero(expected != obs[s][i])
                assert diff.size == 0, (
                    f"game {i}, seat {s}: observation differs at {diff.tolist()}: "
                    f"{expected[diff].tolist()} != {obs[s][i][diff].tolist()}"
                )
            legal = np.flatnonzero(mask[i])
            actions[i] = legal[rng.integers(len(legal))]
            before.append(game.returns(state))
        rewards, terminated = batch.step(torch.from_numpy(actions))
        rewards, terminated = rewards.numpy(), terminated.numpy()
        for i, state in enumerate(states):
            game.apply(state, int(actions[i]))
            after = game.returns(state)
            expected = np.float32(
                [a - b for a, b in zip(after, before[i], strict=True)]
            )
            assert np.array_equal(rewards[i], expected), f"game {i}: rewards"
            over = game.current_player(state) == TERMINAL
            assert bool(terminated[i]) == over, f"game {i}: terminal flag"
            if over:
                finished += 1
                states[i] = game.new_state()
                deal_into(states[i], i, first=True)
            elif game.current_player(state) == CHANCE:  # the match's next deal
                assert state.phase == Phase.DEAL
                deal_into(state, i, first=False)
        steps += batch_size
    return steps


@pytest.mark.parametrize("opts", VARIANTS, ids=ident)
def test_same_game_as_scalar_engine(opts: dict) -> None:
    assert compare(games=200, batch_size=64, seed=1, **opts) > 0


@pytest.mark.slow
@pytest.mark.parametrize("opts", VARIANTS, ids=ident)
def test_same_game_as_scalar_engine_10000_games(opts: dict) -> None:
    assert compare(games=10_000, batch_size=512, seed=2, **opts) > 0


@pytest.mark.parametrize("opts", OTHERS, ids=ident)
def test_same_game_as_scalar_engine_other_options(opts: dict) -> None:
    assert compare(games=30, batch_size=24, seed=3, **opts) > 0


def test_deals_as_arrays_match_deal_dicts() -> None:
    """The (B, 53) chance-outcome form and the dict form give the same games."""
    deals = random_deals(np.random.default_rng(3), 8, 4)
    rules = FortyFives()
    rows = np.array([rules.forced_chance({"deal": d}) for d in deals])
    a, b = FortyFivesBatch(8, seed=0), FortyFivesBatch(8, seed=99)
    a.reset(deals=deals)
    b.reset(deals=rows)
    for name in ("cards", "hands", "dealer", "to_play", "trump", "rob_seat"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert [a.deal(i) for i in range(8)] == deals
    assert [b.deal(i) for i in range(8)] == deals
    assert torch.equal(a.observe(), b.observe())


def test_deal_dicts_need_their_dealer() -> None:
    """As in the scalar env: the packet order depends on the dealer."""
    deals = random_deals(np.random.default_rng(4), 2, 4)
    del deals[1]["dealer"]
    with pytest.raises(ValueError, match=r"deals\[1\]: a forced deal needs its dealer"):
        FortyFivesBatch(2, seed=0).reset(deals=deals)


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


def test_seeding() -> None:
    a, b, c = (FortyFivesBatch(16, seed=s) for s in (5, 5, 6))
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
    """A match goes on to the next deal (dealer to the left, scores kept) and a
    finished match starts afresh; two engines with one seed deal the same games."""
    a, b = FortyFivesBatch(32, seed=7), FortyFivesBatch(32, seed=7)
    pick = torch.Generator().manual_seed(0)
    ended = torch.zeros(32, dtype=torch.bool)
    next_deal = False
    while not ended.all():
        old_cards, old_dealer = a.cards.clone(), a.dealer.clone()
        old_deals = a.deal_no.clone()
        mask = a.legal_mask()
        actions = (torch.rand(32, 168, generator=pick) + 2 * mask).argmax(1)
        ra, ta = a.step(actions)
        rb, tb = b.step(actions)
        assert torch.equal(ra, rb) and torch.equal(ta, tb)
        assert torch.equal(a.cards, b.cards)
        assert torch.equal(ra.sum(1), torch.zeros(32))  # zero-sum
        assert torch.equal(ra.abs().sum(1) > 0, ta)  # no draws this early
        redealt = a.deal_no != old_deals
        for i in (redealt & ~ta).nonzero().flatten().tolist():
            next_deal = True
            assert int(a.dealer[i]) == (int(old_dealer[i]) + 1) % 4
            assert int(a.deal_no[i]) == int(old_deals[i]) + 1
            assert int(a.scores[i].max()) > 0
        for i in ta.nonzero().flatten().tolist():
            assert not torch.equal(a.cards[i], old_cards[i])
            assert int(a.deal_no[i]) == 0 and int(a.scores[i].abs().sum()) == 0
            assert int(a.to_play[i]) == (int(a.dealer[i]) + 1) % 4
            assert [int(h).bit_count() for h in a.hands[i]] == [5, 5, 5, 5]
        ended |= ta
    assert next_deal


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "8"])
def test_bad_batch_size(bad: object) -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        FortyFivesBatch(bad)  # type: ignore[arg-type]


def test_bad_options() -> None:
    """The scalar env's one-line errors, and the engine's own for what it lacks."""
    with pytest.raises(ValueError, match="players must be an integer 2..6"):
        FortyFivesBatch(4, players=7)
    with pytest.raises(ValueError, match="variant"):
        FortyFivesBatch(4, variant="spoil_five")
    with pytest.raises(ValueError, match="bidder_leads applies to the auction"):
        FortyFivesBatch(4, bidder_leads=False)
    with pytest.raises(ValueError, match="target"):
        FortyFivesBatch(4, episode="deal", target=30)
    with pytest.raises(ValueError, match="thirty_for_sixty must be True or False"):
        FortyFivesBatch(4, variant="auction", thirty_for_sixty=1)
    with pytest.raises(ValueError, match="device 'abacus'"):
        FortyFivesBatch(4, device="abacus")


def test_illegal_action_names_game_and_legal_moves() -> None:
    batch = FortyFivesBatch(4, seed=0)
    mask = batch.legal_mask()
    actions = mask.float().argmax(1)
    illegal = int((~mask[2, :52]).nonzero()[0])
    actions[2] = illegal
    before = batch.hands.clone()
    rules = FortyFives()
    legal = " ".join(rules.action_name(int(a)) for a in mask[2].nonzero().flatten())
    with pytest.raises(IllegalActionError) as err:
        batch.step(actions)
    message = str(err.value)
    assert message.startswith(f"game 2: action {illegal} ")
    assert message.endswith(f"legal: {legal}")
    assert torch.equal(batch.hands, before)  # nothing was played
    actions[2] = 168
    with pytest.raises(IllegalActionError, match="game 2: action 168 .out of range"):
        batch.step(actions)
    actions[2] = 104  # norob: never legal
    with pytest.raises(IllegalActionError, match=r"game 2: action 104 \(norob\)"):
        batch.step(actions)


@pytest.mark.parametrize("actions", [[0, 1, 2], [[0, 1, 2, 3]], [0.0, 1.0, 2.0, 3.0]])
def test_bad_action_shapes(actions: list) -> None:
    with pytest.raises(ValueError, match="actions must be 4 integers"):
        FortyFivesBatch(4, seed=0).step(actions)


def test_bad_deals() -> None:
    batch = FortyFivesBatch(2, seed=0)
    deals = random_deals(np.random.default_rng(0), 2, 4)
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
    rows[1, 5], rows[1, 0] = 4, 4
    with pytest.raises(ValueError, match=r"deals\[1\]: dealer must be a seat 0..3"):
        batch.reset(deals=rows)


def test_state_size() -> None:
    """B = 65,536 games fit in 4 GB (the issue's memory target), with room."""
    per_game = FortyFivesBatch(8, seed=0).state_bytes()
    assert per_game * 65_536 < 4 * 2**30


@pytest.mark.parametrize("opts", VARIANTS, ids=ident)
def test_torch_unpacking_path_matches_numpy_path(opts: dict) -> None:
    """Off CPU the bits are unpacked by torch, on CPU by numpy: the same arrays (the
    torch path is forced here, so a machine without a GPU checks it too)."""
    a, b = (FortyFivesBatch(32, seed=8, **opts) for _ in range(2))
    b._cpu = False
    pick = torch.Generator().manual_seed(1)
    for _ in range(40):
        assert torch.equal(a.legal_mask(), b.legal_mask())
        for seat in (None, 0, 1):
            assert torch.equal(a.observe(seat), b.observe(seat))
        actions = (torch.rand(32, 168, generator=pick) + 2 * a.legal_mask()).argmax(1)
        a.step(actions)
        b.step(actions)


def test_engine_registry() -> None:
    from parlour.envs import batch

    games = batch.make("forty_fives_v0", 3, players=2, variant="twenty_five", seed=1)
    assert isinstance(games, FortyFivesBatch) and games.num_players == 2
