"""What a Fünfzehnern player observes, as a vector and as text.

The vector holds exactly what the player knows: his own hand and public facts. Cards use
the 32 ids of the German pack in both sizes (with 3 players the removed suit's bits stay
0). Seats are relative: block ``k`` is the seat ``k`` places to my left (``k = 0`` is
me). With ``P`` players the layout is:

=====================  ================================================================
slice                  meaning (1.0 = yes)
=====================  ================================================================
[0, 32)                my hand
[32 + 32k, 64 + 32k)   cards seat k has played this deal (current trick included), k < P
T = 32 + 32P
[T, T+32)              cards on the table in the current trick
[T+32, T+64)           the card led to the current trick
[T+64, T+96)           my cards that nobody else can beat: every higher card of
                       the suit is played or mine (the lead rules' "unbeatable")
U = T + 96
[U, U+P)               leader of the current trick (relative seat)
[U+P, U+2P)            the dealer (relative seat)
[U+2P, U+6P)           seat k has failed to follow suit s this deal: index U+2P + 4k + s
V = U + 6P
[V, V+16)              the capture chain: its distinct suits, most recent first; slot j
                       (j < 4) is one-hot over S H D C at V + 4j + s
V+16 + s               my lead obligation: I am to lead and must lead suit s
V+20                   I am to lead
V+21                   my lead is free (no capture yet, or out of every suit the
                       rules name)
V+22                   the unbeatable-card duty narrows my lead (strict rules)
V+23                   the current trick was led with Zwang
V+24 + s               Zwang has been announced in suit s this deal
V+28 + s               suit s is out of the pack (3 players)
V+32 .. V+35           options: relaxed lead rules, unbeatable duty on the first suit,
                       tying scoring, match episode
F = V + 36
F + k                  card points seat k has taken this deal / points in the pack
F + P + k              tricks seat k has won this deal / 8
F + 2P + k             seat k's game points over the finished deals, mapped from
                       [-15 h, (points in pack - 15) h] to [0, 1] with h = num_hands
F + 3P                 deals finished / num_hands
F + 3P + 1             tricks finished in this deal / 8
=====================  ================================================================

Nobody's hidden cards appear; ``tests/test_fuenfzehnern.py`` checks that changing them
leaves the vector unchanged.
"""

from __future__ import annotations

import struct
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from ..core.cards import GERMAN_SUITS, SUITS, cards_in, hand_view
from .state import Phase, State

if TYPE_CHECKING:
    from .rules import Fuenfzehnern

N_CARDS = 32


def bits_size(players: int) -> int:
    """Number of 0/1 entries for ``players`` seats."""
    return N_CARDS * (4 + players) + 6 * players + 36


def size(players: int) -> int:
    """Observation length for ``players`` seats."""
    return bits_size(players) + 3 * players + 2


def layout(players: int) -> dict[str, slice]:
    """Named slices of the vector (the table above), for tests and feature
    inspection."""
    P = players
    T = N_CARDS * (1 + P)
    U = T + 3 * N_CARDS
    V = U + 6 * P
    F = V + 36
    return {
        "hand": slice(0, N_CARDS),
        **{
            f"played_{k}": slice(N_CARDS * (1 + k), N_CARDS * (2 + k)) for k in range(P)
        },
        "trick": slice(T, T + N_CARDS),
        "led": slice(T + N_CARDS, T + 2 * N_CARDS),
        "unbeatable": slice(T + 2 * N_CARDS, U),
        "leader": slice(U, U + P),
        "dealer": slice(U + P, U + 2 * P),
        "voids": slice(U + 2 * P, V),
        "chain": slice(V, V + 16),
        "must_lead": slice(V + 16, V + 20),
        "to_lead": slice(V + 20, V + 21),
        "free_lead": slice(V + 21, V + 22),
        "duty": slice(V + 22, V + 23),
        "zwang_now": slice(V + 23, V + 24),
        "zwang_suits": slice(V + 24, V + 28),
        "removed_suit": slice(V + 28, V + 32),
        "options": slice(V + 32, V + 36),
        "points": slice(F, F + P),
        "tricks": slice(F + P, F + 2 * P),
        "scores": slice(F + 2 * P, F + 3 * P),
        "deals_done": slice(F + 3 * P, F + 3 * P + 1),
        "tricks_done": slice(F + 3 * P + 1, F + 3 * P + 2),
    }


@cache
def _tables(players: int) -> tuple:
    """Per-size constants of `encode`: the seat order seen from each seat, the
    head length and byte count, and the struct writing the scalars."""
    seats = range(players)
    orders = tuple(tuple((p + k) % players for k in seats) for p in seats)
    head = bits_size(players)
    scalars = struct.Struct(f"={3 * players + 2}f")  # native order, like the array
    return orders, head, (head + 7) // 8, scalars


