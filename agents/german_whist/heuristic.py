"""A rule-based German Whist / Honeymoon Whist bot; its options are the seed's tips.

Implements the "Strategy tips" of seed ``004_d8444d2889c5bb38.txt`` for the engine in
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
* **Stage 2** (the hands are open). With at most ``EXACT_CARDS`` cards each an exact
  search (`_Solver`) plays the rest perfectly if it finishes within ``NODE_LIMIT``
  positions; otherwise, and earlier, counting heuristics (`_counting_move`).

Information: the bot reads the engine state only through `_Table`, which copies what
the seat may know: its own hand, the trumps, the face-up card, the played cards, the
trick, both Seen rows, shown voids and trick counts. The opponent's stage-2 hand is
deduced (pack minus own hand minus played cards); his hidden cards and the stock order
beyond the face-up card are never read.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from ...envs.core.cards import NO_SUIT, cards_in
from ..base import SwitchedBot, Turn

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
# Exact stage-2 search with at most EXACT_CARDS cards each, abandoned (for counting)
# after NODE_LIMIT positions: about 6 µs a position. Measured over 200 bot-vs-bot
# German games: a stage-2 move takes 0.3 ms on average (0.6 ms before the speed work
# of issue 8, which changed no decision: tests/test_german_whist_bot.py pins them).
EXACT_CARDS = 9
NODE_LIMIT = 600
# value_prizes off: a prize is judged by its rank alone (A, K, Q, J, the rest).
RANK_ONLY = (1.0, 0.55, 0.3, 0.15) + (0.05,) * 9
STAGE2_TARGET = 7  # "Stage 2 needs 7 of the 13 tricks"
EPS = 1e-9

# What a card adds to `_hand_value` by the number h of higher cards out (h < 16: at
# most 14 in the 15 trumps of Honeymoon), as a plain card and as a trump; the same
# floats the formulas above give, looked up instead of recomputed.
_PLAIN_TERM = tuple(TOP[h] if h < len(TOP) else 0.0 for h in range(16))
_TRUMP_TERM = tuple(TRUMP_BASE + TRUMP_TOP * top for top in _PLAIN_TERM)
# What `_length_bonus` gives for the longest plain suit (at most 13 cards).
_LENGTH_TERM = tuple(LENGTH_BONUS * max(0, n - 3) for n in range(16))
# The per-pack caches of `_Ranks` start again when they grow past this many entries.
_CACHE_LIMIT = 200_000


class _Ranks:
    """Trick-taking order for one pack and trump suit (cached per pack and trumps),
    with caches of the pure functions the bot calls most (`desc`, `_Solver` moves)."""

    _cache: dict[tuple[int, int], _Ranks] = {}

    def __init__(self, deck: Any, trump_mask: int, honeymoon: bool):
        self.jokers = deck.suit_mask[NO_SUIT]
        strength = [13 - r for r in deck.rank]
        if honeymoon:  # "The High Joker beats the Low Joker, which beats the Ace"
            strength[deck.card("JKH")] = 15
            strength[deck.card("JKL")] = 14
        self.strength = strength
        # The cards a card follows with: its suit, or the trumps with the jokers.
        self.group = [
            trump_mask if (1 << c) & trump_mask else deck.suit_mask[deck.suit[c]]
            for c in range(deck.size)
        ]
        self.above = [
            sum(1 << d for d in cards_in(self.group[c]) if strength[d] > strength[c])
            for c in range(deck.size)
        ]
        # A card played to ``lead`` wins the trick when it is in beaters[lead].
        self.beaters = [
            self.above[c] | (0 if (1 << c) & trump_mask else trump_mask)
            for c in range(deck.size)
        ]
        plain = [deck.suit_mask[s] & ~trump_mask for s in range(4)]
        self.plain_suits = [m for m in plain if m]
        self.groups = [*self.plain_suits, trump_mask]
        # Each card's place in plain_suits, -1 for a trump.
        self.plain_index = [-1] * deck.size
        for i, suit in enumerate(self.plain_suits):
            for c in cards_in(suit):
                self.plain_index[c] = i
        # The group each suit's cards follow with (by suit index S H D C).
        self.suit_group = [self.group[deck.card("A" + "SHDC"[s])] for s in range(4)]
        # The suits lie in pack order, each contiguous from its Ace (strongest) to
        # its 2: ``inner`` holds every suit card but the 2s, for `_Solver` moves.
        inner = 0
        for s in range(4):
            cards = cards_in(deck.suit_mask[s])
            assert cards == list(range(cards[0], cards[-1] + 1))
            assert all(strength[a] > strength[b] for a, b in itertools.pairwise(cards))
            inner |= deck.suit_mask[s] & ~(1 << cards[-1])
        self.inner = inner
        self._desc: dict[int, tuple[int, ...]] = {}
        self.moves: dict[tuple[int, int, int], tuple[int, ...]] = {}

    @classmethod
    def of(cls, game: Any, trump_mask: int) -> _Ranks:
        key = (game.deck.size, trump_mask)
        if key not in cls._cache:
            cls._cache[key] = cls(game.deck, trump_mask, game.honeymoon)
        return cls._cache[key]

    def desc(self, mask: int) -> tuple[int, ...]:
        """The cards of ``mask`` (one group) from strongest to weakest."""
        cached = self._desc.get(mask)
        if cached is None:
            if len(self._desc) >= _CACHE_LIMIT:
                self._desc.clear()
            # Pack order is A..2 inside a suit, so ascending ids are descending
            # strength; only the jokers (last in the pack, strongest trumps) move to
            # the front.
            strength = self.strength
            jokers = sorted(cards_in(mask & self.jokers), key=lambda c: -strength[c])
            cached = self._desc[mask] = (*jokers, *cards_in(mask & ~self.jokers))
        return cached


class _Table:
    """Everything the bot reads about a game: what seat ``seat`` may know."""

    def __init__(self, game: Any, state: Any, seat: int):
        opp = 1 - seat
        deck = game.deck
        self.deck = deck
        self.honeymoon: bool = game.honeymoon
        self.ranks = _Ranks.of(game, state.trump_mask)
        self.trumps: int = state.trump_mask
        self.hand: int = state.hands[seat]
        self.played: int = state.played
        self.stage: int = state.stage
        self.lead: int = state.lead  # the opponent's card when we follow, else -1
        self.my_tricks2: int = state.tricks2[seat]
        if self.stage == 1:
            self.prize: int = state.face_up
            # 0 at trick 1, close to 1 at the last stage-1 trick
            self.progress = state.stock_pos / game.stock_size
            self.opp_seen: int = state.seen[opp]
            prize_bit = 1 << self.prize
            # Cards we cannot place: in his hidden hand or still in the stock.
            self.unknown = (
                deck.all_mask & ~self.hand & ~self.played & ~self.opp_seen & ~prize_bit
            )
            # He holds 13 cards between tricks, 12 once he has led to this one.
            opp_cards = 13 - (1 if self.lead >= 0 else 0)
            self.opp_hidden = max(0, opp_cards - self.opp_seen.bit_count())
            # His hidden cards avoid the suits he has shown void in since his last
            # hidden draw (the engine's public ``voids``).
            void_cards = 0
            voids = state.voids[opp]
            if voids:
                for s in range(4):
                    if voids >> s & 1:
                        void_cards |= self.ranks.suit_group[s]
            self.opp_pool = self.unknown & ~void_cards
        else:
            # "Every card is accounted for by then": pack minus ours minus played.
            self.opp_hand = deck.all_mask & ~self.hand & ~self.played


class GermanWhistHeuristic(SwitchedBot):
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

    def __init__(
        self,
        seed: int | None = None,
        *,
        value_prizes: bool = True,
        duck_duds: bool = True,
        win_cheaply: bool = True,
        save_trumps: bool = True,
        long_suit: bool = True,
        fight_late: bool = True,
        count_to_seven: bool = True,
        open_hands: bool = True,
        **unknown: Any,
    ):
        self.set_switches(
            seed,
            {
                "value_prizes": value_prizes,
                "duck_duds": duck_duds,
                "win_cheaply": win_cheaply,
                "save_trumps": save_trumps,
                "long_suit": long_suit,
                "fight_late": fight_late,
                "count_to_seven": count_to_seven,
                "open_hands": open_hands,
            },
            unknown,
            TIPS,
        )

    def act(self, turn: Turn) -> int:
        """The card to play (an action id allowed by the turn's mask)."""
        legal = turn.legal_actions()
        if len(legal) == 1:
            return legal[0]
        table = _Table(turn.game, turn.state, turn.seat)
        if table.stage == 1:
            return self._stage1(table, legal)
        return self._stage2(table, legal)

    # --- the card value model ---------------------------------------------------------
    def _hand_value(
        self, t: _Table, hand: int, out: int, trump_premium: bool = True
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

    def _length_bonus(self, t: _Table, hand: int) -> float:
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

    def _card_costs(self, t: _Table, legal: list[int], out: int) -> dict[int, float]:
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
        self, t: _Table, hand: int, out: int, trump_premium: bool = True
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

    def _gains(self, t: _Table, out: int, cards: list[int]) -> list[float]:
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
    def _stage1(self, t: _Table, legal: list[int]) -> int:
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

    def _prize_swing(self, t: _Table) -> float:
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
    def _rank_only(t: _Table, card: int) -> float:
        rank = t.deck.rank[card]
        # A joker counts as an Ace.
        return RANK_ONLY[rank] if rank >= 0 else RANK_ONLY[0]

    def _generic_value(self, t: _Table, card: int) -> float:
        """A card's stage-2 worth to a hand we cannot see (the opponent's)."""
        h = (t.ranks.above[card] & ~t.played).bit_count()
        # TRUMP_BASE + TRUMP_TOP * top for a trump, else top (TOP[h], 0 past the end)
        return _TRUMP_TERM[h] if (1 << card) & t.trumps else _PLAIN_TERM[h]

    def _late_weight(self, t: _Table) -> float:
        """fight_late: "Fight for prizes late in stage 1. Every card drawn face up stays
        in the Seen row until it’s played, so by the last few tricks you can name most
        of what they hold and judge what a prize does to your stage-2 hand."

        Late prizes go straight into the stage-2 hand and are judged on near-complete
        information, so their weight grows as the stock runs down. Off: all the same.
        """
        if not self.fight_late:
            return 1.0
        return LATE_MIN + (LATE_MAX - LATE_MIN) * t.progress

    def _trick_value(self, t: _Table) -> float:
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
        t: _Table,
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

    def _p_lead_wins(self, t: _Table, card: int) -> float:
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

    def _p_none(self, t: _Table, cards: int) -> float:
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
    def _stage2(self, t: _Table, legal: list[int]) -> int:
        goal = self._stage2_goal(t)
        if goal == 0:
            return self._shed(t, legal)
        if not self.open_hands:
            return self._plain_move(t, legal)
        if t.hand.bit_count() <= EXACT_CARDS:
            try:
                return self._solve(t, legal, goal)
            except _OutOfBudget:
                pass  # too big to calculate within a move's budget: count instead
        return self._counting_move(t, legal, goal)

    def _stage2_goal(self, t: _Table) -> int:
        """count_to_seven: "Count to 7, not 13. Stage 2 needs 7 of the 13 tricks, and
        the 7th ends the game on the spot. In Honeymoon Whist every trick counts toward
        the margin, so keep taking tricks even after the 7th."

        The stage-2 tricks still to play for, or -1 for "as many as possible". On:
        German needs 7, Honeymoon wants every trick. Off, the mistakes the tip warns of:
        German plays for the most tricks, Honeymoon for 7 (0 left: it sheds cards).
        """
        need = max(0, STAGE2_TARGET - t.my_tricks2)
        if t.honeymoon:
            return -1 if self.count_to_seven else need
        return need if self.count_to_seven else -1

    def _shed(self, t: _Table, legal: list[int]) -> int:
        """count_to_seven off, Honeymoon, 7 stage-2 tricks in: the lowest card."""
        strength = t.ranks.strength
        return min(legal, key=lambda c: (bool((1 << c) & t.trumps), strength[c], c))

    def _plain_move(self, t: _Table, legal: list[int]) -> int:
        """open_hands off: plain stage-2 play that ignores the opponent's hand.

        Lead the highest card of the longest plain suit; follow with the lowest card
        that wins, else the lowest card (trumps last).
        """
        strength = t.ranks.strength
        if t.lead < 0:
            plain = [c for c in legal if not (1 << c) & t.trumps] or legal
            length = {c: (t.hand & t.ranks.group[c]).bit_count() for c in plain}
            return max(plain, key=lambda c: (length[c], strength[c], -c))
        winners = [c for c in legal if (1 << c) & t.ranks.beaters[t.lead]]
        return min(
            winners or legal,
            key=lambda c: (bool((1 << c) & t.trumps), strength[c], c),
        )

    def _counting_move(self, t: _Table, legal: list[int], goal: int) -> int:
        """open_hands: "count their trumps, work out which of your suits runs, and lead
        accordingly."

        Leader: with enough sure winners to end the game, cash them; with more trumps
        than he has and the top one, draw his trumps; else lead the top card of the
        suit that takes most tricks when run from the top against his cards in it.
        Follower: the cheapest card that wins, else the cheapest card to lose.
        """
        ranks = t.ranks
        opp = t.opp_hand
        if t.lead >= 0:
            costs = self._card_costs(t, legal, opp)
            winners = [c for c in legal if (1 << c) & ranks.beaters[t.lead]]
            pool = winners or legal
            return self._pick(pool, {c: -costs[c] for c in pool})
        if goal > 0 and self._quick_tricks(t) >= goal:
            # "the 7th ends the game on the spot": with enough sure winners, take them.
            winners = [c for c in legal if self._sure_winner(t, c)]
            return self._pick(winners, {c: ranks.strength[c] for c in winners})
        my_trumps, opp_trumps = t.hand & t.trumps, opp & t.trumps
        if opp_trumps and my_trumps.bit_count() > opp_trumps.bit_count():
            top = ranks.desc(my_trumps)[0]
            if not ranks.above[top] & opp_trumps:
                return top  # draw his trumps: ours are longer and hold the top
        runs = {
            g: self._suit_tricks(t, t.hand & g, opp & g)
            for g in ranks.plain_suits
            if t.hand & g
        }
        if not runs:  # nothing but trumps
            return self._pick(legal, {c: ranks.strength[c] for c in legal})
        suit = max(runs, key=lambda g: (runs[g], (t.hand & g).bit_count(), -g))
        return ranks.desc(t.hand & suit)[0]

    def _sure_winner(self, t: _Table, card: int) -> bool:
        """True if ``card`` led now wins whatever the opponent plays."""
        follow = t.opp_hand & t.ranks.group[card]
        if follow:
            return not t.ranks.above[card] & follow
        return bool((1 << card) & t.trumps) or not t.opp_hand & t.trumps

    def _quick_tricks(self, t: _Table) -> int:
        """Tricks we can take one after another from the lead: top trumps, and top
        cards of a plain suit while he still follows it (all of them once he has no
        trumps)."""
        ranks = t.ranks
        opp = t.opp_hand
        opp_has_trumps = bool(opp & t.trumps)
        count = 0
        for g in ranks.groups:
            theirs = opp & g
            top = 0
            for c in ranks.desc(t.hand & g):
                if ranks.above[c] & theirs:
                    break
                top += 1
            if g == t.trumps or not opp_has_trumps:
                count += top
            else:
                count += min(top, theirs.bit_count())  # void, he trumps
        return count

    def _suit_tricks(self, t: _Table, mine: int, theirs: int) -> int:
        """Tricks a plain suit takes when we lead it from the top and he either beats
        our card with his highest or follows with his lowest ("which of your suits
        runs")."""
        strength = t.ranks.strength
        his = list(t.ranks.desc(theirs))
        tricks = 0
        for c in t.ranks.desc(mine):
            if his and strength[his[0]] > strength[c]:
                his.pop(0)
            else:
                if his:
                    his.pop()
                tricks += 1
        return tricks

    def _solve(self, t: _Table, legal: list[int], goal: int) -> int:
        """open_hands, the endgame: "There’s nothing left to guess, only to calculate."

        Exact search over the remaining tricks. With a target (``goal`` > 0): the first
        card, in the counting heuristic's order, that still reaches it against any
        defence. Otherwise, or when no card does, the card that takes the most tricks.
        Raises `_OutOfBudget` when the search grows past ``NODE_LIMIT`` positions.
        """
        solver = _Solver(t)
        preferred = self._counting_move(t, legal, goal)
        costs = self._card_costs(t, legal, t.opp_hand)
        order = [preferred] + sorted(
            (c for c in legal if c != preferred), key=lambda c: (costs[c], c)
        )
        if goal > 0:
            for c in order:
                if solver.after(c, goal):
                    return c
        best, best_value = order[0], -1
        for c in order:
            value = solver.value_after(c, lower=best_value + 1)
            if value > best_value:
                best, best_value = c, value
        return best

    # --- tie-breaks -------------------------------------------------------------------
    def _pick(self, cards: list[int], score: dict[int, float]) -> int:
        """The card with the highest score; exact ties go to the seeded generator."""
        top = max(score[c] for c in cards)
        best = [c for c in cards if score[c] >= top - EPS]
        if len(best) == 1:
            return best[0]
        return best[int(self.rng.integers(len(best)))]


class _OutOfBudget(Exception):
    """The exact search needed more than ``NODE_LIMIT`` positions."""


class _Solver:
    """Exact play of the open-handed stage 2: our hand against the deduced one.

    ``reach(m, o, me_lead, k)`` answers "can we take k of the tricks left against best
    defence" by alpha-beta over whole tricks. Cards that are equivalent (same hand,
    adjacent in rank among the cards still out) are tried once, and proven bounds are
    kept per position.

    ``nodes`` counts the positions searched (not settled by the bounds) towards
    ``NODE_LIMIT``. The bounds start empty for each solver, one per move: the budget,
    hence whether a move is solved or counted, depends on the search from this move's
    position alone (the move lists, pure functions of the cards, are cached per pack).
    """

    def __init__(self, t: _Table):
        self.ranks = t.ranks
        self.m = t.hand
        self.o = t.opp_hand
        self.lead = t.lead
        self.memo: dict[tuple[int, int, bool], list[int]] = {}
        self.reach, self._nodes = self._search(self.memo)

    @property
    def nodes(self) -> int:
        """Positions searched so far."""
        return self._nodes()

    def _moves(self, legal: int, remaining: int, lead: int = -1) -> tuple[int, ...]:
        """One card per run of equivalent legal cards, likely-good moves first (cached
        per pack and trumps: a pure function of its arguments)."""
        return self._cached((legal, remaining, lead), legal, remaining, lead)

    def _replies(self, hand: int, remaining: int, lead: int) -> tuple[int, ...]:
        """`_moves` of ``hand`` following ``lead`` ("Follow suit if you can"),
        cached under a key that holds only what they depend on: following suit, the
        cards of that suit still out; void in it, the other suits' (and not the
        lead: our trumps win, if any)."""
        g = self.ranks.group[lead]
        legal = hand & g
        if legal:
            return self._cached((legal, remaining & g, lead), legal, remaining, lead)
        return self._cached((hand, remaining & ~g, -2), hand, remaining, lead)

    def _cached(
        self, key: tuple[int, int, int], legal: int, remaining: int, lead: int
    ) -> tuple[int, ...]:
        cache = self.ranks.moves
        moves = cache.get(key)
        if moves is None:
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            moves = cache[key] = self._new_moves(legal, remaining, lead)
        return moves

    def _new_moves(self, legal: int, remaining: int, lead: int) -> tuple[int, ...]:
        ranks = self.ranks
        trumps = ranks.groups[-1]
        # A legal card starts a run of equivalent cards unless the next stronger card
        # of its suit still out is legal too. In a suit, pack order is strength order,
        # so that card is the next lower id in ``remaining``: adding each legal card's
        # next bit to the gaps (``spaces``, cards not out) carries along them and lands
        # on the next weaker card out; a legal card landed on does not start a run.
        # The 2s start no carry and stop one at the end of their suit.
        spaces = ~remaining & ranks.inner
        landed = (spaces + ((legal & ranks.inner) << 1)) & ~spaces
        starts = legal & ~landed
        # Plain suits in pack order, then the trumps from the strongest.
        out = []
        rest = starts & ~trumps
        while rest:
            low = rest & -rest
            rest ^= low
            out.append(low.bit_length() - 1)
        if legal & trumps:
            if remaining & ranks.jokers:
                # Honeymoon: the jokers lead the trumps, out of pack order.
                cards = legal & trumps
                prev = False
                for c in ranks.desc(remaining & trumps):
                    if (1 << c) & cards:
                        if not prev:
                            out.append(c)
                        prev = True
                    else:
                        prev = False
            else:
                rest = starts & trumps
                while rest:
                    low = rest & -rest
                    rest ^= low
                    out.append(low.bit_length() - 1)
        if lead >= 0:
            # Following: the cheapest winner first, then the lowest losers.
            if not legal & ~ranks.group[lead]:
                # Following suit: ``out`` runs from strongest to weakest, so the cards
                # above the lead (the winners) come first; reverse both parts.
                above = ranks.above[lead]
                k = 0
                while k < len(out) and (1 << out[k]) & above:
                    k += 1
                return (*reversed(out[:k]), *reversed(out[k:]))
            # Void in the led suit: our trumps win (if trumps were led, we have
            # none), the rest lose; each part from the lowest, equal ranks in the
            # order above (pack order).
            trumps_at = len(out)
            while trumps_at and (1 << out[trumps_at - 1]) & trumps:
                trumps_at -= 1
            plain = out[:trumps_at]
            plain.sort(key=ranks.strength.__getitem__)  # stable, as before
            return (*reversed(out[trumps_at:]), *plain)
        return tuple(out)

    def _search(self, memo: dict) -> tuple[Callable[..., bool], Callable[[], int]]:
        """``reach`` over the bounds ``memo``, and a reader of its node count.

        A closure, for locals instead of attribute look-ups on the hot path; and a
        position's bounds are checked before a call, not in it, so the calls the
        bounds settle are never made (the same positions are searched in the same
        order as by calling `reach` for each)."""
        beaters = self.ranks.beaters
        group = self.ranks.group
        cached = self.ranks.moves.get
        moves = self._moves
        replies_of = self._replies
        memo_get = memo.get
        nodes = 0

        def reach(m: int, o: int, me_lead: bool, k: int) -> bool:
            """True if we can take ``k`` of the tricks left (at a trick boundary)."""
            if k <= 0:
                return True
            n = m.bit_count()
            if k > n:
                return False
            key = (m, o, me_lead)
            bounds = memo_get(key)
            if bounds is None:
                # reachable <= lo, not reachable >= hi
                bounds = memo[key] = [0, n + 1]
            if k <= bounds[0]:
                return True
            if k >= bounds[1]:
                return False
            return search(m, o, me_lead, k, bounds)

        def search(m: int, o: int, me_lead: bool, k: int, bounds: list[int]) -> bool:
            """`reach` for a position its ``bounds`` do not settle. The checks of
            `reach` are inlined for the positions after each trick: ``n`` cards each
            and, for the side that took the trick, one trick fewer to take."""
            nonlocal nodes
            nodes += 1
            if nodes > NODE_LIMIT:
                raise _OutOfBudget
            remaining = m | o
            n = m.bit_count() - 1
            if me_lead:
                # Some lead of ours must hold k against every reply (any of all).
                result = False
                leads = cached((m, remaining, -1)) or moves(m, remaining)
                for a in leads:
                    abit = 1 << a
                    mine, wins, left = m ^ abit, beaters[a], remaining ^ abit
                    g = group[a]
                    follow = o & g
                    replies = (
                        cached((follow, left & g, a))
                        if follow
                        else cached((o, left & ~g, -2))
                    ) or replies_of(o, left, a)
                    for b in replies:
                        bbit = 1 << b
                        theirs = o ^ bbit
                        if bbit & wins:  # he takes the trick: k still to take
                            if k > n:
                                break
                            key = (mine, theirs, False)
                            got = memo_get(key)
                            if got is None:
                                got = memo[key] = [0, n + 1]
                            if k <= got[0]:
                                continue
                            if k >= got[1] or not search(mine, theirs, False, k, got):
                                break
                        elif k > 1:  # we take it: k - 1 to take
                            key = (mine, theirs, True)
                            got = memo_get(key)
                            if got is None:
                                got = memo[key] = [0, n + 1]
                            if k - 1 <= got[0]:
                                continue
                            if k - 1 >= got[1] or not search(
                                mine, theirs, True, k - 1, got
                            ):
                                break
                    else:
                        result = True
                        break
            else:
                # Every lead of his must have a reply of ours that holds k (all of any).
                result = True
                leads = cached((o, remaining, -1)) or moves(o, remaining)
                for b in leads:
                    bbit = 1 << b
                    theirs, wins, left = o ^ bbit, beaters[b], remaining ^ bbit
                    g = group[b]
                    follow = m & g
                    replies = (
                        cached((follow, left & g, b))
                        if follow
                        else cached((m, left & ~g, -2))
                    ) or replies_of(m, left, b)
                    for a in replies:
                        abit = 1 << a
                        mine = m ^ abit
                        if abit & wins:  # we take the trick: k - 1 to take
                            if k <= 1:
                                break
                            key = (mine, theirs, True)
                            got = memo_get(key)
                            if got is None:
                                got = memo[key] = [0, n + 1]
                            if k - 1 <= got[0]:
                                break
                            if k - 1 < got[1] and search(
                                mine, theirs, True, k - 1, got
                            ):
                                break
                        elif k <= n:  # he takes it: k still to take
                            key = (mine, theirs, False)
                            got = memo_get(key)
                            if got is None:
                                got = memo[key] = [0, n + 1]
                            if k <= got[0]:
                                break
                            if k < got[1] and search(mine, theirs, False, k, got):
                                break
                    else:
                        result = False
                        break
            if result:
                bounds[0] = max(bounds[0], k)
            else:
                bounds[1] = min(bounds[1], k)
            return result

        def count() -> int:
            return nodes

        return reach, count

    def after(self, card: int, k: int) -> bool:
        """True if playing ``card`` now still lets us take ``k`` of the tricks left."""
        m, o = self.m, self.o
        abit = 1 << card
        beaters = self.ranks.beaters
        if self.lead >= 0:  # we follow his lead
            if abit & beaters[self.lead]:
                return self.reach(m ^ abit, o, True, k - 1)
            return self.reach(m ^ abit, o, False, k)
        return all(
            self.reach(m ^ abit, o ^ 1 << b, False, k)
            if (1 << b) & beaters[card]
            else self.reach(m ^ abit, o ^ 1 << b, True, k - 1)
            for b in self._replies(o, (m | o) ^ abit, card)
        )

    def value_after(self, card: int, lower: int = 0) -> int:
        """The most tricks we can take after playing ``card``, or ``lower - 1`` when
        that is fewer than ``lower``."""
        n = self.m.bit_count()
        k = max(lower, 0)
        if k > 0 and not self.after(card, k):
            return k - 1
        while k < n and self.after(card, k + 1):
            k += 1
        return k


__all__ = ["TIPS", "GermanWhistHeuristic"]
