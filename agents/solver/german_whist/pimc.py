"""Stage 1 by Perfect Information Monte Carlo: knowledge, sampled deals, rollouts.

`Knowledge` is what a seat knows in stage 1 (read only from its own hand and public
facts), `sample_world` deals the unseen cards consistently with it, `Rollout` plays the
rest of stage 1 fast, and `pimc_values` / `pimc_card` value each legal card over the
sampled deals with stage 2 solved exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....envs.core.cards import cards_in, mask_of
from ....envs.german_whist.rules import TRICKS_TO_WIN, GermanWhist
from ....envs.german_whist.state import Phase, State
from .search import SHARED, STAGE2_TRICKS, Layout, Stage2Solver


# --- stage 1: what the seat knows, and deals consistent with it -----------------------
@dataclass(frozen=True)
class Knowledge:
    """Everything a seat knows in stage 1, read from the engine state by `from_state`,
    which touches only the seat's own hand and public facts: the opponent's Seen row
    (face-up prizes he still holds), the cards played, the face-up card, the opponent's
    shown voids, the open trick, trick counts and the number of stock cards left. The
    opponent's hidden cards and the stock below the face-up card are never read."""

    seat: int
    pack: int  # every card of the pack
    hand: int
    opp_seen: int
    played: int
    face_up: int
    opp_voids: int  # bit s: he holds no card of suit s outside his Seen row
    lead: int
    leader: int
    trump: int
    trump_mask: int
    tricks1: tuple[int, int]
    stock_left: int  # the face-up card included

    @classmethod
    def from_state(cls, game: GermanWhist, state: State, seat: int) -> Knowledge:
        if state.phase != Phase.PLAY or state.stage != 1:
            raise ValueError("PIMC sampling is for stage 1 (the stock not yet empty)")
        opp = 1 - seat
        return cls(
            seat=seat,
            pack=game.deck.all_mask,
            hand=state.hands[seat],
            opp_seen=state.seen[opp],
            played=state.played,
            face_up=state.face_up,
            opp_voids=state.voids[opp],
            lead=state.lead,
            leader=state.leader,
            trump=state.trump,
            trump_mask=state.trump_mask,
            tricks1=(state.tricks1[0], state.tricks1[1]),
            stock_left=len(state.stock) - state.stock_pos,
        )

    def opp_cards(self) -> int:
        """The opponent's hand size: 13 between tricks, 12 once he has led to this
        one."""
        return 13 - (1 if self.lead >= 0 and self.leader != self.seat else 0)

    def unseen(self) -> int:
        """Cards the seat cannot place: each is in the opponent's hidden hand or in the
        stock below the face-up card."""
        known = self.hand | self.played | self.opp_seen | (1 << self.face_up)
        return self.pack & ~known

    def void_cards(self, game: GermanWhist) -> int:
        """Cards the opponent cannot hold hidden: the suits he has shown void in (the
        trump suit with its jokers)."""
        out = 0
        for s in range(4):
            if self.opp_voids >> s & 1:
                out |= self.trump_mask if s == self.trump else game.deck.suit_mask[s]
        return out


@dataclass
class World:
    """One deal consistent with a `Knowledge`: both hands and the stock still to come
    (``stock[0]`` is the face-up card)."""

    hands: list[int]
    stock: list[int]


def sample_world(game: GermanWhist, know: Knowledge, rng: np.random.Generator) -> World:
    """A deal drawn uniformly from those consistent with what the seat knows: the
    opponent holds his Seen row plus hidden cards drawn from the unseen cards outside
    his shown voids; the other unseen cards make the stock below the face-up card, in
    random order.

    (Known simplification: the opponent's play so far is not used as evidence, and
    neither are voids shown before his last hidden draw, which cap his cards in that
    suit at one.)
    """
    unseen = know.unseen()
    hidden_n = know.opp_cards() - know.opp_seen.bit_count()
    allowed = cards_in(unseen & ~know.void_cards(game))
    if len(allowed) < hidden_n or unseen.bit_count() != hidden_n + know.stock_left - 1:
        raise ValueError("the seat's knowledge is inconsistent with the engine state")
    picks = rng.choice(len(allowed), size=hidden_n, replace=False) if hidden_n else []
    hidden = mask_of(allowed[i] for i in picks)
    rest = cards_in(unseen & ~hidden)
    order = rng.permutation(len(rest)).tolist() if rest else []
    hands = [0, 0]
    hands[know.seat] = know.hand
    hands[1 - know.seat] = know.opp_seen | hidden
    return World(hands, [know.face_up] + [rest[i] for i in order])


