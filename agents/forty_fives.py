"""A rule-based Forty-Fives bot whose options are the seed's three "Tipps für
Einsteiger".

Plays every variant of `parlour.envs.forty_fives` (Forty-Fives, Twenty-Five, Auction
Forty-Fives, One Hundred and Ten; 2 to 6 players): robbing, bidding, naming trumps,
discarding and trick play. Rule book: *Forty-Fives: Ausführliche Regeln*; each tip is a
boolean
constructor keyword, on by default, named in `TIPS` with the sentence it rests on.
``agents.make("heuristic:-hold_top_trumps", "forty_fives_v0")`` turns one off.

How the bot plays:

* **Card order.** The bot ranks cards by the order it believes in: the real one with
  ``know_order``; without it, a beginner's order (aces high and spot cards high-to-low
  in every suit, only 5, J and A♥ known as the top trumps).
* **Leading.** A plain card nobody can beat (a "boss"), else a low trump to draw trumps
  when it holds a top trump behind it, else its cheapest card. Without
  ``hold_top_trumps`` it leads its best trump whenever it holds two trumps or more.
* **Following.** With the partner winning safely, or no card that wins, it sheds its
  cheapest card; else it wins as cheaply as is safe (with the cheapest winner when it
  plays last). ``hold_top_trumps`` uses the renege privilege: a protected top trump
  stays in hand unless it takes an opponent's trump lead; without the tip the bot
  follows a trump lead with a trump whenever it holds one (as a player who does not know
  about reneging would).
* **Bonus.** With ``play_for_bonus`` a trick won with the highest trump still out is
  worth two tricks (it also takes the +5), so the bot spends that trump to win it, and
  its bids count the 5 of trumps as two tricks. Without it the bonus is ignored.
* **Robbing** always (burying the weakest card) unless every card beats the turned one;
  the ``rob:X`` actions come beside the cards at the robber's first turn, and declining
  is playing a card.
* **Auction.** Each suit is valued as trumps (expected tricks from the hand, the kitty
  and the partners, plus the bonus); the bot bids the top level its best suit covers,
  the dealer holds when it covers the high bid, and the bidder names that suit. Discards
  shed every card that is neither a trump nor a plain boss, as far as the stock allows.

Information: `_View` copies only what the seat may know (own hand and put-away cards,
the played cards and the trick, trumps, the turned card and who robbed it, the auction,
scores).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..envs.core.cards import FRENCH_52, SUITS, cards_in
from ..envs.forty_fives import rules
from ..envs.forty_fives.state import Phase
from .base import SwitchedBot, Turn

DECK = FRENCH_52

#: Each option of the bot and the seed sentence it implements.
TIPS: dict[str, str] = {
    "know_order": (
        "Lern zuerst die Reihenfolge. Rote Zahlen laufen normal, schwarze rückwärts; "
        "das Ass von Karo, Kreuz oder Pik ist schwach, wenn es nicht Trumpf ist."
    ),
    "hold_top_trumps": (
        "Halte deine Top-Trümpfe zurück. Dank des Zurückhaltens können 5, B und A♥ "
        "warten, bis ein Gegner Trumpf ausspielt."
    ),
    "play_for_bonus": (
        "Achte auf den Bonus: Die Partei mit dem besten gespielten Trumpf bekommt 5 "
        "Punkte extra – die Trumpf-5 ist also zwei Stiche wert."
    ),
}

# A beginner's order: what someone who has not learnt the tip's order believes.
_NAIVE_TRUMPS = {
    "S": "5 J AH A K Q 10 9 8 7 6 4 3 2",
    "C": "5 J AH A K Q 10 9 8 7 6 4 3 2",
    "D": "5 J AH A K Q 10 9 8 7 6 4 3 2",
    "H": "5 J AH K Q 10 9 8 7 6 4 3 2",
}
_NAIVE_PLAIN = {
    "S": "A K Q J 10 9 8 7 6 5 4 3 2",
    "C": "A K Q J 10 9 8 7 6 5 4 3 2",
    "D": "A K Q J 10 9 8 7 6 5 4 3 2",
    "H": "K Q J 10 9 8 7 6 5 4 3 2",
}


def _naive_tables() -> list[list[int]]:
    tables = []
    for trump in SUITS:
        table = [0] * DECK.size
        order = _NAIVE_TRUMPS[trump].split()
        for i, rank in enumerate(order):
            card = DECK.card(rank if rank == "AH" else rank + trump)
            table[card] = rules.TRUMP_BASE + len(order) - i
        for suit in SUITS:
            if suit != trump:
                order = _NAIVE_PLAIN[suit].split()
                for i, rank in enumerate(order):
                    table[DECK.card(rank + suit)] = len(order) - i
        tables.append(table)
    return tables


NAIVE_STRENGTH = _naive_tables()

# Expected tricks of a card by its place in the believed order (bidding and discarding).
TRUMP_TRICKS = (1.0, 0.95, 0.85, 0.7, 0.6, 0.5, 0.4, 0.35, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3)
PLAIN_TRICKS = (0.4, 0.15, 0.05)  # the top three plain cards of a suit; the rest 0
KITTY_TRICKS = 0.4  # what the kitty and the refill add to the bidder's hand
PARTNER_TRICKS = 0.9  # what each partner is expected to take


class _View:
    """What one seat knows, copied from the engine state."""

    def __init__(self, game: rules.FortyFives, state: Any, seat: int, know: bool):
        self.game, self.seat = game, seat
        self.n = game.num_players
        self.team = game.team_of[seat]
        self.partners = [s for s in game.teams()[self.team] if s != seat]
        self.hand = state.hands[seat]
        self.phase = state.phase
        self.trump = state.trump
        self.trump_mask = state.trump_mask
        self.trick = list(state.trick)
        self.leader = state.leader
        self.played = state.played
        # strength of the highest trump played so far
        self.best_trump = state.best_trump
        self.bonus_team = state.bonus_team
        self.dealer = state.dealer
        self.bid_high = state.bid_high
        self.bid_winner = state.bid_winner
        self.twenty_five = game.twenty_five
        known = self.hand | self.played | state.put_away[seat]
        held_turned = 0
        if state.turned >= 0:
            known |= 1 << state.turned
            robber = state.robbed_by
            if robber >= 0 and robber != seat and not state.played >> state.turned & 1:
                held_turned = 1 << state.turned  # public: the robber holds it
        #: cards another player may hold (unseen ones plus a robbed turned card)
        self.threats = (DECK.all_mask & ~known) | held_turned
        self.know = know
        if self.trump >= 0:
            self.strength = (rules.STRENGTH if know else NAIVE_STRENGTH)[self.trump]

    def is_trump(self, card: int) -> bool:
        return bool(self.trump_mask >> card & 1)

    def follow_mask(self, card: int) -> int:
        """The cards that count as the led card's suit."""
        if self.is_trump(card):
            return self.trump_mask
        return rules.PLAIN_MASK[self.trump][DECK.suit[card]]

    def key(self, card: int, lead: int) -> int:
        """Believed strength of ``card`` in a trick led with ``lead`` (-1: cannot
        win)."""
        if self.is_trump(card) or self.follow_mask(lead) >> card & 1:
            return self.strength[card]
        return -1

    def current_best(self) -> tuple[int, int]:
        """(seat, believed strength) of the card winning the trick so far."""
        lead = self.trick[0]
        best_i, best = 0, self.key(lead, lead)
        for i, c in enumerate(self.trick[1:], 1):
            k = self.key(c, lead)
            if k > best:
                best_i, best = i, k
        return (self.leader + best_i) % self.n, best

    def beatable(self, card: int, lead: int) -> bool:
        """Whether a card still out could beat ``card`` in this trick (plain cards: by a
        higher card of the suit; trumping is left out)."""
        mine = self.key(card, lead)
        threats = self.threats & (self.trump_mask | self.follow_mask(lead))
        return any(self.key(c, lead) > mine for c in cards_in(threats))

    def boss_trump(self) -> int:
        """My highest trump if no trump still out beats it, else -1."""
        trumps = cards_in(self.hand & self.trump_mask)
        if not trumps:
            return -1
        top = max(trumps, key=self.strength.__getitem__)
        out = cards_in(self.threats & self.trump_mask)
        if any(self.strength[c] > self.strength[top] for c in out):
            return -1
        return top


