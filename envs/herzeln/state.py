"""The state of a Herzeln partie: plain data with a cheap ``clone()``."""

from __future__ import annotations

from enum import IntEnum

from ..core.state import SlotState


class Phase(IntEnum):
    CHOOSE_DEALER = 0  # chance: the first dealer of the episode
    DEAL = 1  # chance: one card at a time, hand 0 first, then hand 1, …
    TRICKS = 2  # a trick-taking contract (deals 1-7)
    DOMINO = 3  # the Domino deal (Unteranlegen)
    OVER = 4


class State(SlotState):
    """Everything about a partie in progress. Card sets are bitmasks over the pack;
    per-seat lists are indexed by absolute seat."""

    __slots__ = (
        "phase",
        "dealer",
        "deal_no",
        "contract",
        "dealt",
        "dealt_count",
        "hands",
        "to_play",
        "leader",
        "trick",
        "lead_suit",
        "played_by",
        "won",
        "tricks",
        "points",
        "scores",
        "voids",
        "line_top",
        "line_bottom",
        "laid",
        "out_order",
        "passes",
        "history",
        "last_trick",
    )

    def __init__(self, num_players: int, num_lines: int) -> None:
        n = num_players
        self.phase = Phase.CHOOSE_DEALER
        self.dealer = -1
        self.deal_no = 0  # deals finished so far in this episode
        self.contract = -1  # index into rules.CONTRACTS of the deal being played
        self.dealt = 0  # cards dealt so far in this deal (bitmask)
        self.dealt_count = 0
        self.hands = [0] * n
        self.to_play = -1
        self.leader = -1  # seat that led the current trick
        self.trick: list[
            int
        ] = []  # cards of the current trick in play order from the leader
        self.lead_suit = -1
        self.played_by = [0] * n  # cards each seat has played or laid this deal
        self.won = [0] * n  # cards in the tricks each seat has taken this deal
        self.tricks = [0] * n  # tricks taken this deal
        self.points = [0] * n  # points scored this deal so far (the contract's sign)
        self.scores = [0] * n  # partie totals of the deals already finished
        self.voids = [0] * n  # suits (bit s) a seat has shown void in this deal
        # Domino: one line (single cyclic line) or four (per-suit rows); the rank
        # position in the line's cycle of the card at each end, -1 while the line is not
        # opened.
        self.line_top = [-1] * num_lines
        self.line_bottom = [-1] * num_lines
        self.laid = 0  # cards on the Domino layout
        self.out_order: list[int] = []  # Domino: seats in the order they went out
        self.passes = (
            0  # Domino: consecutive passes (a full round of them would be a block)
        )
        self.history: list[
            tuple[int, tuple[int, ...]]
        ] = []  # (contract, points) per deal
        self.last_trick: tuple[int, tuple[int, ...], int] | None = (
            None  # leader, cards, winner
        )
