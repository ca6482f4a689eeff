"""German Whist and Honeymoon Whist: one scenario test per rule of the rule book.

Each test forces an exact deal (``reset(options={"deal": …})``) and checks one rule;
its docstring quotes the seed sentence (or names the rules notes §2
choice) it rests on. `deal` builds a full deal from the few cards a test cares about;
`stage2` plays a scripted stage 1 so that a test can start stage 2 with the hands it
wants.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from parlour import envs
from parlour.envs import IllegalActionError
from parlour.envs.core.cards import FRENCH_52, FRENCH_54, NO_SUIT, SUITS, Deck
from parlour.envs.core.engine import CHANCE
from parlour.envs.german_whist.rules import GermanWhist
from parlour.envs.german_whist.state import Phase

ENV = "german_whist_v0"
DECKS = {"german": FRENCH_52, "honeymoon": FRENCH_54}
CLUBS = [
    r + "C" for r in ("A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2")
]
DIAMONDS = [c[:-1] + "D" for c in CLUBS]
# Honeymoon hands for player_0: every trump but 3H and 2H (he takes all 27 tricks), and
# one low trump with the spades below the ace (he keeps only his 14 stage-1 tricks)
TOP_TRUMPS = "4H JKH JKL AH KH QH JH 10H 9H 8H 7H 6H 5H".split()
LOW_TRUMP_AND_SPADES = "2H KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S 2S".split()
# Observation blocks of n = pack-size entries each (observation.py's layout).
HAND, OPP_KNOWN, MINE_KNOWN, FACE_UP, PLAYED, LED = range(6)


# --- building deals -------------------------------------------------------------------
def fill_order(deck: Deck) -> list[str]:
    """Spare cards, lowest first (2S 2H 2D 2C 3S …), jokers last: fillers seldom
    matter."""
    return sorted(
        deck.names,
        key=lambda n: (
            deck.suit[deck.card(n)] == NO_SUIT,
            -deck.rank[deck.card(n)],
            deck.suit[deck.card(n)],
        ),
    )


def deal(
    hands: tuple[list[str], list[str]] = ([], []),
    stock: list[str | None] = (),  # type: ignore[assignment]
    dealer: int = 1,
    variant: str = "german",
    voids: tuple[str, str] = ("", ""),
) -> dict[str, Any]:
    """A full forced deal holding the given cards where given.

    ``hands`` are topped up to 13 and ``stock`` (top card first, ``None`` = any) to
    the stock size from the spare cards in `fill_order`; ``voids`` names suits a hand
    must not be topped up with. The default dealer is player_1, so player_0 leads
    trick 1.
    """
    deck = DECKS[variant]
    chosen = [*hands[0], *hands[1], *(c for c in stock if c is not None)]
    assert len(set(chosen)) == len(chosen), f"a card is chosen twice: {chosen}"
    spare = [n for n in fill_order(deck) if n not in chosen]

    def take(avoid: str) -> str:
        for name in spare:
            suit = deck.suit[deck.card(name)]
            if suit == NO_SUIT or SUITS[suit] not in avoid:
                spare.remove(name)
                return name
        raise AssertionError("not enough spare cards")

    full = [
        list(hands[p]) + [take(voids[p]) for _ in range(13 - len(hands[p]))]
        for p in (0, 1)
    ]
    top = [c if c is not None else take("") for c in stock]
    return {"dealer": dealer, "hands": full, "stock": top + spare}


def new_env(
    the_deal: dict[str, Any] | None = None, variant: str = "german", **options: Any
) -> Any:
    """A ``german_whist_v0`` env reset to ``the_deal``."""
    env = envs.make(ENV, variant=variant, **options)
    env.reset(seed=0, options={"deal": the_deal} if the_deal else None)
    return env


def state(env: Any) -> Any:
    return env.unwrapped.game_state


def game(env: Any) -> GermanWhist:
    return env.unwrapped.game


def names(env: Any, mask: int) -> set[str]:
    deck = game(env).deck
    return {deck.names[c] for c in range(deck.size) if mask >> c & 1}


def hand(env: Any, seat: int) -> set[str]:
    return names(env, state(env).hands[seat])


def legal(env: Any) -> set[str]:
    """The legal cards of the player to act, read from his action mask."""
    mask = env.observe(env.agent_selection)["action_mask"]
    return {env.unwrapped.action_name(int(a)) for a in np.flatnonzero(mask)}


def to_act(env: Any) -> int:
    return env.unwrapped.agent_name_mapping[env.agent_selection]


def play(env: Any, *cards: str) -> None:
    """Play these cards in turn, whoever is to act."""
    for card in cards:
        env.step(env.unwrapped.action_id(card))


def seen_in(env: Any, seat: int, block: int) -> set[str]:
    """The cards marked in one block of ``seat``'s observation vector."""
    n = game(env).deck.size
    vec = env.observe(f"player_{seat}")["observation"]
    return {
        game(env).deck.names[c]
        for c in np.flatnonzero(vec[block * n : (block + 1) * n])
    }


def flag(env: Any, seat: int, index: int) -> float:
    """Entry ``8n + index`` of ``seat``'s observation (trumps, voids, stage, …)."""
    n = game(env).deck.size
    return float(env.observe(f"player_{seat}")["observation"][8 * n + index])


