"""The batched engines as test cases: what each one's forced deals look like, how its
games are replayed in the scalar engine and env, its bad options, and the two
comparison harnesses against the scalar engine that every engine runs through.

`compare_engine` drives the scalar rules engine (the one the env wraps) beside the
batched engine: the chance outcomes the batched engine used (its deals, or the dice it
rolled) are applied to the scalar engine at its chance nodes, so automatic re-deals,
a match's next deals and new episodes are compared too. `compare_env` drives one
scalar env per game, reset to each game's forced deal and, when a batched episode
ends, to the batched engine's new one (``Case.replay``). Both play the same random
legal actions in both engines and compare, at every step, the player to act, the
legal mask, every seat's observation (every float; ``observe()`` too, against the
player to act's), the rewards (in float32) and the terminal flags. The scalar engine
is the reference: its own tests check it against the seed rule by rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from parlour import envs
from parlour.envs.batch import (
    FortyFivesBatch,
    FuenfzehnernBatch,
    FuenfzehnTotBatch,
    GermanWhistBatch,
    HerzelnBatch,
)
from parlour.envs.core.cards import FRENCH_52, FRENCH_54, GERMAN_32, SHORT_24
from parlour.envs.core.engine import CHANCE, TERMINAL
from parlour.envs.forty_fives.rules import FortyFives
from parlour.envs.fuenfzehn_tot.rules import FuenfzehnTot
from parlour.envs.fuenfzehnern.rules import Fuenfzehnern
from parlour.envs.german_whist.rules import GermanWhist
from parlour.envs.herzeln.rules import CONTRACTS, Herzeln

Deals = list[Any]


def card_names(deck: Any, rng: np.random.Generator, pack: list[int]) -> list[str]:
    """The cards of ``pack`` in a random order, by name."""
    return [deck.format(int(c)) for c in rng.permutation(pack)]


def dealt_cards(batch: Any, i: int, node: int) -> list[int]:
    """A card game's chance outcomes: after an episode, the dealer and the new deal;
    at a match's next deal, that deal; else none."""
    if node == TERMINAL:
        return [int(batch.dealer[i]), *batch.cards[i].tolist()]
    return batch.cards[i].tolist() if node == CHANCE else []


def deal_option(entry: Any) -> dict[str, Any]:
    return {"deal": entry}


def replay_deal(batch: Any, i: int) -> dict[str, Any]:
    return {"deal": batch.deal(i)}


