"""What one seat can see, as plain text: the table part of a text prompt.

One function per game, ``view(game, state, seat) -> str``, named by the game's record
(``text_view``). Each shows the seat's own
hand and only public information (the trick, trumps, the face-up prize, the Seen rows,
scores, the cards gone, the auction, the dice), with canonical card names so that they
match the legal-move names. Nothing here may depend on a card the seat cannot know:
``tests/test_text.py`` plays twin deals that differ only in hidden cards and checks
that the seat's prompts stay identical.
"""

from __future__ import annotations

from typing import Any

from ..envs.core.cards import SUITS, cards_in
from .rules import record_hook

SUIT_WORDS = ("spades", "hearts", "diamonds", "clubs")


def _cards(game: Any, mask: int) -> str:
    return " ".join(game.deck.format(c) for c in cards_in(mask)) or "none"


def _suits(bits: int) -> str:
    return ", ".join(SUIT_WORDS[s] for s in range(4) if bits >> s & 1) or "none"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _you(seat: int, p: int) -> str:
    return f"player_{p}" + (" (you)" if p == seat else "")


# What the trick-taking games' views share (their states name these fields alike).
def _trick_plays(game: Any, state: Any, seat: int) -> str:
    n = game.num_players
    return ", ".join(
        f"{_you(seat, (state.leader + i) % n)} {game.deck.format(c)}"
        for i, c in enumerate(state.trick)
    )


def _last_trick(game: Any, state: Any, seat: int) -> str:
    leader, trick, winner = state.last_trick
    return (
        f"Last trick (led by {_you(seat, leader)}): "
        + " ".join(game.deck.format(c) for c in trick)
        + f"; won by {_you(seat, winner)}."
    )


def _played_this_deal(game: Any, state: Any) -> str:
    return "Cards played this deal: " + "; ".join(
        f"player_{p} {_cards(game, state.played_by[p])}"
        for p in range(game.num_players)
        if state.played_by[p]
    )


# --- German Whist ---------------------------------------------------------------------
def german_whist(game: Any, state: Any, seat: int) -> str:
    from ..envs.german_whist.state import Phase

    opp = 1 - seat
    title = "Honeymoon Whist" if game.honeymoon else "German Whist"
    lines = [
        f"{title}. You are player_{seat}; the dealer is player_{state.dealer}"
        + (f"; deal {state.deal_no + 1}" if game.honeymoon else "")
        + "."
    ]
    if state.trump >= 0:
        lines.append(f"Trumps: {SUIT_WORDS[state.trump]} ({SUITS[state.trump]}).")
    stage2 = state.phase == Phase.PLAY and state.stage == 2
    if state.phase == Phase.PLAY and not stage2:
        left = len(state.stock) - state.stock_pos
        lines.append(
            f"Stage 1, trick {sum(state.tricks1) + 1} of {game.stock_size // 2}: the "
            f"face-up card (this trick's prize) is {game.deck.format(state.face_up)}; "
            f"{left} cards left in the stock (the face-up card included)."
        )
    elif stage2:
        lines.append(
            f"Stage 2, trick {sum(state.tricks2) + 1} of 13: the stock is empty and "
            "both hands are open."
        )
    hand = state.hands[seat]
    lines.append(
        f"Your hand ({_plural(hand.bit_count(), 'card')}): {_cards(game, hand)}"
    )
    if stage2:
        lines.append(
            f"Opponent player_{opp}'s hand (open): {_cards(game, state.hands[opp])}"
        )
    else:
        lines.append(
            f"Your Seen row (face-up prizes you won and still hold; the opponent "
            f"sees them): {_cards(game, state.seen[seat])}"
        )
        hidden = state.hands[opp].bit_count() - state.seen[opp].bit_count()
        lines.append(
            f"Opponent player_{opp}'s Seen row: {_cards(game, state.seen[opp])}; "
            f"plus {hidden} cards you have not seen."
        )
        if state.voids[opp]:
            lines.append(
                f"Since his last hidden draw the opponent has shown void in: "
                f"{_suits(state.voids[opp])} (he holds none outside his Seen row)."
            )
    if state.lead >= 0:
        lines.append(
            f"Current trick: player_{state.leader} led {game.deck.format(state.lead)}."
        )
    elif state.phase == Phase.PLAY:
        lines.append(f"Current trick: player_{state.to_play} to lead.")
    if state.last_trick is not None:
        a, b, w = state.last_trick
        lines.append(
            f"Last trick: {game.deck.format(a)} led, {game.deck.format(b)} followed; "
            f"won by {_you(seat, w)}."
        )
    lines.append(f"Cards played so far: {_cards(game, state.played)}")
    lines.append(
        f"Stage-1 tricks: you {state.tricks1[seat]}, opponent {state.tricks1[opp]}. "
        f"Stage-2 tricks: you {state.tricks2[seat]}, opponent {state.tricks2[opp]}."
    )
    if game.honeymoon:
        lines.append(
            f"Match points: you {state.match[seat]}, opponent {state.match[opp]}"
            + (f" (to {game.match_target})." if game.episode == "match" else ".")
        )
    return "\n".join(lines)