def _stronger_first(a: str, b: str, trump: str) -> tuple[str, str]:
    """Order two cards so that the first, led, wins the trick against the second."""

    def power(card: str) -> tuple[int, int]:
        if card.startswith("JK"):
            return (2, 20 if card == "JKH" else 19)
        return (
            1 if card[-1] == trump else 0,
            13 - FRENCH_52.rank[FRENCH_52.card(card)],
        )

    return (a, b) if power(a) >= power(b) else (b, a)


def stage2(variant: str, hand0: list[str], hand1: list[str], **options: Any) -> Any:
    """An env at the first stage-2 lead with the given hands, player_0 to lead.

    The hands are topped up from the spades, hearts and (Honeymoon) jokers; ``hand0[0]``
    is turned first and sets trumps. Stage 1 is scripted: player_0 holds the clubs and
    player_1 the diamonds; player_0 leads a club to every trick and player_1, never
    holding a club, throws a diamond, so player_0 wins all stage-1 tricks, taking the
    face-up cards while player_1 draws the hidden ones. Honeymoon's 14th trick is won
    with one of the two cards
    left over. Checks that stage 2 starts as asked.
    """
    deck = DECKS[variant]
    pool = [n for n in fill_order(deck) if n[-1] in "SH" or n.startswith("JK")]
    chosen = [*hand0, *hand1]
    spare = [n for n in pool if n not in chosen]
    h0 = list(hand0) + [spare.pop(0) for _ in range(13 - len(hand0))]
    h1 = list(hand1) + [spare.pop(0) for _ in range(13 - len(hand1))]
    trump = "S" if h0[0].startswith("JK") else h0[0][-1]
    if variant == "honeymoon":
        x, y = _stronger_first(*spare, trump)  # the 14th trick: player_0 leads x, wins
        evens, odds, tail = [*h0[:-1], x], [*h1[:-1], y], [h0[-1], h1[-1]]
    else:
        assert not spare
        evens, odds, tail = h0, h1, []
    stock = [card for pair in zip(evens, odds, strict=True) for card in pair] + tail
    env = new_env(
        {"dealer": 1, "hands": [CLUBS, DIAMONDS], "stock": stock}, variant, **options
    )
    for club, diamond in zip(CLUBS, DIAMONDS, strict=True):
        play(env, club, diamond)
    if variant == "honeymoon":
        play(env, x, y)
    s = state(env)
    assert s.stage == 2 and to_act(env) == 0 and s.tricks1[1] == 0
    assert (hand(env, 0), hand(env, 1)) == (set(h0), set(h1))
    return env


# --- German Whist: cards and deal -----------------------------------------------------
def test_pack_is_52_cards_without_jokers() -> None:
    """Seed: "Use a standard 52-card deck without Jokers." """
    env = new_env()
    assert env.action_space("player_0").n == 52
    assert game(env).deck.names == FRENCH_52.names
    bad = deal()
    bad["stock"][-1] = "JKH"
    with pytest.raises(ValueError, match="'JKH' is not in the 52-card French pack"):
        new_env(bad)


def test_thirteen_cards_each_and_a_26_card_stock() -> None:
    """Seed: "Deal 13 cards to each player." / "Put the other 26 cards face down as the
    stock and turn its top card face up." """
    the_deal = deal()
    env = new_env(the_deal)
    s = state(env)
    assert (hand(env, 0), hand(env, 1)) == tuple(set(h) for h in the_deal["hands"])
    assert [game(env).deck.format(c) for c in s.stock] == the_deal["stock"]
    assert len(s.stock) == 26 and s.face_up == s.stock[0]
    assert (
        seen_in(env, 0, FACE_UP) == seen_in(env, 1, FACE_UP) == {the_deal["stock"][0]}
    )
    short = deal()
    short["stock"].append(short["hands"][0].pop())
    with pytest.raises(ValueError, match=r"hands'\]\[0\] must have 13 cards, got 12"):
        new_env(short)


@pytest.mark.parametrize(
    ("turned", "suit"), [("AS", 0), ("7H", 1), ("2D", 2), ("QC", 3)]
)
def test_trumps_are_the_suit_of_the_turned_card(turned: str, suit: int) -> None:
    """Seed: "turn its top card face up. That card’s suit is trumps for the whole
    deal." """
    env = new_env(deal(stock=[turned]))
    assert state(env).trump == suit
    for seat in (0, 1):
        assert [flag(env, seat, s) for s in range(4)] == [
            float(s == suit) for s in range(4)
        ]


