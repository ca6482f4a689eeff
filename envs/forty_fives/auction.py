"""Bidding and the kitty of Auction Forty-Fives and One Hundred and Ten: bids, the
dealer's hold, naming trumps, the bidder's discards (mixed into `rules.FortyFives`)."""

from __future__ import annotations

from ..core.cards import cards_in
from .state import Phase, State
from .tables import (
    BID,
    BID_LEVELS,
    DISCARD,
    DONE,
    HAND_SIZE,
    HOLD,
    PASS,
    TRUMP,
)


class Auction:
    """Bidding, naming trumps and the discards of the auction variants."""

    def _legal_bids(self, state: State) -> list[int]:
        high = state.bid_high
        raises = [BID + k for k, v in enumerate(BID_LEVELS) if v > high]
        if state.to_play != state.dealer:
            return [PASS, *raises]
        if high == 0:
            # "passen alle, muss der Geber 15 spielen": no pass; he may bid 15 or more.
            return raises
        # The dealer may hold: take the contract at the current high bid.
        return [PASS, *raises, HOLD]

    def _legal_discards(self, state: State) -> list[int]:
        hand = state.hands[state.to_play]
        count = hand.bit_count()
        out = []
        # Never more discards than the stock can replace [ENGINE CHOICE, rules-notes
        # §1.3].
        if count - 1 + len(state.stock) - state.stock_pos >= HAND_SIZE:
            out = [DISCARD + c for c in cards_in(hand)]
        if count <= HAND_SIZE:
            out.append(DONE)  # the bidder holds 8 and must discard at least 3
        return out

    def _bid(self, state: State, action: int) -> None:
        if action not in self._legal_bids(state):
            raise self.illegal(state, action, "not a legal call in the auction now")
        player = state.to_play
        n = self.num_players
        state.bid_history.append((player, action))
        if action == PASS:
            state.passed |= 1 << player  # a pass is final
        elif action == HOLD:
            state.bid_winner = player
            state.held += 1
        else:
            level = action - BID
            state.bid_high = BID_LEVELS[level]
            state.bid_winner = player
            state.bid_levels[player] |= 1 << level
        active = [s for s in range(n) if not state.passed >> s & 1]
        if len(active) == 1 and active[0] == state.bid_winner:
            state.bidder = state.bid_winner
            state.contract = state.bid_high
            state.phase = Phase.TRUMP  # "Wer das Höchstgebot hat, bestimmt den Trumpf"
            state.to_play = state.bidder
            return
        nxt = (player + 1) % n
        while state.passed >> nxt & 1:
            nxt = (nxt + 1) % n
        state.to_play = nxt

    def _name_trumps(self, state: State, action: int) -> None:
        if not TRUMP <= action < TRUMP + 4:
            raise self.illegal(state, action, "the bidder must name trumps")
        self._set_trumps(state, action - TRUMP)
        # "… und nimmt eine Kitty aus 3 zusätzlich verdeckt gegebenen Karten auf"
        state.hands[state.bidder] |= state.kitty
        state.kitty = 0
        state.phase = Phase.DISCARD
        state.discard_pos = 0
        state.to_play = (state.dealer + 1) % self.num_players

    def _discard(self, state: State, action: int) -> None:
        if action not in self._legal_discards(state):
            raise self.illegal(
                state,
                action,
                "discard a card (the stock must be able to "
                "refill it) or say done once you hold 5 or fewer",
            )
        player = state.to_play
        if action != DONE:
            bit = 1 << (action - DISCARD)
            state.hands[player] ^= bit
            state.put_away[player] |= bit
            state.discards[player] += 1
            return
        # "der Geber füllt alle Hände vom Stapel auf 5 Karten auf", starting on his left
        need = HAND_SIZE - state.hands[player].bit_count()
        for card in state.stock[state.stock_pos : state.stock_pos + need]:
            state.hands[player] |= 1 << card
        state.stock_pos += need
        state.drawn[player] = need
        n = self.num_players
        state.discard_pos += 1
        if state.discard_pos < n:
            state.to_play = (state.dealer + 1 + state.discard_pos) % n
            return
        # "Der Bieter spielt aus." [SEED≠STD] bidder_leads=False: the player on his
        # left.
        leader = state.bidder if self.bidder_leads else (state.bidder + 1) % n
        self._start_play(state, leader)
