"""The German Whist heuristic's stage 2: counting play, and exact play near the end.

Stage 2 is open-handed: the opponent's hand is the pack minus ours minus the played
cards. With at most ``EXACT_CARDS`` cards each, `_Solver` searches the rest exactly
unless it needs more than ``NODE_LIMIT`` positions; otherwise, and earlier, the bot
counts (`Stage2Play._counting_move`: sure winners, quick tricks, the tricks each suit
runs). `Stage2Play` is a part of `GermanWhistHeuristic`, kept here so that the
stage-1 value model and the stage-2 play read apart.
"""

from __future__ import annotations

from collections.abc import Callable

from .table import _CACHE_LIMIT, Table

# Exact stage-2 search with at most EXACT_CARDS cards each, abandoned (for counting)
# after NODE_LIMIT positions: about 6 µs a position. Measured over 200 bot-vs-bot
# German games: a stage-2 move takes 0.3 ms on average (0.6 ms before the speed work
# of issue 8, which changed no decision: tests/test_german_whist_bot.py pins them).
EXACT_CARDS = 9
NODE_LIMIT = 600
STAGE2_TARGET = 7  # "Stage 2 needs 7 of the 13 tricks"


class Stage2Play:
    """Stage-2 play of `GermanWhistHeuristic`, which supplies the switches
    ``count_to_seven`` and ``open_hands``, the card costs of its value model
    (``_card_costs``) and its seeded tie-break (``_pick``)."""

    def _stage2(self, t: Table, legal: list[int]) -> int:
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

    def _stage2_goal(self, t: Table) -> int:
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

    def _shed(self, t: Table, legal: list[int]) -> int:
        """count_to_seven off, Honeymoon, 7 stage-2 tricks in: the lowest card."""
        strength = t.ranks.strength
        return min(legal, key=lambda c: (bool((1 << c) & t.trumps), strength[c], c))

    def _plain_move(self, t: Table, legal: list[int]) -> int:
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

    def _counting_move(self, t: Table, legal: list[int], goal: int) -> int:
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

    def _sure_winner(self, t: Table, card: int) -> bool:
        """True if ``card`` led now wins whatever the opponent plays."""
        follow = t.opp_hand & t.ranks.group[card]
        if follow:
            return not t.ranks.above[card] & follow
        return bool((1 << card) & t.trumps) or not t.opp_hand & t.trumps

    def _quick_tricks(self, t: Table) -> int:
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

    def _suit_tricks(self, t: Table, mine: int, theirs: int) -> int:
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

    def _solve(self, t: Table, legal: list[int], goal: int) -> int:
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

    def __init__(self, t: Table):
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