# --- Forty-Fives ----------------------------------------------------------------------
def forty_fives(game: Any, state: Any, seat: int) -> str:
    from ..envs.forty_fives.state import Phase

    n = game.num_players
    lines = [
        f"Deal {state.deal_no + 1 - (state.phase == Phase.OVER)}. You are "
        f"player_{seat}; the dealer is player_{state.dealer}."
    ]
    if game.num_teams < n:
        lines.append(
            "Sides: "
            + "; ".join(
                f"side {t}: " + ", ".join(_you(seat, s) for s in team)
                for t, team in enumerate(game.teams())
            )
            + "."
        )
    who = "side {}" if game.num_teams < n else "player_{}"  # sides, or each alone
    scores = ", ".join(
        f"{who.format(t)} {state.scores[t]}" for t in range(game.num_teams)
    )
    lines.append(f"Scores: {scores} (to {game.target}).")
    if state.trump >= 0:
        trump = f"Trumps: {SUIT_WORDS[state.trump]} ({SUITS[state.trump]})"
        if state.turned >= 0:
            trump += f"; the turned card is {game.deck.format(state.turned)}"
        if state.robbed_by >= 0:
            trump += f"; robbed by {_you(seat, state.robbed_by)}"
            if state.robbed_by == seat and state.buried >= 0:
                trump += f" (you buried {game.deck.format(state.buried)})"
        lines.append(trump + ".")
    elif state.turned >= 0:
        lines.append(f"The turned card is {game.deck.format(state.turned)}.")
    if game.auction:
        if state.bid_history:
            calls = ", ".join(
                f"player_{s} {game.action_name(a)}" for s, a in state.bid_history
            )
            lines.append(f"Auction so far: {calls}.")
        elif state.phase >= Phase.BID:
            lines.append("Auction: no calls yet.")
        if state.bidder >= 0:
            lines.append(f"Contract: {_you(seat, state.bidder)} bid {state.contract}.")
    hand = state.hands[seat]
    lines.append(
        f"Your hand ({_plural(hand.bit_count(), 'card')}): {_cards(game, hand)}"
    )
    if game.auction and state.put_away[seat]:
        lines.append(
            f"Your discards (face down, only you know them): "
            f"{_cards(game, state.put_away[seat])}"
        )
    for p in range(n):
        if p == seat:
            continue
        extra = ""
        if game.auction and state.phase >= Phase.DISCARD:
            extra = f", discarded {state.discards[p]}, drew {state.drawn[p]}"
        lines.append(
            f"player_{p}: {_plural(state.hands[p].bit_count(), 'card')}, tricks "
            f"{state.tricks_won[p]}{extra}"
        )
    lines.append(f"Your tricks: {state.tricks_won[seat]}")
    if state.trick:
        shown = ", ".join(
            f"{_you(seat, (state.leader + i) % n)} {game.deck.format(c)}"
            for i, c in enumerate(state.trick)
        )
        lines.append(f"Trick {state.trick_no + 1}: {shown}.")
    elif state.phase == Phase.PLAY:
        lines.append(
            f"Trick {state.trick_no + 1}: {_you(seat, state.to_play)} to lead."
        )
    if state.played:
        lines.append(_played_this_deal(game, state))
    return "\n".join(lines)


# --- Fünfzehnern ----------------------------------------------------------------------
def fuenfzehnern(game: Any, state: Any, seat: int) -> str:
    from ..envs.fuenfzehnern.state import Phase

    n = game.num_players
    deal = min(state.deal_no + 1, game.num_hands)
    lines = [
        f"Deal {deal} of {game.num_hands}. You are player_{seat}; the dealer is "
        f"player_{state.dealer}."
    ]
    chain = ", ".join(SUITS[s] for s in reversed(state.chain))
    lines.append(
        "Capture chain (latest first): " + (chain or "empty (the lead is free)") + "."
    )
    if state.zwang_suits:
        lines.append(f"Zwang announced this deal in: {_suits(state.zwang_suits)}.")
    hand = state.hands[seat]
    lines.append(
        f"Your hand ({_plural(hand.bit_count(), 'card')}): {_cards(game, hand)}"
    )
    for p in range(n):
        held = "" if p == seat else f"{_plural(state.hands[p].bit_count(), 'card')}, "
        lines.append(
            f"{_you(seat, p)}: {held}tricks {state.tricks[p]}, card points "
            f"{state.points[p]}, game points so far {state.scores[p]}"
        )
    if state.trick:
        plays = _trick_plays(game, state, seat)
        zw = " (led with Zwang)" if state.zwang >= 0 else ""
        lines.append(f"Current trick: {plays}{zw}.")
    elif state.phase == Phase.PLAY:
        lines.append(f"Current trick: {_you(seat, state.to_play)} to lead.")
    if state.last_trick is not None:
        lines.append(_last_trick(game, state, seat))
    if state.played:
        lines.append(_played_this_deal(game, state))
    return "\n".join(lines)


