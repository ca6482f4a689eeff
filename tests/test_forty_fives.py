"""Scenario tests for ``forty_fives_v0`` (the rule book and the rules notes §1).

Each test forces an exact deal and checks one rule; the docstrings quote the seed
sentence (German) or the rules-notes point behind it. Single-deal scenarios go through
the env's ``reset(options={"deal": …})``; matches of several deals drive the engine with
the same ``forced_chance`` outcomes the env uses.
"""

from __future__ import annotations

import copy
from collections import deque
from itertools import pairwise

import numpy as np
import pytest
from helpers import hands_of

from parlour import envs
from parlour.envs.core.cards import FRENCH_52 as DECK
from parlour.envs.core.engine import CHANCE, TERMINAL, IllegalActionError
from parlour.envs.forty_fives import FortyFives
from parlour.envs.forty_fives.state import Phase

ENV = "forty_fives_v0"

# rules-notes §1.3, copied here so that the tests do not read the engine's own tables.
TRUMP_ORDER = {  # highest first
    "S": "5 J AH A K Q 2 3 4 6 7 8 9 10",
    "C": "5 J AH A K Q 2 3 4 6 7 8 9 10",
    "D": "5 J AH A K Q 10 9 8 7 6 4 3 2",
    "H": "5 J AH K Q 10 9 8 7 6 4 3 2",
}
PLAIN_ORDER = {
    "S": "K Q J A 2 3 4 5 6 7 8 9 10",
    "C": "K Q J A 2 3 4 5 6 7 8 9 10",
    "D": "K Q J 10 9 8 7 6 5 4 3 2 A",
    "H": "K Q J 10 9 8 7 6 5 4 3 2",
}


# --- helpers --------------------------------------------------------------------------
def full_deal(hands, stock_top=(), kitty=None, dealer=0):
    """A complete forced deal: the stock is ``stock_top`` then every other card in pack
    order."""
    used = {DECK.card(c) for h in hands for c in h} | {DECK.card(c) for c in stock_top}
    if kitty is not None:
        used |= {DECK.card(c) for c in kitty}
    rest = [DECK.names[c] for c in range(52) if c not in used]
    deal = {
        "dealer": dealer,
        "hands": [list(h) for h in hands],
        "stock": list(stock_top) + rest,
    }
    if kitty is not None:
        deal["kitty"] = list(kitty)
    return deal


class Table:
    """An engine driven by forced deals, acting by action names."""

    def __init__(self, deals, **options):
        self.game = FortyFives(**options)
        self.state = self.game.new_state()
        deals = deals if isinstance(deals, list) else [deals]
        self.forced = deque(self.game.forced_chance({"deals": deals}))
        self.advance()

    def advance(self):
        # Every test forces all of its chance; past the forced deals the table waits at
        # the next deal's chance node.
        while self.game.current_player(self.state) == CHANCE and self.forced:
            self.game.apply(self.state, self.forced.popleft())

    def act(self, *names):
        for name in names:
            self.game.apply(self.state, self.game.action_id(name))
            self.game.check_invariants(self.state)
            self.advance()

    def play(self, *cards):
        """Play cards in turn (a robber who plays a card declines to rob)."""
        self.act(*cards)

    def legal(self):
        return self.game.legal_names(self.state)

    @property
    def to_play(self):
        return self.game.current_player(self.state)

    def hand(self, seat):
        return set(DECK.format_mask(self.state.hands[seat]).split())


def env_table(deal, **options):
    """The wrapped env reset to a forced deal."""
    env = envs.make(ENV, **options)
    env.reset(seed=0, options={"deal": deal})
    return env


def duel(hand0: str, hand1: str, turned: str = "9S", **options) -> Table:
    """A two-player table from hands written as card names: player_1 deals (so
    player_0 leads) and ``turned`` is the turned card."""
    deal = full_deal([hand0.split(), hand1.split()], [turned], dealer=1)
    return Table(deal, players=2, **options)


def cards_of(order: str, suit: str) -> list[str]:
    return [r if r == "AH" else r + suit for r in order.split()]


# --- card orders ----------------------------------------------------------------------
def _filler(exclude: set[str], suits: str, k: int) -> list[str]:
    out = [
        DECK.names[c]
        for c in range(52)
        if DECK.names[c][-1] in suits
        and DECK.names[c] not in exclude
        and DECK.names[c] != "AH"
    ]
    return out[:k]


def assert_higher_wins(hi, lo, lead_high, fill, turned):
    """Two players, ``hi`` and ``lo`` each with four cards of ``fill``, player_0
    leading one of them (``hi`` if ``lead_high``) and player_1 answering with the
    other, ``turned`` naming trumps: ``hi`` takes the trick."""
    first, second = (hi, lo) if lead_high else (lo, hi)
    deal = full_deal([[first, *fill[:4]], [second, *fill[4:]]], [turned], dealer=1)
    t = Table(deal, players=2)
    assert t.to_play == 0
    t.play(first, second)
    winner = 0 if lead_high else 1
    assert t.state.tricks_won == [winner == 0, winner == 1]


def adjacent_pairs(orders: dict[str, str]) -> list[tuple[str, str, str]]:
    """``(suit, higher, lower)`` for each two neighbours in each suit's ``orders``."""
    return [(s, hi, lo) for s in "SHDC" for hi, lo in pairwise(cards_of(orders[s], s))]


TRUMP_PAIRS = adjacent_pairs(TRUMP_ORDER)


@pytest.mark.parametrize("trump,hi,lo", TRUMP_PAIRS)
@pytest.mark.parametrize("lead_high", [False, True])
def test_trump_order(trump, hi, lo, lead_high):
    """rules-notes §1.3 trump order, e.g. ♠/♣: 5, J, A♥, A, K, Q, 2, 3, 4, 6, 7, 8, 9,
    10; "Der höchste Trumpf gewinnt den Stich". Each adjacent pair: the higher wins, led
    or not."""
    order = cards_of(TRUMP_ORDER[trump], trump)
    turned = next(c for c in reversed(order) if c not in (hi, lo) and c[0] != "A")
    others = "".join(s for s in "SHDC" if s != trump)
    assert_higher_wins(hi, lo, lead_high, _filler({hi, lo}, others, 8), turned)


def test_trump_counts():
    """ "Das A♥ ist in jedem Spiel Trumpf … (es gibt also 14 Trümpfe, bei Herz 13)"."""
    for t, order in TRUMP_ORDER.items():
        assert len(order.split()) == (13 if t == "H" else 14)
        assert order.split()[:3] == ["5", "J", "AH"]


PLAIN_PAIRS = adjacent_pairs(PLAIN_ORDER)


@pytest.mark.parametrize("suit,hi,lo", PLAIN_PAIRS)
@pytest.mark.parametrize("lead_high", [False, True])
def test_plain_order(suit, hi, lo, lead_high):
    """ "♥ ♦ (rot): K D B 10 9 8 7 6 5 4 3 2 A … ♣ ♠ (schwarz): K D B A 2 3 4 5 6 7 8 9
    10"; "liegt kein Trumpf, gewinnt die höchste Karte der ausgespielten Farbe"."""
    trump = "C" if suit != "C" else "S"
    third = next(s for s in "SHDC" if s not in (suit, trump))
    assert_higher_wins(hi, lo, lead_high, _filler({hi, lo}, third, 8), "2" + trump)


def test_plain_hearts_have_twelve_cards_and_ace_of_diamonds_is_lowest():
    """ "das Ass (A♦) ist die niedrigste Karte; das A♥ ist nie eine normale
    Herzkarte"."""
    assert len(PLAIN_ORDER["H"].split()) == 12 and "A" not in PLAIN_ORDER["H"].split()
    assert PLAIN_ORDER["D"].split()[-1] == "A"


