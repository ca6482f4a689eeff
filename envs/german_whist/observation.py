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
[6n, 7n)       my masters: cards of my hand that no unplayed card outside my hand beats
               (the top of their suit's unplayed cards, in an unbroken run)
[7n, 8n)       cards of my hand that would win the current trick, when I am to follow
8n + s         trump suit is s (s = 0..3 for S H D C)
8n + 4 + s     the opponent has shown void in suit s since his last hidden draw, so he
               holds no card of s outside his Seen row
8n + 8         stage 2
8n + 9         I am to lead
8n + 10        I am the dealer
8n + 11        cards left in the stock / stock size
8n + 12, 13    stage-1 tricks, mine and the opponent's / stage-1 trick count
8n + 14, 15    stage-2 tricks, mine and the opponent's / 13
8n + 16, 17    match points, mine and the opponent's / match target (Honeymoon match)
=============  ======================================================================

The two derived blocks ([6n, 8n)) are functions of the rest (my hand, the played cards,
the trump and the lead); they are there because a small network learns them slowly.
The opponent's hidden draws never appear; ``tests/test_generic.py::
test_hidden_information`` checks that changing them leaves the vector unchanged.

`encode` runs on every ``env.last()``, so it is written for speed
(``benchmarks/env_speed.py``); `render` is not.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

import numpy as np

from ..core.cards import SUIT_SYMBOLS, SUITS
from .state import Phase, State

if TYPE_CHECKING:
    from .rules import GermanWhist

N_FLAGS = 8
N_SCALARS = 10

# An IntEnum member read through its class costs an attribute lookup on every call.
_PLAY = Phase.PLAY
# The scalars are written straight into the float32 buffer: struct rounds each double to
# float32 as numpy's assignment does, without first turning a tuple into an array.
_SCALARS = struct.Struct(f"={N_SCALARS}f")  # native byte order, like the array


def size(n: int) -> int:
    """Observation length for a pack of ``n`` cards."""
    return 8 * n + N_FLAGS + N_SCALARS


def masters(game: GermanWhist, state: State, hand: int) -> int:
    """Cards of ``hand`` that no unplayed card outside it beats: in each suit the run of
    unplayed cards from the top that are all in ``hand``. Card ids run from the ace down
    inside a suit, so "higher" is "lower id"; the jokers head the trump suit."""
    deck, played = game.deck, state.played
    out = 0
    for s in range(4):
        broken = False
        if s == state.trump and game.jokers:
            for joker in game.joker_order:  # JKH, then JKL
                bit = 1 << joker
                if bit & played:
                    continue
                if not bit & hand:
                    broken = True
                    break
                out |= bit
        if broken:
            continue
        unplayed = deck.suit_mask[s] & ~played
        others = unplayed & ~hand
        out |= hand & unplayed & ((others & -others) - 1 if others else -1)
    return out


def winners(game: GermanWhist, state: State, hand: int) -> int:
    """Cards of ``hand`` that would win the trick against the card led."""
    lead, trumps = state.lead, state.trump_mask
    if not (1 << lead) & trumps:
        suit = game.deck.suit_mask[game.deck.suit[lead]]
        return hand & (trumps | (suit & ((1 << lead) - 1)))
    if game.jokers and (1 << lead) & game.jokers:
        higher = (1 << game.joker_order[0]) if lead == game.joker_order[1] else 0
    else:
        higher = game.jokers | (game.deck.suit_mask[state.trump] & ((1 << lead) - 1))
    return hand & higher


def encode(game: GermanWhist, state: State, player: int) -> np.ndarray:
    """Player ``player``'s observation vector (float32, every entry in [0, 1])."""
    # The one-hot blocks and flags are one Python int, unpacked to floats by numpy in
    # one call. State.stage and State.face_up are inlined: a property call costs more
    # than the expression.
    n = game.deck.size
    opp = 1 - player
    hand = state.hands[player]
    stock, stock_pos = state.stock, state.stock_pos
    stage1 = stock_pos < len(stock)  # State.stage == 1
    playing = state.phase == _PLAY
    played = state.played
    if playing and not stage1:
        opp_known = game.deck.all_mask & ~hand & ~played
        mine_known = hand
    else:
        opp_known = state.seen[opp]
        mine_known = state.seen[player]
    bits = hand | opp_known << n | mine_known << 2 * n | played << 4 * n
    if stage1:  # the face-up stock card
        bits |= 1 << (stock[stock_pos] + 3 * n)
    lead, to_play, trump = state.lead, state.to_play, state.trump
    if playing:
        bits |= masters(game, state, hand) << 6 * n
        if lead >= 0 and to_play == player:
            bits |= 1 << (lead + 5 * n) | winners(game, state, hand) << 7 * n
    bits |= state.voids[opp] << (8 * n + 4)
    if trump >= 0:
        bits |= 1 << (trump + 8 * n)
    head = 8 * n + N_FLAGS
    out = np.empty(head + N_SCALARS, dtype=np.float32)
    raw = np.frombuffer(bits.to_bytes((head + 7) // 8, "little"), dtype=np.uint8)
    out[:head] = np.unpackbits(raw, count=head, bitorder="little")
    stock_size = game.stock_size
    stage1_total = stock_size // 2
    tricks1, tricks2 = state.tricks1, state.tricks2
    match_mine = state.match[player] / game.match_target
    match_opp = state.match[opp] / game.match_target
    _SCALARS.pack_into(
        out,
        4 * head,
        playing and not stage1,  # stage 2
        playing and to_play == player and lead < 0,  # I am to lead
        state.dealer == player,
        (len(stock) - stock_pos) / stock_size if stock else 0.0,
        tricks1[player] / stage1_total,
        tricks1[opp] / stage1_total,
        tricks2[player] / 13,
        tricks2[opp] / 13,
        match_mine if match_mine <= 1.0 else 1.0,  # min(x, 1.0), without the call
        match_opp if match_opp <= 1.0 else 1.0,
    )
    return out


def suit_permutation(
    game: GermanWhist, perm: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays that rename the suits of an observation and of an action vector:
    with ``obs_index, card_index = suit_permutation(game, perm)``, ``v[obs_index]`` is
    the vector of the same position with suit ``s`` renamed ``perm[s]`` (trumps
    included; the jokers stay), and ``mask[card_index]`` the mask there (the actions
    are the cards). The rules treat the four suits alike, so the renamed position has
    the renamed value and the renamed best cards (DAgger's data augmentation,
    `parlour.training.dagger`)."""
    n = game.deck.size
    suit = np.asarray(game.deck.suit)
    moved_to = np.arange(n)
    for s in range(4):
        moved_to[np.flatnonzero(suit == s)] = np.flatnonzero(suit == perm[s])
    card_index = np.empty(n, dtype=np.int64)
    card_index[moved_to] = np.arange(n)  # new card j was card card_index[j]
    obs_index = np.arange(size(n), dtype=np.int64)
    for block in range(8):
        obs_index[block * n : (block + 1) * n] = block * n + card_index
    for flags in (8 * n, 8 * n + 4):  # trump suit, shown voids
        for s in range(4):
            obs_index[flags + perm[s]] = flags + s
    return obs_index, card_index


def canonical_form(
    game: GermanWhist, observations: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Stage-2 observations in their canonical form, and the renaming of the cards that
    gives it: ``(canonical, card_index)``, where card ``j`` of a canonical position was
    card ``card_index[..., j]`` of the real one (int64, ``observations.shape[:-1] +
    (n,)``; the actions are the cards, so ``mask[..., card_index]`` is the canonical
    position's mask). Stage 2 is open and only the order of the cards still in play
    counts (who must follow, who wins a trick), so three renamings leave the position
    the same game, with the same value and the renamed best cards:

    * *ranks compressed*: in each suit the cards still in play (unplayed, or led to the
      current trick) take the top ranks and the cards out of play the bottom ones, each
      group in its own order (the jokers stay);
    * *suits in order*: trumps become the first suit, the plain suits follow in the
      order of what they hold (who holds each of their cards, from the top), as the
      rules treat the suits alike;
    * *what stage 2 cannot use is cleared*: the voids shown (the hands are open) and, in
      German Whist, where the winner is whoever takes 7 of the 13 stage-2 tricks, the
      stage-1 tricks and the dealer.

    Positions that differ only in which low cards are gone, which suit is which, or how
    stage 1 went then look alike: a network generalises across them, where on the real
    positions it must learn each one (``tests/test_german_whist.py`` checks the value
    and the best cards with the exact solver). Rows of stage 1, whose unplayed cards
    include hidden ones, are returned as they are (the identity)."""
    n = game.deck.size
    obs = np.asarray(observations, dtype=np.float32)
    flat = obs.reshape(-1, obs.shape[-1])
    index = np.broadcast_to(np.arange(n, dtype=np.int64), (len(flat), n)).copy()
    rows = np.flatnonzero(flat[:, 8 * n + 8] > 0.5)  # stage 2
    out = flat.copy()
    if not rows.size:
        return out.reshape(obs.shape), index.reshape(obs.shape[:-1] + (n,))
    x = flat[rows]
    live = (x[:, 4 * n : 5 * n] < 0.5) | (x[:, 5 * n : 6 * n] > 0.5)
    # who holds each card: 1 me, 2 the opponent, 3 led to this trick, 0 out of play
    holder = (
        (x[:, :n] > 0.5) + 2 * (x[:, n : 2 * n] > 0.5) + 3 * (x[:, 5 * n : 6 * n] > 0.5)
    ).astype(np.int64)
    suit = np.asarray(game.deck.suit)
    trump = x[:, 8 * n : 8 * n + 4].argmax(axis=1)
    compressed = np.empty((len(rows), 4, 13), dtype=np.int64)  # old card of new rank
    key = np.empty((len(rows), 4), dtype=np.int64)
    weights = 4 ** np.arange(12, -1, -1, dtype=np.int64)
    for s in range(4):
        ids = np.flatnonzero(suit == s)  # the ace first
        # stable: the live cards first, each group in rank order
        order = np.argsort(~live[:, ids], axis=1, kind="stable")
        compressed[:, s] = ids[order]
        key[:, s] = np.take_along_axis(holder[:, ids], order, axis=1) @ weights
    key[np.arange(len(rows)), trump] = np.iinfo(np.int64).max  # trumps first
    suits = np.argsort(-key, axis=1, kind="stable")  # new suit t was old suit suits[t]
    for t in range(4):
        ids = np.flatnonzero(suit == t)
        index[rows[:, None], ids] = compressed[np.arange(len(rows)), suits[:, t]]
    blocks = x[:, : 8 * n].reshape(len(rows), 8, n)
    renamed = np.take_along_axis(blocks, index[rows, None, :], axis=2)
    y = out[rows]
    y[:, : 8 * n] = renamed.reshape(len(rows), 8 * n)
    y[:, 8 * n : 8 * n + 4] = 0.0
    y[:, 8 * n] = 1.0  # trumps are the first suit
    y[:, 8 * n + 4 : 8 * n + 8] = 0.0  # shown voids: the hands are open
    if not game.honeymoon:  # the winner takes 7 of the 13 stage-2 tricks
        y[:, 8 * n + 10] = 0.0  # the dealer
        y[:, 8 * n + 12 : 8 * n + 14] = 0.0  # stage-1 tricks
    out[rows] = y
    return out.reshape(obs.shape), index.reshape(obs.shape[:-1] + (n,))


def render(game: GermanWhist, state: State, viewer: int | None = None) -> str:
    """The table as text: all hands when ``viewer`` is None, else what that seat may
    see."""
    deck = game.deck

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
        open_hands = state.phase == Phase.PLAY and state.stage == 2
        if viewer is None or p == viewer or open_hands:
            lines.append(f"player_{p}{tag} hand: {deck.pretty_mask(state.hands[p])}")
        else:
            hidden = state.hands[p].bit_count() - state.seen[p].bit_count()
            seen = deck.pretty_mask(state.seen[p])
            lines.append(f"player_{p} hand: {hidden} hidden cards + Seen {seen}")
        if viewer is None or p == viewer:
            if state.seen[p] and state.stage == 1:
                lines.append(f"player_{p} Seen row: {deck.pretty_mask(state.seen[p])}")
    if state.lead >= 0:
        lines.append(f"Trick: player_{state.leader} led {deck.pretty(state.lead)}")
    if state.last_trick is not None:
        a, b, w = state.last_trick
        lines.append(f"Last trick: {deck.pretty(a)} {deck.pretty(b)} won by player_{w}")
    lines.append(
        f"Tricks stage 1: {state.tricks1[0]}-{state.tricks1[1]}   "
        f"stage 2: {state.tricks2[0]}-{state.tricks2[1]}"
        + (
            f"   match points: {state.match[0]}-{state.match[1]}"
            if game.honeymoon
            else ""
        )
    )
    if state.phase == Phase.OVER:
        lines.append(f"Game over: player_{state.winner} wins")
    else:
        lines.append(f"To play: player_{state.to_play}")
    return "\n".join(lines)