@dataclass
class Case:
    """One batched engine, as the shared tests need to know it."""

    env: str
    engine: type
    rules: type
    #: B random forced-deal entries for ``batch`` (its ``reset(deals=...)`` form)
    random_deals: Callable[[np.random.Generator, Any], Deals]
    #: ((options, message), ...): options the scalar env refuses, and its message
    bad_options: list[tuple[dict[str, Any], str]]
    #: malformed forced deals made from two good entries: ((deals, message), ...)
    malformed: Callable[[Deals], list[tuple[Any, str]]]
    #: the array form's shape as the message writes it, for B = 2
    array_shape: str
    #: True: a deal dict may leave the dealer out; False: it must name it; None: no
    #: dealer in the forced form
    dealer_optional: bool | None
    #: engine-specific checks of one random step in `test_automatic_reset`: given the
    #: engine, its tensors before the step and the terminal flags; returns how many
    #: games went on to a match's next deal
    on_step: Callable[[Any, dict[str, torch.Tensor], torch.Tensor], int]
    #: the scalar engine's reset options for one forced-deal entry
    options_of: Callable[[Any], dict[str, Any]] = field(default=deal_option)
    #: the env's reset options that replay game ``i`` of the batch from its start
    replay: Callable[[Any, int], dict[str, Any]] = field(default=replay_deal)
    #: the chance outcomes game ``i`` used in the last step (or reset), in the scalar
    #: engine's order, given where the scalar engine stands after the same action
    #: (``TERMINAL`` also at the start: the episode begins)
    chance: Callable[[Any, int, int], list[int]] = field(default=dealt_cards)
    #: what the deals (or dice) decide when an episode starts: seeded alike or not
    dealt: tuple[str, ...] = ("cards", "dealer")
    #: option sets of the automatic-reset test
    reset_options: list[dict[str, Any]] = field(default_factory=lambda: [{}])
    #: options `batch.make` and the env are built with in the registry test
    make_options: dict[str, Any] = field(default_factory=dict)
    #: whether rewards sum to zero, and are paid exactly at the end of an episode
    zero_sum: bool = True
    paid_at_end: bool = False
    #: whether `test_automatic_reset` must see a match's next deal
    next_deals: bool = False
    #: ((action, message), ...): actions never legal at the start, besides the
    #: out-of-range one
    never_legal: list[tuple[int, str]] = field(default_factory=list)
    #: option sets the torch unpacking path is checked on: (options, B, steps)
    unpacking: list[tuple[dict[str, Any], int, int]] = field(default_factory=list)
    #: whether `compare_env` starts the env from the forced entry itself (else from
    #: ``replay``: forced dice are followed by the batch's random ones)
    env_from_entry: bool = True
    #: what every game must reach in those steps, so the check covers it
    unpacking_reaches: Callable[[Any], torch.Tensor] | None = None
    #: option sets whose state size must fit 65,536 games in 4 GB
    sizes: list[dict[str, Any]] = field(default_factory=lambda: [{}])

    @property
    def id(self) -> str:
        return self.env.removesuffix("_v0")


def snapshot(batch: Any) -> dict[str, torch.Tensor]:
    """Copies of the engine's per-game state tensors."""
    return {name: getattr(batch, name).clone() for name in batch.state_tensors}


# --- German Whist -------------------------------------------------------------------
def gw_deals(rng: np.random.Generator, batch: Any) -> Deals:
    deck = FRENCH_54 if batch.honeymoon else FRENCH_52
    out = []
    for _ in range(batch.batch_size):
        names = card_names(deck, rng, list(range(deck.size)))
        out.append(
            {
                "dealer": int(rng.integers(2)),
                "hands": [names[:13], names[13:26]],
                "stock": names[26:],
            }
        )
    return out


def gw_on_step(a: Any, old: dict, ended: torch.Tensor) -> int:
    """A deal that ended is a new one: nothing played, the non-dealer to lead."""
    for i in ended.nonzero().flatten().tolist():
        assert not torch.equal(a.cards[i], old["cards"][i])
        assert a.played[i] == 0 and a.stock_pos[i] == 0
        assert a.to_play[i] == 1 - a.dealer[i]
        assert [bin(int(h)).count("1") for h in a.hands[i]] == [13, 13]
    assert torch.equal(a.cards[~ended], old["cards"][~ended])
    return 0


GERMAN_WHIST = Case(
    env="german_whist_v0",
    engine=GermanWhistBatch,
    rules=GermanWhist,
    random_deals=gw_deals,
    bad_options=[
        ({"variant": "skat"}, "variant must be one of"),
        ({"variant": "honeymoon", "episode": "rubber"}, "episode must be one of"),
        ({"episode": "match"}, "episode='match' needs variant='honeymoon'"),
        ({"variant": "honeymoon", "match_target": 0}, "match_target"),
    ],
    malformed=lambda d: [
        ([d[0], {**d[1], "stock": d[1]["stock"][:-1]}], r"deals\[1\]: .*stock"),
    ],
    array_shape="(2, 53)",
    dealer_optional=True,
    on_step=gw_on_step,
    paid_at_end=True,
    make_options={"variant": "honeymoon"},
    unpacking=[({"variant": "german"}, 64, 80), ({"variant": "honeymoon"}, 64, 80)],
    sizes=[{}, {"variant": "honeymoon"}],
)