# --- stage 1: the rollout policy ------------------------------------------------------
# Card values for the rollout (roughly "stage-2 tricks this card is worth"): a card
# with h stronger cards of its group still out is worth _TOP[h]; a trump adds a base
# for ruffing.
_TOP = (1.0, 0.55, 0.3, 0.15, 0.08, 0.04, 0.02) + (0.0,) * 10
_TRUMP_BASE, _TRUMP_TOP = 0.7, 0.5
_HIDDEN_VALUE = 0.25  # what the hidden draw is worth on average
_HONEYMOON_TRICK = 0.5  # Honeymoon: a stage-1 trick scores too
# the leader plays for a prize worth this much more than the hidden draw
_LEAD_FOR_PRIZE = 0.45


class Rollout:
    """A fast, deterministic stage-1 policy for both seats, and the stage-1 play-out.

    The policy reads only the player's own hand, the card led, the prize and the cards
    played (what a player knows; it does not peek at the sampled opponent hand).
    Follower: win with the cheapest winning card when the prize is worth more than the
    draw by more than that card costs over the cheapest loser, else play the cheapest
    card. Leader: when the prize is worth playing for, lead the cheapest card that no
    card still out can beat in its suit (if any), else the cheapest card. "Cheapest" by
    `_value` (the constants above). Its parameters were checked in 1000-game sweeps
    against the heuristic; the values here were the best of those tried.
    """

    def __init__(self, game: GermanWhist, trump_mask: int):
        self.game = game
        self.honeymoon = game.honeymoon
        self.lay = Layout.of(game, trump_mask)
        self.all = game.deck.all_mask

    def _value(self, card: int, out: int) -> float:
        lay = self.lay
        top = _TOP[(lay.above[card] & out).bit_count()]
        if (1 << card) & lay.trumps:
            return _TRUMP_BASE + _TRUMP_TOP * top
        return top

    def _cheapest(self, cards: int, out: int) -> int:
        # min over the cards, ascending, of (`_value`, strength): the first of equals,
        # as ``min`` would; written out because the rollout calls it at every card
        lay = self.lay
        above, strength, trumps = lay.above, lay.strength, lay.trumps
        best, best_key = -1, None
        while cards:
            low = cards & -cards
            cards ^= low
            c = low.bit_length() - 1
            top = _TOP[(above[c] & out).bit_count()]
            key = (_TRUMP_BASE + _TRUMP_TOP * top if low & trumps else top, strength[c])
            if best_key is None or key < best_key:
                best, best_key = c, key
        return best

    def lead(self, hand: int, prize: int, played: int) -> int:
        out = self.all & ~played & ~hand
        gain = self._value(prize, out & ~(1 << prize)) - _HIDDEN_VALUE
        if self.honeymoon:
            gain += _HONEYMOON_TRICK
        if gain > _LEAD_FOR_PRIZE:
            masters = 0
            for c in cards_in(hand):
                if not self.lay.above[c] & out:
                    masters |= 1 << c
            if masters:
                return self._cheapest(masters, out)
        return self._cheapest(hand, out)

    def follow(self, hand: int, lead: int, prize: int, played: int) -> int:
        lay = self.lay
        legal = hand if self.honeymoon else (hand & lay.group_mask(lead)) or hand
        out = self.all & ~played & ~hand
        winners = legal & lay.beaters[lead]
        losers = legal & ~winners
        if not winners:
            return self._cheapest(legal, out)
        w = self._cheapest(winners, out)
        if not losers:
            return w
        loser = self._cheapest(losers, out)
        gain = self._value(prize, out & ~(1 << prize)) - _HIDDEN_VALUE
        if self.honeymoon:
            gain += _HONEYMOON_TRICK
        if gain > self._value(w, out) - self._value(loser, out):
            return w
        return loser

    def trick(
        self,
        hands: list[int],
        stock: list[int],
        pos: int,
        leader: int,
        lead: int,
        card: int,
        played: int,
        won: list[int],
    ) -> tuple[int, int, int]:
        """Finish a stage-1 trick (``lead`` by ``leader``, ``card`` by the other seat):
        the winner takes the face-up card, the loser the next one (the engine's
        ``_draw``). Returns (next stock position, next leader, cards played)."""
        follower = 1 - leader
        hands[follower] &= ~(1 << card)
        played |= 1 << card
        winner = leader if self.lay.beats(lead, card) else follower
        hands[winner] |= 1 << stock[pos]
        hands[1 - winner] |= 1 << stock[pos + 1]
        won[winner] += 1
        return pos + 2, winner, played

    def play_out(
        self,
        hands: list[int],
        stock: list[int],
        pos: int,
        leader: int,
        played: int,
        won: list[int],
    ) -> int:
        """Play the rest of stage 1 from a trick boundary; returns the stage-2
        leader."""
        while pos < len(stock):
            prize = stock[pos]
            lead = self.lead(hands[leader], prize, played)
            hands[leader] &= ~(1 << lead)
            played |= 1 << lead
            card = self.follow(hands[1 - leader], lead, prize, played)
            pos, leader, played = self.trick(
                hands, stock, pos, leader, lead, card, played, won
            )
        return leader