def test_trumps_never_change() -> None:
    """Seed: "That card’s suit is trumps for the whole deal." Later face-up cards of
    another suit change nothing: with a spade face up, a heart still trumps a spade."""
    spades = ["KS", "QS", "JS", "10S", "9S", "8S", "7S", "6S", "5S", "4S", "3S", "2S"]
    hearts = ["AH", "KH", "QH", "JH", "10H", "9H", "8H", "7H", "6H", "5H", "4H", "2H"]
    env = new_env(
        deal(hands=([*spades, "2C"], [*hearts, "2D"]), stock=["3H", None, "AS"])
    )
    play(env, "KS", "2D")  # player_1 has no spade and need not trump: player_0 wins
    assert state(env).trump == 1 and names(env, 1 << state(env).face_up) == {"AS"}
    play(env, "QS", "2H")  # now player_1 trumps with the lowest heart
    assert state(env).last_trick[2] == 1 and "AS" in hand(env, 1)
    assert state(env).trump == 1
    rng = np.random.default_rng(0)
    while not all(env.terminations.values()):
        assert state(env).trump == 1 and flag(env, 0, 1) == 1.0
        env.step(int(rng.choice(sorted(env.unwrapped.legal_actions()))))


@pytest.mark.parametrize("dealer", [0, 1])
def test_non_dealer_leads_the_first_trick(dealer: int) -> None:
    """Seed: "The non-dealer leads the first trick." """
    env = new_env(deal(dealer=dealer))
    assert to_act(env) == 1 - dealer and state(env).dealer == dealer
    env.reset(seed=3, options={"dealer": dealer})  # the dealer alone, the cards random
    assert to_act(env) == 1 - dealer


def test_first_dealer_is_random_from_the_seed() -> None:
    """Rules notes §2.3 [ENGINE CHOICE]: the players agree who deals first, so the
    dealer is a reset option (``dealer``), else drawn from the env's seeded
    generator."""
    env = envs.make(ENV)
    dealers = set()
    for seed in range(20):
        env.reset(seed=seed)
        dealers.add(state(env).dealer)
        assert (
            flag(env, state(env).dealer, 10) == 1.0
            and flag(env, 1 - state(env).dealer, 10) == 0.0
        )
    assert dealers == {0, 1}


# --- German Whist: tricks -------------------------------------------------------------
@pytest.mark.parametrize(
    ("high", "low"),
    [
        ("AS", "KS"),
        ("KS", "QS"),
        ("QS", "JS"),
        ("JS", "10S"),
        ("10S", "9S"),
        ("9S", "8S"),
        ("8S", "7S"),
        ("7S", "6S"),
        ("6S", "5S"),
        ("5S", "4S"),
        ("4S", "3S"),
        ("3S", "2S"),
        ("AD", "2D"),
    ],
)
@pytest.mark.parametrize("high_leads", [True, False])
def test_rank_order_in_a_suit(high: str, low: str, high_leads: bool) -> None:
    """Seed: "In each suit the Ace is highest and the 2 is lowest." (Trumps: clubs.)"""
    lead, follow = (high, low) if high_leads else (low, high)
    env = new_env(deal(hands=([lead], [follow]), stock=["AC"]))
    play(env, lead, follow)
    assert state(env).last_trick == (
        game(env).deck.card(lead),
        game(env).deck.card(follow),
        0 if high_leads else 1,
    )


@pytest.mark.parametrize(
    ("lead", "follow", "winner"),
    [
        ("KS", "AS", 1),  # the higher card of the suit led wins
        ("AS", "2S", 0),
        ("2S", "AD", 0),  # an off-suit card that is not a trump loses, even an ace
        ("2D", "AC", 0),
        ("AS", "2H", 1),  # a trump beats any card of another suit
        ("AD", "3H", 1),
        ("2H", "AS", 0),  # trump led, no trump played: the trump wins
        ("3H", "4H", 1),  # trump against trump: the higher wins
        ("KH", "QH", 0),
    ],
)
def test_trick_winner(lead: str, follow: str, winner: int) -> None:
    """Seed: "The higher card of the suit led wins, unless a trump is played, and then
    the trump wins." / "Any trump beats any card of another suit." (Trumps: hearts.)"""
    void = "" if lead[-1] == follow[-1] else lead[-1]
    env = new_env(
        deal(
            hands=([lead], [follow]),
            stock=["2H" if "2H" not in (lead, follow) else "5H"],
            voids=("", void),
        )
    )
    play(env, lead, follow)
    assert state(env).last_trick[2] == winner
    assert state(env).tricks1[winner] == 1


@pytest.mark.parametrize("follower_wins", [False, True])
def test_winner_of_a_trick_leads_the_next(follower_wins: bool) -> None:
    """Seed: "The winner of each trick leads the next." """
    env = new_env(deal(hands=(["10S"], ["AS", "2S"]), stock=["2C"]))
    play(env, "10S", "AS" if follower_wins else "2S")
    assert to_act(env) == (1 if follower_wins else 0)
    assert state(env).lead == -1 and flag(env, to_act(env), 9) == 1.0  # "I am to lead"


def test_must_follow_suit_but_need_not_beat_or_trump() -> None:
    """Seed: "Follow suit if you can." / "You never have to beat the card led or play a
    trump." Holding spades, player_1 may play any spade (the 2 as well as the ace) and
    nothing else, not even a trump."""
    env = new_env(
        deal(hands=(["10S"], ["AS", "2S", "AH", "KD"]), stock=["3H"], voids=("", "S"))
    )
    play(env, "10S")
    assert legal(env) == {"AS", "2S"}
    with pytest.raises(IllegalActionError, match=r"must follow suit; legal: AS, 2S"):
        play(env, "AH")
    play(env, "2S")
    assert state(env).last_trick[2] == 0


