"""Cards: names as in ``docs/conventions.md`` (parse, format), packs, bitmasks."""

from __future__ import annotations

import pytest

from parlour.envs.core.cards import (
    FRENCH_52,
    FRENCH_54,
    GERMAN_32,
    NO_SUIT,
    RANKS,
    SHORT_24,
    SUITS,
    Deck,
    canonical_name,
    cards_in,
    mask_of,
    parse_suit,
)


@pytest.mark.parametrize(
    ("token", "canonical"),
    [
        ("QS", "QS"),
        ("10H", "10H"),
        ("AH", "AH"),
        ("2C", "2C"),
        ("th", "10H"),  # T for ten, lower case
        ("TD", "10D"),
        ("q♠", "QS"),  # suit symbols
        ("10♥", "10H"),
        ("k♦", "KD"),
        ("j♣", "JC"),
        (" as ", "AS"),  # surrounding blanks
        ("JKH", "JKH"),  # the jokers of Honeymoon Whist
        ("JKL", "JKL"),
        ("jkh", "JKH"),
    ],
)
def test_parse_accepted_spellings(token: str, canonical: str) -> None:
    """Parsing accepts T for ten, lower case and suit symbols; output is canonical."""
    assert canonical_name(token) == canonical
    deck = FRENCH_54
    assert deck.format(deck.card(token)) == canonical


@pytest.mark.parametrize(
    "token", ["1H", "11S", "ZZ", "QX", "JK", "JKX", "A", "10", "", "Q S"]
)
def test_unknown_name_is_a_value_error_naming_the_token(token: str) -> None:
    with pytest.raises(ValueError, match=f"unknown card {token!r}"):
        canonical_name(token)
    with pytest.raises(ValueError, match=f"unknown card {token!r}"):
        FRENCH_52.card(token)


@pytest.mark.parametrize("token", [12, None, 1.5, ["QS"]])
def test_non_string_card_name_is_a_value_error(token: object) -> None:
    with pytest.raises(ValueError, match="must be a string"):
        canonical_name(token)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("deck", "token"),
    [(GERMAN_32, "2S"), (GERMAN_32, "6H"), (SHORT_24, "8D"), (FRENCH_52, "JKH")],
)
def test_card_outside_the_pack_names_the_pack(deck: Deck, token: str) -> None:
    with pytest.raises(
        ValueError, match=f"card {token!r} is not in the {deck.name} pack"
    ):
        deck.card(token)


def test_cards_wants_a_list_not_a_string() -> None:
    with pytest.raises(ValueError, match="list of card names"):
        FRENCH_52.cards("QS")
    assert FRENCH_52.cards(["qs", "th"]) == [
        FRENCH_52.card("QS"),
        FRENCH_52.card("10H"),
    ]


@pytest.mark.parametrize(
    ("deck", "size", "ranks", "jokers"),
    [
        (FRENCH_52, 52, RANKS, ()),
        (FRENCH_54, 54, RANKS, ("JKH", "JKL")),
        (GERMAN_32, 32, ("A", "K", "Q", "J", "10", "9", "8", "7"), ()),
        (SHORT_24, 24, ("A", "K", "Q", "J", "10", "9"), ()),
    ],
)
def test_pack_sizes_and_contents(
    deck: Deck, size: int, ranks: tuple[str, ...], jokers: tuple[str, ...]
) -> None:
    """Suits S H D C, ranks from the ace down inside each suit, jokers last."""
    expected = [r + s for s in SUITS for r in ranks] + list(jokers)
    assert deck.size == size == len(deck.names)
    assert list(deck.names) == expected
    assert len(set(deck.names)) == size
    assert deck.all_mask == (1 << size) - 1
    for card, name in enumerate(deck.names):
        assert deck.card(name) == card
        if name in jokers:
            assert deck.suit[card] == NO_SUIT and deck.rank[card] == -1
        else:
            assert SUITS[deck.suit[card]] == name[-1]
            assert RANKS[deck.rank[card]] == name[:-1]
    for s in range(4):
        assert cards_in(deck.suit_mask[s]) == [
            c for c in range(size) if deck.suit[c] == s
        ]
        assert deck.suit_mask[s].bit_count() == len(ranks)
    assert deck.suit_mask[NO_SUIT].bit_count() == len(jokers)


@pytest.mark.parametrize(
    ("name", "german"),
    [
        ("QH", "Herz-Ober"),
        ("JS", "Laub-Unter"),
        ("AD", "Schellen-Daus"),
        ("KC", "Eichel-König"),
        ("10H", "Herz-10"),
        ("7C", "Eichel-7"),
    ],
)
def test_german_rendering(name: str, german: str) -> None:
    """German names are for rendering only: Ober = Q, Unter = J, leaves/bells/acorns."""
    card = GERMAN_32.card(name)
    assert GERMAN_32.german(card) == german
    assert GERMAN_32.format(card) == name  # the API stays canonical


def test_pretty_uses_suit_symbols_and_leaves_jokers() -> None:
    assert FRENCH_54.pretty(FRENCH_54.card("QS")) == "Q♠"
    assert FRENCH_54.pretty(FRENCH_54.card("10D")) == "10♦"
    assert FRENCH_54.pretty(FRENCH_54.card("JKL")) == "JKL"
    assert FRENCH_54.german(FRENCH_54.card("JKH")) == "JKH"


@pytest.mark.parametrize(("token", "suit"), [("S", 0), ("h", 1), ("♦", 2), ("♣", 3)])
def test_parse_suit(token: str, suit: int) -> None:
    assert parse_suit(token) == suit


@pytest.mark.parametrize("token", ["X", "SH", "", "♡"])
def test_parse_suit_rejects_unknown(token: str) -> None:
    with pytest.raises(ValueError, match="unknown suit"):
        parse_suit(token)


def test_masks_round_trip_and_format_in_pack_order() -> None:
    cards = [FRENCH_52.card(n) for n in ("2C", "AS", "10H")]
    mask = mask_of(cards)
    assert mask.bit_count() == 3
    assert cards_in(mask) == sorted(cards)
    assert FRENCH_52.format_mask(mask) == "AS 10H 2C"
    assert cards_in(0) == [] and mask_of([]) == 0


def test_unknown_rank_in_a_pack_definition() -> None:
    with pytest.raises(ValueError, match="unknown ranks"):
        Deck("bad", ("A", "1"))
