"""What the German Whist tips say about a decision: the situations each tip speaks of.

`tip_situations` reads a position of the engine in `parlour.envs.german_whist` and the
card a seat plays, and says for each of the seed's tips (seed
*German Whist*, `parlour.agents.german_whist.TIPS`) that speaks of the
situation whether the card follows its prescription. The trick rules are the engine's
own (`_Trick`), and stage 2 is scored by the exact solver. The strategy-tips harness
(`parlour.training.tips.agreement`) counts these over whole games.
"""

from __future__ import annotations

from typing import Any

from ...envs.core.cards import cards_in
from ...envs.german_whist.rules import GermanWhist
from ...envs.german_whist.state import State
from ..solver.german_whist import score_decision

#: Tips whose prescription is checked decision by decision, and the descriptive ones.
AGREEMENT_TIPS = (
    "win_cheaply",
    "duck_duds",
    "save_trumps",
    "long_suit",
    "open_hands",
    "count_to_seven",
)
CONTEST_TIPS = ("value_prizes", "fight_late")
#: a prize "dud": a plain (non-trump) card below the Jack
DUD_RANK = 4  # deck.rank: A=0 K=1 Q=2 J=3 10=4 …
#: stage-2 positions up to this many cards in hand are scored with the exact solver
SOLVER_CARDS = 9


class _Trick:
    """The engine's trick rules at one position: the group a card follows as (a joker
    as a trump), its strength and who beats whom, read from `GermanWhist` itself
    (`GermanWhist._suit_of_mask`, `GermanWhist._strength`, `GermanWhist._beats`) so
    that this analysis and the game cannot disagree."""

    def __init__(self, game: GermanWhist, state: State):
        self.game = game
        self.state = state
        self.deck = game.deck
        self.strength = game._strength

    def is_trump(self, card: int) -> bool:
        return bool(self.state.trump_mask >> card & 1)

    def group(self, card: int) -> int:
        """The cards of ``card``'s suit for following, as a mask."""
        return self.game._suit_of_mask(self.state, card)

    def beats(self, lead: int, card: int) -> bool:
        """True if ``card`` played to ``lead`` wins the trick."""
        return not self.game._beats(self.state, lead, card)

    def equivalent(self, a: int, b: int, known: int) -> bool:
        """Cards ``a`` and ``b`` do the same job: same group, and every card ranked
        between them is in ``known`` (the player's hand, played, or on the table)."""
        if a == b:
            return True
        group = self.group(a)
        if not group >> b & 1:
            return False
        lo, hi = sorted((self.strength[a], self.strength[b]))
        between = [c for c in cards_in(group) if lo < self.strength[c] < hi]
        return all(known >> c & 1 for c in between)


def tip_situations(
    game: GermanWhist, state: State, seat: int, card: int
) -> dict[str, Any]:
    """What the German Whist tips say about ``seat`` playing ``card`` in ``state``.

    Returns, for each tip that speaks of this situation, whether the card agrees with
    its prescription (`AGREEMENT_TIPS`), or for the contest tips the situation's class
    and whether the player contested the trick (`CONTEST_TIPS`). Forced moves say
    nothing.

    * win_cheaply: a stage-1 follower whose card wins, with two or more winning cards:
      "Take it with the lowest card that still wins" (equivalent cards count as equal).
    * duck_duds: a stage-1 follower holding two or more cards of the led suit who could
      win the trick, the prize a dud (a plain card below the Jack): "If it's a dud,
      throw your lowest card of the led suit".
    * save_trumps: a stage-1 decision with both trumps and plain cards legal: "Trumps
      are stage-2 cards", so a plain card.
    * long_suit: a stage-1 follower void in the led suit who discards a plain card while
      holding plain suits of different lengths: "Build one long suit", so not from the
      longest.
    * open_hands: a stage-2 decision with at most ``SOLVER_CARDS`` cards in hand and a
      real choice: the card keeps the most tricks (towards 7) that exact play can take.
    * count_to_seven: the same positions when they are won: the card keeps the win.
    * value_prizes / fight_late: a stage-1 follower who can win the trick: whether he
      did, with the prize's class (trump, honour A–J, dud) and the trick's third of
      stage 1 (early, middle, late).
    """
    legal = game.legal_actions(state)
    out: dict[str, Any] = {}
    if len(legal) < 2:
        return out
    order = _Trick(game, state)
    hand = state.hands[seat]
    if state.stage == 2:
        if hand.bit_count() <= SOLVER_CARDS:
            choice, optimal, won, lost = _score_stage2(game, state, card)
            if choice:
                out["open_hands"] = lost == 0
                if won:
                    out["count_to_seven"] = optimal
        return out
    plain = [c for c in legal if not order.is_trump(c)]
    if plain and len(plain) < len(legal):
        out["save_trumps"] = not order.is_trump(card)
    lead = state.lead
    if lead < 0:
        return out
    known = hand | state.played | (1 << lead)
    winners = [c for c in legal if order.beats(lead, c)]
    if card in winners and len(winners) >= 2:
        cheapest = min(winners, key=lambda c: (order.is_trump(c), order.strength[c]))
        out["win_cheaply"] = order.equivalent(card, cheapest, known)
    prize = state.face_up
    led = [c for c in legal if order.group(c) == order.group(lead)]
    dud = not order.is_trump(prize) and order.deck.rank[prize] >= DUD_RANK
    if dud and winners and len(led) >= 2:
        lowest = min(led, key=lambda c: order.strength[c])
        out["duck_duds"] = order.equivalent(card, lowest, known)
    if not hand & order.group(lead) and not order.is_trump(card):
        lengths: dict[int, int] = {}
        for c in cards_in(hand):
            if not order.is_trump(c):
                lengths[order.group(c)] = lengths.get(order.group(c), 0) + 1
        if len(set(lengths.values())) > 1:
            out["long_suit"] = lengths[order.group(card)] < max(lengths.values())
    if winners:
        if order.is_trump(prize):
            kind = "trump"
        elif order.deck.rank[prize] < DUD_RANK:
            kind = "honour"
        else:
            kind = "dud"
        third = min(2, 3 * state.stock_pos // game.stock_size)
        contested = card in winners
        out["value_prizes"] = (kind, contested)
        out["fight_late"] = (("early", "middle", "late")[third], contested)
    return out


def _score_stage2(
    game: GermanWhist, state: State, card: int
) -> tuple[bool, bool, bool, int]:
    """The exact solver's verdict on a stage-2 card, ``(choice, optimal, won, tricks
    lost)`` (`parlour.agents.solver.german_whist.score_decision`)."""
    score = score_decision(game, state, card)
    return score.choice, score.optimal, score.won, score.tricks_lost