def test_void_may_play_any_card() -> None:
    """Seed: "If you can’t, play any card." Void in the suit led, player_1 may trump or
    throw any other card."""
    env = new_env(deal(hands=(["10S"], ["AH", "KD"]), stock=["3H"], voids=("", "S")))
    play(env, "10S")
    assert legal(env) == hand(env, 1) and len(legal(env)) == 13
    play(env, "KD")  # no duty to trump: the spade wins
    assert state(env).last_trick[2] == 0


def test_cards_not_in_hand_are_illegal() -> None:
    """A player plays cards from his own hand only; the error lists what he may play."""
    the_deal = deal()
    env = new_env(the_deal)
    other = the_deal["hands"][1][0]
    with pytest.raises(IllegalActionError, match="does not hold that card; legal: "):
        play(env, other)


# --- German Whist: stage 1 ------------------------------------------------------------
@pytest.mark.parametrize(("follow", "winner"), [("2S", 0), ("AS", 1)])
def test_stage1_winner_takes_face_up_loser_the_hidden_card(
    follow: str, winner: int
) -> None:
    """Seed: "While the stock lasts, the winner of each trick must take the face-up
    card from the stock. The loser takes the next card face down without showing it.
    Then turn the next card of the stock face up." """
    env = new_env(deal(hands=(["10S"], ["AS", "2S"]), stock=["KD", "QC", "JH"]))
    play(env, "10S", follow)
    loser = 1 - winner
    assert "KD" in hand(env, winner) and "QC" in hand(env, loser)
    assert len(hand(env, 0)) == len(hand(env, 1)) == 13
    assert seen_in(env, 0, FACE_UP) == seen_in(env, 1, FACE_UP) == {"JH"}  # turned next
    assert "QC" in seen_in(env, loser, HAND)
    for block in range(6):  # the hidden card is nowhere in the winner's view
        assert "QC" not in seen_in(env, winner, block)
    assert state(env).tricks1[winner] == 1


def test_seen_row_is_visible_to_the_opponent_until_played() -> None:
    """Seed tip: "Every card drawn face up stays in the Seen row until it’s played";
    rules notes §2.3: the observation holds the face-up cards the opponent won and still
    holds."""
    env = new_env(deal(hands=(["10S", "9S"], ["AS", "2S"]), stock=["KD", "QC", "JH"]))
    play(env, "10S", "AS")  # player_1 takes KD face up
    assert seen_in(env, 0, OPP_KNOWN) == {"KD"} and seen_in(env, 1, MINE_KNOWN) == {
        "KD"
    }
    assert names(env, state(env).seen[1]) == {"KD"}
    play(env, "KD")  # player_1 leads it: it leaves the Seen row
    assert seen_in(env, 0, OPP_KNOWN) == set() and "KD" in seen_in(env, 0, PLAYED)
    assert state(env).seen[1] == 0


def test_the_opponent_is_shown_void_until_his_next_hidden_draw() -> None:
    """Rules notes §2.3 (observation): failing to follow suit is public, so the
    observation marks the opponent void in that suit until his next hidden draw."""
    env = new_env(
        deal(hands=(["10S", "AD"], ["AH", "2D"]), stock=["3H"], voids=("", "S"))
    )
    # player_1 shows void in spades, trumps and wins: no hidden draw
    play(env, "10S", "AH")
    assert flag(env, 0, 4 + 0) == 1.0 and flag(env, 1, 4 + 0) == 0.0
    play(env, "2D", "AD")  # player_1 loses and draws a hidden card, maybe a spade
    assert state(env).last_trick[2] == 0
    assert flag(env, 0, 4 + 0) == 0.0


# --- German Whist: stage 2 and the end ------------------------------------------------
def test_stage2_after_13_tricks_with_13_cards_each() -> None:
    """Seed: "After 13 tricks the stock is empty. Play out the 13 cards in your hand";
    rules notes §2.3 [ENGINE CHOICE]: the hands are then known ("the game opens the
    hands") and are in the observation."""
    env = stage2("german", ["2H", "AS"], ["AH", "KS"])
    s = state(env)
    assert (
        sum(s.tricks1) == 13 and s.stock_pos == len(s.stock) == 26 and s.face_up == -1
    )
    assert len(hand(env, 0)) == len(hand(env, 1)) == 13
    for seat in (0, 1):
        assert flag(env, seat, 8) == 1.0  # stage 2
        assert seen_in(env, seat, FACE_UP) == set()
        assert seen_in(env, seat, OPP_KNOWN) == hand(env, 1 - seat)
        assert seen_in(env, seat, MINE_KNOWN) == hand(env, seat)


def test_stage2_still_follows_suit() -> None:
    """Seed: "Play out the 13 cards in your hand, still following suit." """
    env = stage2("german", ["2H", "KS"], ["AS", "3S", "AH"])
    play(env, "KS")
    spades = {c for c in hand(env, 1) if c.endswith("S")}
    assert "AS" in spades and legal(env) == spades


