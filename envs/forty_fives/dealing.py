"""Who deals and the deal in Forty-Fives: packets of 3 and 2, the auction kitty, the
stock, the turned card that makes trumps; forced deals (mixed into
`rules.FortyFives`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.cards import SUITS, cards_in, mask_of
from ..core.deal import check_partition, forced_deals, parse_cards, parse_hands
from .state import Phase, State
from .tables import (
    DECK,
    HAND_SIZE,
    KITTY,
    KITTY_SIZE,
    STOCK,
    TRUMP_MASK,
)


class Dealing:
    """Chance: the first dealer, the cards in the order they are dealt, forced deals."""

    def _deal_destinations(self, dealer: int) -> list[int]:
        """Where each card of the deal goes, in deal order: a seat, KITTY or STOCK.

        "Dann gibt er im Uhrzeigersinn, links beginnend, jedem 5 Karten: erst 3, dann
        2"; the auction kitty is dealt after the first round (NEA45s), the stock is the
        rest.
        """
        n = self.num_players
        out: list[int] = []
        for i, size in enumerate(self.packets):
            for k in range(1, n + 1):
                out.extend([(dealer + k) % n] * size)
            if self.auction and i == 0:
                out.extend([KITTY] * KITTY_SIZE)
        out.extend([STOCK] * (DECK.size - len(out)))
        return out

    def _packet_starts(self) -> frozenset[int]:
        """Deal positions where a new packet begins (kitty and stock count as
        packets)."""
        starts, pos = set(), 0
        for i, size in enumerate(self.packets):
            for _ in range(self.num_players):
                starts.add(pos)
                pos += size
            if self.auction and i == 0:
                starts.add(pos)
                pos += KITTY_SIZE
        starts.add(pos)
        return frozenset(starts)

    def packets_dealt(self, state: State) -> list[tuple[str, list[str]]]:
        """The deal as it happened, packet by packet: ``("player_1", ["QS", "2H",
        "9C"])``, then ``("kitty", …)`` (auction) and ``("stock", [top first …])``."""
        out: list[tuple[str, list[str]]] = []
        if state.dealer < 0:
            return out
        starts = self._packet_starts()
        for i, card in enumerate(state.dealt):
            where = self._dest[state.dealer][i]
            if i in starts:
                label = (
                    "kitty"
                    if where == KITTY
                    else "stock"
                    if where == STOCK
                    else f"player_{where}"
                )
                out.append((label, []))
            out[-1][1].append(DECK.format(card))
        return out

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        if state.phase == Phase.CHOOSE_DEALER:
            n = self.num_players
            return [(d, 1.0 / n) for d in range(n)]
        if state.phase == Phase.DEAL:
            left = cards_in(DECK.all_mask & ~mask_of(state.dealt))
            return [(c, 1.0 / len(left)) for c in left]
        raise ValueError("not a chance node")

    def sample_chance(self, state: State, rng: np.random.Generator) -> list[int]:
        if state.phase == Phase.DEAL:
            # The rest of the shuffle at once: the same distribution as card-by-card
            # draws.
            left = cards_in(DECK.all_mask & ~mask_of(state.dealt))
            return [left[i] for i in rng.permutation(len(left)).tolist()]
        return super().sample_chance(state, rng)

    def _deal_card(self, state: State, card: int) -> None:
        if not 0 <= card < DECK.size or card in state.dealt:
            raise self.illegal(state, card, "that card is not left in the pack")
        where = self._dest[state.dealer][len(state.dealt)]
        state.dealt.append(card)
        if where >= 0:
            state.hands[where] |= 1 << card
        elif where == KITTY:
            state.kitty |= 1 << card
        else:
            state.stock.append(card)
        if len(state.dealt) == DECK.size:
            self._deal_done(state)

    def _deal_done(self, state: State) -> None:
        first = (state.dealer + 1) % self.num_players
        if self.auction:
            # "Nach dem Geben bietet man …": no turned card and no robbing; eldest bids
            # first.
            state.phase = Phase.BID
            state.to_play = first
            return
        # "Den Rest legt er verdeckt ab und deckt die oberste Karte auf. Ihre Farbe ist
        # … Trumpf."
        turned = state.stock[0]
        state.turned = turned
        self._set_trumps(state, DECK.suit[turned])
        # "Wer das Trumpf-Ass hat, darf rauben … Ist die aufgedeckte Karte selbst ein
        # Ass, darf der Geber sie auf dieselbe Weise rauben."
        if DECK.rank[turned] == 0:
            state.rob_seat = state.dealer
        else:
            ace = 1 << DECK.card("A" + SUITS[state.trump])
            state.rob_seat = next(
                (s for s in range(self.num_players) if state.hands[s] & ace), -1
            )
        # "Der linke Nachbar des Gebers spielt zum ersten Stich aus"
        self._start_play(state, first)

    def _set_trumps(self, state: State, suit: int) -> None:
        state.trump = suit
        state.trump_mask = TRUMP_MASK[suit]

    def _start_play(self, state: State, leader: int) -> None:
        state.leader = state.to_play = leader
        state.phase = Phase.PLAY

    def forced_chance(self, options: Mapping[str, Any]) -> list[int | None]:
        """Chance outcomes for ``{"dealer": d}`` and/or ``{"deal": …}`` / ``{"deals":
        [...]}``.

        A deal is ``{"dealer": d, "hands": [[5 names] × n], "stock": [top first …]}``
        (the base game's turned card is ``stock[0]``); the auction variants add
        ``"kitty": [3 names]``. Each hand lists its first packet first. Every card of
        the pack appears exactly once. Later deals of a match may leave out the dealer
        (it rotates to the left). Errors name the deal (``deal``, ``deals[1]``). In a
        match, deals after the forced ones are random (a `LaterDealsRandomWarning`
        says so, once per env).
        """
        one = self.episode == "deal"
        # a kitty in a variant without one gets its own message (_deal_cards)
        keys = ("dealer", "hands", "stock", "kitty")
        most, total = (1, 1) if one else (None, self.max_deals)
        return forced_deals(
            self, options, self._deal_cards, keys, most=most, total=total
        )

    def _deal_cards(self, deal: Mapping, where: str, dealer: int | None) -> list[int]:
        """A forced deal's cards in dealing order (`_order_deal`)."""
        n = self.num_players
        if not self.auction and "kitty" in deal:
            raise ValueError(
                f"{where}['kitty']: only the auction variants deal a kitty "
                f"(variant={self.variant!r})"
            )
        if self.auction and "kitty" not in deal:
            # before the stock's count, which a deal without its kitty also breaks
            raise ValueError(
                f"{where} has no 'kitty': the auction variants deal "
                f"{KITTY_SIZE} cards face down to a kitty; give "
                f"{where}['kitty'] = [{KITTY_SIZE} card names]"
            )
        if dealer is None:
            raise ValueError(
                f"a forced deal needs its dealer: give {where}['dealer'] or "
                "options['dealer'] (the packet order depends on it)"
            )
        hands = parse_hands(DECK, deal, n, HAND_SIZE, where)
        stock = parse_cards(DECK, deal.get("stock"), f"{where}['stock']")
        if len(stock) != self.stock_size:
            raise ValueError(
                f"{where}['stock'] must have {self.stock_size} cards "
                f"(52 - {HAND_SIZE} x {n}"
                f"{' - 3 for the kitty' if self.auction else ''}), "
                f"got {len(stock)}"
            )
        groups = [*hands, stock]
        kitty: list[int] = []
        if self.auction:
            kitty = parse_cards(DECK, deal["kitty"], f"{where}['kitty']")
            if len(kitty) != KITTY_SIZE:
                raise ValueError(
                    f"{where}['kitty'] must have {KITTY_SIZE} cards, got {len(kitty)}"
                )
            groups.append(kitty)
        check_partition(DECK, groups, where)
        return self._order_deal(dealer, hands, kitty, stock)

    def _order_deal(
        self, dealer: int, hands: list[list[int]], kitty: list[int], stock: list[int]
    ) -> list[int]:
        """The cards of one deal in deal order (packets from the dealer's left)."""
        taken = [0] * self.num_players
        k = s = 0
        out = []
        for where in self._dest[dealer]:
            if where >= 0:
                out.append(hands[where][taken[where]])
                taken[where] += 1
            elif where == KITTY:
                out.append(kitty[k])
                k += 1
            else:
                out.append(stock[s])
                s += 1
        return out
