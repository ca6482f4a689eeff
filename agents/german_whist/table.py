"""What the German Whist heuristic reads about a game: `Table`, over the pack's `Ranks`.

`Table` copies what a seat may know: its own hand, the trumps, the face-up card, the
played cards, the trick, both Seen rows, shown voids and trick counts; in stage 2 the
opponent's hand is deduced (pack minus own hand minus played cards). His hidden cards
and the stock beyond the face-up card are never read. `Ranks` is the trick-taking
order of one pack and trump suit (the engine's card strengths), with the caches the
bot's hot paths use.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from ...envs.core.cards import NO_SUIT, cards_in

# The per-pack caches of `Ranks` start again when they grow past this many entries.
_CACHE_LIMIT = 200_000


class Ranks:
    """Trick-taking order for one pack and trump suit (cached per pack and trumps),
    with caches of the pure functions the bot calls most (`desc`, `_Solver` moves)."""

    _cache: dict[tuple[int, int], Ranks] = {}

    def __init__(self, deck: Any, trump_mask: int, strength: Sequence[int]):
        self.jokers = deck.suit_mask[NO_SUIT]
        strength = list(strength)
        self.strength = strength
        # The cards a card follows with: its suit, or the trumps with the jokers.
        self.group = [
            trump_mask if (1 << c) & trump_mask else deck.suit_mask[deck.suit[c]]
            for c in range(deck.size)
        ]
        self.above = [
            sum(1 << d for d in cards_in(self.group[c]) if strength[d] > strength[c])
            for c in range(deck.size)
        ]
        # A card played to ``lead`` wins the trick when it is in beaters[lead].
        self.beaters = [
            self.above[c] | (0 if (1 << c) & trump_mask else trump_mask)
            for c in range(deck.size)
        ]
        plain = [deck.suit_mask[s] & ~trump_mask for s in range(4)]
        self.plain_suits = [m for m in plain if m]
        self.groups = [*self.plain_suits, trump_mask]
        # Each card's place in plain_suits, -1 for a trump.
        self.plain_index = [-1] * deck.size
        for i, suit in enumerate(self.plain_suits):
            for c in cards_in(suit):
                self.plain_index[c] = i
        # The group each suit's cards follow with (by suit index S H D C).
        self.suit_group = [self.group[deck.card("A" + "SHDC"[s])] for s in range(4)]
        # The suits lie in pack order, each contiguous from its Ace (strongest) to
        # its 2: ``inner`` holds every suit card but the 2s, for `_Solver` moves.
        inner = 0
        for s in range(4):
            cards = cards_in(deck.suit_mask[s])
            assert cards == list(range(cards[0], cards[-1] + 1))
            assert all(strength[a] > strength[b] for a, b in itertools.pairwise(cards))
            inner |= deck.suit_mask[s] & ~(1 << cards[-1])
        self.inner = inner
        self._desc: dict[int, tuple[int, ...]] = {}
        self.moves: dict[tuple[int, int, int], tuple[int, ...]] = {}

    @classmethod
    def of(cls, game: Any, trump_mask: int) -> Ranks:
        key = (game.deck.size, trump_mask)
        if key not in cls._cache:
            # The engine's card strengths (jokers above the Ace in Honeymoon).
            cls._cache[key] = cls(game.deck, trump_mask, game._strength)
        return cls._cache[key]

    def desc(self, mask: int) -> tuple[int, ...]:
        """The cards of ``mask`` (one group) from strongest to weakest."""
        cached = self._desc.get(mask)
        if cached is None:
            if len(self._desc) >= _CACHE_LIMIT:
                self._desc.clear()
            # Pack order is A..2 inside a suit, so ascending ids are descending
            # strength; only the jokers (last in the pack, strongest trumps) move to
            # the front.
            strength = self.strength
            jokers = sorted(cards_in(mask & self.jokers), key=lambda c: -strength[c])
            cached = self._desc[mask] = (*jokers, *cards_in(mask & ~self.jokers))
        return cached


class Table:
    """Everything the bot reads about a game: what seat ``seat`` may know."""

    def __init__(self, game: Any, state: Any, seat: int):
        opp = 1 - seat
        deck = game.deck
        self.deck = deck
        self.honeymoon: bool = game.honeymoon
        self.ranks = Ranks.of(game, state.trump_mask)
        self.trumps: int = state.trump_mask
        self.hand: int = state.hands[seat]
        self.played: int = state.played
        self.stage: int = state.stage
        self.lead: int = state.lead  # the opponent's card when we follow, else -1
        self.my_tricks2: int = state.tricks2[seat]
        if self.stage == 1:
            self.prize: int = state.face_up
            # 0 at trick 1, close to 1 at the last stage-1 trick
            self.progress = state.stock_pos / game.stock_size
            self.opp_seen: int = state.seen[opp]
            prize_bit = 1 << self.prize
            # Cards we cannot place: in his hidden hand or still in the stock.
            self.unknown = (
                deck.all_mask & ~self.hand & ~self.played & ~self.opp_seen & ~prize_bit
            )
            # He holds 13 cards between tricks, 12 once he has led to this one.
            opp_cards = 13 - (1 if self.lead >= 0 else 0)
            self.opp_hidden = max(0, opp_cards - self.opp_seen.bit_count())
            # His hidden cards avoid the suits he has shown void in since his last
            # hidden draw (the engine's public ``voids``).
            void_cards = 0
            voids = state.voids[opp]
            if voids:
                for s in range(4):
                    if voids >> s & 1:
                        void_cards |= self.ranks.suit_group[s]
            self.opp_pool = self.unknown & ~void_cards
        else:
            # "Every card is accounted for by then": pack minus ours minus played.
            self.opp_hand = deck.all_mask & ~self.hand & ~self.played
