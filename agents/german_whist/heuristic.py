"""A rule-based German Whist / Honeymoon Whist bot; its options are the seed's tips.

Implements the "Strategy tips" of the rule book (*German Whist*) for the engine in
`parlour.envs.german_whist`, for ``variant="german"`` and ``variant="honeymoon"``. Each
tip is a boolean constructor keyword, on by default, listed in `TIPS` with the seed
sentence it implements; ``agents.make("heuristic:-win_cheaply", "german_whist_v0")``
turns one off for an ablation.

How the bot plays:

* **Stage 1** (the stock lasts). A card is worth what it adds to the stage-2 hand
  (`_hand_value`: trumps, cards with few higher ones still out, length in one long
  suit). Winning a trick is worth the prize minus the hidden card the loser would have
  drawn (`_prize_swing`); a card costs what the hand loses by playing it
  (`_card_costs`). The follower knows which of its cards win; the leader estimates the
  chance that the opponent cannot beat a card from his Seen row, the suits he has shown
  void in and the number of unseen cards (`_p_lead_wins`).
* **Stage 2** (the hands are open; `parlour.agents.german_whist.stage2`). With at
  most ``EXACT_CARDS`` cards each an exact search (`_Solver`) plays the rest perfectly
  if it finishes within ``NODE_LIMIT`` positions; otherwise, and earlier, counting
  heuristics (`_counting_move`).

Information: the bot reads the engine state only through `Table`
(`parlour.agents.german_whist.table`), which copies what
the seat may know: its own hand, the trumps, the face-up card, the played cards, the
trick, both Seen rows, shown voids and trick counts. The opponent's stage-2 hand is
deduced (pack minus own hand minus played cards); his hidden cards and the stock order
beyond the face-up card are never read.
"""

from __future__ import annotations

from ...envs.core.cards import cards_in
from ..base import SwitchedBot, Turn
from .stage2 import Stage2Play
from .table import Table

#: Each option of the bot and the seed sentences it implements.
TIPS: dict[str, str] = {
    "value_prizes": (
        "Stage 1 is where you choose your stage-2 hand. Its tricks score nothing. They "
        "decide which cards you hold for the 13 that count, so judge each prize by "
        "what it does for that hand."
    ),
    "duck_duds": (
        "In stage 1, win only the tricks whose face-up card you want. If it’s a dud, "
        "throw your lowest card of the led suit: the loser still draws the hidden card "
        "underneath."
    ),
    "win_cheaply": (
        "Win cheaply. A prize taken with your Ace spends a card that was going to win "
        "a stage-2 trick anyway. Take it with the lowest card that still wins."
    ),
    "save_trumps": (
        "Trumps are stage-2 cards. Every trump spent on a stage-1 prize is one fewer "
        "for the 13 tricks that count."
    ),
    "long_suit": (
        "Build one long suit. Stage 2 still follows suit, so a five-card suit headed "
        "by two winners runs and drags their small cards out. Four scattered Kings win "
        "one trick each at best."
    ),
    "fight_late": (
        "Fight for prizes late in stage 1. Every card drawn face up stays in the Seen "
        "row until it’s played, so by the last few tricks you can name most of what "
        "they hold and judge what a prize does to your stage-2 hand."
    ),
    "count_to_seven": (
        "Count to 7, not 13. Stage 2 needs 7 of the 13 tricks, and the 7th ends the "
        "game on the spot. In Honeymoon Whist every trick counts toward the margin, so "
        "keep taking tricks even after the 7th."
    ),
    "open_hands": (
        "Play stage 2 with both hands face up. Every card is accounted for by then, so "
        "the game opens the hands: count their trumps, work out which of your suits "
        "runs, and lead accordingly. There’s nothing left to guess, only to calculate."
    ),
}