def test_off_suit_plain_card_cannot_win():
    """ "liegt kein Trumpf, gewinnt die höchste Karte der ausgespielten Farbe": a king
    of another plain suit loses to the 2 led."""
    t = duel("2H 3C 4C 5C 6C", "KD QD JD 10D 9D", turned="2S")
    t.play("2H", "KD")
    assert t.state.tricks_won == [1, 0]


# --- the ace of hearts ----------------------------------------------------------------
def test_ace_of_hearts_lead_is_a_trump_lead():
    """rules-notes §1.3: "Leading the A♥ is a trump lead": with spades trumps a player
    holding a low spade and a heart must play the spade."""
    t = duel("AH 3C 4C 5C 6C", "2S KH QH 7D 8D")
    t.play("AH")
    assert t.legal() == ["2S"]
    t.play("2S")
    assert t.state.tricks_won == [1, 0]


@pytest.mark.parametrize("void_must_trump", [True, False])
def test_ace_of_hearts_is_not_a_heart(void_must_trump):
    """rules-notes §1.3: "When hearts are led and hearts are not trumps, holding the A♥
    does not count as holding a heart": the holder is void in hearts."""
    t = duel("2H 3C 4C 5C 6C", "AH 7D 8D 9D 10D", void_must_trump=void_must_trump)
    t.play("2H")
    if void_must_trump:
        assert t.legal() == ["AH"]  # void: must trump, and the A♥ is a trump
    else:
        assert sorted(t.legal()) == sorted(["AH", "7D", "8D", "9D", "10D"])


def test_ace_of_hearts_trumps_a_heart_lead():
    """The A♥ played to a plain heart lead is a trump and wins it."""
    t = duel("KH 3C 4C 5C 6C", "AH 2H 8D 9D 10D")
    t.play("KH")
    assert set(t.legal()) == {"AH", "2H"}  # follow, or trump with the A♥
    t.play("AH")
    assert t.state.tricks_won == [0, 1]


# --- following ------------------------------------------------------------------------
def test_plain_lead_follow_or_trump():
    """ "Du musst bedienen … oder trumpfen – stechen ist immer erlaubt, auch wenn du
    bedienen könntest.\""""
    t = duel("7D 3C 4C 5C 6C", "9D 2S KH QH JH")
    t.play("7D")
    assert set(t.legal()) == {"9D", "2S"}


@pytest.mark.parametrize("void_must_trump", [True, False])
def test_void_in_led_suit(void_must_trump):
    """[SEED≠STD] "Nur wenn du beides nicht kannst, darfst du eine beliebige Karte
    legen": a void player holding a trump must trump (void_must_trump=True, the seed);
    the standard rule (False) lets him play any card."""
    t = duel("7D 3C 4C 5C 6C", "JS KH QH JH 10H", void_must_trump=void_must_trump)
    t.play("7D")
    expect = {"JS"} if void_must_trump else {"JS", "KH", "QH", "JH", "10H"}
    assert set(t.legal()) == expect


def test_void_without_trumps_plays_anything():
    """ "Nur wenn du beides nicht kannst, darfst du eine beliebige Karte legen.\""""
    t = duel("7D 3C 4C 5C 6C", "KH QH JH 10H 9H")
    t.play("7D")
    assert set(t.legal()) == {"KH", "QH", "JH", "10H", "9H"}


# --- reneging -------------------------------------------------------------------------
def _renege_table(lead, follower, players=2, middle=None):
    hands = [[lead, "3C", "4C", "5C", "6C"], follower]
    if middle is not None:
        hands = [hands[0], middle, follower]
    deal = full_deal(hands, ["2S"], dealer=len(hands) - 1)
    return Table(deal, players=len(hands))


def test_seed_renege_example_low_trump_led():
    """ "Pik ist Trumpf. Anna spielt die 7♠ aus. Bens einziger Trumpf ist der B♠ – er
    darf ihn behalten und den K♦ legen.\""""
    t = _renege_table("7S", ["JS", "KD", "QH", "JH", "10H"])
    t.play("7S")
    assert set(t.legal()) == {"JS", "KD", "QH", "JH", "10H"}
    t.play("KD")
    assert t.state.tricks_won == [1, 0]


def test_seed_renege_example_five_led():
    """ "Hätte Anna die 5♠ ausgespielt, müsste Ben den B♠ zugeben.\""""
    t = _renege_table("5S", ["JS", "KD", "QH", "JH", "10H"])
    t.play("5S")
    assert t.legal() == ["JS"]


@pytest.mark.parametrize(
    "lead,held,may_renege",
    [
        (
            "JS",
            "AH",
            False,
        ),  # Peel: "if the knave is led, the holder of the A♥ must play it"
        ("JS", "5S", True),
        ("AH", "5S", True),
        ("AH", "JS", True),
        ("5S", "AH", False),
        ("AS", "AH", True),
        ("KS", "5S", True),
    ],
)
def test_renege_only_above_the_led_card(lead, held, may_renege):
    """ "Du musst eine dieser Karten nur legen, wenn ein besserer dieser drei Trümpfe
    ausgespielt wurde": a top trump may renege only when it ranks above the led card."""
    t = _renege_table(lead, [held, "KD", "QH", "JH", "10H"])
    t.play(lead)
    if may_renege:
        assert set(t.legal()) == {held, "KD", "QH", "JH", "10H"}
    else:
        assert t.legal() == [held]


def test_renege_with_protected_and_plain_trump_must_trump():
    """rules-notes §1.3: "Otherwise the player must play a trump, and any trump is
    allowed, protected or not" — holding the J♠ and the 3♠ on a 7♠ lead."""
    t = _renege_table("7S", ["JS", "3S", "QH", "JH", "10H"])
    t.play("7S")
    assert set(t.legal()) == {"JS", "3S"}


def test_renege_decided_by_the_led_card_only():
    """rules-notes §1.3: "Only the led card counts … A higher top trump that someone
    else plays later in the trick changes nothing": 7♠ led, 5♠ played second, the J♠ may
    still renege."""
    t = _renege_table(
        "7S", ["JS", "KD", "QH", "JH", "10H"], middle=["5S", "2D", "3D", "4D", "6D"]
    )
    t.play("7S", "5S")
    assert set(t.legal()) == {"JS", "KD", "QH", "JH", "10H"}


def test_renege_does_not_apply_to_plain_leads():
    """rules-notes §1.3: the renege privilege only covers trump leads; void in a plain
    suit with only the 5 of trumps, the player must trump with it (void_must_trump)."""
    t = _renege_table("7D", ["5S", "KH", "QH", "JH", "10H"])
    t.play("7D")
    assert t.legal() == ["5S"]


# --- robbing --------------------------------------------------------------------------
def test_seed_rob_example():
    """ "Aufgedeckt ist die 9♣. Ben hat das A♣. Vor seiner ersten Karte legt er seine 3♦
    verdeckt unter den Stapel und nimmt die 9♣ auf die Hand.\""""
    hands = hands_of(
        "2H 3H 4H 6H 7H | AC 3D KH QH JH | 2D 4D 5D 6D 7D | 8D 9D 10D JD QD"
    )
    t = Table(full_deal(hands, ["9C"], dealer=0), players=4)
    assert t.state.phase == Phase.PLAY and t.to_play == 1  # Ben leads, may rob first
    robs = {"rob:AC", "rob:3D", "rob:KH", "rob:QH", "rob:JH"}
    assert set(t.legal()) == robs | {"AC", "3D", "KH", "QH", "JH"}
    t.act("rob:3D")
    assert t.hand(1) == {"AC", "9C", "KH", "QH", "JH"}
    assert t.state.robbed_by == 1 and t.state.phase == Phase.PLAY and t.to_play == 1
    assert set(t.legal()) == {"AC", "9C", "KH", "QH", "JH"}  # robbed: now he leads