class FortyFivesHeuristic(SwitchedBot):
    """Rule-based Forty-Fives player; each of the seed's tips is a switch.

    Keyword options (all default True; see `TIPS` for the seed sentence of each):
        know_order: rank cards by the real order; off: a beginner's order (aces and high
            spot cards high in every suit).
        hold_top_trumps: keep 5, J and A♥ back by reneging until they can take an
            opponent's trump lead, and never lead them while other cards remain; off:
            lead the best trump with two or more, and follow every trump lead with a
            trump.
        play_for_bonus: a trick won with the highest trump still out is worth two; bids
            count the trump 5 as two tricks; off: the bonus is ignored.
    """

    game_title = "Forty-Fives"
    SWITCHES = tuple(TIPS)

    # --- dispatch ---------------------------------------------------------------------
    def choose(self, turn: Turn, legal: list[int]) -> int:
        view = _View(turn.game, turn.state, turn.seat, self.know_order)
        phase = view.phase
        if phase == Phase.PLAY:
            if legal[-1] >= rules.ROB:  # the robber's first turn: rob, or play at once
                rob = self._rob(view, turn.state.turned)
                if rob >= 0:
                    return rob
                legal = [a for a in legal if a < rules.ROB]
                if len(legal) == 1:
                    return legal[0]
            choice = self._play(view, [a - rules.PLAY for a in legal])
            return rules.PLAY + choice
        if phase == Phase.BID:
            return self._bid(view, legal)
        if phase == Phase.TRUMP:
            return rules.TRUMP + self._best_suit(view)[0]
        if phase == Phase.DISCARD:
            return self._discard(view, legal)
        return legal[0]

    # --- card values ------------------------------------------------------------------
    def _value(self, view: _View, card: int) -> int:
        """How much the bot wants to keep a card: trumps above plain cards, then
        strength."""
        return view.strength[card]

    def _is_top(self, view: _View, card: int) -> bool:
        return bool(rules.TOP_TRUMPS[view.trump] >> card & 1)

    # --- trick play -------------------------------------------------------------------
    def _play(self, view: _View, legal: list[int]) -> int:
        if not view.trick:
            return self._lead(view, legal)
        return self._follow(view, legal)

    def _lead(self, view: _View, legal: list[int]) -> int:
        trumps = [c for c in legal if view.is_trump(c)]
        plain = [c for c in legal if not view.is_trump(c)]
        by_strength = view.strength.__getitem__
        if not self.hold_top_trumps and len(trumps) >= 2:
            return max(trumps, key=by_strength)  # draw trumps with the best one
        boss = view.boss_trump()
        if self.play_for_bonus and boss >= 0 and self._bonus_open(view, boss):
            if not (self.hold_top_trumps and self._is_top(view, boss) and plain):
                return boss  # wins the trick and the +5 for sure
        winners = [c for c in plain if not view.beatable(c, c)]
        if winners:
            return max(winners, key=by_strength)
        low_trumps = [c for c in trumps if not self._is_top(view, c)]
        if self.hold_top_trumps and low_trumps and len(low_trumps) < len(trumps):
            # bait: make the others spend trumps while the top ones wait
            return min(low_trumps, key=by_strength)
        candidates = plain or low_trumps or trumps
        if self.hold_top_trumps and plain:
            candidates = plain
        return min(candidates, key=by_strength)

    def _bonus_open(self, view: _View, card: int) -> bool:
        """True when winning a trick with ``card`` would take the bonus for good."""
        if view.twenty_five or not view.is_trump(card):
            return False
        return view.strength[card] > view.best_trump and view.bonus_team != view.team

    def _follow(self, view: _View, legal: list[int]) -> int:
        lead = view.trick[0]
        by_strength = view.strength.__getitem__
        best_seat, best = view.current_best()
        partner_wins = view.game.team_of[best_seat] == view.team
        still_to_play = view.n - 1 - len(view.trick)
        trump_lead = view.is_trump(lead)
        if trump_lead and not self.hold_top_trumps:
            # Without the tip the bot does not use the renege privilege.
            trumps = [c for c in legal if view.is_trump(c)]
            if trumps:
                legal = trumps
        winners = [c for c in legal if view.key(c, lead) > best]
        boss = view.boss_trump()
        if self.play_for_bonus and boss in winners and self._bonus_open(view, boss):
            if not partner_wins or view.best_trump < 0 or still_to_play > 0:
                return boss  # two tricks' worth: the trick and the bonus
        if partner_wins:
            partner_card = view.trick[(best_seat - view.leader) % view.n]
            if still_to_play == 0 or not view.beatable(partner_card, lead):
                return self._shed(view, legal, lead)
        if not winners:
            return self._shed(view, legal, lead)
        if self.hold_top_trumps and trump_lead:
            # Top trumps may renege: use one only to take an opponent's trump lead.
            leader_is_opponent = view.game.team_of[view.leader] != view.team
            tops = [c for c in winners if self._is_top(view, c)]
            others = [c for c in winners if not self._is_top(view, c)]
            if others:
                winners = others
            elif tops and not leader_is_opponent:
                return self._shed(view, legal, lead)
        if still_to_play == 0:
            return min(winners, key=by_strength)
        safe = [c for c in winners if not view.beatable(c, lead)]
        return min(safe or winners, key=by_strength)

    def _shed(self, view: _View, legal: list[int], lead: int) -> int:
        """The cheapest card: a plain card before a trump, then the weakest; a top
        trump only when nothing else is legal."""

        def cost(c: int) -> tuple[int, int]:
            top = self._is_top(view, c)
            return (2 if top else 1 if view.is_trump(c) else 0, view.strength[c])

        return min(legal, key=cost)

    # --- robbing ----------------------------------------------------------------------
    def _rob(self, view: _View, turned: int) -> int:
        """``rob:X`` burying the weakest card, or -1 to decline (by playing)."""
        hand = cards_in(view.hand)
        worst = min(hand, key=lambda c: self._value(view, c))
        if self._value(view, worst) < self._value(view, turned):
            return rules.ROB + worst
        return -1

    # --- auction ----------------------------------------------------------------------
    def _suit_tricks(self, view: _View, suit: int) -> float:
        """Expected points of the hand with ``suit`` as trumps (bidding and naming)."""
        table = (rules.STRENGTH if self.know_order else NAIVE_STRENGTH)[suit]
        tm = rules.TRUMP_MASK[suit]
        hand = cards_in(view.hand)
        tricks = 0.0
        order = sorted(cards_in(tm), key=table.__getitem__, reverse=True)
        for c in hand:
            if tm >> c & 1:
                tricks += TRUMP_TRICKS[min(order.index(c), len(TRUMP_TRICKS) - 1)]
            else:
                same = [x for x in cards_in(rules.PLAIN_MASK[suit][DECK.suit[c]])]
                place = sorted(same, key=table.__getitem__, reverse=True).index(c)
                tricks += PLAIN_TRICKS[place] if place < len(PLAIN_TRICKS) else 0.0
        tricks += KITTY_TRICKS + PARTNER_TRICKS * len(view.partners)
        points = 5 * min(tricks, 5.0)
        five = DECK.card("5" + SUITS[suit])
        if self.play_for_bonus:
            # "die Trumpf-5 ist also zwei Stiche wert"
            points += (
                5.0
                if view.hand >> five & 1
                else 2.5 * (len(view.partners) + 1) / view.n
            )
        return points

    def _best_suit(self, view: _View) -> tuple[int, float]:
        values = [self._suit_tricks(view, s) for s in range(4)]
        best = int(np.argmax(values))
        return best, values[best]

    def _bid(self, view: _View, legal: list[int]) -> int:
        _, points = self._best_suit(view)
        bids = [a for a in legal if rules.BID <= a < rules.HOLD]
        affordable = [a for a in bids if rules.BID_LEVELS[a - rules.BID] <= points]
        if rules.HOLD in legal and view.bid_high <= points:
            # the dealer's privilege: take it at the current bid rather than raising
            return rules.HOLD
        if affordable:
            return max(affordable)
        if rules.PASS in legal:
            return rules.PASS
        return min(bids)  # the dealer's forced 15

    def _discard(self, view: _View, legal: list[int]) -> int:
        discards = [a - rules.DISCARD for a in legal if a != rules.DONE]
        hand = cards_in(view.hand)
        if not discards:
            return rules.DONE
        must = len(hand) > rules.HAND_SIZE
        worst = min(discards, key=lambda c: self._keep_score(view, c))
        if must or self._keep_score(view, worst) <= 0:
            return rules.DISCARD + worst
        return rules.DONE

    def _keep_score(self, view: _View, card: int) -> int:
        """Positive: keep (trumps, plain cards no unseen card of the suit beats)."""
        if view.is_trump(card):
            return 100 + view.strength[card]
        same = rules.PLAIN_MASK[view.trump][DECK.suit[card]] & view.threats
        higher = [c for c in cards_in(same) if view.strength[c] > view.strength[card]]
        return view.strength[card] if not higher else -20 + view.strength[card]


__all__ = ["TIPS", "FortyFivesHeuristic"]
