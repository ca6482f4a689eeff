"""A rule-based Herzeln bot with contract-specific play; each idea is a switch.

For the engine in `parlour.envs.herzeln` (*Herzeln*, English Wikipedia; both sizes,
both Domino layouts). The seed gives rules but no strategy tips, so the options are the
plain ideas the issue names, each on by default and named in `OPTIONS`;
``agents.make("heuristic:-duck", "herzeln_v0")`` turns one off for an ablation. A
switched off idea is replaced by a uniformly random legal choice at the decisions it
covers, so an ablation measures exactly what the idea is worth.

How the bot plays:

* **Penalty contracts** (No Hearts, No Tricks, No Queens, King of Hearts): ``duck``
  leads the card most likely to lose (low, in a suit with many higher cards still out
  and nobody void) and follows with the highest card that still loses; when it must
  win anyway it wins with its least costly card (last to play) or its lowest (someone
  may still overtake). ``dump`` discards, when void, the worst penalty card (A♥ before
  10♥ …, a Queen, the K♥), else the card most likely to win a later trick.
* **Tricks** (``grab_tricks``): leads a sure winner (nobody holds a higher card of its
  suit), else low from its longest suit; follows with the cheapest sure winner, else
  the highest card that wins for now, else throws its lowest card.
* **Last Trick / No Last Trick** (``last_trick``): for Last Trick it saves its
  strongest card for trick 8, throws low before, and tries to win trick 7 to lead the
  last one; for No Last Trick it keeps its safest low card for the end and sheds its
  high cards first.
* **Domino**: ``domino_lookahead`` plays the rest of the deal out a few times
  (`ROLLOUTS`) for each distinct lay, the unseen cards dealt at random to the others in
  their public counts and everyone then laying at random, and keeps the lay that
  finishes best on average; ``domino_block`` scores each lay by how many cards the
  layout will then want from its own hand and how few from the others' (it decides
  alone when the look-ahead is off, and breaks the look-ahead's ties).

Information: `_View` copies only what the seat may know (own hand, played cards by seat,
the current trick, the tricks taken, voids shown, the Domino layout, card counts). Other
hands are never read; ``tests/test_herzeln_bot.py`` checks the choice does not move when
they change.
"""

from __future__ import annotations

from typing import Any

from ..envs.core.cards import cards_in
from ..envs.herzeln.rules import (
    DOMINO,
    KING_OF_HEARTS,
    LAST_TRICK,
    NO_HEARTS,
    NO_LAST_TRICK,
    NO_QUEENS,
    NO_TRICKS,
    TRICKS,
    Herzeln,
)
from ..envs.herzeln.state import Phase
from .base import SwitchedBot, Turn

#: Each option of the bot and what it does (all default True).
OPTIONS: dict[str, str] = {
    "duck": (
        "Penalty contracts: lead the card most likely to lose and follow with the "
        "highest card that still loses; off: random legal card."
    ),
    "dump": (
        "Penalty contracts, when void in the suit led: discard the worst penalty "
        "card (hearts by value, Queens/Obers, the King of hearts) on another player's "
        "trick, else the most dangerous high card; off: random discard."
    ),
    "grab_tricks": (
        "Tricks: lead sure winners, win with the cheapest sure winner, throw low cards "
        "when the trick is lost; off: random legal card."
    ),
    "last_trick": (
        "Last Trick: save the strongest card for trick 8 and try to lead it; No Last "
        "Trick: shed high cards early and keep a safe low card for the end; off: "
        "random."
    ),
    "domino_block": (
        "Domino: lay the card after which the layout wants the most cards of your own "
        "and the fewest of the others' (blocking them); off: no such preference."
    ),
    "domino_lookahead": (
        "Domino: for each distinct lay, play the deal out a few times with the unseen "
        "cards dealt at random and keep the lay that finishes best; off: no lookahead."
    ),
}

PENALTY_CONTRACTS = (NO_HEARTS, NO_TRICKS, NO_QUEENS, KING_OF_HEARTS)
# Domino scoring: a card the layout will want that I hold is worth MINE; one the others
# may hold costs THEIRS (they get to shed it, and it may be all they can play).
MINE, THEIRS = 2.0, 1.0
# domino_lookahead: random play-outs per distinct lay (the same deals for every lay).
ROLLOUTS = 8