def test_playing_the_first_card_declines_the_rob():
    """ "Geraubt wird, bevor du deine erste Karte spielst – sonst ist das Recht
    verfallen": a robber who plays his first card has declined; there is no separate
    decline (``norob`` is never legal), and nothing is offered again."""
    hands = hands_of(
        "2H 3H 4H 6H 7H | AC 3D KH QH JH | 2D 4D 5D 6D 7D | 8D 9D 10D JD QD"
    )
    t = Table(full_deal(hands, ["9C"], dealer=0), players=4)
    with pytest.raises(IllegalActionError, match="playing your first card"):
        t.act("norob")
    # Only the robber is told (his text view, his "I may rob now" bit: F+4, where F is
    # the first flag bit, 52 * (n + 4)).
    flag = 52 * (4 + 4) + 4
    assert "may first rob" in t.game.render(t.state, 1)
    assert t.game.observe(t.state, 1)[flag] == 1.0
    for seat in (0, 2, 3):
        assert "rob" not in t.game.render(t.state, seat)
        assert t.game.observe(t.state, seat)[flag] == 0.0
    t.act("KH")
    assert "may first rob" not in t.game.render(t.state)
    assert t.game.observe(t.state, 1)[flag] == 0.0
    assert t.state.robbed_by == -1 and t.state.rob_seat == -1
    assert t.hand(1) == {"AC", "3D", "QH", "JH"}
    t.play("4D", "8D", "2H")
    assert t.to_play == 1 and set(t.legal()) == {"QH", "JH", "3D", "AC"}  # no rob
    with pytest.raises(IllegalActionError, match="may rob"):
        t.act("rob:KH")


def test_rob_at_first_turn_not_leading():
    """ "Geraubt wird, bevor du deine erste Karte spielst – sonst ist das Recht
    verfallen": [ENGINE CHOICE] the decision comes at the holder's first turn in trick
    1; after it no rob is offered again."""
    hands = hands_of(
        "2H 3H 4H 6H 7H | 8H 9H 10H JH QH | AC 4D 5D 6D 7D | 8D 9D 10D JD QD"
    )
    t = Table(full_deal(hands, ["9C"], dealer=0), players=4)
    assert t.state.phase == Phase.PLAY and t.to_play == 1
    assert set(t.legal()) == {"8H", "9H", "10H", "JH", "QH"}  # no rob for player_1
    t.act("8H")
    assert t.state.phase == Phase.PLAY and t.to_play == 2
    # void in hearts: he must trump, or rob first (any card of his hand)
    assert set(t.legal()) == {"AC", "rob:AC", "rob:4D", "rob:5D", "rob:6D", "rob:7D"}
    t.play("AC", "8D", "2H")
    for _ in range(4):  # trick 2 onwards: never a rob
        assert not any(n.startswith("rob") for n in t.legal())
        t.act(t.legal()[0])


def test_dealer_robs_a_turned_ace():
    """ "Ist die aufgedeckte Karte selbst ein Ass, darf der Geber sie auf dieselbe Weise
    rauben.\""""
    hands = hands_of(
        "2H 3H 4H 6H 7H | 8H 9H 10H JH QH | 2D 4D 5D 6D 7D | 8D 9D 10D JD QD"
    )
    t = Table(full_deal(hands, ["AS"], dealer=3), players=4)
    t.play("2H", "8H", "2D")
    assert t.to_play == 3 and "rob:QD" in t.legal()
    t.act("rob:QD")
    assert t.hand(3) == {"8D", "9D", "10D", "JD", "AS"}
    assert t.state.robbed_by == 3 and t.state.buried == DECK.card("QD")


def test_ace_of_hearts_gives_no_rob_unless_hearts_are_trumps():
    """rules-notes §1.3: "When hearts are not trumps, holding the A♥ gives no right to
    rob"; when hearts are trumps the A♥ is the trump ace and its holder may rob."""
    hands = [["AH", "3C", "4C", "5C", "6C"], ["2D", "3D", "4D", "5D", "6D"]]
    t = Table(full_deal(hands, ["9S"], dealer=1), players=2)
    assert t.to_play == 0 and not any(n.startswith("rob") for n in t.legal())
    t = Table(full_deal(hands, ["9H"], dealer=1), players=2)
    assert t.to_play == 0 and "rob:3C" in t.legal()


def test_no_rob_when_the_trump_ace_is_in_the_stock():
    """Only the holder of the ace of trumps may rob; nobody holds it when it is
    undealt."""
    hands = [["2H", "3C", "4C", "5C", "6C"], ["2D", "3D", "4D", "5D", "6D"]]
    t = Table(full_deal(hands, ["9S"], dealer=1), players=2)
    assert t.state.rob_seat == -1 and t.state.phase == Phase.PLAY


# --- scoring --------------------------------------------------------------------------
SEED_BONUS_HANDS = [  # Anna, Ben, Carla, Dan; spades trumps, Dan deals
    ["KH", "KD", "KC", "QC", "7D"],
    ["JS", "3H", "3D", "2C", "9D"],
    ["2H", "2D", "3C", "6C", "4H"],
    ["5H", "5D", "5C", "7C", "6H"],
]


def test_seed_bonus_example_partnership():
    """ "Anna und Carla machen 3 Stiche, Ben und Dan 2. Bens B♠ war der höchste
    gespielte Trumpf, also bekommt seine Partei den Bonus: Anna und Carla 15, Ben und
    Dan 15.\""""
    t = Table(full_deal(SEED_BONUS_HANDS, ["2S"], dealer=3), players=4)
    t.play("KH", "3H", "2H", "5H")  # Anna
    t.play("KD", "3D", "2D", "5D")  # Anna
    t.play("KC", "JS", "3C", "5C")  # Ben trumps
    t.play("2C", "6C", "7C", "QC")  # Anna's Q♣
    t.play("7D", "9D", "4H", "6H")  # Ben's 9♦
    assert t.state.deal_no == 1 and t.state.scores == [15, 15]
    assert not t.game.is_terminal(t.state)  # on to the next deal


def test_partners_share_trick_points():
    """ "Jeder Stich bringt der Partei, die ihn gewinnt, 5 Punkte": seats 0 and 2
    (partners opposite) pool their tricks."""
    t = Table(full_deal(SEED_BONUS_HANDS, ["2S"], dealer=3), players=4, episode="deal")
    t.play(
        "KH",
        "3H",
        "2H",
        "5H",
        "KD",
        "3D",
        "2D",
        "5D",
        "KC",
        "JS",
        "3C",
        "5C",
        "2C",
        "6C",
        "7C",
        "QC",
        "7D",
        "9D",
        "4H",
        "6H",
    )
    assert t.game.teams() == [[0, 2], [1, 3]]
    assert t.state.tricks_won == [3, 2, 0, 0] and t.state.deal_gain == [15, 15]
    assert t.game.is_terminal(t.state)
    assert t.game.returns(t.state) == [0.0, 0.0, 0.0, 0.0]  # 15:15