def test_game_ends_the_moment_a_player_has_7_stage2_tricks() -> None:
    """Seed: "Whoever takes 7 or more of the 13 tricks in stage 2 wins the game, so
    the game is decided as soon as a player has 7 of them." player_0 holds every spade
    (trumps) and player_1 every heart: player_0 wins each trick, the 7th ends it."""
    spades = [
        r + "S"
        for r in ("2", "A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3")
    ]
    env = stage2("german", spades, [])
    for trick in range(7):
        assert not any(env.terminations.values())
        assert all(env.rewards[a] == 0.0 for a in env.rewards)
        play(env, spades[12 - trick])
        play(env, sorted(legal(env))[0])
    assert all(env.terminations.values())
    assert state(env).tricks2 == [7, 0] and state(env).winner == 0
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert len(hand(env, 0)) == len(hand(env, 1)) == 6  # the rest is not played


def test_stage1_tricks_score_nothing() -> None:
    """Seed: "The tricks of stage 1 score nothing." / "Win at least 7 of the 13 tricks
    played after the stock runs out." player_0 wins all 13 stage-1 tricks and still
    loses: player_1 holds the ace of spades and every trump above player_0's 2H."""
    env = stage2(
        "german",
        ["2H", "KS", "QS", "JS", "10S", "9S", "8S", "7S", "6S", "5S", "4S", "3S", "2S"],
        [],
    )
    assert state(env).tricks1 == [13, 0]
    rng = np.random.default_rng(0)
    while not all(env.terminations.values()):
        assert all(r == 0.0 for r in env.rewards.values())
        env.step(int(rng.choice(sorted(env.unwrapped.legal_actions()))))
    assert state(env).tricks2 == [0, 7]
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}


# --- Honeymoon Whist ------------------------------------------------------------------
def test_honeymoon_pack_is_54_cards_with_two_jokers() -> None:
    """Seed: "Two Jokers are added as the highest trumps." """
    env = new_env(variant="honeymoon")
    assert env.action_space("player_0").n == 54
    assert {env.unwrapped.action_name(52), env.unwrapped.action_name(53)} == {
        "JKH",
        "JKL",
    }
    with pytest.raises(ValueError, match=r"deal\['stock'\] must have 28 cards, got 26"):
        new_env(deal(), "honeymoon")  # a 52-card deal
    twice = deal(variant="honeymoon")
    twice["stock"][-1] = "AS"  # the place of the Low Joker
    with pytest.raises(ValueError, match="card.s. dealt twice: AS"):
        new_env(twice, "honeymoon")


def test_honeymoon_stock_is_28_cards_and_stage1_has_14_tricks() -> None:
    """Seed: "The stock is 28 cards, so stage 1 has 14 tricks." """
    env = new_env(deal(variant="honeymoon"), "honeymoon")
    assert len(state(env).stock) == 28
    rng = np.random.default_rng(1)
    for trick in range(14):
        assert state(env).stage == 1 and sum(state(env).tricks1) == trick
        env.step(int(rng.choice(env.unwrapped.legal_actions())))
        env.step(int(rng.choice(env.unwrapped.legal_actions())))
    s = state(env)
    assert s.stage == 2 and sum(s.tricks1) == 14 and sum(s.tricks2) == 0
    assert len(hand(env, 0)) == len(hand(env, 1)) == 13


@pytest.mark.parametrize(
    ("lead", "follow", "winner"),
    [
        ("JKL", "JKH", 1),  # the High Joker beats the Low Joker
        ("JKH", "JKL", 0),
        ("AH", "JKL", 1),  # the Low Joker beats the ace of trumps
        ("JKL", "AH", 0),
        ("JKH", "AH", 0),
        ("AS", "JKL", 1),  # a joker is a trump: it beats a plain ace
        ("JKL", "AS", 0),
        ("2S", "AD", 0),  # an off-suit plain card cannot win
        ("KH", "AH", 1),
    ],
)
def test_jokers_are_the_highest_trumps(lead: str, follow: str, winner: int) -> None:
    """Seed: "Two Jokers are added as the highest trumps. The High Joker beats the Low
    Joker, which beats the Ace of trumps." (Trumps are hearts; stage 1, any card may be
    played.)"""
    env = new_env(
        deal(hands=([lead], [follow]), stock=["2H"], variant="honeymoon"), "honeymoon"
    )
    play(env, lead, follow)
    assert state(env).last_trick[2] == winner


@pytest.mark.parametrize("joker", ["JKH", "JKL"])
def test_turned_joker_makes_spades_trumps_and_is_the_first_prize(joker: str) -> None:
    """Seed: "If a Joker is turned up to set trumps, spades are trumps." Rules notes
    §2.3: the turned joker is the prize of trick 1."""
    env = new_env(
        deal(hands=(["10D"], ["AD"]), stock=[joker, "5C"], variant="honeymoon"),
        "honeymoon",
    )
    assert state(env).trump == 0 and flag(env, 0, 0) == 1.0
    play(env, "10D", "AD")
    assert joker in hand(env, 1) and joker in seen_in(env, 0, OPP_KNOWN)
    assert "5C" in hand(env, 0)


