"""Tests of the Forty-Fives heuristic bot (`parlour.agents.forty_fives`).

Each tip test puts the bot in a forced position where the seed's tip decides the move
and checks the move with the tip on and off.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import hands_of

from parlour import agents, envs
from parlour.agents.base import Turn
from parlour.agents.forty_fives import TIPS, FortyFivesHeuristic
from parlour.envs.core.cards import FRENCH_52 as DECK
from parlour.training.arena import play_game, run_arena

ENV = "forty_fives_v0"


def full_deal(hands, stock_top=(), kitty=None, dealer=0):
    used = {c for h in hands for c in h} | set(stock_top) | set(kitty or ())
    deal = {
        "dealer": dealer,
        "hands": [list(h) for h in hands],
        "stock": list(stock_top) + [n for n in DECK.names if n not in used],
    }
    if kitty is not None:
        deal["kitty"] = list(kitty)
    return deal


def start(deal, steps=(), **options):
    env = envs.make(ENV, **options)
    env.reset(seed=0, options={"deal": deal})
    for name in steps:
        env.step(env.unwrapped.action_id(name))
    return env


def start_auction(hands, steps=()):
    """A two-player auction deal (player_1 deals, the kitty 8♣ 9♣ 10♣), ``steps``
    played."""
    deal = full_deal(hands, kitty=["8C", "9C", "10C"], dealer=1)
    return start(deal, steps, players=2, variant="auction")


def choice(env, **switches):
    """The bot's action name for the agent to act."""
    raw = env.unwrapped
    seat = raw.agent_name_mapping[env.agent_selection]
    obs = env.observe(env.agent_selection)
    turn = Turn(raw.game, raw.game_state, seat, obs["observation"], obs["action_mask"])
    return raw.action_name(FortyFivesHeuristic(seed=0, **switches).act(turn))


# --- construction ---------------------------------------------------------------------
def test_spec_switches():
    """``heuristic:-tip`` turns a tip off; unknown names raise ValueError listing the
    tips."""
    bot = agents.make("heuristic:-hold_top_trumps", ENV)
    assert bot.options == {
        "know_order": True,
        "hold_top_trumps": False,
        "play_for_bonus": True,
    }
    assert bot.spec == "heuristic:-hold_top_trumps"
    with pytest.raises(ValueError, match="know_order, hold_top_trumps, play_for_bonus"):
        agents.make("heuristic:+count_cards", ENV)
    with pytest.raises(ValueError, match="True or False"):
        FortyFivesHeuristic(know_order="yes")
    assert set(TIPS) == {"know_order", "hold_top_trumps", "play_for_bonus"}


# --- legality across every variant ----------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        {"players": 2},
        {"players": 3, "void_must_trump": False},
        {"players": 4},
        {"players": 5, "variant": "twenty_five"},
        {"players": 6},
        {"players": 4, "variant": "auction"},
        {"players": 6, "variant": "auction", "bidder_leads": False},
        {"players": 3, "variant": "one_ten"},
        {"players": 2, "variant": "auction", "thirty_for_sixty": True},
    ],
)
def test_bot_plays_only_legal_moves(options):
    """Every tip combination finishes whole games with legal moves only (the env raises
    on an illegal one)."""
    env = envs.make(ENV, **options)
    rng = np.random.default_rng(0)
    for game in range(4):
        bots = [
            FortyFivesHeuristic(seed=s, **{t: bool(rng.integers(2)) for t in TIPS})
            for s in range(env.unwrapped.game.num_players)
        ]
        play_game(env, bots, seed=game)


def test_bot_ignores_hidden_cards():
    """The bot's choice depends only on what its seat may know: changing another
    player's hand (with a stock card) does not change it."""
    hands = [["KH", "2C", "10C", "7D", "8D"], ["5C", "3H", "4H", "6D", "9D"]]
    other = [hands[0], ["KS", "QS", "JS", "10S", "AS"]]
    choices = set()
    for h in (hands, other):
        env = start(full_deal(h, ["9S"], dealer=1), players=2)
        for switches in ({}, {"know_order": False}, {"hold_top_trumps": False}):
            choices.add((tuple(switches), choice(env, **switches)))
    assert len(choices) == 3  # one lead per bot, whatever player_1 holds


# --- the tips -------------------------------------------------------------------------
def test_know_order_black_low_cards_win():
    """ "In Rot hoch, in Schwarz niedrig": to the 5♣ led, the 2♣ wins and the 10♣ loses.
    The bot that knows the order wins with the 2♣; the beginner plays the 10♣."""
    hands = [["5C", "3H", "4H", "6D", "7D"], ["2C", "10C", "8H", "9H", "10H"]]
    env = start(full_deal(hands, ["9S"], dealer=1), ["5C"], players=2)
    assert choice(env) == "2C"
    assert choice(env, know_order=False) == "10C"


