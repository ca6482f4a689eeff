"""Cards as small ints, the packs the five games use, and card-name parsing.

A card is its index in its pack (`Deck`). Packs list suits in the order S H D C and,
inside a suit, ranks from A down to the pack's lowest rank; jokers (Honeymoon Whist)
come last. Sets of cards are Python ints used as bitmasks (bit ``i`` = card ``i``):
cheap to copy, compare and count, which the engines and the observation encoders rely
on.

Names follow ``docs/conventions.md``: rank then suit (``"QS"``, ``"10H"``, ``"AH"``).
Parsing also accepts ``T`` for ten, lower case and the suit symbols ``♠ ♥ ♦ ♣``;
formatting always gives the canonical form. The jokers are ``JKH`` (high) and ``JKL``
(low).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

SUITS = "SHDC"
SUIT_SYMBOLS = "♠♥♦♣"
RANKS = ("A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2")
JOKERS = ("JKH", "JKL")
NO_SUIT = 4  # the suit index of a joker

# German pack: same letters in the API, German words for rendering.
GERMAN_SUITS = {"S": "Laub", "H": "Herz", "D": "Schellen", "C": "Eichel"}
GERMAN_RANKS = {"A": "Daus", "K": "König", "Q": "Ober", "J": "Unter"}

_SYMBOL_TO_SUIT = dict(zip(SUIT_SYMBOLS, SUITS, strict=True))


def parse_suit(token: str) -> int:
    """Suit index (0..3) of ``"S"``/``"H"``/``"D"``/``"C"`` or a suit symbol."""
    text = token.strip().upper()
    text = _SYMBOL_TO_SUIT.get(text, text)
    if len(text) != 1 or text not in SUITS:
        raise ValueError(
            f"unknown suit {token!r}: expected one of S H D C (or ♠ ♥ ♦ ♣)"
        )
    return SUITS.index(text)


def canonical_name(token: str) -> str:
    """The canonical spelling of a card name, e.g. ``"th" -> "10H"``, ``"q♠" -> "QS"``.

    Raises ValueError naming the token when it is not a card name in any pack.
    """
    if not isinstance(token, str):
        raise ValueError(f"card name must be a string, got {token!r}")
    text = token.strip().upper()
    if text in JOKERS:
        return text
    if len(text) >= 2:
        rank, suit = text[:-1], text[-1]
        suit = _SYMBOL_TO_SUIT.get(suit, suit)
        if rank == "T":
            rank = "10"
        if rank in RANKS and suit in SUITS:
            return rank + suit
    raise ValueError(
        f"unknown card {token!r}: expected rank then suit such as 'QS', '10H', 'AH' "
        "(ranks A K Q J 10/T 9..2, suits S H D C or ♠ ♥ ♦ ♣), or a joker JKH / JKL"
    )


class Deck:
    """An ordered pack. Card ``i`` of the pack has name ``names[i]``, ``suit[i]`` and
    ``rank[i]``.

    ``rank`` is the index in ``RANKS`` (0 = ace, 12 = two); jokers have suit ``NO_SUIT``
    and rank -1. Games impose their own trick-taking order on top of this.
    """

    def __init__(self, name: str, ranks: Sequence[str], jokers: bool = False):
        unknown = [r for r in ranks if r not in RANKS]
        if unknown:
            raise ValueError(f"unknown ranks {unknown}")
        self.name = name
        names: list[str] = [r + s for s in SUITS for r in ranks]
        if jokers:
            names.extend(JOKERS)
        self.names: tuple[str, ...] = tuple(names)
        self.size = len(names)
        self.suit: tuple[int, ...] = tuple(
            NO_SUIT if n in JOKERS else SUITS.index(n[-1]) for n in names
        )
        self.rank: tuple[int, ...] = tuple(
            -1 if n in JOKERS else RANKS.index(n[:-1]) for n in names
        )
        self._index = {n: i for i, n in enumerate(names)}
        self.all_mask = (1 << self.size) - 1
        self.suit_mask: tuple[int, ...] = tuple(
            mask_of(i for i in range(self.size) if self.suit[i] == s) for s in range(5)
        )

    def __repr__(self) -> str:
        return f"Deck({self.name!r}, {self.size} cards)"

    def card(self, token: str) -> int:
        """The card id of a name (any accepted spelling); ValueError naming the bad
        token."""
        name = canonical_name(token)
        try:
            return self._index[name]
        except KeyError:
            raise ValueError(f"card {token!r} is not in the {self.name} pack") from None

    def cards(self, tokens: Iterable[str]) -> list[int]:
        """Card ids of several names, in order."""
        if isinstance(tokens, str):
            raise ValueError(
                f"expected a list of card names, got the string {tokens!r}"
            )
        return [self.card(t) for t in tokens]

    def format(self, card: int) -> str:
        """The canonical name of card ``card``."""
        return self.names[card]

    def format_mask(self, mask: int) -> str:
        """Names of the cards in a bitmask, in pack order, space-separated."""
        return " ".join(self.names[c] for c in cards_in(mask))

    def pretty_mask(self, mask: int) -> str:
        """`pretty` names of the cards in a bitmask, in pack order; ``-`` for none."""
        return " ".join(self.pretty(c) for c in cards_in(mask)) or "-"

    def german(self, card: int) -> str:
        """A German rendering, e.g. ``"Herz-Ober"`` for QH (names in the API stay
        canonical)."""
        name = self.names[card]
        if name in JOKERS:
            return name
        rank, suit = name[:-1], name[-1]
        return f"{GERMAN_SUITS[suit]}-{GERMAN_RANKS.get(rank, rank)}"

    def pretty(self, card: int) -> str:
        """The name with a suit symbol, e.g. ``"Q♠"``."""
        name = self.names[card]
        if name in JOKERS:
            return name
        return name[:-1] + SUIT_SYMBOLS[SUITS.index(name[-1])]


def mask_of(cards: Iterable[int]) -> int:
    """The bitmask holding ``cards``."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def cards_in(mask: int) -> list[int]:
    """The cards of a bitmask in ascending order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def hand_view(
    hand: int,
    seat: int,
    viewer: int | None,
    show: Callable[[int], str],
    hidden: str = "cards",
) -> str:
    """Seat ``seat``'s ``hand`` (a bitmask) in a table rendered for ``viewer``:
    ``show(hand)`` for the full view (None) and for its owner, else only how many
    ``hidden`` there are."""
    if viewer is None or seat == viewer:
        return show(hand)
    return f"{hand.bit_count()} {hidden}"


def held_bit(game: Any, state: Any, card: int, size: int) -> int:
    """The bit of ``card`` (an id below ``size``) in the hand of the seat to play
    (``state.hands[state.to_play]``); `IllegalActionError` (``game.illegal``) when
    that seat does not hold it."""
    bit = 1 << card if 0 <= card < size else 0
    if not bit & state.hands[state.to_play]:
        raise game.illegal(
            state, card, f"player_{state.to_play} does not hold that card"
        )
    return bit


FRENCH_52 = Deck("52-card French", RANKS)
FRENCH_54 = Deck("52-card French with two jokers", RANKS, jokers=True)
GERMAN_32 = Deck("32-card", ("A", "K", "Q", "J", "10", "9", "8", "7"))
SHORT_24 = Deck("24-card", ("A", "K", "Q", "J", "10", "9"))