def test_a_joker_turned_later_changes_nothing() -> None:
    """Rules notes §2.3: "A Joker turned later changes nothing" (trumps are set
    once)."""
    env = new_env(
        deal(hands=(["10D"], ["AD"]), stock=["3H", None, "JKH"], variant="honeymoon"),
        "honeymoon",
    )
    play(env, "10D", "AD")
    assert seen_in(env, 0, FACE_UP) == {"JKH"} and state(env).trump == 1


def test_honeymoon_stage1_has_no_duty_to_follow() -> None:
    """Seed: "In stage 1 you may play any card. You don’t have to follow suit until
    stage 2." """
    env = new_env(
        deal(hands=(["10S"], ["AS", "2S", "5H"]), stock=["3H"], variant="honeymoon"),
        "honeymoon",
    )
    play(env, "10S")
    assert legal(env) == hand(env, 1) and {"AS", "2S"} < legal(env)
    play(env, "5H")  # a heart (trump) although holding spades
    assert state(env).last_trick[2] == 1


@pytest.mark.parametrize(
    ("hand1", "lead", "expected"),
    [
        # joker led = a trump lead: answer with a trump or the other joker
        (["JKL", "AH", "QS"], "JKH", "trumps"),
        # trump led: the joker counts as a trump
        (["JKL", "AH", "QS"], "KH", "trumps"),
        (
            "JKL AS KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S".split(),
            "KH",
            "joker",
        ),
        # plain suit led: the joker is not of that suit
        (["JKL", "AH", "QS"], "KS", "spades"),
        # void in the suit led: anything, the joker included
        (
            "JKL AH KH QH JH 10H 9H 8H 7H 6H 5H 4H 3H".split(),
            "KS",
            "all",
        ),
    ],
    ids=[
        "joker-led",
        "trump-led",
        "trump-led-only-joker",
        "plain-led",
        "plain-led-void",
    ],
)
def test_honeymoon_stage2_follows_suit_with_jokers_as_trumps(
    hand1: list[str], lead: str, expected: str
) -> None:
    """Seed: "They count as trumps for following suit." / "You don’t have to follow suit
    until stage 2." (Trumps are hearts.)"""
    hand0 = ["2H", lead] + (["JKH"] if lead != "JKH" and "JKH" not in hand1 else [])
    env = stage2("honeymoon", hand0, hand1)
    play(env, lead)
    held = hand(env, 1)
    want = {
        "trumps": {c for c in held if c.endswith("H") or c.startswith("JK")},
        "spades": {c for c in held if c.endswith("S")},
        "joker": {"JKL"},
        "all": held,
    }[expected]
    assert want and legal(env) == want
    assert ("JKL" in legal(env)) == (expected != "spades")


@pytest.mark.parametrize(
    ("hand0", "tricks", "points"),
    [
        # every trump but 3H and 2H: player_0 takes all 27 tricks
        (
            TOP_TRUMPS,
            [27, 0],
            14,
        ),
        # a low trump and low spades against player_1's ace of spades and higher trumps:
        # player_0 keeps only his 14 stage-1 tricks
        (
            LOW_TRUMP_AND_SPADES,
            [14, 13],
            1,
        ),
    ],
    ids=["27-tricks", "14-tricks"],
)
def test_honeymoon_every_trick_counts(
    hand0: list[str], tricks: list[int], points: int
) -> None:
    """Seed: "Every trick counts. The player who takes 14 or more of the 27 tricks
    scores 1 match point for each trick over 13." With ``episode="deal"`` the reward is
    ± the deal's match points; play goes on after the 7th stage-2 trick."""
    env = stage2("honeymoon", hand0, [], episode="deal")
    rng = np.random.default_rng(0)
    while not all(env.terminations.values()):
        assert all(r == 0.0 for r in env.rewards.values())
        env.step(int(rng.choice(env.unwrapped.legal_actions())))
    s = state(env)
    assert [s.tricks1[p] + s.tricks2[p] for p in (0, 1)] == tricks
    assert sum(s.tricks2) == 13 and s.hands == [0, 0]  # all 13 stage-2 tricks played
    assert s.match == [points, 0]
    assert env.rewards == {"player_0": float(points), "player_1": -float(points)}


def test_honeymoon_match_to_14_ends_with_plus_minus_one() -> None:
    """Seed: "the first player to 14 match points wins." 27 tricks give 14 points in one
    deal; ``episode="match"`` (the default) rewards +1 / -1."""
    env = stage2("honeymoon", TOP_TRUMPS, [])
    rng = np.random.default_rng(0)
    while not all(env.terminations.values()):
        env.step(int(rng.choice(env.unwrapped.legal_actions())))
    assert state(env).match == [14, 0] and state(env).deal_no == 1
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}


