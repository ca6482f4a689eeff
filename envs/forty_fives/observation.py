"""What a Forty-Fives player observes, as a vector and as text.

The vector holds exactly what the player knows. Seats are relative: "seat k" is the
player k places to my left (k = 0 is me); sides are relative too: side 0 is mine, then
the other sides in the order their first seat follows me clockwise. With ``n`` players
and ``T`` sides (2 with 4 or 6 players, else ``n``) the layout is:

=========================  =============================================================
slice                      meaning (1.0 = yes)
=========================  =============================================================
[0, 52)                    my hand
[52 + 52k, 104 + 52k)      cards seat k played to tricks this deal, k = 0..n-1 (the
                           current trick included)
P = 52(n+1): [P, P+52)     cards in the current trick
[P+52, P+104)              the turned card (base game; public all deal, robbed or not)
[P+104, P+156)             cards I put away face down: my buried card or my discards
F = P+156: F + s           trumps are suit s (S H D C)
F+4                        I may rob now (my first turn, holding the ace of trumps or
                           dealer under a turned ace; only in my own vector)
F+5 .. F+8                 phase: bidding, naming trumps, discarding, playing
F+9 + k                    seat k is the dealer
F+9+n + k                  seat k leads the current trick
F+9+2n + k                 seat k robbed (and holds the turned card until he plays it)
F+9+3n + k                 seat k is the bidder (contract)
F+9+4n + k                 seat k holds the high bid (during the auction)
F+9+5n + k                 seat k has passed
F+9+6n + 4k + j            seat k bid level j (15 20 25 30) at some point
F+9+10n                    the dealer has held
F+10+10n + j               the contract is level j
F+14+10n + j               the current high bid is level j
F+18+10n + t               side t won the trick with the highest trump so far (bonus)
F+18+10n+T                 I am to act
S = F+19+10n+T: S + t      side t's score: (score + target) / (2 target), in [0, 1]
S+T + t                    side t's trick points this deal / 30
S+2T + k                   tricks seat k won this deal / 5
S+2T+n + k                 cards seat k discarded / 8 (auction)
S+2T+2n + k                cards seat k drew / 5 (auction)
S+2T+3n                    cards left in the stock / 52
S+2T+3n+1                  deals played / deal limit
=========================  =============================================================

Never in the vector: another player's hand, the stock, the kitty, anybody else's
discards or buried card. ``tests/test_forty_fives.py`` checks that changing them leaves
it unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core import picklable
from ..core.cards import SUIT_SYMBOLS, SUITS, hand_view
from .state import Phase, State

if TYPE_CHECKING:
    from .rules import FortyFives

_PHASE_FLAG = {
    Phase.BID: 1,
    Phase.TRUMP: 2,
    Phase.DISCARD: 3,
    Phase.PLAY: 4,
}
BID_LEVELS = (15, 20, 25, 30)


def _layout(n: int, t: int) -> tuple[int, int, int]:
    """(first flag bit, number of bits, number of scalars)."""
    flags = 52 * (n + 4)
    bits = flags + 19 + 10 * n + t
    scalars = 2 * t + 3 * n + 2
    return flags, bits, scalars


def size(game: FortyFives) -> int:
    """Observation length for this game's number of players and sides."""
    _, bits, scalars = _layout(game.num_players, game.num_teams)
    return bits + scalars


def relative_sides(game: FortyFives, player: int) -> list[int]:
    """The sides in observation order: mine first, then clockwise by their first
    seat."""
    n = game.num_players
    out: list[int] = []
    for k in range(n):
        t = game.team_of[(player + k) % n]
        if t not in out:
            out.append(t)
    return out


