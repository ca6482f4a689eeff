"""What a Herzeln player observes, as a vector and as text.

Seats in the vector are *relative*: block ``k`` of a per-seat section is the seat ``k``
places to my left (``k = 0`` is me), so one policy serves every seat. With ``N`` the
pack size (24 or 32), ``n`` players, ``R = N / 4`` ranks and ``L`` Domino lines (1, or 4
with per-suit rows) the layout is:

====================  ===============================================================
slice                 meaning (1.0 = yes)
====================  ===============================================================
[0, N)                my hand
N + k·N + c           card c was played (or laid, in Domino) this deal by seat k
N + nN + k·N + c      card c is in the current trick, played by seat k
N + 2nN + k·N + c     card c is in the tricks seat k has taken this deal
N + 3nN + c           Domino: card c is not laid yet and fits an open end (or is a
                      Jack that may open a line); public, from the layout alone
B + t                 the contract is t (t = 0..7 in the seed's order, `CONTRACTS`)
B + 8 + k             seat k is the dealer
B + 8 + n + k         seat k led the current trick
B + 8 + 2n + 4k + s   seat k has shown void in suit s this deal (trick deals)
E + l·R + r           Domino: the top end of line l has cycle position r
E + LR + l·R + r      Domino: the bottom end of line l has cycle position r
F + 0 … 3             I am to act; I am to lead a trick; the episode is a partie;
                      the game is over
S + k                 seat k's cards in hand / 8
S + n + k             tricks seat k has taken this deal / 8
S + 2n + k            points seat k has scored this deal: |points| / the most one
                      seat can score in this contract (the sign is the contract's)
S + 3n + k            Domino: seat k's finishing place (1st = 1/n … last = 1), 0
                      while he still holds cards
S + 4n + k            seat k's partie total, scaled from [lowest, highest possible]
                      to [0, 1]
S + 5n                deals finished / deals in the episode
S + 5n + 1            tricks played this deal / 8
====================  ===============================================================

with ``B = N + 3nN + N``, ``E = B + 8 + 6n``, ``F = E + 2LR`` and ``S = F + 4``. Cycle
position ``r`` is the rank's place in the line's order, lowest first: the game's order 7
8 9 J Q K 10 A (3 players: 9 J Q K 10 A) for the single cyclic line, the natural order 7
8 9 10 J Q K A for per-suit rows. The other players' hands never appear;
``tests/test_herzeln.py`` checks that changing them leaves the vector unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.cards import cards_in, hand_view
from .state import Phase, State

if TYPE_CHECKING:
    from .rules import Herzeln

N_CONTRACTS = 8
N_FLAGS = 4

CONTRACT_TITLES = (
    "No Hearts (Herz)",
    "Tricks (Jeder Stich)",
    "No Tricks (Kein Stich)",
    "No Obers/Queens (Ober)",
    "King of Hearts (Herzkönig)",
    "Last Trick (Letzter)",
    "No Last Trick (Kein Letzter)",
    "Domino (Unteranlegen)",
)


def _bits(game: Herzeln) -> int:
    N, n, R = game.N, game.num_players, game.num_ranks
    return N + 3 * n * N + N + N_CONTRACTS + 6 * n + 2 * game.num_lines * R + N_FLAGS


def size(game: Herzeln) -> int:
    """Observation length of a game variant."""
    return _bits(game) + 5 * game.num_players + 2


def encode(game: Herzeln, state: State, player: int) -> np.ndarray:
    """Player ``player``'s observation vector (float32, every entry in [0, 1])."""
    N, n, R, L = game.N, game.num_players, game.num_ranks, game.num_lines
    seats = game.obs_seats[player]  # relative seats: me, my left, …
    in_play = state.phase == Phase.TRICKS or state.phase == Phase.DOMINO
    bits = state.hands[player] if in_play else 0
    shift = N
    for s in seats:
        bits |= state.played_by[s] << shift
        shift += N
    if state.trick:
        leader = state.leader
        for i, c in enumerate(state.trick):
            k = (leader + i - player) % n
            bits |= 1 << (shift + k * N + c)
    shift += n * N
    for s in seats:
        bits |= state.won[s] << shift
        shift += N
    if state.phase == Phase.DOMINO:
        bits |= _fits(game, state) << shift
    shift += N
    if state.contract >= 0:
        bits |= 1 << (shift + state.contract)
    shift += N_CONTRACTS
    if state.dealer >= 0:
        bits |= 1 << (shift + (state.dealer - player) % n)
    shift += n
    if state.trick:
        bits |= 1 << (shift + (state.leader - player) % n)
    shift += n
    for s in seats:
        bits |= state.voids[s] << shift
        shift += 4
    if state.contract == 7 and state.phase != Phase.DEAL:
        for ln in range(L):
            if state.line_top[ln] >= 0:
                bits |= 1 << (shift + ln * R + state.line_top[ln])
                bits |= 1 << (shift + L * R + ln * R + state.line_bottom[ln])
    shift += 2 * L * R
    to_act = in_play and state.to_play == player
    bits |= (
        to_act
        | (to_act and state.phase == Phase.TRICKS and not state.trick) << 1
        | (game.episode == "partie") << 2
        | (state.phase == Phase.OVER) << 3
    ) << shift
    head = shift + N_FLAGS
    out = np.empty(head + 5 * n + 2, dtype=np.float32)
    raw = np.frombuffer(bits.to_bytes((head + 7) // 8, "little"), dtype=np.uint8)
    out[:head] = np.unpackbits(raw, count=head, bitorder="little")
    k = state.contract
    max_pts = game.max_points[k] if k >= 0 else 1
    low, span = game.score_low, game.score_high - game.score_low
    places = {p: i for i, p in enumerate(state.out_order)} if k == 7 else {}
    hands, tricks = state.hands, state.tricks
    points, scores = state.points, state.scores
    game.obs_scalars.pack_into(  # straight into the buffer, rounded as numpy rounds
        out,
        4 * head,
        *[hands[s].bit_count() / 8 if in_play else 0.0 for s in seats],
        *[tricks[s] / 8 for s in seats],
        *[abs(points[s]) / max_pts for s in seats],
        *[(places[s] + 1) / n if s in places else 0.0 for s in seats],
        *[(scores[s] - low) / span for s in seats],
        state.deal_no / len(game.contracts),
        sum(tricks) / 8,
    )
    return out


def _fits(game: Herzeln, state: State) -> int:
    """Cards not yet laid that fit the Domino layout now (public: it depends on the
    layout)."""
    R = game.num_ranks
    if game.per_suit and not state.laid:
        return 1 << game.jack_of_hearts
    fits = 0
    for ln in range(game.num_lines):
        top = state.line_top[ln]
        if top < 0:
            fits |= game.line_cards[ln] & game.jacks
        else:
            fits |= (
                game.at[ln][(top + 1) % R]
                | game.at[ln][(state.line_bottom[ln] - 1) % R]
            )
    return fits & ~state.laid


def card_text(game: Herzeln, card: int) -> str:
    """A card for people: German names with the German pack, suit symbols with the
    French."""
    return game.deck.german(card) if game.german else game.deck.pretty(card)


def render(game: Herzeln, state: State, viewer: int | None = None) -> str:
    """The table as text: all hands when ``viewer`` is None, else what that seat may
    see."""
    n = game.num_players

    def cards(mask: int) -> str:
        return " ".join(card_text(game, c) for c in cards_in(mask)) or "-"

    pack = "32 German cards" if game.german else "24 French cards"
    if state.phase <= Phase.DEAL:
        return f"Herzeln ({n} players, {pack}): dealing deal {state.deal_no + 1}"
    k = state.contract
    lines = [
        f"Herzeln ({n} players, {pack}) — deal {state.deal_no + 1}/"
        f"{len(game.contracts)}: {CONTRACT_TITLES[k]}, dealer player_{state.dealer}"
        if state.phase != Phase.OVER
        else f"Herzeln ({n} players, {pack}) — partie over after {CONTRACT_TITLES[k]}"
    ]
    for p in range(n):
        tag = " (you)" if p == viewer else ""
        hand = hand_view(state.hands[p], p, viewer, cards)
        extra = (
            f"tricks {state.tricks[p]}"
            if k != 7
            else (
                f"out {state.out_order.index(p) + 1}." if p in state.out_order else "in"
            )
        )
        lines.append(
            f"player_{p}{tag}: {hand} | {extra}, points {state.points[p]:+d}, "
            f"total {state.scores[p]:+d}"
        )
    if state.phase == Phase.TRICKS and state.trick:
        played = ", ".join(
            f"player_{(state.leader + i) % n} {card_text(game, c)}"
            for i, c in enumerate(state.trick)
        )
        lines.append(f"Trick: {played}")
    if state.last_trick is not None:
        leader, trick, winner = state.last_trick
        lines.append(
            "Last trick: "
            + " ".join(card_text(game, c) for c in trick)
            + f" won by player_{winner}"
        )
    if k == 7:
        lines.extend(_layout_lines(game, state))
    if state.phase == Phase.OVER:
        won = ", ".join(f"player_{p}" for p in game.winners(state))
        lines.append(
            f"Partie over: {won} win{'s' if len(game.winners(state)) == 1 else ''}"
        )
    else:
        lines.append(f"To play: player_{state.to_play}")
    return "\n".join(lines)


def _layout_lines(game: Herzeln, state: State) -> list[str]:
    from .rules import GAME_ORDER_LOW_FIRST, NATURAL_ORDER_LOW_FIRST

    order = NATURAL_ORDER_LOW_FIRST if game.per_suit else GAME_ORDER_LOW_FIRST
    if game.num_players == 3:
        order = tuple(r for r in order if r not in ("7", "8"))
    out = []
    for ln in range(game.num_lines):
        name = f"row {'♠♥♦♣'[ln]}" if game.per_suit else "line"
        if state.line_top[ln] < 0:
            out.append(f"Layout {name}: not opened")
            continue
        count = (state.laid & game.line_cards[ln]).bit_count()
        out.append(
            f"Layout {name}: {count} cards, bottom end {order[state.line_bottom[ln]]}, "
            f"top end {order[state.line_top[ln]]}"
        )
    return out