# --- Forty-Fives --------------------------------------------------------------------
def ff_deals(rng: np.random.Generator, batch: Any) -> Deals:
    players, auction = batch.num_players, batch.auction
    kitty = 3 if auction else 0
    out = []
    for _ in range(batch.batch_size):
        names = card_names(FRENCH_52, rng, list(range(52)))
        deal = {
            "dealer": int(rng.integers(players)),
            "hands": [names[5 * s : 5 * s + 5] for s in range(players)],
            "stock": names[5 * players + kitty :],
        }
        if auction:
            deal["kitty"] = names[5 * players : 5 * players + kitty]
        out.append(deal)
    return out


def ff_on_step(a: Any, old: dict, ended: torch.Tensor) -> int:
    """A match goes on to the next deal (dealer to the left, scores kept); a finished
    match starts afresh."""
    redealt = a.deal_no != old["deal_no"]
    nexts = (redealt & ~ended).nonzero().flatten().tolist()
    for i in nexts:
        assert int(a.dealer[i]) == (int(old["dealer"][i]) + 1) % 4
        assert int(a.deal_no[i]) == int(old["deal_no"][i]) + 1
        assert int(a.scores[i].max()) > 0
    for i in ended.nonzero().flatten().tolist():
        assert not torch.equal(a.cards[i], old["cards"][i])
        assert int(a.deal_no[i]) == 0 and int(a.scores[i].abs().sum()) == 0
        assert int(a.to_play[i]) == (int(a.dealer[i]) + 1) % 4
        assert [int(h).bit_count() for h in a.hands[i]] == [5, 5, 5, 5]
    return len(nexts)


FORTY_FIVES = Case(
    env="forty_fives_v0",
    engine=FortyFivesBatch,
    rules=FortyFives,
    random_deals=ff_deals,
    bad_options=[
        ({"players": 7}, "players must be an integer 2..6"),
        ({"variant": "spoil_five"}, "variant"),
        ({"bidder_leads": False}, "bidder_leads applies to the auction"),
        ({"episode": "deal", "target": 30}, "target"),
        (
            {"variant": "auction", "thirty_for_sixty": 1},
            "thirty_for_sixty must be True or False",
        ),
    ],
    malformed=lambda d: [
        ([d[0], {**d[1], "stock": d[1]["stock"][:-1]}], r"deals\[1\]: .*stock"),
    ],
    array_shape="(2, 53)",
    dealer_optional=False,
    on_step=ff_on_step,
    paid_at_end=True,  # no draws this early
    next_deals=True,
    make_options={"players": 2, "variant": "twenty_five"},
    never_legal=[(104, r"\(norob\)")],
    unpacking=[(dict(v), 32, 40) for v in envs.VARIANTS["forty_fives_v0"]],
)


# --- Fünfzehnern --------------------------------------------------------------------
def fz_deals(rng: np.random.Generator, batch: Any) -> Deals:
    P = batch.num_players
    pack = [c for c in range(32) if batch.rules.in_play >> c & 1]
    out = []
    for _ in range(batch.batch_size):
        names = card_names(GERMAN_32, rng, pack)
        out.append(
            {
                "dealer": int(rng.integers(P)),
                "hands": [names[s::P] for s in range(P)],
            }
        )
    return out


def fz_on_step(a: Any, old: dict, ended: torch.Tensor) -> int:
    """A match deals again inside the episode (the deal passing clockwise) and starts
    a new episode after its last deal."""
    next_deal = (a.deal_no == 1) & (old["deal_no"] == 0)
    assert torch.equal(a.dealer[next_deal], (old["dealer"][next_deal] + 1) % 4)
    assert (a.deal_no[ended] == 0).all() and (a.scores[ended] == 0).all()
    fresh = ended | next_deal
    assert (a.played[fresh] == 0).all()
    assert torch.equal(a.to_play[fresh], (a.dealer[fresh] + 1) % 4)
    return int(next_deal.sum())