def test_hold_top_trumps_renege_on_partners_lead():
    """ "Dank des Zurückhaltens können 5, B und A♥ warten, bis ein Gegner Trumpf
    ausspielt": on the partner's low trump lead the bot keeps its J♠ (reneging); without
    the tip it plays it."""
    hands = hands_of(
        "7S KH QH JH 10H | 2D 3D 4D 6D 8D | JS 9C 10C 7H 8H | 2H 3H 4H 5H 6H"
    )
    env = start(full_deal(hands, ["2S"], dealer=3), ["7S", "2D"], players=4)
    assert env.agent_selection == "player_2"
    assert choice(env) != "JS"
    assert choice(env, hold_top_trumps=False) == "JS"


def test_hold_top_trumps_takes_an_opponents_trump_lead():
    """The top trump that waited takes the opponent's trump lead."""
    hands = hands_of(
        "2H 3H 4H 5H 6H | 7S KH QH JH 10H | JS 9C 10C 7H 8H | 2D 3D 4D 6D 8D"
    )
    env = start(full_deal(hands, ["2S"], dealer=0), ["7S"], players=4)
    assert env.agent_selection == "player_2"  # an opponent (player_1) led the 7♠
    assert choice(env) == "JS"


def test_hold_top_trumps_does_not_lead_them():
    """With the tip the bot does not lead the 5 while it has other cards; without it, it
    leads its best trump to draw trumps."""
    hands = [["5S", "3S", "KH", "QD", "9C"], ["2H", "3H", "4H", "6H", "7H"]]
    env = start(full_deal(hands, ["2S"], dealer=1), players=2)
    assert choice(env) != "5S"
    assert choice(env, hold_top_trumps=False) == "5S"


def test_play_for_bonus_counts_the_five_as_two_tricks():
    """ "die Trumpf-5 ist also zwei Stiche wert": holding the 5♠ the bot bids one level
    higher with the tip than without."""
    hands = [["5S", "JS", "KH", "KD", "2C"], ["2H", "3H", "4H", "6H", "7H"]]
    env = start_auction(hands)
    assert choice(env) == "bid:20"
    assert choice(env, play_for_bonus=False) == "bid:15"


# --- other decisions ------------------------------------------------------------------
def test_robs_burying_the_weakest_card():
    """The ace holder robs, burying its weakest card (the A♦ is the lowest diamond)."""
    hands = [["AC", "AD", "KH", "QH", "JH"], ["2H", "3H", "4H", "6H", "7H"]]
    env = start(full_deal(hands, ["9C"], dealer=1), players=2)
    assert choice(env) == "rob:AD"
    assert choice(env, know_order=False) != "rob:AD"  # the beginner thinks the ace high


def test_dealer_forced_fifteen_and_hold():
    """A weak dealer takes the forced 15; a strong dealer holds the bid."""
    weak = [["2H", "3H", "4H", "6H", "7H"], ["2D", "3D", "4C", "5C", "6C"]]
    env = start_auction(weak, ["pass"])
    assert choice(env) == "bid:15"
    strong = [["2H", "3H", "4H", "6H", "7H"], ["5S", "JS", "AH", "AS", "KS"]]
    env = start_auction(strong, ["bid:15"])
    assert choice(env) == "hold"


def test_bidder_discards_plain_cards_keeps_trumps():
    """The bidder keeps its trumps and discards the plain cards that are not bosses."""
    hands = [["5S", "JS", "QS", "3D", "4D"], ["2H", "3H", "4H", "6H", "7H"]]
    env = start(
        full_deal(hands, kitty=["KS", "8C", "9C"], dealer=1),
        ["bid:20", "pass", "trump:S"],
        players=2,
        variant="auction",
    )
    discarded = []
    while (
        env.unwrapped.game_state.to_play == 0
        and env.unwrapped.game_state.phase.name == "DISCARD"
    ):
        name = choice(env)
        if name == "done":
            break
        discarded.append(name)
        env.step(env.unwrapped.action_id(name))
    assert sorted(discarded) == ["discard:3D", "discard:4D", "discard:8C", "discard:9C"]


# --- strength -------------------------------------------------------------------------
def test_beats_random_players():
    """The bot's side wins clearly more than half of its games against random players
    (4 players, duplicate deals)."""
    result = run_arena(ENV, ["heuristic", "random"], games=200, duplicate=True, seed=5)
    assert result.win_rate().low > 0.55


def test_know_order_helps():
    """The tip pays: the bot that knows the order beats the beginner (4 players)."""
    result = run_arena(
        ENV, ["heuristic", "heuristic:-know_order"], games=300, duplicate=True, seed=2
    )
    assert result.paired_difference().estimate > 0
