"""What a German Whist player observes, as a vector and as text.

The vector holds exactly what the player knows. With ``n`` the pack size (52, or 54 in
Honeymoon Whist) the layout is:

=============  ======================================================================
slice          meaning (1.0 = yes)
=============  ======================================================================
[0, n)         my hand
[n, 2n)        opponent's cards I know: his Seen row (face-up prizes he still holds) in
               stage 1; his whole hand in stage 2, where it is deducible
[2n, 3n)       my cards the opponent knows (my Seen row; my whole hand in stage 2)
[3n, 4n)       the face-up stock card (this trick's prize); empty in stage 2
[4n, 5n)       cards out of play (every card played so far)
[5n, 6n)       the card led to the current trick, when I am to follow
6n + s         trump suit is s (s = 0..3 for S H D C)
6n + 4 + s     the opponent has shown void in suit s since his last hidden draw, so he holds
               no card of s outside his Seen row
6n + 8         stage 2
6n + 9         I am to lead
6n + 10        I am the dealer
6n + 11        cards left in the stock / stock size
6n + 12, 13    stage-1 tricks, mine and the opponent's / stage-1 trick count
6n + 14, 15    stage-2 tricks, mine and the opponent's / 13
6n + 16, 17    match points, mine and the opponent's / match target (Honeymoon match)
=============  ======================================================================

The opponent's hidden draws never appear; ``tests/test_hidden_information.py`` checks that
changing them leaves the vector unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.cards import SUIT_SYMBOLS, SUITS, cards_in
from .state import Phase, State

if TYPE_CHECKING:
    from .rules import GermanWhist

N_FLAGS = 8
N_SCALARS = 10


def size(n: int) -> int:
    """Observation length for a pack of ``n`` cards."""
    return 6 * n + N_FLAGS + N_SCALARS


def encode(game: GermanWhist, state: State, player: int) -> np.ndarray:
    """Player ``player``'s observation vector (float32, every entry in [0, 1])."""
    n = game.deck.size
    opp = 1 - player
    hand = state.hands[player]
    if state.phase == Phase.PLAY and state.stage == 2:
        opp_known = game.deck.all_mask & ~hand & ~state.played
        mine_known = hand
    else:
        opp_known = state.seen[opp]
        mine_known = state.seen[player]
    face_up = state.face_up
    led = state.lead if state.lead >= 0 and state.to_play == player else -1
    bits = (
        hand
        | opp_known << n
        | mine_known << 2 * n
        | ((1 << face_up) << 3 * n if face_up >= 0 else 0)
        | state.played << 4 * n
        | ((1 << led) << 5 * n if led >= 0 else 0)
        | ((1 << state.trump) << 6 * n if state.trump >= 0 else 0)
        | state.voids[opp] << (6 * n + 4)
    )
    head = 6 * n + N_FLAGS
    out = np.empty(head + N_SCALARS, dtype=np.float32)
    raw = np.frombuffer(bits.to_bytes((head + 7) // 8, "little"), dtype=np.uint8)
    out[:head] = np.unpackbits(raw, bitorder="little")[:head]
    stage1_total = game.stock_size // 2
    target = game.match_target
    out[head:] = (
        state.stage == 2 and state.phase == Phase.PLAY,
        state.phase == Phase.PLAY and state.to_play == player and state.lead < 0,
        state.dealer == player,
        (len(state.stock) - state.stock_pos) / game.stock_size if state.stock else 0.0,
        state.tricks1[player] / stage1_total,
        state.tricks1[opp] / stage1_total,
        state.tricks2[player] / 13,
        state.tricks2[opp] / 13,
        min(state.match[player] / target, 1.0),
        min(state.match[opp] / target, 1.0),
    )
    return out


def render(game: GermanWhist, state: State, viewer: int | None = None) -> str:
    """The table as text: all hands when ``viewer`` is None, else what that seat may see."""
    deck = game.deck

    def cards(mask: int) -> str:
        return " ".join(deck.pretty(c) for c in cards_in(mask)) or "-"

    if state.phase < Phase.PLAY:
        return f"{game.variant} whist: dealing (deal {state.deal_no + 1})"
    lines = []
    trump = SUIT_SYMBOLS[state.trump]
    title = "Honeymoon Whist" if game.honeymoon else "German Whist"
    lines.append(
        f"{title} — trumps {trump} ({SUITS[state.trump]}), dealer player_{state.dealer}"
        + (f", deal {state.deal_no + 1}" if game.honeymoon else "")
    )
    if state.phase == Phase.PLAY and state.stage == 1:
        left = len(state.stock) - state.stock_pos
        lines.append(
            f"Stage 1 (play for the face-up card): prize {deck.pretty(state.face_up)}, "
            f"{left} cards in the stock"
        )
    elif state.phase == Phase.PLAY:
        lines.append("Stage 2 (play out your hand): hands are open")
    for p in (0, 1):
        tag = " (you)" if p == viewer else ""
        if viewer is None or p == viewer or (state.phase == Phase.PLAY and state.stage == 2):
            lines.append(f"player_{p}{tag} hand: {cards(state.hands[p])}")
        else:
            hidden = state.hands[p].bit_count() - state.seen[p].bit_count()
            lines.append(f"player_{p} hand: {hidden} hidden cards + Seen {cards(state.seen[p])}")
        if viewer is None or p == viewer:
            if state.seen[p] and state.stage == 1:
                lines.append(f"player_{p} Seen row: {cards(state.seen[p])}")
    if state.lead >= 0:
        lines.append(f"Trick: player_{state.leader} led {deck.pretty(state.lead)}")
    if state.last_trick is not None:
        a, b, w = state.last_trick
        lines.append(
            f"Last trick: {deck.pretty(a)} {deck.pretty(b)} won by player_{w}"
        )
    lines.append(
        f"Tricks stage 1: {state.tricks1[0]}-{state.tricks1[1]}   "
        f"stage 2: {state.tricks2[0]}-{state.tricks2[1]}"
        + (f"   match points: {state.match[0]}-{state.match[1]}" if game.honeymoon else "")
    )
    if state.phase == Phase.OVER:
        lines.append(f"Game over: player_{state.winner} wins")
    else:
        lines.append(f"To play: player_{state.to_play}")
    return "\n".join(lines)