class Layout:
    """Offsets and per-seat orderings, computed once per game (the encoder's hot
    path)."""

    def __init__(self, game: FortyFives):
        n, nt = game.num_players, game.num_teams
        self.n = n
        self.flags, self.nbits, self.nscalars = _layout(n, nt)
        self.nbytes = (self.nbits + 7) // 8
        self.scalars = picklable.Struct(f"={self.nscalars}f")  # native order, as numpy
        self.played = tuple(52 + 52 * k for k in range(n))
        self.trick = 52 * (n + 1)
        self.turned = self.trick + 52
        self.away = self.trick + 104
        f = self.flags + 9
        self.dealer, self.leader, self.robber = f, f + n, f + 2 * n
        self.bidder, self.high, self.passed, self.levels = (
            f + 3 * n,
            f + 4 * n,
            f + 5 * n,
            f + 6 * n,
        )
        g = f + 10 * n
        self.held, self.contract, self.high_bid, self.bonus = g, g + 1, g + 5, g + 9
        self.to_act = g + 9 + nt
        self.seats = [tuple((p + k) % n for k in range(n)) for p in range(n)]
        self.rel = [[(s - p) % n for s in range(n)] for p in range(n)]
        self.sides = [tuple(relative_sides(game, p)) for p in range(n)]
        self.side_rel = [[sides.index(t) for t in range(nt)] for sides in self.sides]
        self.bid_index = {v: i for i, v in enumerate(BID_LEVELS)}


def encode(game: FortyFives, state: State, player: int) -> np.ndarray:
    """Player ``player``'s observation vector (float32, every entry in [0, 1])."""
    lay: Layout = game.obs_layout
    seats = lay.seats[player]
    rel = lay.rel[player]
    sides = lay.sides[player]
    played_by = state.played_by
    bits = state.hands[player] | state.put_away[player] << lay.away
    for k, shift in enumerate(lay.played):
        bits |= played_by[seats[k]] << shift
    for c in state.trick:
        bits |= 1 << (lay.trick + c)
    phase = state.phase
    if state.turned >= 0:
        bits |= 1 << (lay.turned + state.turned)
    if state.trump >= 0:
        bits |= 1 << (lay.flags + state.trump)
    flag = _PHASE_FLAG.get(phase)
    if flag is not None:
        bits |= 1 << (lay.flags + 4 + flag)
        if flag == 4:  # playing: who led this trick
            bits |= 1 << (lay.leader + rel[state.leader])
        if state.to_play == player:
            bits |= 1 << lay.to_act
            if state.rob_seat == player:  # private: nobody else learns who may rob
                bits |= 1 << (lay.flags + 4)
    if state.dealer >= 0:
        bits |= 1 << (lay.dealer + rel[state.dealer])
    if state.robbed_by >= 0:
        bits |= 1 << (lay.robber + rel[state.robbed_by])
    if state.bid_history:  # auction facts
        if state.bidder >= 0:
            bits |= 1 << (lay.bidder + rel[state.bidder])
            bits |= 1 << (lay.contract + lay.bid_index[state.contract])
        if phase == Phase.BID and state.bid_winner >= 0:
            bits |= 1 << (lay.high + rel[state.bid_winner])
        for k, s in enumerate(seats):
            if state.passed >> s & 1:
                bits |= 1 << (lay.passed + k)
            bits |= state.bid_levels[s] << (lay.levels + 4 * k)
        if state.held:
            bits |= 1 << lay.held
        if state.bid_high:
            bits |= 1 << (lay.high_bid + lay.bid_index[state.bid_high])
    if state.bonus_team >= 0:
        bits |= 1 << (lay.bonus + lay.side_rel[player][state.bonus_team])
    nbits = lay.nbits
    out = np.empty(nbits + lay.nscalars, dtype=np.float32)
    raw = np.frombuffer(bits.to_bytes(lay.nbytes, "little"), dtype=np.uint8)
    out[:nbits] = np.unpackbits(raw, count=nbits, bitorder="little")
    target = game.target
    scores, points = state.scores, state.deal_points
    tricks, discards, drawn = state.tricks_won, state.discards, state.drawn
    deals = state.deal_no / game.max_deals
    lay.scalars.pack_into(  # straight into the buffer, rounded to float32 as numpy does
        out,
        4 * nbits,
        *[min(max((scores[t] + target) / (2 * target), 0.0), 1.0) for t in sides],
        *[points[t] / 30 for t in sides],
        *[tricks[s] / 5 for s in seats],
        *[discards[s] / 8 for s in seats],
        *[drawn[s] / 5 for s in seats],
        (len(state.stock) - state.stock_pos) / 52,
        deals if deals < 1.0 else 1.0,
    )
    return out