def test_deal_without_trumps_is_worth_25():
    """ "Legt im ganzen Spiel niemand einen Trumpf, gibt es keinen Bonus und nur 25
    Punkte.\""""
    hands = hands_of(
        "KH QH JH 10H 9H | KD QD JD 10D 9D | KC QC JC 10C 9C | 8H 8D 8C 7H 7D"
    )
    t = Table(full_deal(hands, ["2S"], dealer=3), players=4, episode="deal")
    while not t.game.is_terminal(t.state):
        t.act(t.legal()[0])
    assert sum(t.state.scores) == 25 and t.state.bonus_team == -1


def test_bonus_goes_to_the_side_of_the_highest_trump():
    """ "Der Stich mit dem höchsten Trumpf, der im Spiel gelegt wurde, bringt 5 Punkte
    extra": player 1 takes only the trick of the 5♠ but gets 10."""
    hands = [["KH", "KD", "KC", "QH", "QD"], ["5S", "2H", "2D", "3C", "4C"]]
    t = Table(full_deal(hands, ["9S"], dealer=1), players=2, episode="deal")
    t.play("KH", "5S")  # the 5 wins: 1 leads
    t.play("2H", "QH", "KD", "2D", "KC", "3C", "QD", "4C")
    assert t.state.tricks_won == [4, 1]
    assert t.state.scores == [20, 10]


def test_match_reward_shared_by_partners():
    """Partners share the result: +1 to both seats of the winning side, -1 to the
    others."""
    top = ["5S", "JS", "AH", "KS", "QS"]
    hands = [
        top,
        ["2H", "3D", "4C", "5C", "6C"],
        ["7H", "8H", "9H", "10H", "JH"],
        ["2D", "4D", "5D", "6D", "7D"],
    ]
    deals = [full_deal(hands, ["9S"], dealer=3), full_deal(hands, ["9S"], dealer=0)]
    t = Table(deals, players=4)
    while not t.game.is_terminal(t.state):
        t.act(t.legal()[0])
    assert t.state.scores[0] >= 45
    assert t.game.returns(t.state) == [1.0, -1.0, 1.0, -1.0]


# --- end of game ----------------------------------------------------------------------
TOP = ["5S", "JS", "AH", "KS", "QS"]
WEAK = ["2H", "3D", "4C", "5C", "6C"]


def dominant(seat, dealer, players=2, kitty=None):
    """A deal in which ``seat`` holds the five best spades (trumps: the turned 9♠)."""
    hands = [list(WEAK) for _ in range(players)]
    extra = iter(
        [
            "7H",
            "8H",
            "9H",
            "10H",
            "JH",
            "2D",
            "4D",
            "5D",
            "6D",
            "7D",
            "8D",
            "9D",
            "10D",
            "JD",
            "QD",
            "KD",
            "7C",
            "8C",
            "9C",
            "10C",
        ]
    )
    for s in range(players):
        if s == seat:
            hands[s] = list(TOP)
        elif s != (seat + 1) % players:  # the seat after the dominant one keeps WEAK
            hands[s] = [next(extra) for _ in range(5)]
    return full_deal(hands, ["9S"], kitty=kitty, dealer=dealer)


def play_out(t):
    """First legal card for every play until the deal (or game) is over."""
    deal_no = t.state.deal_no
    while not t.game.is_terminal(t.state) and t.state.deal_no == deal_no:
        t.act(t.legal()[0])  # a card: a robber declines


# The 15:15 deal: the leader (A) holds KH KD KC 2H 2D, the other (B) 5S 3H 3D 3C QC.
SPLIT_A = ["KH", "KD", "KC", "2H", "2D"]
SPLIT_B = ["5S", "3H", "3D", "3C", "QC"]


def test_game_ends_at_45_after_the_deal():
    """ "Die Partei, die zuerst 45 Punkte erreicht, gewinnt" — checked after each deal
    (rules-notes §1.3): the deal is played out first."""
    t = Table([dominant(0, dealer=1), dominant(0, dealer=0)], players=2)
    play_out(t)
    assert t.state.scores == [30, 0] and not t.game.is_terminal(t.state)
    for _ in range(6):  # three tricks of deal 2: 45 on trick points, the deal goes on
        t.play(t.legal()[0])
    assert t.state.deal_points == [15, 0] and not t.game.is_terminal(t.state)
    play_out(t)
    assert t.game.is_terminal(t.state) and t.state.scores == [60, 0]
    assert t.game.returns(t.state) == [1.0, -1.0]


def test_tie_at_45_plays_another_deal():
    """ "Kommen zwei Parteien im selben Spiel darüber, gewinnt die mit der höheren
    Punktzahl"; [ENGINE CHOICE] equal top scores at 45 or more: another deal."""
    deals = [
        dominant(0, dealer=0),  # 30:0
        dominant(1, dealer=1),  # 30:30
        full_deal([SPLIT_B, SPLIT_A], ["9S"], dealer=0),  # seat 1 leads: 15:15 -> 45:45
        dominant(0, dealer=1),
    ]
    t = Table(deals, players=2)
    play_out(t)
    play_out(t)
    assert t.state.scores == [30, 30]
    t.play("KH", "3H", "KD", "3D", "KC", "3C", "2H", "5S", "QC", "2D")
    assert t.state.scores == [45, 45]
    assert not t.game.is_terminal(t.state) and t.state.deal_no == 3
    play_out(t)
    assert t.game.is_terminal(t.state) and t.state.scores == [75, 45]
    assert t.game.returns(t.state) == [1.0, -1.0]


def test_both_over_target_higher_wins():
    """ "Kommen zwei Parteien im selben Spiel darüber, gewinnt die mit der höheren
    Punktzahl" (shown with target=25 so that two deals suffice)."""
    twenty_ten = full_deal(
        [["5S", "KH", "KD", "2H", "2D"], ["3H", "3D", "4H", "4D", "6C"]],
        ["9S"],
        dealer=1,
    )
    t = Table(
        [full_deal([SPLIT_B, SPLIT_A], ["9S"], dealer=0), twenty_ten],
        players=2,
        target=25,
    )
    t.play("KH", "3H", "KD", "3D", "KC", "3C", "2H", "5S", "QC", "2D")
    assert t.state.scores == [15, 15]
    t.play("KH", "3H", "KD", "3D", "5S", "6C", "2H", "4H", "4D", "2D")
    assert t.state.scores == [35, 25]
    assert t.game.is_terminal(t.state) and t.game.returns(t.state) == [1.0, -1.0]


def test_twenty_five_ends_mid_deal_without_bonus():
    """Twenty-five: "Kein Bonus – nur 5 je Stich, und wer zuerst 25 hat, gewinnt sofort,
    auch mitten im Spiel.\""""
    deal1 = full_deal(
        [["5S", "JS", "AH", "KS", "2H"], ["3H", "4H", "6D", "7D", "8C"]],
        ["9S"],
        dealer=1,
    )
    deal2 = full_deal([list(TOP), ["2H", "3D", "4C", "5C", "6C"]], ["9S"], dealer=0)
    t = Table([deal1, deal2], players=2, variant="twenty_five")
    t.play("2H", "3H", "4H", "5S", "JS", "6D", "AH", "7D", "KS", "8C")
    assert t.state.scores == [20, 5]  # no bonus for the 5♠
    t.play("2H", "5S")  # seat 1 leads; seat 0 trumps: 25
    assert t.game.is_terminal(t.state)
    assert t.state.trick_no == 1 and t.state.hands[0].bit_count() == 4
    assert t.game.returns(t.state) == [1.0, -1.0]


