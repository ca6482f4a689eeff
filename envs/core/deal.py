"""Validation of forced deals (``reset(options={"deal": …})``), shared by the card
games.

Every error names the deal it is about as the user wrote it: ``deal`` for
``options["deal"]``, ``deals[1]`` for the second entry of ``options["deals"]``
(`deal_name`), e.g. ``deals[1]['hands'][2]: unknown card name 'XQ'``.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .cards import Deck
from .engine import check_keys, check_seat


class LaterDealsRandomWarning(UserWarning):
    """Forced deals cover only the first deals of a multi-deal episode; the rest are
    dealt at random from the env's seed."""


#: games that have already warned (once per game object, i.e. once per env)
_WARNED: weakref.WeakSet[Any] = weakref.WeakSet()


def warn_later_deals_random(game: Any, forced: int, episode: str) -> None:
    """Warn, once per ``game`` object, that a ``episode`` has deals after the ``forced``
    forced ones and that those are random."""
    if game in _WARNED:
        return
    _WARNED.add(game)
    warnings.warn(
        f"{game.name}: the forced deal(s) fix the first {forced} deal(s) of the "
        f"{episode}; later deals are dealt at random from the env's seed (force "
        "more with options['deals'])",
        LaterDealsRandomWarning,
        stacklevel=4,  # the env's reset, through forced_deals and forced_chance
    )


def deal_name(options: Mapping[str, Any], i: int) -> str:
    """How errors name deal ``i`` of ``options``: ``deal`` or ``deals[i]``."""
    return f"deals[{i}]" if "deals" in options else "deal"


def parse_hands(
    deck: Deck,
    deal: Mapping[str, Any],
    num_players: int,
    hand_size: int,
    where: str = "deal",
) -> list[list[int]]:
    """The ``"hands"`` entry: ``num_players`` lists of ``hand_size`` card names each.
    Errors start with ``{where}['hands']``."""
    hands = deal.get("hands")
    if not isinstance(hands, Sequence) or isinstance(hands, str):
        raise ValueError(
            f"{where}['hands'] must be a list of {num_players} lists of card names"
        )
    if len(hands) != num_players:
        raise ValueError(
            f"{where}['hands'] must have {num_players} hands, got {len(hands)}"
        )
    out = []
    for seat, hand in enumerate(hands):
        cards = parse_cards(deck, hand, f"{where}['hands'][{seat}]")
        if len(cards) != hand_size:
            raise ValueError(
                f"{where}['hands'][{seat}] must have {hand_size} cards, "
                f"got {len(cards)}"
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


def rotation_dealer(
    i: int,
    deal: Mapping[str, Any],
    first_dealer: int | None,
    num_players: int,
    where: str | None = None,
) -> int | None:
    """Check deal ``i``'s optional ``"dealer"`` of a multi-deal episode and return the
    first dealer known so far. The first deal's dealer must agree with
    ``options['dealer']``; a later deal's dealer is fixed by the deal passing clockwise
    (alternating with two players), so it may be left out but must not contradict it.
    ``where`` names the deal in errors (default ``deals[i]``)."""
    where = f"deals[{i}]" if where is None else where
    dealer = parse_dealer(deal, num_players, where)
    if i == 0:
        if first_dealer is not None and dealer is not None and dealer != first_dealer:
            raise ValueError(f"options['dealer'] and {where}['dealer'] disagree")
        return dealer if dealer is not None else first_dealer
    if dealer is not None:
        if first_dealer is None:
            raise ValueError(f"{where} names a dealer but the first deal does not")
        expected = (first_dealer + i) % num_players
        if dealer != expected:
            word = "alternation" if num_players == 2 else "rotation"
            raise ValueError(
                f"{where}: dealer {dealer} breaks the {word} (the deal passes "
                f"clockwise from dealer {first_dealer}, so {where} is dealt by "
                f"{expected})"
            )
    return first_dealer


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
            raise ValueError(
                f"{deal_name(options, i)} must be a dict, got {type(d).__name__}"
            )
    return list(deals)


def forced_deals(
    game: Any,
    options: Mapping[str, Any],
    deal_cards: Callable[[Mapping[str, Any], str, int | None], Iterable[int]],
    keys: Sequence[str] = ("dealer", "hands"),
    *,
    most: int | None,
    total: int | None,
    episode: str = "match",
) -> list[int | None]:
    """A card game's ``forced_chance``: the outcomes of ``options["dealer"]`` and the
    forced deal(s), ``[first dealer (None: left to chance), *each deal's cards in the
    order the engine deals them]``, or ``[]`` when the options force nothing.

    Each deal's ``keys`` are checked and its dealer against the rotation, then
    ``deal_cards(deal, where, dealer)`` (``dealer``: this deal's, None when no dealer
    is given) checks the cards and returns them in dealing order. ``most`` deals may be
    forced (None: no limit); fewer than ``total`` (None: an open-ended ``episode``)
    warn that the later deals are random (`LaterDealsRandomWarning`).
    """
    n = game.num_players
    deals = deal_list(options)
    if most is not None and len(deals) > most:
        raise ValueError(
            f"options['deals'] gives {len(deals)} deals but the episode has {most}"
        )
    first_dealer = parse_dealer(options, n, "options") if "dealer" in options else None
    out: list[int | None] = []
    for i, deal in enumerate(deals):
        where = deal_name(options, i)
        check_keys(where, deal, keys)
        first_dealer = rotation_dealer(i, deal, first_dealer, n, where)
        dealer = None if first_dealer is None else (first_dealer + i) % n
        out.extend(deal_cards(deal, where, dealer))
    if first_dealer is None and not deals:
        return []
    if deals and (total is None or len(deals) < total):
        warn_later_deals_random(game, len(deals), episode)
    return [first_dealer, *out]


__all__ = [
    "LaterDealsRandomWarning",
    "check_keys",
    "check_partition",
    "deal_list",
    "deal_name",
    "forced_deals",
    "parse_cards",
    "parse_dealer",
    "parse_hands",
    "rotation_dealer",
    "warn_later_deals_random",
]