# --- the card value model (unit: about one stage-2 trick) -----------------------------
# A plain card with h higher cards of its suit still out (not ours, not played) is
# worth TOP[h]: a top card is a near-certain stage-2 winner, a King behind an unseen
# Ace less.
TOP = (1.0, 0.55, 0.3, 0.15, 0.08, 0.04, 0.02)
# Even a small trump takes a trick by ruffing, so trumps get a base value above rank.
TRUMP_BASE = 0.7
TRUMP_TOP = 0.5
# long_suit: each card beyond three in the longest plain suit (it wins once the top
# cards of the suit are gone); 0.3 and 0.5 measured worse in Honeymoon Whist.
LENGTH_BONUS = 0.15
# The prize the opponent takes when we lose helps him too: half of its value counts.
DENY_WEIGHT = 0.5
# Prize swings against card costs: measured in self-play, 1.5 plays better than 1.
PRIZE_WEIGHT = 1.5
# fight_late: the prize weight grows from LATE_MIN (trick 1) to LATE_MAX (last trick).
LATE_MIN, LATE_MAX = 1.0, 1.5
# Honeymoon: a stage-1 trick is one of the 27 that score.
TRICK_VALUE = 1.0
# The leader treats a card as a bid for the trick when it wins at least this often.
SURE = 0.5
# value_prizes off: a prize is judged by its rank alone (A, K, Q, J, the rest).
RANK_ONLY = (1.0, 0.55, 0.3, 0.15) + (0.05,) * 9
EPS = 1e-9

# What a card adds to `_hand_value` by the number h of higher cards out (h < 16: at
# most 14 in the 15 trumps of Honeymoon), as a plain card and as a trump; the same
# floats the formulas above give, looked up instead of recomputed.
_PLAIN_TERM = tuple(TOP[h] if h < len(TOP) else 0.0 for h in range(16))
_TRUMP_TERM = tuple(TRUMP_BASE + TRUMP_TOP * top for top in _PLAIN_TERM)
# What `_length_bonus` gives for the longest plain suit (at most 13 cards).
_LENGTH_TERM = tuple(LENGTH_BONUS * max(0, n - 3) for n in range(16))