FUENFZEHNERN = Case(
    env="fuenfzehnern_v0",
    engine=FuenfzehnernBatch,
    rules=Fuenfzehnern,
    random_deals=fz_deals,
    bad_options=[
        ({"players": 5}, "players must be one of"),
        ({"removed_suit": "S"}, "removed_suit is only for players=3"),
        ({"players": 3, "tying_scoring": True}, "tying_scoring needs players=4"),
        (
            {"lead_rules": "relaxed", "unbeatable_duty_on_first_suit": True},
            "unbeatable_duty_on_first_suit applies",
        ),
        ({"num_hands": 2}, "num_hands=2 needs episode='match'"),
    ],
    malformed=lambda d: [
        ([d[0], {**d[1], "hands": d[1]["hands"][:3]}], r"deals\[1\]: "),
    ],
    array_shape="(2, 33)",
    dealer_optional=True,
    on_step=fz_on_step,
    reset_options=[{"episode": "match", "num_hands": 2}],
    next_deals=True,
    unpacking=[(dict(v), 64, 60) for v in envs.VARIANTS["fuenfzehnern_v0"][:2]],
)


# --- Herzeln ------------------------------------------------------------------------
def hz_deals(rng: np.random.Generator, batch: Any) -> Deals:
    """Every deal of the episode, per game (a list of deal dicts)."""
    players = batch.num_players
    deck = SHORT_24 if players == 3 else GERMAN_32
    out = []
    for _ in range(batch.batch_size):
        episode = []
        for j in range(batch.C):
            names = card_names(deck, rng, list(range(deck.size)))
            deal = {"hands": [names[8 * p : 8 * p + 8] for p in range(players)]}
            if j == 0:
                deal = {"dealer": int(rng.integers(players)), **deal}
            episode.append(deal)
        out.append(episode)
    return out


def hz_on_step(a: Any, old: dict, ended: torch.Tensor) -> int:
    """A finished episode starts afresh (scores zero, first deal, new deals drawn)."""
    P = a.num_players
    for i in ended.nonzero().flatten().tolist():
        assert not torch.equal(a.deal_hands[i], old["deal_hands"][i])
        assert a.deal_no[i] == 0 and a.scores[i].abs().sum() == 0
        assert a.held[i].tolist() == [8] * P
        assert a.to_play[i] == (a.dealer[i] + 1) % P
    assert torch.equal(a.deal_hands[~ended], old["deal_hands"][~ended])
    return 0


def hz_malformed(d: Deals) -> list[tuple[Any, str]]:
    short = {**d[1][0], "hands": [*d[1][0]["hands"][:3], ["7S"]]}
    rotated = [d[1][0], {**d[1][1], "dealer": d[1][0]["dealer"]}]
    nine = [d[0][0]] + [{"hands": d[0][1]["hands"]}] * 8
    return [
        ([d[0], [short]], r"deals\[1\]: .*must have 8 cards"),
        ([d[0], rotated], r"deals\[1\]: "),
        ([nine, d[1]], r"deals\[0\]: .*gives 9 deals"),
        ([d[0], []], r"deals\[1\] must be a deal dict or a non-empty list"),
        (np.zeros((2, 1 + 9 * 32), dtype=np.int64), "give 9 deals per game; the "),
    ]