# --- Herzeln --------------------------------------------------------------------------
def herzeln(game: Any, state: Any, seat: int) -> str:
    from ..envs.herzeln.observation import CONTRACT_TITLES
    from ..envs.herzeln.state import Phase

    n = game.num_players
    k = state.contract
    lines = [
        f"Deal {min(state.deal_no + 1, len(game.contracts))} of "
        f"{len(game.contracts)}: {CONTRACT_TITLES[k]}. You are player_{seat}; the "
        f"dealer is player_{state.dealer}."
    ]
    hand = state.hands[seat]
    lines.append(
        f"Your hand ({_plural(hand.bit_count(), 'card')}): {_cards(game, hand)}"
    )
    for p in range(n):
        held = "" if p == seat else f"{_plural(state.hands[p].bit_count(), 'card')}, "
        extra = (
            f"tricks {state.tricks[p]}"
            if k != 7
            else (
                f"went out {state.out_order.index(p) + 1}."
                if p in state.out_order
                else "still in"
            )
        )
        lines.append(
            f"{_you(seat, p)}: {held}{extra}, points this deal {state.points[p]:+d}, "
            f"partie total {state.scores[p]:+d}"
        )
    if state.phase == Phase.TRICKS:
        if state.trick:
            plays = _trick_plays(game, state, seat)
            lines.append(f"Current trick: {plays}.")
        else:
            lines.append(f"Current trick: {_you(seat, state.to_play)} to lead.")
        if state.last_trick is not None:
            lines.append(_last_trick(game, state, seat))
    if k == 7:
        lines.extend(_domino_layout(game, state))
        lines.append(f"Cards on the layout: {_cards(game, state.laid)}")
        if state.passes:
            lines.append(f"Passes in a row: {state.passes}.")
    elif any(state.played_by):
        lines.append(_played_this_deal(game, state))
    return "\n".join(lines)


def _domino_layout(game: Any, state: Any) -> list[str]:
    """The Domino line(s): the rank at each end, in the order the line is built."""
    from ..envs.herzeln.rules import GAME_ORDER_LOW_FIRST, NATURAL_ORDER_LOW_FIRST

    order = NATURAL_ORDER_LOW_FIRST if game.per_suit else GAME_ORDER_LOW_FIRST
    if game.num_players == 3:
        order = tuple(r for r in order if r not in ("7", "8"))
    out = []
    for ln in range(game.num_lines):
        name = f"row {SUITS[ln]} ({SUIT_WORDS[ln]})" if game.per_suit else "the line"
        if state.line_top[ln] < 0:
            out.append(f"Layout, {name}: not opened yet")
            continue
        laid = state.laid & game.line_cards[ln]
        out.append(
            f"Layout, {name}: {_plural(laid.bit_count(), 'card')}; bottom end "
            f"{order[state.line_bottom[ln]]} (next below it goes on the bottom), top "
            f"end {order[state.line_top[ln]]} (next above it goes on the top)"
        )
    return out


# --- Fünfzehn – tot -------------------------------------------------------------------
def fuenfzehn_tot(game: Any, state: Any, seat: int) -> str:
    # Nothing is hidden in a dice game: the engine's own table text, marked for the
    # viewer, is the seat's view.
    lines = [game.render(state, viewer=seat)]
    if state.player == seat:
        dice = "+".join(map(str, state.dice)) if state.dice else "no dice yet"
        lines.append(
            f"Your turn: {dice}, total {state.total} after {state.rolls} roll"
            f"{'' if state.rolls == 1 else 's'}; you hold {state.matches[seat]} "
            f"match{'' if state.matches[seat] == 1 else 'es'}."
        )
    return "\n".join(lines)


def view(game: Any, state: Any, seat: int) -> str:
    """What ``seat`` can see of ``state``, as text (the ``text_view`` hook of the
    game's record)."""
    return record_hook(game, "text_view", "text view")(game, state, seat)