def test_three_players_each_alone():
    """ "Zu zweit, zu dritt oder zu fünft spielt jeder für sich": the winner gets +1,
    the two others -1/2 each (zero-sum)."""
    hands = [list(TOP), ["2H", "3D", "4C", "5C", "6C"], ["7H", "8H", "9H", "10H", "JH"]]
    deals = [full_deal(hands, ["9S"], dealer=d % 3) for d in range(2, 4)]
    t = Table(deals, players=3)
    assert t.game.teams() == [[0], [1], [2]]
    while not t.game.is_terminal(t.state):
        play_out(t)
    assert t.game.returns(t.state) == [1.0, -0.5, -0.5]


def test_six_players_two_teams_of_three():
    """ "zu sechst in zwei Parteien zu dritt (abwechselnd sitzend)\""""
    assert FortyFives(players=6).teams() == [[0, 2, 4], [1, 3, 5]]


def test_deal_limit_ends_the_match():
    """rules-notes §1.3 "Give the environment a deal limit as a safeguard": after
    ``max_deals`` deals the leading side wins."""
    t = Table([dominant(0, dealer=1)], players=2, max_deals=1)
    play_out(t)
    assert t.game.is_terminal(t.state) and t.state.scores == [30, 0]
    assert t.game.returns(t.state) == [1.0, -1.0]


# --- the deal -------------------------------------------------------------------------
@pytest.mark.parametrize("packets,first", [("3+2", 3), ("2+3", 2)])
def test_deal_in_packets(packets, first):
    """ "jedem 5 Karten: erst 3, dann 2 (oder erst 2, dann 3)", clockwise from the
    dealer's left; the record lists the packets."""
    hands = hands_of("2H 3H 4H 5H 6H | 2D 3D 4D 5D 6D | 2C 3C 4C 5C 6C")
    t = Table(full_deal(hands, ["9S"], dealer=2), players=3, packets=packets)
    packets_dealt = t.game.packets_dealt(t.state)
    assert [p[0] for p in packets_dealt[:6]] == ["player_0", "player_1", "player_2"] * 2
    assert packets_dealt[0][1] == hands[0][:first]
    assert packets_dealt[3][1] == hands[0][first:]
    assert packets_dealt[6][0] == "stock" and packets_dealt[6][1][0] == "9S"


def test_auction_kitty_dealt_after_first_round():
    """NEA45s (rules-notes §1.3): the kitty is dealt after the first round of
    packets."""
    deal = dominant(0, dealer=1, kitty=["7D", "8D", "9D"])
    t = Table(deal, players=2, variant="auction")
    labels = [p[0] for p in t.game.packets_dealt(t.state)]
    assert labels == ["player_0", "player_1", "kitty", "player_0", "player_1", "stock"]


def test_first_player_is_dealers_left():
    """ "Der linke Nachbar des Gebers spielt zum ersten Stich aus\""""
    hands = hands_of(
        "2H 3H 4H 5H 6H | 2D 3D 4D 5D 6D | 2C 3C 4C 5C 6C | 7H 8H 9H 10H JH"
    )
    for dealer in range(4):
        t = Table(full_deal(hands, ["9S"], dealer=dealer), players=4)
        assert t.to_play == (dealer + 1) % 4


def test_dealer_rotates_left():
    """ "Danach gibt reihum der linke Nachbar.\""""
    t = Table([dominant(0, dealer=1), dominant(0, dealer=0)], players=2)
    play_out(t)
    assert t.state.dealer == 0


# --- auction: bidding -----------------------------------------------------------------
def auction4(**options):
    hands = hands_of(
        "2H 3H 4H 5H 6H | 2D 3D 4D 5D 6D | 2C 3C 4C 5C 6C | 7H 8H 9H 10H JH"
    )
    deal = full_deal(hands, kitty=["KS", "QS", "JS"], dealer=0)
    return Table(deal, players=4, variant="auction", **options)


def test_auction_starts_left_of_dealer():
    """rules-notes §1.3: "The player on the dealer's left starts"; no turned card, no
    rob."""
    t = auction4()
    assert t.state.phase == Phase.BID and t.to_play == 1 and t.state.turned == -1
    assert t.legal() == ["pass", "bid:15", "bid:20", "bid:25", "bid:30"]


def test_dealer_hold_then_pass_out():
    """rules-notes §1.3: "The dealer may also hold: take the contract at the current
    high bid without raising\""""
    t = auction4()
    t.act("bid:20", "pass", "pass")
    assert t.legal() == ["pass", "bid:25", "bid:30", "hold"]
    t.act("hold")
    assert t.to_play == 1 and t.legal() == ["pass", "bid:25", "bid:30"]
    t.act("pass")
    assert (
        t.state.phase == Phase.TRUMP and t.state.bidder == 0 and t.state.contract == 20
    )


def test_raise_after_hold():
    """rules-notes §1.3: "After a hold, every player still in may bid again, and each
    later bid must be higher. The dealer may hold again.\""""
    t = auction4()
    t.act("bid:15", "pass", "pass", "hold", "bid:20", "hold", "bid:25", "pass")
    assert t.state.bidder == 1 and t.state.contract == 25
    assert t.state.held == 2


def test_forced_fifteen():
    """ "passen alle, muss der Geber 15 spielen": the dealer cannot pass; rules-notes:
    he may also bid higher."""
    t = auction4()
    t.act("pass", "pass", "pass")
    assert t.to_play == 0 and t.legal() == ["bid:15", "bid:20", "bid:25", "bid:30"]
    t.act("bid:15")
    assert (
        t.state.bidder == 0 and t.state.contract == 15 and t.state.phase == Phase.TRUMP
    )


def test_pass_is_final_and_thirty_cannot_be_beaten():
    """rules-notes §1.3: "A pass is final." "A bid or hold of 30 cannot be beaten.\""""
    t = auction4()
    t.act("pass", "bid:15", "bid:30")
    assert t.to_play == 0 and t.legal() == ["pass", "hold"]  # seat 1 passed: skipped
    t.act("hold")
    assert t.to_play == 2 and t.legal() == ["pass"]
    t.act("pass")
    assert t.to_play == 3 and t.legal() == ["pass"]
    t.act("pass")
    assert t.state.bidder == 0 and t.state.contract == 30


def test_non_dealer_cannot_hold():
    """Only the dealer holds; the error names the legal calls."""
    t = auction4()
    with pytest.raises(IllegalActionError, match="legal: pass, bid:15"):
        t.act("hold")


def test_bidder_names_trumps_and_takes_kitty():
    """ "Wer das Höchstgebot hat, bestimmt den Trumpf und nimmt eine Kitty aus 3
    zusätzlich verdeckt gegebenen Karten auf\""""
    t = auction4()
    t.act("bid:20", "pass", "pass", "pass")
    assert t.state.phase == Phase.TRUMP and t.to_play == 1
    assert t.legal() == ["trump:S", "trump:H", "trump:D", "trump:C"]
    t.act("trump:S")
    assert t.hand(1) == {"2D", "3D", "4D", "5D", "6D", "KS", "QS", "JS"}
    assert t.state.trump == 0 and t.state.phase == Phase.DISCARD


def test_bidder_must_discard_at_least_three():
    """rules-notes §1.3: "the bidder must discard at least 3": done is not legal above
    5."""
    t = auction4()
    t.act("pass", "pass", "pass", "bid:15", "trump:S")
    for seat in (1, 2, 3):
        assert t.to_play == seat
        t.act("done")
    assert t.to_play == 0 and "done" not in t.legal()
    t.act("discard:2H", "discard:3H")
    assert "done" not in t.legal()
    t.act("discard:4H")
    assert "done" in t.legal()
    t.act("done")
    assert t.state.drawn == [0, 0, 0, 0]
    assert t.state.phase == Phase.PLAY and t.to_play == 0  # "Der Bieter spielt aus."