# --- PIMC -----------------------------------------------------------------------------
def _deal_score(total: int) -> int:
    """Honeymoon: the deal's match points from one player's side, for his 27-trick total
    ("1 match point for each trick over 13"; the other player scores when he has 13 or
    fewer)."""
    return total - 13 if total >= 14 else total - 14


def _stage1_classes(
    game: GermanWhist, state: State, seat: int, know: Knowledge
) -> list[list[int]]:
    """The seat's legal stage-1 cards in classes of equivalent cards: adjacent in rank
    among every card not yet played (the led card included), so nothing still to come
    can fall between them. Each class lists Seen-row cards first, then the weakest."""
    lay = Layout.of(game, know.trump_mask)
    legal = mask_of(game.legal_actions(state))
    remaining = know.pack & ~know.played
    if know.lead >= 0:
        remaining |= 1 << know.lead
    return lay.classes(legal, remaining, prefer=state.seen[seat])


def pimc_values(
    game: GermanWhist,
    state: State,
    seat: int,
    samples: int,
    rng: np.random.Generator,
    solver: Stage2Solver | None = None,
) -> dict[int, float]:
    """PIMC values of the seat's legal stage-1 cards: the mean over ``samples``
    consistent deals (`sample_world`) of the result of playing the card, the opponent's
    answer and the rest of stage 1 played by `Rollout`, stage 2 solved exactly. German:
    the chance of winning; Honeymoon: the deal's match points (negative when the
    opponent scores). Equivalent cards share one value; the same deals serve every card,
    so the comparison between cards is paired."""
    know = Knowledge.from_state(game, state, seat)
    solver = solver or SHARED
    classes = _stage1_classes(game, state, seat, know)
    # nothing else draws from ``rng`` meanwhile, so drawing every deal first gives the
    # deals that drawing each before its rollouts did
    worlds = [sample_world(game, know, rng) for _ in range(samples)]
    if solver.kernel is not None:
        lay = compiled_rollout(game, know.trump_mask)
        totals = _compiled_totals(solver, lay, know, classes, worlds)
    else:
        totals = _python_totals(game, know, classes, worlds, solver)
    out: dict[int, float] = {}
    for idx, cls in enumerate(classes):
        for c in cls:
            out[c] = totals[idx] / samples
    return out


def _python_totals(
    game: GermanWhist,
    know: Knowledge,
    classes: list[list[int]],
    worlds: list[World],
    solver: Stage2Solver,
) -> list[float]:
    """`pimc_values`' sums over the sampled deals, one a class, in pure Python."""
    seat = know.seat
    roll = Rollout(game, know.trump_mask)
    lay = roll.lay
    totals = [0.0] * len(classes)
    opp = 1 - seat
    # Honeymoon: the stage-2 tricks of the last solve (the previous card, or the last
    # card of the previous deal), a good first probe; the value found is the same
    guess = None
    for world in worlds:
        for idx, cls in enumerate(classes):
            card = cls[0]
            hands = list(world.hands)
            won = [0, 0]
            if know.lead >= 0:  # we complete the trick
                pos, leader, played = roll.trick(
                    hands, world.stock, 0, opp, know.lead, card, know.played, won
                )
            else:  # we lead; the opponent answers by the rollout policy
                hands[seat] &= ~(1 << card)
                played = know.played | (1 << card)
                answer = roll.follow(hands[opp], card, world.stock[0], played)
                pos, leader, played = roll.trick(
                    hands, world.stock, 0, seat, card, answer, played, won
                )
            leader = roll.play_out(hands, world.stock, pos, leader, played, won)
            word = lay.word(hands[0], hands[1])
            if game.honeymoon:
                guess = t0 = solver.max_tricks(word, leader, guess)
                mine = t0 if seat == 0 else STAGE2_TRICKS - t0
                totals[idx] += _deal_score(know.tricks1[seat] + won[seat] + mine)
            else:
                win0 = solver.reach(word, leader, TRICKS_TO_WIN)
                totals[idx] += 1.0 if win0 == (seat == 0) else 0.0
    return totals


