"""The state of a game of Fünfzehn – tot: plain data with a cheap ``clone()``."""

from __future__ import annotations

from enum import IntEnum

from ..core.state import SlotState


class Phase(IntEnum):
    ROLL_OFF = 0  # chance: the "Herauskommen", who starts the first round
    HALF1 = 1  # first half: the lowest total takes a match from the pool
    HALF2_ROLL_OFF = 2  # chance: roll-off among the players tied for the most matches
    HALF2 = 3  # second half: the highest total discards a match
    OVER = 4


class State(SlotState):
    """Everything about a game in progress.

    A round is ``order`` (the seats that play it, clockwise from its starter) and
    ``pos`` (the index in ``order`` of the player whose turn it is). Finished turns
    leave ``totals[seat]`` (the standing total, -1 while the seat has none) and
    ``busted[seat]``.
    """

    __slots__ = (
        "phase", "pool", "matches", "starter", "order", "pos", "totals", "busted",
        "total", "rolls", "dice", "pending", "round_no", "ro_seats", "ro_faces",
        "ro_clockwise", "ro_passes", "rolloffs", "last_round", "loser",
    )  # fmt: skip

    def __init__(self, num_players: int, pool: int) -> None:
        self.phase = Phase.ROLL_OFF
        self.pool = pool  # matches not yet handed out (first half)
        self.matches = [0] * num_players  # matches each seat holds
        self.starter = -1  # the seat that started the current round
        self.order: list[int] = []  # seats taking part in this round, in turn order
        self.pos = 0  # order[pos] is the player to act
        self.totals = [-1] * num_players  # standing total of each finished seat
        self.busted = [False] * num_players  # went over 15 in this round
        self.total = 0  # the current turn's sum ("t")
        self.rolls = 0  # dice rolled in the current turn ("k")
        self.dice: list[int] = []  # the current turn's faces, in order
        self.pending = False  # ROLL chosen, the die is in the air (a chance node)
        self.round_no = 0  # rounds started in this game
        # A roll-off in progress (ROLL_OFF / HALF2_ROLL_OFF): the seats of this pass in
        # rolling order, the faces rolled so far in it, the pass's direction, and the
        # passes finished so far.
        self.ro_seats: list[int] = []
        self.ro_faces: list[int] = []
        self.ro_clockwise = True
        self.ro_passes: list[tuple[tuple[int, int], ...]] = []
        #: finished roll-offs as (purpose, passes); purpose "start" or "half2", each
        #: pass a tuple of (seat, face)
        self.rolloffs: list[tuple[str, tuple[tuple[tuple[int, int], ...], ...]]] = []
        #: the last finished round: (half, seat, why), e.g. (1, 2, "lowest"),
        #: (2, 0, "fifteen") or (2, -1, "all bust")
        self.last_round: tuple[int, int, str] | None = None
        self.loser = -1  # the seat that lost the game, once it is over

    @property
    def player(self) -> int:
        """The seat whose turn it is in a round (-1 outside rounds)."""
        if self.phase in (Phase.HALF1, Phase.HALF2) and self.pos < len(self.order):
            return self.order[self.pos]
        return -1