HERZELN = Case(
    env="herzeln_v0",
    engine=HerzelnBatch,
    rules=Herzeln,
    random_deals=hz_deals,
    options_of=lambda entry: {"deals": entry},
    replay=lambda batch, i: {"deals": batch.episode_deals(i)},
    chance=lambda batch, i, node: [],  # compared through the env only
    dealt=("deal_hands", "dealer"),
    bad_options=[
        ({"players": 5}, r"players must be one of \[3, 4\], got 5"),
        ({"contract": "misere"}, "unknown contract 'misere'; valid contracts"),
        ({"episode": "deal"}, "episode='deal' needs contract=NAME"),
        ({"episode": "rubber"}, "episode"),
        ({"contract": "tricks", "domino_layout": "per_suit_rows"}, "has no effect"),
        ({"contract": "tricks", "early_end": True}, "has no effect"),
        ({"domino_layout": "spiral"}, "domino_layout"),
        ({"early_end": 1}, "early_end must be True or False"),
    ],
    malformed=hz_malformed,
    array_shape=r"(2, 1 + k*32)",
    dealer_optional=True,
    on_step=hz_on_step,
    zero_sum=False,
    reset_options=[{"players": 4}, {"players": 3, "contract": "domino"}],
    make_options={"players": 3, "contract": "domino"},
    never_legal=[(96, r"\(pass\)")],
    unpacking=[
        ({"players": 4}, 16, 320),
        ({"players": 4, "domino_layout": "per_suit_rows"}, 16, 320),
    ],
    unpacking_reaches=lambda games: games.contract == CONTRACTS.index("domino"),
)


# --- Fünfzehn – tot -----------------------------------------------------------------
def tot_dice(rng: np.random.Generator, batch: Any) -> Deals:
    """A few forced faces per game (the roll-off and the first turns), the rest
    random: the default tape is kept."""
    return [
        {"dice": rng.integers(1, 7, size=12).tolist()} for _ in range(batch.batch_size)
    ]


def tot_on_step(a: Any, old: dict, ended: torch.Tensor) -> int:
    """A finished game starts afresh (full pool, a new roll-off)."""
    assert (a.pool[ended] == 2).all() and (a.matches[ended] == 0).all()
    assert (a.phase[ended] == 1).all() and (a.rolls[ended] == 0).all()
    return 0


FUENFZEHN_TOT = Case(
    env="fuenfzehn_tot_v0",
    engine=FuenfzehnTotBatch,
    rules=FuenfzehnTot,
    random_deals=tot_dice,
    options_of=lambda entry: dict(entry),
    replay=lambda batch, i: batch.deal(i),
    chance=lambda batch, i, node: batch.dice_rolled(i),
    dealt=("tape", "to_play"),
    bad_options=[
        ({"players": 11}, "players must be 2..10"),
        ({"matches": 0}, "matches must be 1..100"),
        ({"half2_bust": "stays"}, "half2_bust"),
        ({"rule1": "yes"}, "rule1 must be True or False"),
    ],
    malformed=lambda d: [
        ([{"dice": [1]}, {"dice": [1, 7]}], r"deals\[1\]: options\['dice'\]\[1\]"),
        ([{"deal": {}}, {}], r"deals\[0\]: .*has no deal"),
        (np.array([[1, 2], [3, 0]]), r"deals\[1\]: every face must be 1..6"),
    ],
    array_shape="(2, L)",
    dealer_optional=None,
    on_step=tot_on_step,
    reset_options=[{"players": 2, "matches": 2}],
    make_options={"players": 3},
    paid_at_end=True,
    env_from_entry=False,
    sizes=[{"players": 2}, {"players": 4}, {"players": 10}],
)

CASES = [GERMAN_WHIST, FORTY_FIVES, FUENFZEHNERN, HERZELN, FUENFZEHN_TOT]
BY_ENV = {case.env: case for case in CASES}


# --- the comparison harnesses -------------------------------------------------------
def _pick(rng: np.random.Generator, mask_row: np.ndarray) -> int:
    legal = np.flatnonzero(mask_row)
    return int(legal[rng.integers(len(legal))])


def _same_observation(expected: np.ndarray, got: np.ndarray, where: str) -> None:
    diff = np.flatnonzero(expected != got)
    assert diff.size == 0, (
        f"{where}: observation differs at {diff.tolist()}: "
        f"{expected[diff].tolist()} != {got[diff].tolist()}"
    )