class GermanWhistHeuristic(Stage2Play, SwitchedBot):
    """Rule-based German Whist / Honeymoon Whist player; each seed tip is a switch.

    Keyword options (all default True; `TIPS` quotes the seed sentence of each):
        value_prizes: value a prize by what it adds to the stage-2 hand (trumps, high
            cards, length in the long suit); off: by its rank alone.
        duck_duds: fight for a stage-1 trick only when the prize is worth the card it
            costs, else throw the cheapest card; off: win every trick it can.
        win_cheaply: win with the cheapest card that wins; off: with the highest.
        save_trumps: a trump spent in stage 1 costs its stage-2 value; off: no more than
            a plain card of its rank.
        long_suit: keep and collect length in one long plain suit; off: length is
            worth nothing.
        fight_late: weight prizes more as the stock runs down; off: all the same.
        count_to_seven: German: stage 2 plays to reach 7 tricks; Honeymoon: every trick
            counts, stage 1 too. Off: German plays for the most tricks; Honeymoon counts
            only stage 2 and sheds its cards after the 7th trick there.
        open_hands: in stage 2 deduce the opponent's hand, count, and solve the last
            ``EXACT_CARDS`` tricks exactly; off: plain play that ignores his hand.

    Unknown option names raise ValueError. Ties go to a generator seeded by ``seed``.
    """

    game_title = "German Whist"
    SWITCHES = tuple(TIPS)

    def choose(self, turn: Turn, legal: list[int]) -> int:
        table = Table(turn.game, turn.state, turn.seat)
        if table.stage == 1:
            return self._stage1(table, legal)
        return self._stage2(table, legal)

    # --- the card value model ---------------------------------------------------------
    def _hand_value(
        self, t: Table, hand: int, out: int, trump_premium: bool = True
    ) -> float:
        """What ``hand`` is worth in stage 2 while the cards ``out`` are elsewhere."""
        # Card by card in ascending order, each adding TRUMP_BASE + TRUMP_TOP * top (a
        # trump with its premium) or top, where top = TOP[h] for h higher cards out
        # (0 past the table): the terms come precomputed from _TRUMP_TERM, _PLAIN_TERM.
        above = t.ranks.above
        trumps = t.trumps if trump_premium else 0
        value = 0.0
        rest = hand
        while rest:
            low = rest & -rest
            rest ^= low
            h = (above[low.bit_length() - 1] & out).bit_count()
            value += _TRUMP_TERM[h] if low & trumps else _PLAIN_TERM[h]
        if self.long_suit:
            value += self._length_bonus(t, hand)
        return value

    def _length_bonus(self, t: Table, hand: int) -> float:
        """long_suit: "Build one long suit. Stage 2 still follows suit, so a five-card
        suit headed by two winners runs and drags their small cards out."

        Length counts in one suit only, the longest plain one ("Four scattered Kings win
        one trick each at best"): prizes that lengthen it are worth more, and discards
        come from the other suits. Stage 1 only: in stage 2 the open hands show which
        suit runs (`_suit_tricks`).
        """
        if t.stage == 2:
            return 0.0
        longest = 0
        for s in t.ranks.plain_suits:
            n = (hand & s).bit_count()
            if n > longest:
                longest = n
        return _LENGTH_TERM[longest]  # LENGTH_BONUS * max(0, longest - 3)

    def _card_costs(self, t: Table, legal: list[int], out: int) -> dict[int, float]:
        """What the hand loses by playing each card: its marginal stage-2 value.

        save_trumps: "Trumps are stage-2 cards. Every trump spent on a stage-1 prize is
        one fewer for the 13 tricks that count." On, a trump costs its trump value; off,
        a stage-1 trump costs what a plain card of its rank would.
        """
        premium = self.save_trumps or t.stage == 2
        hand = t.hand
        _, _, terms, sums = self._terms(t, hand, out, premium)
        full = sums[-1]
        if self.long_suit:
            full += self._length_bonus(t, hand)
        costs = {}
        for c in legal:
            bit = 1 << c
            if not bit & hand:  # not ours (never legal): the hand is unchanged
                costs[c] = full - self._hand_value(t, hand, out, premium)
                continue
            # _hand_value(t, hand & ~bit, out, premium), the same float: the terms of
            # the cards below c, then those above it (out is unchanged).
            i = (hand & (bit - 1)).bit_count()
            value = sums[i]
            for term in terms[i + 1 :]:
                value += term
            if self.long_suit:
                value += self._length_bonus(t, hand & ~bit)
            costs[c] = full - value
        return costs

    def _terms(
        self, t: Table, hand: int, out: int, trump_premium: bool = True
    ) -> tuple[list[int], list[int], list[float], list[float]]:
        """What `_hand_value` adds up for ``hand``, by ascending card: the cards, the
        higher cards out for each, its term, and the running sums from 0.0
        (``sums[i]``: the first i terms). The value of a hand one card away is then
        the same float, computed from the first term that changes."""
        above = t.ranks.above
        trumps = t.trumps if trump_premium else 0
        cards: list[int] = []
        hs: list[int] = []
        terms: list[float] = []
        sums = [0.0]
        value = 0.0
        rest = hand
        while rest:
            low = rest & -rest
            rest ^= low
            c = low.bit_length() - 1
            h = (above[c] & out).bit_count()
            term = _TRUMP_TERM[h] if low & trumps else _PLAIN_TERM[h]
            cards.append(c)
            hs.append(h)
            terms.append(term)
            value += term
            sums.append(value)
        return cards, hs, terms, sums

    def _gains(self, t: Table, out: int, cards: list[int]) -> list[float]:
        """``_hand_value(t, t.hand | u, out & ~u)`` for each card u of ``cards``, the
        same floats, each summed from the first term that u changes."""
        hand = t.hand
        above, group = t.ranks.above, t.ranks.group
        trumps = t.trumps
        mine, hs, terms, sums = self._terms(t, hand, out)
        n = len(terms)
        # long_suit: the length of each plain suit, for _length_bonus(t, hand | u)
        lengths = [(hand & suit).bit_count() for suit in t.ranks.plain_suits]
        longest = max(lengths, default=0)
        plain_index = t.ranks.plain_index
        values = []
        for u in cards:
            ubit = 1 << u
            if ubit & hand or not ubit & out:  # not a card we could gain
                values.append(self._hand_value(t, hand | ubit, out & ~ubit))
                continue
            h = (above[u] & out).bit_count()
            uterm = _TRUMP_TERM[h] if ubit & trumps else _PLAIN_TERM[h]
            pos = (hand & (ubit - 1)).bit_count()  # u's place among our cards
            # Our cards below u in its group: one higher card fewer is out for them.
            weaker = hand & group[u] & ~above[u] & ~ubit
            first = pos
            if weaker:
                first = min(pos, (hand & ((weaker & -weaker) - 1)).bit_count())
            value = sums[first]
            for j in range(first, n):
                if j == pos:
                    value += uterm
                c = mine[j]
                if (weaker >> c) & 1:
                    hj = hs[j] - 1
                    value += _TRUMP_TERM[hj] if (1 << c) & trumps else _PLAIN_TERM[hj]
                else:
                    value += terms[j]
            if pos == n:
                value += uterm
            if self.long_suit:
                if t.stage == 2:
                    value += 0.0
                else:
                    i = plain_index[u]
                    value += _LENGTH_TERM[
                        longest if i < 0 else max(longest, lengths[i] + 1)
                    ]
            values.append(value)
        return values

    # --- stage 1 ----------------------------------------------------------------------
    def _stage1(self, t: Table, legal: list[int]) -> int:
        win_value = PRIZE_WEIGHT * self._prize_swing(t) * self._late_weight(t)
        win_value += self._trick_value(t)
        costs = self._card_costs(t, legal, t.deck.all_mask & ~t.hand & ~t.played)
        if t.lead >= 0:
            beaters = t.ranks.beaters[t.lead]
            p_win = {c: 1.0 if (1 << c) & beaters else 0.0 for c in legal}
        else:
            p_win = {c: self._p_lead_wins(t, c) for c in legal}
        if self.duck_duds:
            choice = self._fight_if_wanted(legal, p_win, costs, win_value)
        else:
            choice = self._fight_always(legal, p_win, costs)
        if p_win[choice] >= SURE:
            choice = self._winning_card(t, legal, p_win, costs, choice)
        return choice

    def _prize_swing(self, t: Table) -> float:
        """value_prizes: "Stage 1 is where you choose your stage-2 hand. … judge each
        prize by what it does for that hand."

        What winning this trick gains: the prize's marginal value for our hand minus the
        average worth of the hidden card the loser draws, plus half of what the prize
        would be worth to the opponent. Negative: the prize is a dud. Off: the prize is
        judged by its rank alone, whatever it does for the hand.
        """
        prize = t.prize
        pool = cards_in(t.unknown)
        if not self.value_prizes:
            face = self._rank_only(t, prize)
            draws = sum(self._rank_only(t, u) for u in pool) / max(1, len(pool))
            return (1 + DENY_WEIGHT) * (face - draws)
        out = t.deck.all_mask & ~t.hand & ~t.played
        base = self._hand_value(t, t.hand, out)
        # gain(card) = _hand_value(t, t.hand | card, out & ~card) - base
        prize_value, *pool_values = self._gains(t, out, [prize, *pool])
        gains = [value - base for value in pool_values]
        mine = (prize_value - base) - sum(gains) / max(1, len(pool))
        generic = [self._generic_value(t, u) for u in pool]
        theirs = self._generic_value(t, prize) - sum(generic) / max(1, len(pool))
        return mine + DENY_WEIGHT * theirs

    @staticmethod
    def _rank_only(t: Table, card: int) -> float:
        rank = t.deck.rank[card]
        # A joker counts as an Ace.
        return RANK_ONLY[rank] if rank >= 0 else RANK_ONLY[0]

    def _generic_value(self, t: Table, card: int) -> float:
        """A card's stage-2 worth to a hand we cannot see (the opponent's)."""
        h = (t.ranks.above[card] & ~t.played).bit_count()
        # TRUMP_BASE + TRUMP_TOP * top for a trump, else top (TOP[h], 0 past the end)
        return _TRUMP_TERM[h] if (1 << card) & t.trumps else _PLAIN_TERM[h]

    def _late_weight(self, t: Table) -> float:
        """fight_late: "Fight for prizes late in stage 1. Every card drawn face up stays
        in the Seen row until it’s played, so by the last few tricks you can name most
        of what they hold and judge what a prize does to your stage-2 hand."

        Late prizes go straight into the stage-2 hand and are judged on near-complete
        information, so their weight grows as the stock runs down. Off: all the same.
        """
        if not self.fight_late:
            return 1.0
        return LATE_MIN + (LATE_MAX - LATE_MIN) * t.progress

    def _trick_value(self, t: Table) -> float:
        """count_to_seven, Honeymoon: "In Honeymoon Whist every trick counts toward the
        margin", so a stage-1 trick is worth a trick of its own there (in German Whist
        stage-1 tricks "score nothing"). Off: Honeymoon stage-1 tricks count nothing."""
        return TRICK_VALUE if t.honeymoon and self.count_to_seven else 0.0

    def _fight_if_wanted(
        self,
        legal: list[int],
        p_win: dict[int, float],
        costs: dict[int, float],
        win_value: float,
    ) -> int:
        """duck_duds: "In stage 1, win only the tricks whose face-up card you want. If
        it’s a dud, throw your lowest card of the led suit: the loser still draws the
        hidden card underneath."

        Play for the trick only when its value (chance of winning times the prize swing)
        beats the card it costs; for a dud the best score is the cheapest card, which is
        the lowest card of the led suit.
        """
        return self._pick(legal, {c: p_win[c] * win_value - costs[c] for c in legal})

    def _fight_always(
        self, legal: list[int], p_win: dict[int, float], costs: dict[int, float]
    ) -> int:
        """duck_duds off: play the surest winner for every stage-1 trick, dud or not."""
        best = max(p_win.values())
        surest = [c for c in legal if p_win[c] >= best - EPS]
        return self._pick(surest, {c: -costs[c] for c in surest})

    def _winning_card(
        self,
        t: Table,
        legal: list[int],
        p_win: dict[int, float],
        costs: dict[int, float],
        choice: int,
    ) -> int:
        """win_cheaply: "Win cheaply. A prize taken with your Ace spends a card that was
        going to win a stage-2 trick anyway. Take it with the lowest card that still
        wins."

        Among the cards that win as surely as ``choice``: on, the cheapest; off, the
        highest.
        """
        sure = [c for c in legal if p_win[c] >= p_win[choice] - EPS]
        if self.win_cheaply:
            return self._pick(sure, {c: -costs[c] for c in sure})
        return self._pick(sure, {c: float(t.ranks.strength[c]) for c in sure})

    def _p_lead_wins(self, t: Table, card: int) -> float:
        """The chance that the opponent cannot beat ``card`` led in stage 1."""
        ranks = t.ranks
        elsewhere = ~t.hand & ~t.played
        higher = ranks.above[card] & elsewhere
        if (1 << card) & t.trumps:
            return self._p_none(t, higher)
        if t.honeymoon:
            # Honeymoon stage 1: "you may play any card", so any trump beats it.
            return self._p_none(t, higher | (t.trumps & elsewhere))
        # German: he must follow suit and can trump only when void in it.
        p_void = self._p_none(t, ranks.group[card] & elsewhere)
        p_trump = 1.0 - self._p_none(t, t.trumps & elsewhere)
        return max(0.0, self._p_none(t, higher) - p_void * p_trump)

    def _p_none(self, t: Table, cards: int) -> float:
        """The chance that the opponent holds none of ``cards``: zero if one is in his
        Seen row, else a hypergeometric draw of his hidden cards from unseen ones."""
        if cards & t.opp_seen:
            return 0.0
        n = t.opp_pool.bit_count()
        k = min(t.opp_hidden, n)
        m = (cards & t.opp_pool).bit_count()
        p = 1.0
        for i in range(m):
            if n - k - i <= 0:
                return 0.0
            p *= (n - k - i) / (n - i)
        return p

    # --- stage 2 ----------------------------------------------------------------------
    def _pick(self, cards: list[int], score: dict[int, float]) -> int:
        """The card with the highest score; exact ties go to the seeded generator."""
        top = max(score[c] for c in cards)
        best = [c for c in cards if score[c] >= top - EPS]
        if len(best) == 1:
            return best[0]
        return best[int(self.rng.integers(len(best)))]


__all__ = ["TIPS", "GermanWhistHeuristic"]