def test_refill_counts_and_stock_limit_six_players():
    """ "dann legt jeder ab, und der Geber füllt alle Hände vom Stapel auf 5 Karten
    auf"; [ENGINE CHOICE] one player at a time from the dealer's left, never more
    discards than the stock can replace (6 players leave 19 cards)."""
    pack = [n for n in DECK.names if n not in ("KS", "QS", "JS")]
    hands = [pack[5 * s : 5 * s + 5] for s in range(6)]
    t = Table(
        full_deal(hands, kitty=["KS", "QS", "JS"], dealer=0),
        players=6,
        variant="auction",
    )
    t.act("bid:15", "pass", "pass", "pass", "pass", "pass", "trump:S")
    assert len(t.state.stock) == 19
    assert t.to_play == 1  # the bidder: 8 cards, discards 3
    for card in sorted(t.hand(1))[:3]:
        t.act("discard:" + card)
    t.act("done")
    for seat in (2, 3, 4):  # discard the whole hand
        assert t.to_play == seat
        for card in sorted(t.hand(seat)):
            t.act("discard:" + card)
        t.act("done")
    assert t.state.drawn[1:5] == [0, 5, 5, 5] and t.state.discards[1:5] == [3, 5, 5, 5]
    assert len(t.state.stock) - t.state.stock_pos == 4
    assert t.to_play == 5
    for card in sorted(t.hand(5))[:4]:
        t.act("discard:" + card)
    assert t.legal() == ["done"]  # one card kept: the stock has just 4
    t.act("done")
    assert t.to_play == 0 and t.legal() == ["done"]
    t.act("done")
    assert t.state.drawn == [0, 0, 5, 5, 5, 4]
    assert all(h.bit_count() == 5 for h in t.state.hands)
    assert t.state.phase == Phase.PLAY and t.to_play == 1


@pytest.mark.parametrize("bidder_leads,leader", [(True, 1), (False, 2)])
def test_bidder_leads_option(bidder_leads, leader):
    """ "Der Bieter spielt aus." [SEED≠STD] Hoyle/Barker: the player on the bidder's
    left (bidder_leads=False)."""
    t = auction4(bidder_leads=bidder_leads)
    t.act(
        "bid:20",
        "pass",
        "pass",
        "pass",
        "trump:S",
        "discard:2D",
        "discard:3D",
        "discard:4D",
        "done",
        "done",
        "done",
        "done",
    )
    assert t.state.phase == Phase.PLAY and t.to_play == leader


# --- auction: scoring -----------------------------------------------------------------
KITTY = ["7D", "8D", "9D"]


def run_auction_deal(t, calls):
    """Bid by ``calls`` (seat -> call, others pass), trumps spades, the bidder discards
    down to 5 keeping spades, the others keep their hands, then first legal card."""
    deal_no = t.state.deal_no
    while not t.game.is_terminal(t.state) and t.state.deal_no == deal_no:
        phase, seat = t.state.phase, t.to_play
        if phase == Phase.BID:
            call = calls.get(seat, "pass")
            t.act(call if call in t.legal() else t.legal()[0])
        elif phase == Phase.TRUMP:
            t.act("trump:S")
        elif phase == Phase.DISCARD:
            if t.state.hands[seat].bit_count() > 5:
                keep = set(TOP)
                t.act("discard:" + sorted(t.hand(seat) - keep)[0])
            else:
                t.act("done")
        else:
            t.act(t.legal()[0])


def test_made_bid_scores_all_and_failed_bid_is_subtracted():
    """ "Stiche zählen wie oben; erreicht die Partei des Bieters ihr Gebot nicht, wird
    es stattdessen abgezogen.\""""
    deals = [dominant(0, dealer=1, kitty=KITTY), dominant(0, dealer=0, kitty=KITTY)]
    t = Table(deals, players=2, variant="auction")
    run_auction_deal(t, {0: "bid:20"})
    assert t.state.scores == [30, 0]  # made 20: scores all 30
    run_auction_deal(t, {1: "bid:25"})
    assert t.state.scores == [60, -25]


@pytest.mark.parametrize("option,score", [(False, 30), (True, 60)])
def test_thirty_for_sixty(option, score):
    """rules-notes §1.3: "30 for 60" (Hoyle: a made 30 scores 60) is not in the seed: an
    option, off by default."""
    t = Table(
        dominant(0, dealer=1, kitty=KITTY),
        players=2,
        variant="auction",
        thirty_for_sixty=option,
        episode="deal",
    )
    run_auction_deal(t, {0: "bid:30"})
    assert t.state.scores == [score, 0]


def test_deal_episode_rewards_are_centred():
    """episode="deal": each side gets its score change minus the mean change
    (zero-sum)."""
    t = Table(
        dominant(0, dealer=0, kitty=KITTY), players=2, variant="auction", episode="deal"
    )
    run_auction_deal(t, {1: "bid:25"})
    assert t.state.scores == [30, -25]
    assert t.game.returns(t.state) == [27.5, -27.5]


def test_one_ten_cap_at_105():
    """110: "über 105 kommt nur, wer gerade Bieter ist": a side not bidding stops at 105
    (rules-notes §1.3), the bidding side passes it and wins at 110."""
    deals = [dominant(0, dealer=d % 2, kitty=KITTY) for d in range(5)]
    t = Table(deals, players=2, variant="one_ten")
    for _ in range(3):
        run_auction_deal(t, {0: "bid:30"})
    assert t.state.scores == [90, 0]
    run_auction_deal(t, {1: "bid:15"})  # seat 1 fails; seat 0 takes 30 but stops at 105
    assert t.state.scores == [105, -15] and not t.game.is_terminal(t.state)
    run_auction_deal(t, {0: "bid:30"})
    assert t.state.scores == [135, -15] and t.game.is_terminal(t.state)
    assert t.game.returns(t.state) == [1.0, -1.0]


def test_auction_plays_to_120():
    """ "Gespielt wird bis 120.\""""
    deals = [dominant(0, dealer=d % 2, kitty=KITTY) for d in range(4)]
    t = Table(deals, players=2, variant="auction")
    for _ in range(3):
        run_auction_deal(t, {0: "bid:30"})
    assert t.state.scores == [90, 0] and not t.game.is_terminal(t.state)
    run_auction_deal(t, {1: "bid:15"})
    assert t.state.scores == [120, -15] and t.game.is_terminal(t.state)


@pytest.mark.parametrize("out_first,winner", [(False, 0), (True, 1)])
def test_bidder_out_first(out_first, winner):
    """rules-notes §1.3: both sides over the target in one deal: the higher score wins
    (the seed's base rule); the house rule "count out first" (bidder_out_first=True)
    lets the bidding side win (target=25 so that two deals suffice)."""
    kitty = ["7C", "8C", "9C"]
    twenty_ten = full_deal(
        [["5S", "KH", "KD", "2H", "2D"], ["3H", "3D", "4H", "4D", "6C"]],
        kitty=kitty,
        dealer=1,
    )
    fifteen = full_deal([SPLIT_A, SPLIT_B], kitty=kitty, dealer=0)
    t = Table(
        [twenty_ten, fifteen],
        players=2,
        variant="auction",
        target=25,
        bidder_out_first=out_first,
    )
    t.act(*"bid:15 pass trump:S discard:7C discard:8C discard:9C done done".split())
    t.play("KH", "3H", "KD", "3D", "5S", "6C", "2H", "4H", "4D", "2D")
    assert t.state.scores == [20, 10]
    t.act(
        *"bid:15 pass trump:S discard:7C discard:8C discard:9C done done".split()
    )  # seat 1 bids and leads
    t.play("3H", "KH", "KD", "3D", "KC", "3C", "2H", "5S", "QC", "2D")
    assert t.state.scores == [35, 25] and t.game.is_terminal(t.state)
    assert t.game.returns(t.state) == ([1.0, -1.0] if winner == 0 else [-1.0, 1.0])