#: each variant's name in the rendered table
TITLES = {
    "forty_fives": "Forty-Fives",
    "twenty_five": "Twenty-Five",
    "auction": "Auction Forty-Fives (120)",
    "one_ten": "One Hundred and Ten",
}


def render(game: FortyFives, state: State, viewer: int | None = None) -> str:
    """The table as text: all hands when ``viewer`` is None, else what that seat may
    see."""
    deck = game.deck
    head = f"{TITLES[game.variant]}, {game.num_players} players"
    if state.phase < Phase.BID:
        return f"{head}: dealing (deal {state.deal_no + 1})"
    lines = [
        f"{head} — deal {state.deal_no + 1 - (state.phase == Phase.OVER)}, "
        f"dealer player_{state.dealer}"
    ]
    if state.trump >= 0:
        trump = f"trumps {SUIT_SYMBOLS[state.trump]} ({SUITS[state.trump]})"
        if state.turned >= 0:
            trump += f", turned {deck.pretty(state.turned)}"
        if state.robbed_by >= 0:
            trump += f", robbed by player_{state.robbed_by}"
            if viewer is None or viewer == state.robbed_by:
                trump += f" (buried {deck.pretty(state.buried)})"
        lines.append(trump)
    if game.auction and state.bid_history:
        calls = ", ".join(f"p{s} {game.action_name(a)}" for s, a in state.bid_history)
        lines.append(f"Auction: {calls}")
        if state.bidder >= 0:
            lines.append(f"Contract: player_{state.bidder} bid {state.contract}")
    for s in range(game.num_players):
        tag = " (you)" if s == viewer else ""
        side = f"side {game.team_of[s]}" if game.num_teams < game.num_players else ""
        hand = hand_view(state.hands[s], s, viewer, deck.pretty_mask)
        extra = ""
        if game.auction and state.phase >= Phase.DISCARD:
            extra = f", discarded {state.discards[s]}, drew {state.drawn[s]}"
        lines.append(
            f"player_{s}{tag} {side}: {hand}; tricks {state.tricks_won[s]}{extra}"
        )
    if state.trick:
        shown = " ".join(
            f"p{(state.leader + i) % game.num_players}:{deck.pretty(c)}"
            for i, c in enumerate(state.trick)
        )
        lines.append(f"Trick {state.trick_no + 1}: {shown}")
    lines.append(
        "Scores: "
        + "  ".join(f"side {t} {state.scores[t]}" for t in range(game.num_teams))
        + f" (to {game.target})"
    )
    if state.phase == Phase.OVER:
        if game.episode == "deal":
            lines.append(f"Deal over: score changes {state.deal_gain}")
        elif state.winner >= 0:
            lines.append(
                f"Game over: side {state.winner} "
                f"({', '.join(f'player_{s}' for s in game.teams()[state.winner])}) wins"
            )
        else:
            lines.append("Game over: drawn at the deal limit")
    else:
        what = {
            Phase.BID: "bid",
            Phase.TRUMP: "name trumps",
            Phase.DISCARD: "discard",
            Phase.PLAY: "play",
        }[state.phase]
        line = f"To {what}: player_{state.to_play}"
        if state.rob_seat == state.to_play and viewer in (None, state.to_play):
            # shown only to the robber (and the all-seeing view): it tells who may rob
            line += f" (may first rob the {deck.pretty(state.turned)}: rob:X buries X)"
        lines.append(line)
    return "\n".join(lines)