def test_honeymoon_match_goes_on_below_14_and_the_deal_alternates() -> None:
    """Seed: "Play several deals. The deal alternates, and the first player to 14 match
    points wins." After a 1-point deal the match goes on with the other dealer, and it
    ends, +1 / -1, in the first deal that takes somebody to 14."""
    env = stage2("honeymoon", LOW_TRUMP_AND_SPADES, [])
    rng = np.random.default_rng(0)
    while state(env).deal_no == 0:
        env.step(int(rng.choice(env.unwrapped.legal_actions())))
    # the first dealer was 1
    assert state(env).match == [1, 0] and state(env).dealer == 0
    assert not any(env.terminations.values()) and env.rewards["player_0"] == 0.0
    dealers = {0: 1}  # deal number -> dealer
    while not all(env.terminations.values()):
        dealers.setdefault(state(env).deal_no, state(env).dealer)
        assert max(state(env).match) < 14
        env.step(int(rng.choice(env.unwrapped.legal_actions())))
    order = [dealers[k] for k in sorted(dealers)]
    assert len(order) >= 3, order
    assert all(a != b for a, b in zip(order, order[1:], strict=False)), order
    s = state(env)
    assert s.match[s.winner] >= 14 > s.match[1 - s.winner]
    assert env.rewards[f"player_{s.winner}"] == 1.0
    assert env.rewards[f"player_{1 - s.winner}"] == -1.0


# --- forced deals ---------------------------------------------------------------------
def _honeymoon_deals() -> list[dict[str, Any]]:
    first = deal(variant="honeymoon", dealer=0)
    second = deal(hands=(["JKH", "JKL"], ["AS"]), variant="honeymoon")
    del second["dealer"]  # fixed by the alternation
    return [first, second]


def test_forced_deals_in_a_match_engine() -> None:
    """Conventions: "``"deals": [...]`` fixes several in order" — the engine side: the
    outcomes of ``forced_chance`` replay both deals, the second by the other dealer."""
    g = GermanWhist("honeymoon", "match")
    deals = _honeymoon_deals()
    outcomes = g.forced_chance({"deals": deals})
    s = g.new_state()
    while g.current_player(s) == CHANCE:
        g.apply(s, outcomes.pop(0))
    assert s.dealer == 0 and names_of(g, s.hands[0]) == set(deals[0]["hands"][0])
    while s.deal_no == 0:
        g.apply(s, g.legal_actions(s)[0])
    while g.current_player(s) == CHANCE:
        g.apply(s, outcomes.pop(0))
    assert not outcomes and s.dealer == 1
    assert names_of(g, s.hands[0]) == set(deals[1]["hands"][0])
    assert [g.deck.format(c) for c in s.stock] == deals[1]["stock"]


def test_forced_deals_in_a_match_env() -> None:
    """Conventions: "In a multi-deal episode, ``"deal"`` fixes the first deal;
    ``"deals": [...]`` fixes several in order." """
    deals = _honeymoon_deals()
    env = envs.make(ENV, variant="honeymoon")
    env.reset(options={"deals": deals})
    assert state(env).dealer == 0 and hand(env, 0) == set(deals[0]["hands"][0])
    rng = np.random.default_rng(0)
    while state(env).deal_no == 0:
        env.step(int(rng.choice(env.unwrapped.legal_actions())))
    assert not any(env.terminations.values())
    assert state(env).dealer == 1 and hand(env, 0) == set(deals[1]["hands"][0])
    assert hand(env, 1) == set(deals[1]["hands"][1])
    assert [game(env).deck.format(c) for c in state(env).stock] == deals[1]["stock"]


def names_of(g: GermanWhist, mask: int) -> set[str]:
    return {g.deck.names[c] for c in range(g.deck.size) if mask >> c & 1}


