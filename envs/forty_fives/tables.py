"""Forty-Fives: the pack, the card orders (rules-notes §1.3; the seed's own table was
lost), the flat action space and the tables the engine and the bots read."""

from __future__ import annotations

from ..core.cards import FRENCH_52, SUITS, cards_in, mask_of

DECK = FRENCH_52
HAND_SIZE = 5
KITTY_SIZE = 3
TRICK_POINTS = 5  # "Jeder Stich bringt der Partei, die ihn gewinnt, 5 Punkte."
BONUS_POINTS = 5  # "Der Stich mit dem höchsten Trumpf … bringt 5 Punkte extra."
BID_LEVELS = (15, 20, 25, 30)  # "bietet man 15, 20, 25 oder 30 Punkte"
HEARTS = SUITS.index("H")
ACE_OF_HEARTS = DECK.card("AH")

VARIANTS = ("forty_fives", "twenty_five", "auction", "one_ten")
AUCTION_VARIANTS = ("auction", "one_ten")
EPISODES = ("deal", "match")
PACKETS = {"3+2": (3, 2), "2+3": (2, 3)}  # "erst 3, dann 2 (oder erst 2, dann 3)"
#: the target of each variant: 45, "wer zuerst 25 hat", "Gespielt wird bis 120 / 110"
TARGETS = {"forty_fives": 45, "twenty_five": 25, "auction": 120, "one_ten": 110}
DEFAULT_MAX_DEALS = 100  # a match's deal limit (a safeguard, rules-notes §1.3)

# --- the card orders (rules-notes §1.3; the seed's own table was lost) ----------------
#: trumps, highest first; "AH" is the ace of hearts, always the third-best trump.
TRUMP_ORDER = {
    "S": "5 J AH A K Q 2 3 4 6 7 8 9 10",
    "C": "5 J AH A K Q 2 3 4 6 7 8 9 10",
    "D": "5 J AH A K Q 10 9 8 7 6 4 3 2",
    "H": "5 J AH K Q 10 9 8 7 6 4 3 2",
}
#: plain suits, highest first: "In Rot hoch, in Schwarz niedrig." (A♥: never plain)
PLAIN_ORDER = {
    "S": "K Q J A 2 3 4 5 6 7 8 9 10",
    "C": "K Q J A 2 3 4 5 6 7 8 9 10",
    "D": "K Q J 10 9 8 7 6 5 4 3 2 A",
    "H": "K Q J 10 9 8 7 6 5 4 3 2",
}
TRUMP_BASE = 100  # every trump's strength is above every plain card's

# --- the flat action space ------------------------------------------------------------
PLAY = 0  # 0..51: play card c
ROB = 52  # 52..103: rob the turned card, burying card c (then play on)
#: "norob": kept so that the action space stays the same, never legal: the eligible
#: player declines by playing his first card (see `_rob`)
NOROB = 104
PASS = 105
BID = 106  # 106..109: bid 15, 20, 25, 30
HOLD = 110
TRUMP = 111  # 111..114: name trumps S, H, D, C
DISCARD = 115  # 115..166: discard card c
DONE = 167
NUM_ACTIONS = 168

KITTY = -1  # deal destinations other than a seat
STOCK = -2


def _card(rank: str, suit: str) -> int:
    return DECK.card(rank if rank == "AH" else rank + suit)


def _strength_tables() -> list[list[int]]:
    """``table[t][c]``: the strength of card c when suit t is trumps (higher wins).

    Trumps are ``TRUMP_BASE + …``; plain cards rank 1..13 inside their own suit.
    """
    tables = []
    for t, trump_suit in enumerate(SUITS):
        table = [0] * DECK.size
        order = TRUMP_ORDER[trump_suit].split()
        for i, rank in enumerate(order):
            table[_card(rank, trump_suit)] = TRUMP_BASE + len(order) - i
        for suit in SUITS:
            if suit == trump_suit:
                continue
            order = PLAIN_ORDER[suit].split()
            for i, rank in enumerate(order):
                table[DECK.card(rank + suit)] = len(order) - i
        assert sum(1 for v in table if v >= TRUMP_BASE) == (13 if t == HEARTS else 14)
        tables.append(table)
    return tables


STRENGTH = _strength_tables()
#: the trump suit of each trump choice, the A♥ included: "das A♥ ist immer Trumpf"
TRUMP_MASK = [DECK.suit_mask[t] | 1 << ACE_OF_HEARTS for t in range(4)]
#: ``PLAIN_MASK[t][s]``: the cards that follow a plain lead of suit s (never the A♥)
PLAIN_MASK = [[DECK.suit_mask[s] & ~TRUMP_MASK[t] for s in range(4)] for t in range(4)]
#: the three top trumps: "Trumpf-5, Trumpf-Bube und A♥"
TOP_TRUMPS = [mask_of((_card("5", s), _card("J", s), ACE_OF_HEARTS)) for s in SUITS]


def _protected_tables() -> list[list[int]]:
    """``table[t][led]``: the top trumps that may renege when trump ``led`` is led.

    "Du musst eine dieser Karten nur legen, wenn ein besserer dieser drei Trümpfe
    ausgespielt wurde": a top trump is protected exactly when it ranks above the led
    card.
    """
    out = []
    for t in range(4):
        row = [0] * DECK.size
        for led in cards_in(TRUMP_MASK[t]):
            row[led] = mask_of(
                c for c in cards_in(TOP_TRUMPS[t]) if STRENGTH[t][c] > STRENGTH[t][led]
            )
        out.append(row)
    return out


PROTECTED = _protected_tables()


def team_layout(num_players: int) -> list[list[int]]:
    """The sides: partners opposite with 4, alternating seats with 6, else one seat
    each."""
    if num_players in (4, 6):
        return [list(range(0, num_players, 2)), list(range(1, num_players, 2))]
    return [[s] for s in range(num_players)]
