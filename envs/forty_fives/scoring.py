"""Scoring in Forty-Fives, mixed into `rules.FortyFives`: the deal's points (5 a
trick, 5 for the highest trump, the bidder's contract), the match and its winner, the
returns."""

from __future__ import annotations

from .state import Phase, State
from .tables import (
    BONUS_POINTS,
)


class Scoring:
    """The deal's and the match's scores, and the returns."""

    def _finish_deal(self, state: State) -> None:
        taken = state.deal_points[:]
        if not self.twenty_five and state.bonus_team >= 0:
            # "Legt im ganzen Spiel niemand einen Trumpf, gibt es keinen Bonus"
            taken[state.bonus_team] += BONUS_POINTS
        if self.twenty_five:
            gain = [0] * self.num_teams  # already scored trick by trick
        elif self.auction:
            gain = self._auction_gains(state, taken)
        else:
            gain = taken
        for t in range(self.num_teams):
            state.scores[t] += gain[t]
            state.deal_gain[t] += gain[t]
        state.deal_no += 1
        state.phase = Phase.OVER
        if self.episode == "deal":
            return
        winner = self._match_winner(state)
        if winner is not None:
            state.winner = winner
            return
        if state.deal_no >= self.max_deals:
            # Deal limit (a safeguard): the leader wins, a shared lead is a draw.
            top = max(state.scores)
            leaders = [t for t, s in enumerate(state.scores) if s == top]
            state.winner = leaders[0] if len(leaders) == 1 else -1
            return
        self._next_deal(state)

    def _auction_gains(self, state: State, taken: list[int]) -> list[int]:
        """The score changes of an auction deal, the 110 cap applied."""
        bidding = self.team_of[state.bidder]
        gain = taken[:]
        if taken[bidding] >= state.contract:
            if self.thirty_for_sixty and state.contract == 30:
                gain[bidding] = 60  # Hoyle: a made 30 counts 60
        else:
            # "erreicht die Partei des Bieters ihr Gebot nicht, wird es stattdessen
            # abgezogen"
            gain[bidding] = -state.contract
        if self.cap is not None:
            # "über 105 kommt nur, wer gerade Bieter ist": the other sides stop at 105.
            for t in range(self.num_teams):
                if t != bidding:
                    old = state.scores[t]
                    gain[t] = min(old + gain[t], max(old, self.cap)) - old
        return gain

    def _match_winner(self, state: State) -> int | None:
        """The winning side after a deal, or None to play on."""
        scores = state.scores
        if self.auction and self.bidder_out_first:
            bidding = self.team_of[state.bidder]
            if scores[bidding] >= self.target:
                return bidding
        # "Die Partei, die zuerst 45 Punkte erreicht, gewinnt. Kommen zwei Parteien im
        # selben Spiel darüber, gewinnt die mit der höheren Punktzahl." A tie at the
        # top: another deal [ENGINE CHOICE].
        top = max(scores)
        if top < self.target:
            return None
        leaders = [t for t, s in enumerate(scores) if s == top]
        return leaders[0] if len(leaders) == 1 else None

    def _next_deal(self, state: State) -> None:
        # "Danach gibt reihum der linke Nachbar."
        state.dealer = (state.dealer + 1) % self.num_players
        state._reset_deal(self.num_players, self.num_teams)
        state.deal_gain = [0] * self.num_teams
        state.phase = Phase.DEAL

    def returns(self, state: State) -> list[float]:
        """Match: +1 to each seat of the winning side, -1 to each other seat with two
        sides, -1/(n-1) with n players alone; 0 for all on a draw. Deal: each side's
        score change minus the mean change of all sides. Zero-sum either way."""
        n = self.num_players
        if state.phase != Phase.OVER:
            return [0.0] * n
        if self.episode == "deal":
            mean = sum(state.deal_gain) / self.num_teams
            return [float(state.deal_gain[self.team_of[s]] - mean) for s in range(n)]
        w = state.winner
        if w < 0:
            return [0.0] * n
        lose = -1.0 / (self.num_teams - 1)
        return [1.0 if self.team_of[s] == w else lose for s in range(n)]

    def utility_bounds(self) -> tuple[float, float]:
        if self.episode == "match":
            return -1.0, 1.0
        # A side's deal gain lies in -30 (a failed 30 bid) .. 60 (a made 30 counting
        # 60); a return is that gain less the sides' mean.
        return -90.0, 90.0
