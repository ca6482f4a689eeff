"""The state of a Fünfzehnern session: plain data with a cheap ``clone()``.

Cards are ids of the 32-card German pack (`parlour.envs.core.cards.GERMAN_32`) in both
sizes; card sets are int bitmasks over those ids.
"""

from __future__ import annotations

from enum import IntEnum

from ..core.state import SlotState


class Phase(IntEnum):
    CHOOSE_DEALER = 0  # chance: the first dealer of the episode
    DEAL = 1  # chance: one card at a time, to seats 0, 1, …, n-1, 0, 1, … (8 rounds)
    PLAY = 2  # the eight tricks
    OVER = 3


class State(SlotState):
    """Everything about a session in progress; ``new_deal`` resets the per-deal part."""

    __slots__ = (
        "phase",
        "dealer",
        "deal_no",
        "dealt",
        "hands",
        "to_play",
        "leader",
        "trick",
        "led_suit",
        "zwang",
        "zwang_suits",
        "played",
        "played_by",
        "voids",
        "chain",
        "points",
        "tricks",
        "scores",
        "deal_scores",
        "last_trick",
        "num_players",
    )

    def __init__(self, num_players: int) -> None:
        self.num_players = num_players
        self.phase = Phase.CHOOSE_DEALER
        self.dealer = -1
        self.deal_no = 0  # deals finished so far in this episode
        self.scores = [0] * num_players  # game points of the finished deals, per seat
        self.deal_scores: list[list[int]] = []  # game points of each finished deal
        self.new_deal()

    def new_deal(self) -> None:
        """Clear everything that belongs to one deal (the session fields stay)."""
        n = self.num_players
        self.dealt = 0  # cards dealt so far in this deal
        self.hands = [0] * n
        self.to_play = -1
        self.leader = -1  # seat that led (or is to lead) the current trick
        self.trick: list[int] = []  # cards on the table, in play order from the leader
        # suit of the card led to the current trick, -1 before the lead
        self.led_suit = -1
        self.zwang = -1  # suit announced with Zwang on the current trick, else -1
        self.zwang_suits = 0  # bit s: Zwang was announced in suit s this deal (public)
        self.played = 0  # cards played this deal (current trick included)
        self.played_by = [0] * n  # the cards each seat played this deal
        self.voids = [0] * n  # bit s: the seat failed to follow suit s (public)
        # The capture suits, oldest first: after a trick won by someone other than its
        # leader, the led suit (the suit he captured the lead in) is appended.
        self.chain: list[int] = []
        self.points = [0] * n  # card points taken in tricks this deal
        self.tricks = [0] * n  # tricks won this deal
        # the last finished trick: (leader, cards in play order, winner)
        self.last_trick: tuple[int, tuple[int, ...], int] | None = None

    def clone(self) -> State:
        s = super().clone()
        # the one nested list: each deal's scores
        s.deal_scores = [d[:] for d in self.deal_scores]
        return s
