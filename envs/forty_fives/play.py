"""Trick play in Forty-Fives, mixed into `rules.FortyFives`: which cards may be played
(following suit, trumping at any time, the protected top trumps), robbing the turned
card, the trick's winner."""

from __future__ import annotations

from ..core.cards import held_bit
from .state import Phase, State
from .tables import (
    DECK,
    HAND_SIZE,
    NOROB,
    PLAIN_MASK,
    PROTECTED,
    ROB,
    STRENGTH,
    TRICK_POINTS,
    TRUMP_BASE,
)


class TrickPlay:
    """Card play, robbing and the trick."""

    def legal_mask(self, state: State) -> int:
        """The cards the player to act may play, as a bitmask."""
        hand = state.hands[state.to_play]
        if not state.trick:
            return hand  # the leader leads any card
        lead = state.trick[0]
        tm = state.trump_mask
        trumps = hand & tm
        if (1 << lead) & tm:
            # "Trumpf wird ausgespielt: Du musst Trumpf zugeben, wenn du hast …
            # Trumpf-5, Trumpf-Bube und A♥ darfst du behalten. Du musst eine dieser
            # Karten nur legen, wenn ein besserer dieser drei Trümpfe ausgespielt wurde.
            # Sind sie deine einzigen Trümpfe, darfst du stattdessen eine beliebige
            # Karte legen."
            if not trumps:
                return hand
            protected = trumps & PROTECTED[state.trump][lead]
            if trumps & ~protected:
                return trumps  # any trump, protected or not
            return hand  # only protected trumps: any card
        # "Nicht-Trumpf wird ausgespielt: Du musst bedienen … oder trumpfen – stechen
        # ist immer erlaubt, auch wenn du bedienen könntest." The A♥ never follows
        # hearts.
        follow = hand & PLAIN_MASK[state.trump][DECK.suit[lead]]
        if follow:
            return follow | trumps
        # "Nur wenn du beides nicht kannst, darfst du eine beliebige Karte legen."
        # [SEED≠STD]: with void_must_trump=False a void player may play anything (Hoyle,
        # pagat).
        if self.void_must_trump and trumps:
            return trumps
        return hand

    def _rob(self, state: State, action: int) -> None:
        """``rob:X`` at the robber's first turn: X goes under the stock, the turned card
        into his hand, and he plays on. There is no separate decline: playing the first
        card is one ("sonst ist das Recht verfallen"), so nobody learns from the turn
        order who might have robbed."""
        player = state.to_play
        if action == NOROB:
            raise self.illegal(
                state,
                action,
                "there is no separate decline: playing your first card without robbing "
                "declines",
            )
        if player != state.rob_seat:
            raise self.illegal(
                state,
                action,
                "only the holder of the ace of trumps (or the dealer, when an ace is "
                "turned) may rob, before playing his first card",
            )
        if not state.hands[player] >> (action - ROB) & 1:
            raise self.illegal(state, action, "bury a card from your own hand")
        # "eine beliebige Karte aus der Hand gegen die aufgedeckte Karte tauschen. Die
        # unerwünschte Karte kommt verdeckt unter den Stapel."
        bit = 1 << (action - ROB)
        state.hands[player] ^= bit
        state.hands[player] |= 1 << state.turned
        state.buried = action - ROB
        state.put_away[player] |= bit
        state.robbed_by = player
        state.rob_seat = -1

    def _play(self, state: State, card: int) -> None:
        player = state.to_play
        bit = held_bit(self, state, card, DECK.size)
        if not bit & self.legal_mask(state):
            if (1 << state.trick[0]) & state.trump_mask:
                why = (
                    "a trump was led: play a trump (only 5, J and A♥ above the led "
                    "card may renege)"
                )
            else:
                why = "follow suit or trump" + (
                    " (void: you must trump)" if self.void_must_trump else ""
                )
            raise self.illegal(state, card, why)
        if player == state.rob_seat:
            # "Geraubt wird, bevor du deine erste Karte spielst – sonst ist das Recht
            # verfallen."
            state.rob_seat = -1
        state.hands[player] ^= bit
        state.played |= bit
        state.played_by[player] |= bit
        state.trick.append(card)
        n = self.num_players
        if len(state.trick) < n:
            state.to_play = (player + 1) % n
            return
        self._finish_trick(state)

    def trick_winner(self, state: State) -> tuple[int, int]:
        """(index in the trick, strength) of the card winning the current trick so far.

        "Der höchste Trumpf gewinnt den Stich; liegt kein Trumpf, gewinnt die höchste
        Karte der ausgespielten Farbe."
        """
        strength = STRENGTH[state.trump]
        tm = state.trump_mask
        trick = state.trick
        lead = trick[0]
        follow = tm if (1 << lead) & tm else PLAIN_MASK[state.trump][DECK.suit[lead]]
        best_i, best = 0, strength[lead]
        for i in range(1, len(trick)):
            c = trick[i]
            if (1 << c) & (tm | follow):
                s = strength[c]
                if s > best:
                    best_i, best = i, s
        return best_i, best

    def _finish_trick(self, state: State) -> None:
        n = self.num_players
        index, strength = self.trick_winner(state)
        winner = (state.leader + index) % n
        team = self.team_of[winner]
        state.tricks_won[winner] += 1
        state.deal_points[team] += TRICK_POINTS
        if strength >= TRUMP_BASE and strength > state.best_trump:
            # The highest trump of a trick always wins it, so its side holds the bonus.
            state.best_trump = strength
            state.bonus_team = team
        state.trick = []
        state.trick_no += 1
        # "danach jeweils der Gewinner des letzten Stichs"
        state.leader = state.to_play = winner
        if self.twenty_five:
            # "wer zuerst 25 hat, gewinnt sofort, auch mitten im Spiel"
            state.scores[team] += TRICK_POINTS
            state.deal_gain[team] += TRICK_POINTS
            if state.scores[team] >= self.target:
                state.winner = team
                state.deal_no += 1  # the deal ends here too
                state.phase = Phase.OVER
                return
        if state.trick_no == HAND_SIZE:
            self._finish_deal(state)
            return
        state.phase = Phase.PLAY