# --- observations and hidden information ----------------------------------------------
def _obs_all(env):
    return {
        a: env.observe(a)["observation"].copy() for a in env.unwrapped.possible_agents
    }


def test_hidden_cards_do_not_change_observations():
    """Observations never reveal another player's hand or the stock: swapping a card
    between player 2's hand and the stock changes nobody else's observation."""
    hands = hands_of(
        "2H 3H 4H 5H 6H | 2D 3D 4D 5D 6D | 2C 3C 4C 5C 6C | 7H 8H 9H 10H JH"
    )
    other = [h[:] for h in hands]
    other[2][4] = "KD"  # 6C goes to the stock instead
    a = env_table(full_deal(hands, ["9S"], dealer=3))
    b = env_table(full_deal(other, ["9S"], dealer=3))
    for step in ("2H", "2D"):
        oa, ob = _obs_all(a), _obs_all(b)
        for agent in ("player_0", "player_1", "player_3"):
            np.testing.assert_array_equal(oa[agent], ob[agent])
        assert not np.array_equal(oa["player_2"], ob["player_2"])
        for env in (a, b):
            env.step(env.unwrapped.action_id(step))


def test_buried_card_hidden_robbed_card_public():
    """ "Die unerwünschte Karte kommt verdeckt unter den Stapel": nobody else sees the
    buried card; the robber is public (everyone saw the turned card taken)."""
    hands = hands_of(
        "2H 3H 4H 6H 7H | AC 3D KH QH JH | 2D 4D 5D 6D 7D | 8D 9D 10D JD QD"
    )
    a = env_table(full_deal(hands, ["9C"], dealer=0))
    b = env_table(full_deal(hands, ["9C"], dealer=0))
    before = _obs_all(a)["player_0"]
    a.step(a.unwrapped.action_id("rob:3D"))
    b.step(b.unwrapped.action_id("rob:KH"))
    oa, ob = _obs_all(a), _obs_all(b)
    for agent in ("player_0", "player_2", "player_3"):
        np.testing.assert_array_equal(oa[agent], ob[agent])
    assert not np.array_equal(before, oa["player_0"])  # the robbery itself is visible
    assert not np.array_equal(oa["player_1"], ob["player_1"])


def _ace_twins(game, rng):
    """Two deals that differ only in who holds the ace of trumps, as far as
    ``observer`` can tell: it lies in another player's hand in one, and in a third
    player's hand or in the stock (below the turned card) in the other."""
    n = game.num_players
    names = list(DECK.names)
    while True:
        rng.shuffle(names)
        turned = names[5 * n]
        if not turned.startswith("A"):  # a turned ace: the dealer robs, publicly
            break
    ace = "A" + turned[-1]
    observer = int(rng.integers(n))
    hands = [names[5 * i : 5 * i + 5] for i in range(n)]
    stock = names[5 * n :]
    others = [s for s in range(n) if s != observer]
    a = int(rng.choice(others))
    # Put the ace in seat a's hand (swapping it with the card that was there).
    where = next((h for h in [*hands, stock] if ace in h), None)
    i, k = where.index(ace), int(rng.integers(5))
    where[i], hands[a][k] = hands[a][k], ace
    deal = {"dealer": int(rng.integers(n)), "hands": hands, "stock": stock}
    twin = copy.deepcopy(deal)
    rest = [s for s in others if s != a]
    if rest and rng.random() < 0.5:  # another player holds it
        b, j = int(rng.choice(rest)), int(rng.integers(5))
        h = twin["hands"]
        h[a][k], h[b][j] = h[b][j], h[a][k]
    else:  # nobody does: it lies in the stock
        j = int(rng.integers(1, len(stock)))
        twin["hands"][a][k], twin["stock"][j] = twin["stock"][j], ace
    return deal, twin, observer


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("variant", ["forty_fives", "twenty_five"])
def test_who_may_rob_stays_hidden(players, variant):
    """Robbing is asked at the robber's first turn to play, as at a real table
    ("Geraubt wird, bevor du deine erste Karte spielst – sonst ist das Recht
    verfallen"): a player who declines just plays, so until someone robs (public: the
    turned card leaves the table), nobody else can tell who holds the ace of trumps.
    Twin deals that move the ace between two other hands, or into the stock, give the
    observer the same observations, turn order, infos and text view, and the same legal
    actions when it is to act."""
    game = FortyFives(players=players, variant=variant, episode="deal")
    rng = np.random.default_rng(players * 10 + len(variant))
    compared = rob_turns = 0
    for _ in range(40):
        deal, twin, observer = _ace_twins(game, rng)
        states = []
        for d in (deal, twin):
            st = game.new_state()
            for outcome in game.forced_chance({"deal": d}):
                game.apply(st, outcome)
            states.append(st)
        x, y = states
        while (
            not game.is_terminal(x)
            and not game.is_terminal(y)
            and x.hands[observer] == y.hands[observer]
            and x.played_by == y.played_by
            and x.robbed_by == y.robbed_by == -1
        ):
            actor = game.current_player(x)
            assert game.current_player(y) == actor, "the turn order differs"
            np.testing.assert_array_equal(
                game.observe(x, observer), game.observe(y, observer)
            )
            assert game.info(x) == game.info(y)
            assert game.render(x, observer) == game.render(y, observer)
            if actor == observer:
                assert game.legal_actions(x) == game.legal_actions(y)
            compared += 1
            rob_turns += (x.rob_seat == actor) != (y.rob_seat == actor)
            common = sorted(set(game.legal_actions(x)) & set(game.legal_actions(y)))
            if not common:
                break
            action = common[int(rng.integers(len(common)))]
            game.apply(x, action)
            game.apply(y, action)
    assert compared >= 100
    assert rob_turns >= 5, f"only {rob_turns} turns where one twin could rob"


def test_kitty_and_discards_hidden():
    """The kitty and every player's discards stay face down: other players' observations
    depend only on the counts."""
    hands = hands_of(
        "2H 3H 4H 5H 6H | 2D 3D 4D 5D 6D | 2C 3C 4C 5C 6C | 7H 8H 9H 10H JH"
    )
    a = env_table(
        full_deal(hands, kitty=["KS", "QS", "JS"], dealer=0), variant="auction"
    )
    b = env_table(
        full_deal(hands, kitty=["KS", "QS", "10S"], dealer=0), variant="auction"
    )
    steps = ["bid:15", "pass", "pass", "pass", "trump:S"]
    for env in (a, b):
        for s in steps:
            env.step(env.unwrapped.action_id(s))
    for agent in ("player_0", "player_2", "player_3"):
        np.testing.assert_array_equal(
            a.observe(agent)["observation"], b.observe(agent)["observation"]
        )
    a.step(a.unwrapped.action_id("discard:2D"))
    b.step(b.unwrapped.action_id("discard:3D"))
    for agent in ("player_0", "player_2", "player_3"):
        np.testing.assert_array_equal(
            a.observe(agent)["observation"], b.observe(agent)["observation"]
        )


def test_observation_in_bounds_and_mask():
    """Observation entries lie in [0, 1]; the mask marks exactly the legal actions."""
    env = envs.make(ENV, players=5, variant="auction")
    env.reset(seed=3)
    for _ in range(40):
        agent = env.agent_selection
        obs = env.observe(agent)
        assert obs["observation"].min() >= 0 and obs["observation"].max() <= 1
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        assert legal == env.unwrapped.legal_actions()
        env.step(legal[0])


