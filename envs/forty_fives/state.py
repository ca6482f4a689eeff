"""The state of a Forty-Fives game: plain data with a cheap ``clone()``."""

from __future__ import annotations

from enum import IntEnum

from ..core.state import SlotState


class Phase(IntEnum):
    CHOOSE_DEALER = 0  # chance: the first dealer of the episode
    DEAL = 1  # chance: one card at a time, in the packet order of the deal
    BID = 2  # auction variants: pass / bid / hold
    TRUMP = 3  # auction variants: the high bidder names trumps
    DISCARD = 4  # auction variants: one player at a time discards, then is refilled
    # (5 was a separate rob phase; robbing is now part of the robber's first turn in
    # PLAY, so the phase no longer shows who may rob)
    PLAY = 6  # tricks (and, at his first turn, the eligible player's rob:X)
    OVER = 7


class State(SlotState):
    """Everything about a game in progress. Card sets are bitmasks over the 52-card
    pack.

    Per-deal fields are reset by ``Game._start_deal``; ``scores``, ``dealer``,
    ``deal_no`` and the match result carry over between deals.
    """

    __slots__ = (
        "phase",
        "dealer",
        "deal_no",
        "dealt",
        "hands",
        "stock",
        "stock_pos",
        "kitty",
        "turned",
        "trump",
        "trump_mask",
        "rob_seat",
        "robbed_by",
        "buried",
        "to_play",
        "leader",
        "trick",
        "trick_no",
        "played",
        "played_by",
        "tricks_won",
        "deal_points",
        "best_trump",
        "bonus_team",
        "scores",
        "deal_gain",
        "bid_high",
        "bid_winner",
        "passed",
        "bid_levels",
        "held",
        "bid_history",
        "bidder",
        "contract",
        "discard_pos",
        "put_away",
        "discards",
        "drawn",
        "winner",
    )

    def __init__(self, num_players: int, num_teams: int) -> None:
        n = num_players
        self.phase = Phase.CHOOSE_DEALER
        self.dealer = -1
        self.deal_no = 0  # deals finished so far in this episode
        self.scores = [0] * num_teams  # game score of each team (side)
        self.deal_gain = [
            0
        ] * num_teams  # what the last finished deal changed the scores by
        self.winner = -1  # winning team once the game is over (-1: none / drawn)
        self._reset_deal(n, num_teams)

    def _reset_deal(self, n: int, num_teams: int) -> None:
        self.dealt: list[int] = []  # cards dealt so far in this deal, in deal order
        self.hands = [0] * n
        self.stock: list[
            int
        ] = []  # stock[0] is the top (the turned card in the base game)
        self.stock_pos = 0  # cards drawn from the stock so far (auction refills)
        self.kitty = 0  # auction: the 3-card kitty until the bidder takes it
        self.turned = -1  # base game: the turned card (public all deal)
        self.trump = -1
        self.trump_mask = 0  # the trump suit plus the A♥
        # the seat still entitled to rob (hidden: only that seat knows), -1 once it
        # robbed or played its first card, or if nobody may rob
        self.rob_seat = -1
        self.robbed_by = -1  # the seat that robbed (public), -1 if nobody did
        self.buried = -1  # the card buried by the robber (seen by nobody but him)
        self.to_play = -1
        self.leader = -1  # leader of the current trick
        self.trick: list[int] = []  # cards of the current trick, in play order
        self.trick_no = 0  # tricks finished in this deal
        self.played = 0  # cards played to tricks this deal
        self.played_by = [0] * n  # cards each seat played this deal
        self.tricks_won = [0] * n
        self.deal_points = [
            0
        ] * num_teams  # 5 per trick won this deal (bonus not included)
        self.best_trump = -1  # strength of the highest trump played so far this deal
        self.bonus_team = -1  # team that won the trick with that trump
        # auction
        self.bid_high = 0  # current high bid (0: nobody has bid)
        self.bid_winner = -1  # seat holding the high bid (the dealer after a hold)
        self.passed = 0  # bit s: seat s has passed (final)
        self.bid_levels = [0] * n  # bit k: the seat bid level k (15, 20, 25, 30)
        self.held = 0  # times the dealer held
        self.bid_history: list[tuple[int, int]] = []  # (seat, action) in order
        self.bidder = -1  # the contract's declarer
        self.contract = 0  # the contract's bid
        self.discard_pos = 0  # index into the refill order of the player discarding
        self.put_away = [
            0
        ] * n  # cards each seat discarded or buried (only he knows them)
        self.discards = [0] * n  # how many cards each seat discarded (public)
        self.drawn = [0] * n  # how many cards each seat drew from the stock (public)