def _feed(game: Any, state: Any, outcomes: list[int], i: int) -> tuple[Any, bool, Any]:
    """Apply ``outcomes`` at the scalar engine's chance nodes, an episode that ends
    starting afresh; returns (state, ended, the returns it ended with)."""
    ended, final = False, None
    for outcome in outcomes:
        if game.current_player(state) == TERMINAL:
            ended, final = True, game.returns(state)
            state = game.new_state()
        assert game.current_player(state) == CHANCE, f"game {i}: an outcome too many"
        game.apply(state, outcome)
    if game.current_player(state) == TERMINAL:
        ended, final = True, game.returns(state)
        state = game.new_state()
    assert game.current_player(state) != CHANCE, f"game {i}: an outcome too few"
    return state, ended, final


def compare_engine(
    case: Case, games: int, batch_size: int, seed: int, **options: Any
) -> int:
    """Play at least ``games`` episodes in the batched and the scalar engine,
    comparing every step (module docstring); returns the number of steps compared."""
    rng = np.random.default_rng(seed)
    batch = case.engine(batch_size, seed=seed, **options)
    game = case.rules(**options)
    n = game.num_players
    deals = case.random_deals(rng, batch)
    batch.reset(deals=deals)
    states = []
    for i in range(batch_size):
        used = case.chance(batch, i, TERMINAL)
        # the forced deal is the one the scalar engine parses from the same entry
        forced = game.forced_chance(case.options_of(deals[i]))
        k = min(len(used), len(forced))  # dice: random ones follow the forced
        assert used[:k] == forced[:k] and k > 0, f"game {i}: forced deal"
        states.append(_feed(game, game.new_state(), used, i)[0])
        _check_dealer(batch, states[i], i)
    finished = steps = 0
    while finished < games:
        mask = batch.legal_mask().numpy()
        obs = [batch.observe(seat).numpy() for seat in range(n)]
        own = batch.observe().numpy()
        actions = np.empty(batch_size, dtype=np.int64)
        before = []
        for i, state in enumerate(states):
            seat = game.current_player(state)
            assert seat == int(batch.to_play[i]), f"game {i}: player to act"
            bits = game.legal_bits(state)
            expected = [a for a in range(batch.num_actions) if bits >> a & 1]
            assert expected == np.flatnonzero(mask[i]).tolist(), (
                f"game {i}: legal mask {expected} != {np.flatnonzero(mask[i]).tolist()}"
            )
            for s in range(n):
                _same_observation(
                    game.observe(state, s), obs[s][i], f"game {i}, seat {s}"
                )
            assert np.array_equal(own[i], obs[seat][i]), f"game {i}: observe()"
            actions[i] = _pick(rng, mask[i])
            before.append(game.returns(state))
        rewards, terminated = batch.step(torch.from_numpy(actions))
        for i in range(batch_size):
            game.apply(states[i], int(actions[i]))
            used = case.chance(batch, i, game.current_player(states[i]))
            states[i], ended, final = _feed(game, states[i], used, i)
            if used:
                _check_dealer(batch, states[i], i)
            after = final if ended else game.returns(states[i])
            paid = np.float32([a - b for a, b in zip(after, before[i], strict=True)])
            assert np.array_equal(rewards[i].numpy(), paid), f"game {i}: rewards"
            assert bool(terminated[i]) == ended, f"game {i}: terminal flag"
            finished += ended
        steps += batch_size
    return steps


def _check_dealer(batch: Any, state: Any, i: int) -> None:
    """Card games: the scalar engine deals from the batched engine's dealer."""
    if hasattr(batch, "dealer") and hasattr(state, "dealer"):
        assert state.dealer == int(batch.dealer[i]), f"game {i}: dealer"