class PackTables:
    """Per-pack lookups the bot (and the Herzeln solver) needs, cached by pack size (24
    or 32 cards)."""

    _cache: dict[int, PackTables] = {}

    def __init__(self, game: Herzeln):
        N = game.N
        self.strength = game.strength
        self.suit = game.suit
        self.suit_mask = game.suit_mask
        # above[c]: the cards of c's suit that beat it
        self.above = [
            sum(
                1 << d
                for d in range(N)
                if game.suit[d] == game.suit[c] and game.strength[d] > game.strength[c]
            )
            for c in range(N)
        ]

    @classmethod
    def of(cls, game: Herzeln) -> PackTables:
        key = game.N
        tables = cls._cache.get(key)
        if tables is None:
            tables = cls._cache[key] = cls(game)
        return tables


class _View:
    """What seat ``seat`` may know: its own hand plus public facts."""

    def __init__(self, game: Herzeln, state: Any, seat: int):
        self.game = game
        self.seat = seat
        self.n = game.num_players
        self.contract = state.contract
        self.hand = state.hands[seat]
        played = 0
        for m in state.played_by:
            played |= m
        self.played = played  # the current trick's cards included
        # Cards the others may hold: not mine, not played.
        self.out = game.deck.all_mask & ~self.hand & ~played
        self.trick = list(state.trick)
        self.leader = state.leader
        self.tricks_done = sum(state.tricks)
        self.voids = list(state.voids)
        self.counts = [h.bit_count() for h in state.hands]  # public card counts
        self.line_top = list(state.line_top)
        self.line_bottom = list(state.line_bottom)
        self.laid = state.laid


