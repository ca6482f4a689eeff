"""Validation of forced deals (``reset(options={"deal": …})``), shared by the card
games."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .cards import Deck
from .engine import check_keys, check_seat


def parse_hands(
    deck: Deck, deal: Mapping[str, Any], num_players: int, hand_size: int
) -> list[list[int]]:
    """The ``"hands"`` entry: ``num_players`` lists of ``hand_size`` card names each."""
    hands = deal.get("hands")
    if not isinstance(hands, Sequence) or isinstance(hands, str):
        raise ValueError(
            f"deal['hands'] must be a list of {num_players} lists of card names"
        )
    if len(hands) != num_players:
        raise ValueError(
            f"deal['hands'] must have {num_players} hands, got {len(hands)}"
        )
    out = []
    for seat, hand in enumerate(hands):
        cards = parse_cards(deck, hand, f"deal['hands'][{seat}]")
        if len(cards) != hand_size:
            raise ValueError(
                f"deal['hands'][{seat}] must have {hand_size} cards, got {len(cards)}"
            )
        out.append(cards)
    return out


def parse_cards(deck: Deck, names: Any, where: str) -> list[int]:
    """A list of card names of ``deck``; ValueError naming the place and the bad
    token."""
    if not isinstance(names, Sequence) or isinstance(names, str):
        raise ValueError(f"{where} must be a list of card names, got {names!r}")
    try:
        return deck.cards(names)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


def check_partition(
    deck: Deck, groups: Sequence[Sequence[int]], where: str = "deal"
) -> None:
    """Every card of the pack exactly once across ``groups`` (no duplicates, none
    missing)."""
    seen: dict[int, int] = {}
    dupes = []
    for group in groups:
        for c in group:
            if c in seen:
                dupes.append(deck.format(c))
            seen[c] = 1
    if dupes:
        raise ValueError(
            f"{where}: card(s) dealt twice: {' '.join(sorted(set(dupes)))}"
        )
    missing = [deck.format(c) for c in range(deck.size) if c not in seen]
    if missing:
        raise ValueError(f"{where}: card(s) missing from the deal: {' '.join(missing)}")


def parse_dealer(
    deal: Mapping[str, Any], num_players: int, where: str = "deal"
) -> int | None:
    """The optional ``"dealer"`` entry as a seat, or None when absent. An error names it
    ``{where}['dealer']``: pass ``where="options"`` for the top-level reset option."""
    if "dealer" not in deal or deal["dealer"] is None:
        return None
    return check_seat(f"{where}['dealer']", deal["dealer"], num_players)


def deal_list(options: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The forced deals of reset options: ``"deal"`` (the first) or ``"deals"``
    (several)."""
    if "deal" in options and "deals" in options:
        raise ValueError("give either options['deal'] or options['deals'], not both")
    if "deal" in options:
        deals = [options["deal"]]
    elif "deals" in options:
        deals = options["deals"]
        if not isinstance(deals, Sequence) or isinstance(deals, str | Mapping):
            raise ValueError("options['deals'] must be a list of deal dicts")
    else:
        return []
    for i, d in enumerate(deals):
        if not isinstance(d, Mapping):
            raise ValueError(f"deal {i} must be a dict, got {type(d).__name__}")
    return list(deals)


__all__ = [
    "check_keys",
    "check_partition",
    "deal_list",
    "parse_cards",
    "parse_dealer",
    "parse_hands",
]