def compare_env(
    case: Case, games: int, batch_size: int, seed: int, **options: Any
) -> int:
    """Play at least ``games`` episodes in the batched engine and in one scalar env
    per game, comparing every step (module docstring); returns the steps compared."""
    rng = np.random.default_rng(seed)
    batch = case.engine(batch_size, seed=seed, **options)
    n = batch.num_players
    agents = [f"player_{s}" for s in range(n)]
    deals = case.random_deals(rng, batch)
    batch.reset(deals=deals)
    scalar = [envs.make(case.env, **options) for _ in range(batch_size)]
    for i, (env, entry) in enumerate(zip(scalar, deals, strict=True)):
        env.reset(
            options=case.options_of(entry)
            if case.env_from_entry
            else case.replay(batch, i)
        )
    finished = steps = 0
    while finished < games:
        to_play = batch.to_play.numpy().copy()
        mask = batch.legal_mask().numpy()
        obs = [batch.observe(seat).numpy() for seat in range(n)]
        actions = np.empty(batch_size, dtype=np.int64)
        for i, env in enumerate(scalar):
            seat = int(to_play[i])
            assert env.agent_selection == agents[seat], f"game {i}: player to act"
            expected_mask = env.unwrapped.observe(agents[seat])["action_mask"]
            assert np.array_equal(expected_mask, mask[i].astype(np.int8)), (
                f"game {i}: legal mask {np.flatnonzero(expected_mask).tolist()} != "
                f"{np.flatnonzero(mask[i]).tolist()}"
            )
            for s in range(n):
                expected = env.unwrapped.observe(agents[s])["observation"]
                _same_observation(expected, obs[s][i], f"game {i}, seat {s}")
            actions[i] = _pick(rng, mask[i])
        rewards, terminated = batch.step(torch.from_numpy(actions))
        for i, env in enumerate(scalar):
            env.step(int(actions[i]))
            paid = np.float32([env.rewards[a] for a in agents])
            assert np.array_equal(rewards[i].numpy(), paid), f"game {i}: rewards"
            done = all(env.terminations[a] for a in agents)
            assert bool(terminated[i]) == done, f"game {i}: terminal flag"
            if done:
                finished += 1
                # the batch has started game i again: replay that start in the env
                env.reset(options=case.replay(batch, i))
        steps += batch_size
    return steps


#: Herzeln's contracts alone, both sizes, and the options its variants do not reach
HERZELN_EXTRA = [
    *({"players": n, "contract": k} for n in (3, 4) for k in CONTRACTS),
    {"players": 3},
    {"players": 4, "early_end": True},
    {"players": 3, "domino_layout": "per_suit_rows", "early_end": True},
    {"players": 3, "contract": "no_queens", "early_end": True},
    {"players": 3, "contract": "domino", "domino_layout": "per_suit_rows"},
]