def encode(game: Fuenfzehnern, state: State, player: int) -> np.ndarray:
    """Player ``player``'s observation vector (float32, every entry in [0, 1])."""
    # Written for speed (it runs on every env.last()): the 0/1 part is one Python int
    # unpacked by numpy in one call, the scalars are packed straight into the buffer.
    P = game.num_players
    h = game.num_hands
    orders, head, nbytes, scalars = _tables(P)
    order = orders[player]  # relative seats: me, my left, …
    hand = state.hands[player]
    bits = hand
    off = N_CARDS
    played_by = state.played_by
    for p in order:
        bits |= played_by[p] << off
        off += N_CARDS
    trick = state.trick
    if trick:
        table = 0
        for c in trick:
            table |= 1 << c
        bits |= table << off | 1 << (off + N_CARDS + trick[0])
    others = game.in_play & ~state.played & ~hand
    bits |= game.unbeatable(hand, others) << (off + 2 * N_CARDS)
    off += 3 * N_CARDS
    playing = state.phase == Phase.PLAY
    if playing:
        bits |= 1 << (off + (state.leader - player) % P)
    if state.dealer >= 0:
        bits |= 1 << (off + P + (state.dealer - player) % P)
    off += 2 * P
    voids = state.voids
    for p in order:
        bits |= voids[p] << off
        off += 4
    slot = tried = 0
    chain = state.chain
    for i in range(len(chain) - 1, -1, -1):
        s = chain[i]
        if not tried >> s & 1:
            tried |= 1 << s
            bits |= 1 << (off + 4 * slot + s)
            slot += 1
    off += 16
    if playing and state.to_play == player and not trick:
        need = game.required_suit(state, hand)
        if need >= 0:
            bits |= 1 << (off + need)
            if game.strict and game.lead_mask(state, hand) != hand & 0xFF << (8 * need):
                bits |= 1 << (off + 6)  # the unbeatable duty narrows the required suit
        else:
            bits |= 1 << (off + 5)
        bits |= 1 << (off + 4)
    if state.zwang >= 0:
        bits |= 1 << (off + 7)
    bits |= state.zwang_suits << (off + 8) | game.option_bits << (off + 12)
    out = np.empty(head + 3 * P + 2, dtype=np.float32)
    raw = np.frombuffer(bits.to_bytes(nbytes, "little"), dtype=np.uint8)
    out[:head] = np.unpackbits(raw, count=head, bitorder="little")
    # Scores stay in [-15 h, (points in pack - 15) h], so the mapping needs no clipping.
    per_point = 1 / game.total_points
    lo, per_score = 15 * h, per_point / h
    points, tricks, scores = state.points, state.tricks, state.scores
    scalars.pack_into(
        out,
        4 * head,
        *[points[p] * per_point for p in order],
        *[tricks[p] * 0.125 for p in order],
        *[(scores[p] + lo) * per_score for p in order],
        state.deal_no / h,
        sum(tricks) * 0.125,
    )
    return out


def render(game: Fuenfzehnern, state: State, viewer: int | None = None) -> str:
    """The table as text with German card names: all hands when ``viewer`` is None, else
    what that seat may see."""
    deck = game.deck

    def cards(mask: int) -> str:
        return ", ".join(deck.german(c) for c in cards_in(mask)) or "-"

    def suit(s: int) -> str:
        return f"{GERMAN_SUITS[SUITS[s]]} ({SUITS[s]})"

    n = game.num_players
    title = f"Fünfzehnern, {n} players, {game.lead_rules} lead rules" + (
        f", {GERMAN_SUITS[SUITS[game.removed_suit]]} removed"
        if game.removed_suit >= 0
        else ""
    )
    deal = f"deal {min(state.deal_no + 1, game.num_hands)}/{game.num_hands}"
    if state.phase < Phase.PLAY:
        return f"{title}: dealing ({deal})"
    lines = [f"{title} — {deal}, dealer player_{state.dealer}"]
    chain = " <- ".join(suit(s) for s in reversed(state.chain))
    lines.append(f"Capture chain (latest first): {chain or 'none, the lead is free'}")
    for p in range(n):
        tag = " (you)" if p == viewer else ""
        held = hand_view(state.hands[p], p, viewer, cards, "hidden cards")
        lines.append(
            f"player_{p}{tag}: {held} | tricks {state.tricks[p]}, card points "
            f"{state.points[p]}, game points {state.scores[p]}"
        )
    if state.trick:
        plays = ", ".join(
            f"player_{(state.leader + i) % n} {deck.german(c)}"
            for i, c in enumerate(state.trick)
        )
        zw = " (Zwang!)" if state.zwang >= 0 else ""
        lines.append(f"Trick: {plays}{zw}")
    if state.last_trick is not None:
        leader, trick, winner = state.last_trick
        plays = ", ".join(deck.german(c) for c in trick)
        lines.append(
            f"Last trick (led by player_{leader}): {plays} — won by player_{winner}"
        )
    if state.phase == Phase.OVER:
        scores = ", ".join(f"player_{p} {state.scores[p]:+d}" for p in range(n))
        lines.append(f"Game over: {scores}")
    else:
        if not state.trick:
            need = game.required_suit(state, state.hands[state.to_play])
            if viewer is None or viewer == state.to_play:
                lines.append(
                    f"player_{state.to_play} leads: "
                    + (f"must lead {suit(need)}" if need >= 0 else "free lead")
                )
        lines.append(f"To play: player_{state.to_play}")
    return "\n".join(lines)
