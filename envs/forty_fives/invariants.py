"""What must always hold in a Forty-Fives state (the soak runner checks it after every
step), and the bound on an episode's length; mixed into `rules.FortyFives`."""

from __future__ import annotations

from ..core.cards import mask_of
from .state import Phase, State
from .tables import (
    DECK,
    HAND_SIZE,
    KITTY_SIZE,
    STOCK,
    TRICK_POINTS,
    TRUMP_MASK,
)


class Invariants:
    """Checked after every step by the soak runner."""

    @property
    def max_game_length(self) -> int:
        """An upper bound on the decisions in one episode."""
        n = self.num_players
        # plays + rob, or bids (each seat at most 4 raises/holds and a pass) + trumps +
        # discards (each card once, plus a done each) + plays.
        per_deal = HAND_SIZE * n + 1
        if self.auction:
            per_deal += 6 * n + 1 + (HAND_SIZE * n + KITTY_SIZE) + n
        deals = 1 if self.episode == "deal" else self.max_deals
        return deals * per_deal

    def check_invariants(self, state: State) -> None:
        """Cards conserved, hand sizes matching the phase, trick points and scores
        adding up; AssertionError saying which one fails."""

        def require(ok: bool, what: str) -> None:
            if not ok:
                raise AssertionError(f"{self!r} (phase {state.phase.name}): {what}")

        n = self.num_players
        dealt = state.dealt
        require(len(set(dealt)) == len(dealt), "a card was dealt twice")
        require(
            state.deal_no <= self.max_deals,
            f"{state.deal_no} deals, limit {self.max_deals}",
        )
        if state.phase in (Phase.CHOOSE_DEALER, Phase.DEAL):
            require(
                state.played == 0 and not state.trick, "cards played during the deal"
            )
            return
        require(len(dealt) == DECK.size, f"{len(dealt)} cards dealt")
        require(
            state.stock
            == [
                c
                for c, w in zip(dealt, self._dest[state.dealer], strict=True)
                if w == STOCK
            ],
            "the stock is not the cards dealt to it",
        )

        # Cards: hands + played + kitty + undrawn stock + discards = the pack, each card
        # once. Base game: the turned card lies on the stock until robbed, and the
        # buried card goes under the stock in its place.
        stock = mask_of(state.stock[state.stock_pos :])
        if state.robbed_by >= 0:
            stock = stock & ~(1 << state.turned) | 1 << state.buried
        away = 0 if not self.auction else _union(state.put_away)
        parts = [*state.hands, state.played, state.kitty, stock, away]
        total = sum(p.bit_count() for p in parts)
        require(
            total == DECK.size and _union(parts) == DECK.all_mask,
            f"cards not conserved ({total} counted): hands "
            + " / ".join(DECK.format_mask(h) for h in state.hands),
        )
        if state.robbed_by >= 0:
            require(
                state.put_away[state.robbed_by] == 1 << state.buried,
                "the buried card is not the robber's",
            )
        require(
            state.played == _union(state.played_by), "played cards without a player"
        )

        # Trumps: the turned card's suit (base), the bidder's choice (auction).
        if not self.auction:
            require(
                state.turned == state.stock[0], "the turned card is not the stock's top"
            )
            require(
                state.trump == DECK.suit[state.turned],
                "trumps differ from the turned suit",
            )
        if state.trump >= 0:
            require(state.trump_mask == TRUMP_MASK[state.trump], "wrong trump mask")

        # Hand sizes.
        in_trick = len(state.trick)
        for s in range(n):
            size = state.hands[s].bit_count()
            if state.phase in (Phase.BID, Phase.TRUMP):
                require(
                    size == HAND_SIZE, f"player_{s} holds {size} cards in the auction"
                )
            elif state.phase == Phase.DISCARD:
                pos = (s - state.dealer - 1) % n
                if pos >= state.discard_pos and s != state.to_play:
                    expect = HAND_SIZE + (KITTY_SIZE if s == state.bidder else 0)
                    require(
                        size == expect, f"player_{s} holds {size} before discarding"
                    )
                elif pos < state.discard_pos:
                    require(
                        size == HAND_SIZE, f"player_{s} holds {size} after the refill"
                    )
            elif state.phase == Phase.PLAY:
                played_now = (s - state.leader) % n < in_trick
                expect = HAND_SIZE - state.trick_no - played_now
                require(
                    size == expect, f"player_{s} holds {size} cards, expected {expect}"
                )
                require(
                    state.played_by[s].bit_count() == state.trick_no + played_now,
                    f"player_{s} played {state.played_by[s].bit_count()} cards",
                )
        if self.auction:
            for s in range(n):
                require(
                    state.put_away[s].bit_count() == state.discards[s],
                    f"player_{s}'s discards miscounted",
                )
            require(state.stock_pos == sum(state.drawn), "stock draws miscounted")
            require(
                state.stock_pos <= len(state.stock), "drew past the end of the stock"
            )

        # Points: 5 per trick won, to the winner's side.
        for t in range(self.num_teams):
            won = sum(state.tricks_won[s] for s in self._teams[t])
            require(
                state.deal_points[t] == TRICK_POINTS * won,
                f"side {t} has {state.deal_points[t]} points for {won} tricks",
            )
        require(sum(state.tricks_won) == state.trick_no, "trick count mismatch")
        if state.phase == Phase.PLAY:
            require(
                state.to_play == (state.leader + in_trick) % n, "wrong player to act"
            )
            require(state.winner == -1, "a winner before the end")
        if state.rob_seat >= 0:
            require(
                state.phase == Phase.PLAY
                and state.trick_no == 0
                and not state.played_by[state.rob_seat]
                and state.robbed_by < 0,
                "a rob still open after the eligible player's first card",
            )
        # Scores: every finished deal handed out 25 points, or 30 with a trump played
        # (auction: failed bids come off, the 110 cap cuts; checked by range only).
        total, done = sum(state.scores), state.deal_no
        if self.twenty_five:
            tricks = (
                done * HAND_SIZE
                if state.phase == Phase.OVER
                else (done * HAND_SIZE + state.trick_no)
            )
            require(
                total <= tricks * TRICK_POINTS and total % TRICK_POINTS == 0,
                f"scores {state.scores} after {tricks} tricks",
            )
            if state.phase != Phase.OVER:
                require(
                    max(state.scores) < self.target,
                    f"scores {state.scores} reached the target but play goes on",
                )
        elif not self.auction:
            require(
                25 * done <= total <= 30 * done,
                f"scores {state.scores} after {done} deals",
            )
        else:
            require(
                total <= 60 * done and min(state.scores) >= -30 * done,
                f"scores {state.scores} after {done} deals",
            )
        if state.phase == Phase.OVER and self.episode == "match" and state.winner >= 0:
            w = state.winner
            require(
                state.scores[w] >= self.target or state.deal_no == self.max_deals,
                f"side {w} won with {state.scores[w]}",
            )
            require(
                all(s < state.scores[w] for t, s in enumerate(state.scores) if t != w)
                or (self.auction and self.bidder_out_first),
                f"side {w} won with scores {state.scores}",
            )


def _union(masks: list[int]) -> int:
    out = 0
    for m in masks:
        out |= m
    return out