@pytest.mark.parametrize(
    ("variant", "options", "message"),
    [
        ("german", {"deals": [deal(), deal()]}, "the episode has 1"),
        (
            "honeymoon",
            {
                "deals": [
                    deal(variant="honeymoon", dealer=0),
                    deal(variant="honeymoon", dealer=0),
                ]
            },
            "breaks the alternation",
        ),
        (
            "honeymoon",
            {
                "deals": [
                    {
                        k: v
                        for k, v in deal(variant="honeymoon").items()
                        if k != "dealer"
                    },
                    deal(variant="honeymoon"),
                ]
            },
            "names a dealer but the first deal does not",
        ),
        ("german", {"dealer": 0, "deal": deal(dealer=1)}, "disagree"),
        ("german", {"deal": deal(), "deals": [deal()]}, "not both"),
        ("german", {"deals": deal()}, "must be a list"),
        (
            "german",
            {"dealer": 2},
            r"options\['dealer'\] must be a seat number 0..1, got 2",
        ),
        (
            "german",
            {"deal": {**deal(), "dealer": -1}},
            r"deal\['dealer'\] must be a seat",
        ),
        (
            "german",
            {"deal": {**deal(), "stock": deal()["stock"][:-1]}},
            r"deal\['stock'\] must have 26 cards, got 25",
        ),
    ],
)
def test_bad_forced_deals(variant: str, options: dict, message: str) -> None:
    """Conventions: forced deals are validated; each mistake names itself."""
    env = envs.make(ENV, variant=variant)
    with pytest.raises(ValueError, match=message):
        env.reset(options=options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"variant": "schnapsen"}, "variant must be one of"),
        ({"variant": "german", "episode": "match"}, "needs variant='honeymoon'"),
        ({"variant": "honeymoon", "episode": "rubber"}, "episode must be one of"),
        (
            {"variant": "honeymoon", "match_target": 0},
            "match_target must be a positive",
        ),
        (
            {"variant": "honeymoon", "match_target": True},
            "match_target must be a positive",
        ),
    ],
)
def test_bad_options(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        envs.make(ENV, **options)


@pytest.mark.parametrize(
    "options",
    [
        {"match_target": 10},
        {"variant": "german", "episode": "deal", "match_target": 20},
        {"variant": "honeymoon", "episode": "deal", "match_target": 7},
    ],
)
def test_inert_match_target_refused(options: dict) -> None:
    """``match_target`` only decides a Honeymoon match; in a one-deal episode (German
    Whist always is one) another value would silently do nothing, so it is refused."""
    with pytest.raises(ValueError, match=r"match_target=\d+ has no effect with ep"):
        envs.make(ENV, **options)


@pytest.mark.parametrize(
    "options",
    [
        {"variant": "german", "match_target": 14},  # the default, written out
        {"variant": "honeymoon", "episode": "deal", "match_target": 14},
        {"variant": "honeymoon", "match_target": 3},  # a match: it acts
    ],
)
def test_match_target_default_or_useful_accepted(options: dict) -> None:
    game = envs.make(ENV, **options).unwrapped.game
    assert game.match_target == options["match_target"]  # kept, not dropped
    envs.make(ENV, **envs.game_options(ENV, options))  # every option written out


# --- the invariants catch broken states -----------------------------------------------
def _mid_game() -> tuple[GermanWhist, Any]:
    env = new_env(deal(hands=(["10S"], ["AS", "2S"]), stock=["KD", "QC", "JH"]))
    play(env, "10S", "AS", "KD")
    return game(env), state(env).clone()


def _corrupt_duplicate(g: GermanWhist, s: Any) -> None:
    s.hands[0] |= s.hands[1] & -s.hands[1]


def _corrupt_seen(g: GermanWhist, s: Any) -> None:
    s.seen[0] |= s.hands[0] & -s.hands[0]  # a card he was dealt, never face up


def _corrupt_tricks(g: GermanWhist, s: Any) -> None:
    s.tricks1[0] += 1


def _corrupt_trump(g: GermanWhist, s: Any) -> None:
    s.trump = (s.trump + 1) % 4


def _corrupt_void(g: GermanWhist, s: Any) -> None:
    s.voids[0] = 0b1111


def _corrupt_match(g: GermanWhist, s: Any) -> None:
    s.match[1] = 3


def _corrupt_turn(g: GermanWhist, s: Any) -> None:
    s.to_play = 1 - s.to_play


@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (_corrupt_duplicate, "cards not conserved"),
        (_corrupt_seen, "Seen row"),
        (_corrupt_tricks, "stage-1 tricks"),
        (_corrupt_trump, "trumps"),
        (_corrupt_void, "marked void"),
        (_corrupt_match, "match points"),
        (_corrupt_turn, "to play"),
    ],
)
def test_invariants_catch_broken_states(corrupt: Any, message: str) -> None:
    g, s = _mid_game()
    g.check_invariants(s)  # the real state is fine
    corrupt(g, s)
    with pytest.raises(AssertionError, match=message):
        g.check_invariants(s)


def test_invariants_hold_through_random_games() -> None:
    """Every state of random games of every variant passes the invariants."""
    rng = np.random.default_rng(7)
    for variant, episode in (
        ("german", "deal"),
        ("honeymoon", "deal"),
        ("honeymoon", "match"),
    ):
        g = GermanWhist(variant, episode)
        s = g.new_state()
        while not g.is_terminal(s):
            g.check_invariants(s)
            if g.current_player(s) == CHANCE:
                for outcome in g.sample_chance(s, rng):
                    g.apply(s, outcome)
            else:
                g.apply(s, int(rng.choice(g.legal_actions(s))))
        g.check_invariants(s)
        assert s.phase == Phase.OVER


@pytest.mark.parametrize("variant", ["german", "honeymoon"])
def test_derived_blocks_match_their_definitions(variant: str) -> None:
    """The observation's derived blocks agree with brute force over random play: a
    master is a card of my hand that no unplayed card outside my hand beats when both
    are of its suit; a winner beats the card led by the engine's own trick rule."""
    from parlour.envs.german_whist import observation

    env = envs.make("german_whist_v0", variant=variant, episode="deal")
    g = game(env)
    n = g.deck.size
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(20):
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            s = state(env)
            me = s.to_play
            vec = env.observe(f"player_{me}")["observation"]
            hand = s.hands[me]
            outside = g.deck.all_mask & ~hand & ~s.played
            for c in range(n):
                if not (1 << c) & hand:
                    assert vec[6 * n + c] == vec[7 * n + c] == 0
                    continue
                suit = g._suit_of_mask(s, c)
                beaten = any(
                    (1 << o) & outside
                    and (1 << o) & suit
                    and g._strength[o] > g._strength[c]
                    for o in range(n)
                )
                assert vec[6 * n + c] == (not beaten), (variant, g.deck.format(c))
                wins = s.lead >= 0 and not g._beats(s, s.lead, c)
                assert vec[7 * n + c] == wins, (variant, g.deck.format(c))
                checked += 1
            legal = env.unwrapped.legal_actions()
            env.step(legal[int(rng.integers(len(legal)))])
    assert checked > 1000
    assert observation.size(n) == g.observation_size