# --- env plumbing and bad input -------------------------------------------------------
def test_env_reset_with_forced_deal_matches_engine():
    """``reset(options={"deal": …})`` deals exactly the given hands and stock."""
    deal = full_deal(SEED_BONUS_HANDS, ["2S"], dealer=3)
    env = env_table(deal)
    state = env.unwrapped.game_state
    for seat, hand in enumerate(SEED_BONUS_HANDS):
        assert DECK.format_mask(state.hands[seat]).split() == sorted(
            hand, key=DECK.card
        )
    assert state.turned == DECK.card("2S") and state.dealer == 3
    assert env.agent_selection == "player_0"


@pytest.mark.parametrize(
    "name,action",
    [
        ("QS", 2),
        ("rob:3D", 52 + DECK.card("3D")),
        ("norob", 104),
        ("pass", 105),
        ("bid:15", 106),
        ("bid:30", 109),
        ("hold", 110),
        ("trump:S", 111),
        ("trump:C", 114),
        ("discard:AS", 115),
        ("done", 167),
    ],
)
def test_action_names(name, action):
    """Action names as in conventions.md, both ways."""
    game = FortyFives()
    assert game.action_id(name) == action
    assert game.action_name(action) == name


@pytest.mark.parametrize(
    "options,match",
    [
        ({"players": 7}, "players"),
        ({"players": 1}, "players"),
        ({"variant": "spoil_five"}, "variant"),
        ({"episode": "forever"}, "episode"),
        ({"void_must_trump": "yes"}, "void_must_trump"),
        ({"bidder_leads": False}, "auction"),
        ({"thirty_for_sixty": True}, "auction"),
        ({"variant": "auction", "bidder_out_first": 1}, "bidder_out_first"),
        ({"packets": "4+1"}, "packets"),
        ({"target": 0}, "target"),
        ({"max_deals": 0}, "max_deals"),
    ],
)
def test_bad_options(options, match):
    """Unknown or inconsistent options raise ValueError naming the option."""
    with pytest.raises(ValueError, match=match):
        envs.make(ENV, **options)


def _good_deal():
    return full_deal(SEED_BONUS_HANDS, ["2S"], dealer=3)


@pytest.mark.parametrize(
    "mutate,match",
    [
        (lambda d: d["hands"][0].__setitem__(0, "KD"), "twice"),
        (lambda d: d["hands"][0].pop(), "5 cards"),
        (lambda d: d["hands"].pop(), "4 hands"),
        (lambda d: d["hands"][1].__setitem__(0, "ZZ"), "unknown card"),
        (lambda d: d["stock"].pop(), r"deal\['stock'\] must have 32"),
        (
            lambda d: d.__setitem__("kitty", ["AS"]),
            r"deal\['kitty'\]: only the auction variants deal a kitty",
        ),
        (lambda d: d.__setitem__("pile", ["AS"]), r"unknown deal key\(s\) \['pile'\]"),
        (lambda d: d.__setitem__("dealer", 4), "dealer"),
        (lambda d: d.pop("dealer"), "needs its dealer"),
    ],
)
def test_bad_forced_deals(mutate, match):
    """Malformed deals raise ValueError naming the problem."""
    deal = _good_deal()
    mutate(deal)
    env = envs.make(ENV)
    with pytest.raises(ValueError, match=match):
        env.reset(options={"deal": deal})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"episode": "deal", "max_deals": 5}, "max_deals=5 has no effect with ep"),
        ({"episode": "deal", "target": 30}, "target=30 has no effect with episode"),
        (
            {"variant": "auction", "episode": "deal", "target": 60},
            "target=60 has no effect",
        ),
        (
            {"variant": "auction", "episode": "deal", "bidder_out_first": True},
            "bidder_out_first=True has no effect with episode='deal'",
        ),
    ],
)
def test_inert_options_refused(options, message):
    """Options that cannot change a one-deal episode are refused with one line (a match
    target, the deal limit, the match-end house rule)."""
    with pytest.raises(ValueError, match=message):
        envs.make(ENV, **options)


@pytest.mark.parametrize(
    "options",
    [
        {"episode": "deal", "target": 45, "max_deals": 100},  # the defaults written out
        {"variant": "auction", "episode": "deal", "bidder_out_first": False},
        {"variant": "twenty_five", "episode": "deal", "target": 15},  # stops the deal
        {"variant": "one_ten", "episode": "deal", "target": 30},  # caps others at 25
        {"target": 30, "max_deals": 5},  # a match uses both
    ],
)
def test_options_with_an_effect_or_default_accepted(options):
    game = envs.make(ENV, **options).unwrapped.game
    for key in ("target", "max_deals"):  # kept as given, not dropped
        if key in options:
            assert getattr(game, key) == options[key]
    envs.make(ENV, **envs.game_options(ENV, options))  # every option written out


def test_twenty_five_deal_stops_at_its_target():
    """ "wer zuerst 25 hat, gewinnt sofort, auch mitten im Spiel": with
    ``target=10`` a Twenty-Five deal ends when a side has 10 points, so the target is
    not inert in a one-deal episode."""
    t = Table(
        dominant(0, dealer=1),
        players=2,
        variant="twenty_five",
        episode="deal",
        target=10,
    )
    play_out(t)
    assert t.game.is_terminal(t.state) and t.state.trick_no == 2


def test_auction_deal_needs_kitty():
    """The auction variants add "kitty": [3] ("eine Kitty aus 3 zusätzlich verdeckt
    gegebenen Karten"); a deal without one says so, before the stock's count (which a
    deal with the kitty's cards left in the stock breaks too)."""
    env = envs.make(ENV, variant="auction")
    deal = full_deal(SEED_BONUS_HANDS, kitty=["AS", "KS", "QS"], dealer=0)
    env.reset(options={"deal": deal})
    no_kitty = full_deal(SEED_BONUS_HANDS, dealer=0)  # the 3 cards stay in the stock
    with pytest.raises(ValueError, match=r"^deal has no 'kitty': the auction variants"):
        env.reset(options={"deal": no_kitty})
    bad = dict(deal)
    bad.pop("kitty")
    with pytest.raises(ValueError, match="deal has no 'kitty'"):
        env.reset(options={"deal": bad})
    bad = dict(deal, kitty=["AS", "KS"])
    with pytest.raises(ValueError, match=r"deal\['kitty'\] must have 3"):
        env.reset(options={"deal": bad})


def test_illegal_action_names_the_legal_ones():
    """An illegal play raises IllegalActionError listing the legal actions."""
    t = _renege_table("5S", ["JS", "KD", "QH", "JH", "10H"])
    t.play("5S")
    with pytest.raises(IllegalActionError, match=r"KD.*legal: JS"):
        t.act("KD")


def test_render_hides_other_hands():
    """The text view for a seat shows only that seat's cards."""
    env = envs.make(ENV, render_mode="ansi")
    env.reset(options={"deal": _good_deal()})
    game, state = env.unwrapped.game, env.unwrapped.game_state
    text = game.render(state, viewer=0)
    assert "K♥" in text and "J♠" not in text
    assert "J♠" in game.render(state)


def test_terminal_state_is_terminal():
    assert FortyFives().current_player(FortyFives().new_state()) == CHANCE
    t = Table(dominant(0, dealer=1), players=2, episode="deal")
    play_out(t)
    assert (
        t.game.current_player(t.state) == TERMINAL
        and t.game.legal_actions(t.state) == []
    )