def compiled_rollout(game: GermanWhist, trump_mask: int) -> tuple:
    """The `Rollout` policy's tables for the compiled `jit.pimc_deals`: ``(above,
    beaters, strength, group_of, group_mask, groups, values, consts)`` (see `jit`),
    built once a pack, trump suit and variant."""
    key = (game.deck.size, trump_mask, game.honeymoon)
    tables = _COMPILED_ROLLOUTS.get(key)
    if tables is None:
        lay = Layout.of(game, trump_mask)
        groups = np.full((4, 16), -1, dtype=np.int64)
        for g, cards in enumerate(lay.groups):
            groups[g, : len(cards)] = cards
        # the same expressions as `Rollout._value`, so the same doubles
        values = np.array(
            [list(_TOP), [_TRUMP_BASE + _TRUMP_TOP * top for top in _TOP]],
            dtype=np.float64,
        )
        consts = [trump_mask, game.deck.all_mask, int(game.honeymoon)]
        tables = _COMPILED_ROLLOUTS[key] = (
            np.array(lay.above, dtype=np.int64),
            np.array(lay.beaters, dtype=np.int64),
            np.array(lay.strength, dtype=np.int64),
            np.array(lay.group_of, dtype=np.int64),
            np.array([lay.group_mask(c) for c in range(lay.size)], dtype=np.int64),
            groups,
            values,
            np.array(consts, dtype=np.int64),
        )
    return tables


_COMPILED_ROLLOUTS: dict[tuple[int, int, bool], tuple] = {}


def _compiled_totals(
    solver: Stage2Solver,
    lay: tuple,
    know: Knowledge,
    classes: list[list[int]],
    worlds: list[World],
) -> list[float]:
    """`_python_totals` with the rollouts and solves in the compiled search
    (`jit.pimc_deals`, ``lay`` from `compiled_rollout`): the same cards and sums."""
    cards = np.array([cls[0] for cls in classes], dtype=np.int64)
    facts = np.array(
        [know.seat, know.lead, know.played, know.tricks1[know.seat]], dtype=np.int64
    )
    totals = np.zeros(len(classes), dtype=np.float64)
    solver.kernel.pimc_deals(
        lay,
        np.array([w.hands for w in worlds], dtype=np.int64),
        np.array([w.stock for w in worlds], dtype=np.int64),
        cards,
        facts,
        solver.tt_limit,
        totals,
    )
    return totals.tolist()


def rollout_card(game: GermanWhist, state: State, seat: int) -> int:
    """The card the `Rollout` policy plays for ``seat`` (its own hand and public
    facts)."""
    roll = Rollout(game, state.trump_mask)
    hand = state.hands[seat]
    if state.lead < 0:
        return roll.lead(hand, state.face_up, state.played)
    return roll.follow(hand, state.lead, state.face_up, state.played)


def default_margin(samples: int) -> int:
    """How many more sampled deals another card must win than the base card before PIMC
    plays it: a quarter of the samples, at least two (``pimc:4`` and ``pimc:8`` need 2).
    One was too noisy in the arena (``docs/solvers.md``); with a single sample PIMC
    therefore never overrides the base card in German Whist."""
    return max(2, samples // 4)


def pimc_card(
    game: GermanWhist,
    state: State,
    seat: int,
    samples: int,
    rng: np.random.Generator,
    base: int | None = None,
    margin: int | None = None,
    solver: Stage2Solver | None = None,
) -> int:
    """The PIMC bot's stage-1 card, by `pimc_values`.

    PIMC here is a policy-improvement step over a base policy: ``base`` (the base
    policy's card; default: the `Rollout` policy's) is kept unless another card wins at
    least ``margin`` more of the ``samples`` deals (German; Honeymoon: scores ``margin``
    more match points over them), default `default_margin`. The margin keeps sampling
    noise from overriding a sound card. Among cards of the best value, the card the
    rollout policy values least is played (keep the better cards), then the weaker. Of
    equivalent cards, one from the Seen row (the opponent knows it already), else the
    weakest.
    """
    return pimc_choice(game, state, seat, samples, rng, base, margin, solver)[0][0]


def pimc_choice(
    game: GermanWhist,
    state: State,
    seat: int,
    samples: int,
    rng: np.random.Generator,
    base: int | None = None,
    margin: int | None = None,
    solver: Stage2Solver | None = None,
) -> tuple[list[int], bool]:
    """What `pimc_card` plays, as ``(cards, overridden)``: the class of equivalent cards
    it plays from (the card it plays first), and whether the search overrode the base
    card (the class is then not the base card's)."""
    if base is None:
        base = rollout_card(game, state, seat)
    if margin is None:
        margin = default_margin(samples)
    values = pimc_values(game, state, seat, samples, rng, solver)
    know = Knowledge.from_state(game, state, seat)
    classes = _stage1_classes(game, state, seat, know)
    best = max(values.values())
    if (best - values[base]) * samples < margin - 1e-9:
        return next(cls for cls in classes if base in cls), False
    tied = [cls for cls in classes if values[cls[0]] >= best - 1e-9]
    roll = Rollout(game, state.trump_mask)
    out = know.pack & ~know.played & ~know.hand
    strength = roll.lay.strength

    def cost(cls: list[int]) -> tuple:
        return (roll._value(cls[0], out), strength[cls[0]], cls[0])

    return min(tied, key=cost), True
