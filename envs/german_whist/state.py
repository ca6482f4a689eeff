"""The state of a German Whist game: plain data with a cheap ``clone()``."""

from __future__ import annotations

from enum import IntEnum

from ..core.state import SlotState


class Phase(IntEnum):
    CHOOSE_DEALER = 0  # chance: the first dealer of the episode
    DEAL = 1  # chance: one card at a time, hand 0, hand 1, then the stock from the top
    PLAY = 2  # tricks; stage 1 while the stock lasts, stage 2 after
    OVER = 3


class State(SlotState):
    """Everything about a game in progress. Card sets are bitmasks over the pack."""

    __slots__ = (
        "phase",
        "dealer",
        "deal_no",
        "dealt",
        "hands",
        "stock",
        "stock_pos",
        "trump",
        "trump_mask",
        "to_play",
        "leader",
        "lead",
        "played",
        "seen",
        "voids",
        "tricks1",
        "tricks2",
        "match",
        "last_trick",
        "winner",
    )

    def __init__(self) -> None:
        self.phase = Phase.CHOOSE_DEALER
        self.dealer = -1
        self.deal_no = 0  # deals finished so far in this episode
        self.dealt: list[int] = []  # cards dealt so far in this deal, in deal order
        self.hands = [0, 0]
        self.stock: list[int] = []  # stock[0] is the card first turned face up
        self.stock_pos = 0  # stock[stock_pos] is face up while stock_pos < len(stock)
        self.trump = -1
        self.trump_mask = 0  # the trump suit, jokers included (Honeymoon)
        self.to_play = -1
        self.leader = -1
        self.lead = -1  # card led to the current trick, -1 before the lead
        self.played = 0  # cards out of play
        # face-up prizes each player won and still holds (the "Seen row")
        self.seen = [0, 0]
        # suits (bit s) in which the player has shown void since his last hidden draw:
        # he holds no card of them outside his Seen row
        self.voids = [0, 0]
        self.tricks1 = [0, 0]
        self.tricks2 = [0, 0]
        self.match = [0, 0]  # match points (Honeymoon)
        # (leader's card, other, winner)
        self.last_trick: tuple[int, int, int] | None = None
        self.winner = -1  # winner of the deal (or the match) once decided

    @property
    def stage(self) -> int:
        """1 while the stock lasts, then 2."""
        return 1 if self.stock_pos < len(self.stock) else 2

    @property
    def face_up(self) -> int:
        """The face-up stock card (the prize of this trick), or -1 in stage 2."""
        return self.stock[self.stock_pos] if self.stock_pos < len(self.stock) else -1