class HerzelnHeuristic(SwitchedBot):
    """Rule-based Herzeln player with contract-specific play; each idea is a switch.

    Keyword options (all default True; see `OPTIONS`): ``duck``, ``dump``,
    ``grab_tricks``, ``last_trick``, ``domino_block``, ``domino_lookahead``; and
    ``rollouts`` (default `ROLLOUTS`), the play-outs per lay of the lookahead. Ties are
    broken by the seeded generator.
    """

    game_title = "Herzeln"
    SWITCHES = tuple(OPTIONS)

    def __init__(
        self, seed: int | None = None, *, rollouts: int = ROLLOUTS, **switches: Any
    ):
        super().__init__(seed, **switches)
        if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 1:
            raise ValueError(f"rollouts must be a positive integer, got {rollouts!r}")
        self.rollouts = rollouts

    def choose(self, turn: Turn, legal: list[int]) -> int:
        view = _View(turn.game, turn.state, turn.seat)
        if view.contract == DOMINO:
            return self._domino(view, turn.state, legal)
        return self._trick_play(view, legal)

    # --- helpers ----------------------------------------------------------------------
    def _random(self, legal: list[int]) -> int:
        return legal[int(self.rng.integers(len(legal)))]

    def _best(self, cards: list[int], key) -> int:
        """The card with the highest key; ties broken at random."""
        keys = [key(c) for c in cards]
        top = max(keys)
        ties = [c for c, k in zip(cards, keys, strict=True) if k == top]
        return ties[int(self.rng.integers(len(ties)))] if len(ties) > 1 else ties[0]

    # --- trick play -------------------------------------------------------------------
    def _trick_play(self, v: _View, legal: list[int]) -> int:
        k = v.contract
        t = PackTables.of(v.game)
        if k in PENALTY_CONTRACTS:
            return self._avoid(v, t, legal)
        if k == TRICKS:
            if not self.options["grab_tricks"]:
                return self._random(legal)
            return self._grab(v, t, legal)
        if not self.options["last_trick"]:
            return self._random(legal)
        if k == LAST_TRICK:
            return self._last_trick(v, t, legal)
        assert k == NO_LAST_TRICK
        return self._no_last_trick(v, t, legal)

    def _higher_out(self, v: _View, t: PackTables, c: int) -> int:
        """How many cards of c's suit that beat it the others may still hold."""
        return (t.above[c] & v.out).bit_count()

    def _trick_state(self, v: _View, t: PackTables) -> tuple[int, int, int]:
        """(suit led, strength of the card winning so far, players still to play after
        me)."""
        lead_suit = t.suit[v.trick[0]]
        best = max(t.strength[c] for c in v.trick if t.suit[c] == lead_suit)
        return lead_suit, best, v.n - len(v.trick) - 1

    def _penalty(self, v: _View, c: int) -> int:
        """What card c costs whoever takes it in this contract (positive)."""
        return -v.game.card_value[v.contract][c]

    def _avoid(self, v: _View, t: PackTables, legal: list[int]) -> int:
        """Penalty contracts: take as little as possible."""
        if not v.trick:
            if not self.options["duck"]:
                return self._random(legal)
            return self._best(legal, lambda c: self._lead_safety(v, t, c))
        lead_suit, best, after = self._trick_state(v, t)
        if t.suit[legal[0]] != lead_suit:  # void: a free discard
            if not self.options["dump"]:
                return self._random(legal)
            # "dump hearts/Obers on others": the worst penalty card first, then the card
            # most likely to win a trick later (high, few higher cards out).
            return self._best(
                legal,
                lambda c: (
                    self._penalty(v, c),
                    t.strength[c] - self._higher_out(v, t, c),
                ),
            )
        if not self.options["duck"]:
            return self._random(legal)
        losers = [c for c in legal if t.strength[c] < best]
        if losers:
            # The highest card that still loses (a penalty card of my own first).
            return self._best(losers, lambda c: (self._penalty(v, c), t.strength[c]))
        if after == 0:
            # I take this trick whatever I play: keep my penalty cards out of it and get
            # rid of my highest card.
            return self._best(legal, lambda c: (-self._penalty(v, c), t.strength[c]))
        # Someone after me may still overtake: the lowest winner.
        return self._best(legal, lambda c: (-self._penalty(v, c), -t.strength[c]))

    def _lead_safety(self, v: _View, t: PackTables, c: int) -> tuple:
        """How safe leading c is in a penalty contract (higher = safer)."""
        s = t.suit[c]
        voids = sum(1 for p in range(v.n) if p != v.seat and (v.voids[p] >> s) & 1)
        higher = self._higher_out(v, t, c)
        return (higher > 0, -self._penalty(v, c), -voids, higher, -t.strength[c])

    def _grab(self, v: _View, t: PackTables, legal: list[int]) -> int:
        """Tricks: take as many as possible."""
        if not v.trick:
            masters = [c for c in legal if not self._higher_out(v, t, c)]
            if masters:
                return self._best(masters, lambda c: -t.strength[c])
            longest = max((v.hand & t.suit_mask[t.suit[c]]).bit_count() for c in legal)
            pool = [
                c
                for c in legal
                if (v.hand & t.suit_mask[t.suit[c]]).bit_count() == longest
            ]
            return self._best(pool, lambda c: -t.strength[c])
        lead_suit, best, after = self._trick_state(v, t)
        winners = [c for c in legal if t.suit[c] == lead_suit and t.strength[c] > best]
        if winners:
            sure = [c for c in winners if after == 0 or not self._higher_out(v, t, c)]
            if sure:
                return self._best(sure, lambda c: -t.strength[c])
            return self._best(winners, lambda c: t.strength[c])
        # Lost: throw the least useful card (not a sure winner, low).
        return self._best(
            legal, lambda c: (self._higher_out(v, t, c) > 0, -t.strength[c])
        )

    def _last_trick(self, v: _View, t: PackTables, legal: list[int]) -> int:
        """Last Trick: keep the strongest card for trick 8 and try to lead it."""
        reserve = max(
            cards_in(v.hand),
            key=lambda c: (not self._higher_out(v, t, c), t.strength[c]),
        )
        others = [c for c in legal if c != reserve] or legal
        if v.trick and v.tricks_done == 6:
            # Trick 7: winning it gives me the lead of the last trick.
            lead_suit, best, after = self._trick_state(v, t)
            sure = [
                c
                for c in others
                if t.suit[c] == lead_suit
                and t.strength[c] > best
                and (after == 0 or not self._higher_out(v, t, c))
            ]
            if sure:
                return self._best(sure, lambda c: -t.strength[c])
        if not v.trick and v.tricks_done == 6:
            masters = [c for c in others if not self._higher_out(v, t, c)]
            if masters:
                return self._best(masters, lambda c: t.strength[c])
        return self._best(others, lambda c: -t.strength[c])

    def _no_last_trick(self, v: _View, t: PackTables, legal: list[int]) -> int:
        """No Last Trick: shed high cards, keep the safest low card for the end."""
        keep = max(
            cards_in(v.hand), key=lambda c: (self._higher_out(v, t, c), -t.strength[c])
        )
        others = [c for c in legal if c != keep] or legal
        if v.trick and v.tricks_done == 6:
            # Trick 7: losing it means I do not lead the last trick.
            lead_suit, best, _after = self._trick_state(v, t)
            losers = [
                c for c in others if t.suit[c] != lead_suit or t.strength[c] < best
            ]
            if losers:
                return self._best(losers, lambda c: t.strength[c])
        return self._best(others, lambda c: t.strength[c])

    # --- Domino -----------------------------------------------------------------------
    def _domino(self, v: _View, state: Any, legal: list[int]) -> int:
        """Choose a lay: by look-ahead, by the blocking score, or at random."""
        game = v.game
        N = game.N
        # Lays that leave the same layout are the same move (any suit of a rank, in the
        # single line): keep one of each.
        distinct: dict[tuple[int, int, int], list[int]] = {}
        for a in legal:
            c = a % N
            distinct.setdefault((a // N, game.line_of[c], game.position[c]), []).append(
                a
            )
        if len(distinct) == 1:
            return self._random(legal)
        moves = [acts[int(self.rng.integers(len(acts)))] for acts in distinct.values()]
        scores = dict.fromkeys(moves, 0.0)
        if self.options["domino_lookahead"]:
            for a, value in self._play_outs(v, state, moves).items():
                scores[a] += (
                    1000.0 * value
                )  # the look-ahead decides, blocking breaks ties
        if self.options["domino_block"]:
            for a in moves:
                scores[a] += self._block_score(v, a)
        return self._best(moves, lambda a: scores[a])

    def _block_score(self, v: _View, a: int) -> float:
        """domino_block: the cards the layout will want after lay ``a``: mine count for
        it, the others' against it."""
        game = v.game
        N, R = game.N, game.num_ranks
        card = a % N
        ln, pos = game.line_of[card], game.position[card]
        tops, bottoms = v.line_top[:], v.line_bottom[:]
        if a < N:
            tops[ln] = bottoms[ln] = pos
        elif a < 2 * N:
            tops[ln] = pos
        else:
            bottoms[ln] = pos
        fits = 0
        for line in range(game.num_lines):
            if tops[line] < 0:
                fits |= game.line_cards[line] & game.jacks
            else:
                fits |= game.at[line][(tops[line] + 1) % R]
                fits |= game.at[line][(bottoms[line] - 1) % R]
        fits &= ~(v.laid | 1 << card)
        mine = (fits & v.hand & ~(1 << card)).bit_count()
        theirs = (fits & v.out).bit_count()
        return MINE * mine - THEIRS * theirs

    def _play_outs(self, v: _View, state: Any, moves: list[int]) -> dict[int, float]:
        """domino_lookahead: my mean Domino points after each move, over random
        play-outs in which the unseen cards are dealt at random to the others (public
        counts)."""
        game = v.game
        n, me = v.n, v.seat
        unseen = cards_in(v.out)  # from my hand and the layout only, in card order
        others = [p for p in range(n) if p != me]
        totals = dict.fromkeys(moves, 0.0)
        rng = self.rng
        for _ in range(self.rollouts):
            order = rng.permutation(len(unseen)).tolist()
            hands = [0] * n
            hands[me] = v.hand
            i = 0
            for p in others:
                for _card in range(v.counts[p]):
                    hands[p] |= 1 << unseen[order[i]]
                    i += 1
            for a in moves:  # the same deal for every move (common random numbers)
                s = state.clone()
                s.hands = hands[:]
                game.apply(s, a)
                while s.phase == Phase.DOMINO:
                    legal = game.legal_actions(s)
                    game.apply(s, legal[int(rng.integers(len(legal)))])
                in_deal = s.phase == Phase.DOMINO
                totals[a] += s.points[me] if in_deal else s.history[-1][1][me]
        return {a: t / self.rollouts for a, t in totals.items()}


__all__ = ["OPTIONS", "HerzelnHeuristic"]