def comparisons() -> list[tuple[str, str, dict[str, Any], int, int, int]]:
    """The default suite's comparisons: (env, "engine" or "env", options, games,
    batch size, seed). A match or partie of several deals counts as one episode, so
    those play fewer."""
    out: list[tuple[str, str, dict[str, Any], int, int, int]] = []
    gw = "german_whist_v0"
    out += [
        (gw, "env", {"variant": "german"}, 200, 64, 1),
        (gw, "env", {"variant": "honeymoon", "episode": "deal"}, 200, 64, 1),
        (gw, "engine", {"variant": "honeymoon"}, 40, 32, 1),
    ]
    ff = "forty_fives_v0"
    out += [(ff, "engine", dict(v), 200, 64, 1) for v in envs.VARIANTS[ff]]
    out += [
        (ff, "engine", v, 30, 24, 3)
        for v in [
            # Hoyle's 30-for-60 and "counts out first", 5 players (five sides: the
            # flags pass bit 63), the 2+3 packets with a kitty, a two-player
            # Forty-Fives match, Twenty-Five one deal at a time
            {
                "players": 4,
                "variant": "auction",
                "episode": "deal",
                "thirty_for_sixty": True,
            },
            {
                "players": 3,
                "variant": "one_ten",
                "bidder_out_first": True,
                "max_deals": 4,
            },
            {"players": 5, "episode": "deal"},
            {"players": 5, "variant": "auction", "episode": "deal", "packets": "2+3"},
            {"players": 2, "max_deals": 3},
            {"players": 4, "variant": "twenty_five", "episode": "deal", "target": 15},
        ]
    ]
    fz = "fuenfzehnern_v0"
    out += [
        (fz, "engine", dict(v), 50 if v.get("episode") == "match" else 200, 64, 1)
        for v in envs.VARIANTS[fz]
    ]
    out += [(fz, "env", {}, 100, 32, 1)]
    out += [
        (fz, "engine", v, 60, 32, 3)
        for v in [
            {"players": 3, "removed_suit": "H"},
            {"lead_rules": "strict", "unbeatable_duty_on_first_suit": False},
            {"tying_scoring": True},
            {"episode": "match", "num_hands": 3, "lead_rules": "relaxed", "players": 3},
        ]
    ]
    hz = "herzeln_v0"
    for v in envs.VARIANTS[hz]:
        partie = "contract" not in v
        out.append((hz, "env", dict(v), 32 if partie else 200, 32 if partie else 64, 1))
    for v in HERZELN_EXTRA:
        games = 4 if "contract" not in v else 24
        out.append((hz, "env", v, games, games, 3))
    tot = "fuenfzehn_tot_v0"
    out += [(tot, "engine", dict(v), 200, 64, 1) for v in envs.VARIANTS[tot]]
    out += [
        (tot, "env", {"players": 2}, 60, 32, 1),
        (
            tot,
            "env",
            {"players": 3, "matches": 3, "auto_forced_moves": True, "zero_sum": False},
            60,
            32,
            1,
        ),
    ]
    out += [
        (tot, "engine", v, 40, 32, 3)
        for v in [
            {"players": 2, "matches": 1},
            {"players": 4, "half2_bust": "ends_round", "all_bust": "next_starter"},
            {"players": 3, "auto_stand_at_15_half1": True, "rule2": False},
            {"players": 10, "matches": 3, "rule1": False, "auto_forced_moves": True},
        ]
    ]
    return out


def slow_comparisons() -> list[tuple[str, str, dict[str, Any], int, int, int]]:
    """``-m slow``: 10,000 episodes of every registered variant (and German Whist's
    Honeymoon match)."""
    out: list[tuple[str, str, dict[str, Any], int, int, int]] = [
        ("german_whist_v0", "env", {"variant": "german"}, 10_000, 256, 2),
        (
            "german_whist_v0",
            "env",
            {"variant": "honeymoon", "episode": "deal"},
            10_000,
            256,
            2,
        ),
        ("german_whist_v0", "engine", {"variant": "honeymoon"}, 10_000, 512, 2),
    ]
    for env, level, batch in [
        ("forty_fives_v0", "engine", 512),
        ("fuenfzehnern_v0", "engine", 512),
        ("herzeln_v0", "env", 256),
        ("fuenfzehn_tot_v0", "engine", 512),
    ]:
        out += [(env, level, dict(v), 10_000, batch, 2) for v in envs.VARIANTS[env]]
    return out


def comparison_id(row: tuple[str, str, dict[str, Any], int, int, int]) -> str:
    env, level, options = row[:3]
    opts = ",".join(f"{k}={v}" for k, v in options.items())
    return f"{env.removesuffix('_v0')}-{level}[{opts}]"


def run_comparison(row: tuple[str, str, dict[str, Any], int, int, int]) -> int:
    env, level, options, games, batch_size, seed = row
    harness = compare_engine if level == "engine" else compare_env
    return harness(BY_ENV[env], games, batch_size, seed, **options)


def as_rows(case: Case, deals: Deals, options: Mapping[str, Any]) -> np.ndarray:
    """The chance-outcome array form of forced deals, as the scalar engine parses
    them."""
    game = case.rules(**options)
    return np.array([game.forced_chance(case.options_of(d)) for d in deals])
