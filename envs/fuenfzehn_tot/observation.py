"""What a Fünfzehn – tot player observes, as a vector and as text.

The game is perfect-information apart from the dice still to come, so every seat sees
the same facts; the vector is arranged from the observer's point of view (seat blocks
start with his own and go clockwise). Every entry is in [0, 1]. With ``n`` players and
``M`` matches:

===========  ======================================================================
index        meaning
===========  ======================================================================
0..4         phase one-hot: roll-off, first half, second-half roll-off, second
             half, over
5            matches left in the pool / M
6            the current turn's total / 15
7            the current turn's rolls / 16 (16 rolls at most: sixteen ones)
8            I am to act
9            a die is in the air (a chance node; never seen at a decision)
10           obligation: the turn has not rolled yet, it must roll
11           obligation, rule 1: the total is 9, it must stand
12           obligation, rule 1: the total is 10, it must roll
13           obligation, rule 2: the third roll is made (total not 9), must roll
14           standing is allowed now
15           a valid total already stands in this round
16           the lowest valid total standing in this round / 15 (0 if none)
17           the highest valid total standing in this round / 15 (0 if none)
18           players still to act after the current one in this round / (n - 1)
19           I take part in this round (second half: I still hold matches)
20 + 9j + …  seat block j, for the seat j places to my left (j = 0 is me):
  +0         its matches / M
  +1         it takes part in this round
  +2         it has finished its turn in this round
  +3         its standing total / 15 (0 while it has none)
  +4         it went over 15 in this round (second half; a first-half bust ends
             the round at once)
  +5         its place in this round's order / (n - 1) (0 for the starter and
             for non-players)
  +6         it started this round
  +7         it is to act
  +8         it lost the game
===========  ======================================================================

Ties are settled by the order (an earlier total beats an equal later one), which
entries +5 give. ``tests/test_fuenfzehn_tot.py`` checks that the vector does not depend
on future dice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .state import Phase, State

if TYPE_CHECKING:
    from .rules import FuenfzehnTot

HEADER = 20
BLOCK = 9
MAX_ROLLS = 16
_PHASE_NAMES = {
    Phase.ROLL_OFF: "roll-off for the start (Herauskommen)",
    Phase.HALF1: "first half",
    Phase.HALF2_ROLL_OFF: "roll-off for the second half",
    Phase.HALF2: "second half",
    Phase.OVER: "game over",
}


def size(num_players: int) -> int:
    """Observation length for ``num_players`` players."""
    return HEADER + BLOCK * num_players


def encode(game: FuenfzehnTot, state: State, player: int) -> np.ndarray:
    """Player ``player``'s observation vector (float32, every entry in [0, 1])."""
    n = game.num_players
    m_total = game.total_matches
    out = [0.0] * (HEADER + BLOCK * n)
    phase = state.phase
    out[phase] = 1.0
    out[5] = state.pool / m_total
    in_round = phase == Phase.HALF1 or phase == Phase.HALF2
    order = state.order
    totals = state.totals
    scale = 1.0 / max(1, n - 1)
    if in_round:
        t, k = state.total, state.rolls
        acting = order[state.pos]
        out[6] = t / 15.0
        out[7] = min(k, MAX_ROLLS) / MAX_ROLLS
        out[8] = float(acting == player and not state.pending)
        out[9] = float(state.pending)
        if not state.pending:
            if k == 0:
                out[10] = 1.0
            elif t == 9:
                out[11] = 1.0
            elif t == 10:
                out[12] = 1.0
            elif k == 3:
                out[13] = 1.0
            else:
                out[14] = 1.0
        low, high = 16, 0
        for seat in order[: state.pos]:
            v = totals[seat]
            if v > 0:
                if v < low:
                    low = v
                if v > high:
                    high = v
        if high:
            out[15] = 1.0
            out[16] = low / 15.0
            out[17] = high / 15.0
        out[18] = (len(order) - state.pos - 1) * scale
        out[19] = float(player in order)
        for place, seat in enumerate(order):
            base = HEADER + BLOCK * ((seat - player) % n)
            out[base + 1] = 1.0
            if place < state.pos:
                out[base + 2] = 1.0
                if totals[seat] > 0:
                    out[base + 3] = totals[seat] / 15.0
                else:
                    out[base + 4] = 1.0
            out[base + 5] = place * scale
            if place == 0:
                out[base + 6] = 1.0
            if place == state.pos:
                out[base + 7] = 1.0
    matches = state.matches
    for seat in range(n):
        base = HEADER + BLOCK * ((seat - player) % n)
        out[base] = matches[seat] / m_total
    if state.loser >= 0:
        out[HEADER + BLOCK * ((state.loser - player) % n) + 8] = 1.0
    return np.array(out, dtype=np.float32)


def render(game: FuenfzehnTot, state: State, viewer: int | None = None) -> str:
    """The table as text (everything is public, so ``viewer`` only marks "(you)")."""

    def who(seat: int) -> str:
        return f"player_{seat}" + (" (you)" if seat == viewer else "")

    n = game.num_players
    lines = [
        f"Fünfzehn – tot, {n} players — {_PHASE_NAMES[state.phase]}"
        + (f", round {state.round_no}" if state.round_no else "")
        + f", pool {state.pool}"
    ]
    lines.append(
        "Matches: " + ", ".join(f"{who(s)} {state.matches[s]}" for s in range(n))
    )
    for purpose, passes in state.rolloffs:
        text = " / ".join(
            " ".join(f"p{seat}:{face}" for seat, face in rolls) for rolls in passes
        )
        title = "Herauskommen" if purpose == "start" else "Second-half roll-off"
        lines.append(f"{title}: {text}")
    if state.phase in (Phase.ROLL_OFF, Phase.HALF2_ROLL_OFF):
        done = " ".join(
            f"p{s}:{f}" for s, f in zip(state.ro_seats, state.ro_faces, strict=False)
        )
        way = "clockwise" if state.ro_clockwise else "counter-clockwise"
        lines.append(
            f"Rolling off ({way}) among {', '.join(f'p{s}' for s in state.ro_seats)}: "
            f"{done or 'no dice yet'}"
        )
    if state.last_round is not None:
        half, seat, why = state.last_round
        if seat < 0:
            lines.append("Last round: everybody went over 15; played again")
        elif half == 1:
            how = "went over 15" if why == "bust" else "had the lowest total"
            lines.append(f"Last round: {who(seat)} {how} and took a match")
        else:
            how = "reached 15" if why == "fifteen" else "had the highest total"
            lines.append(f"Last round: {who(seat)} {how} and discarded a match")
    if state.phase in (Phase.HALF1, Phase.HALF2):
        parts = []
        for place, seat in enumerate(state.order):
            if place < state.pos:
                parts.append(
                    f"{who(seat)} "
                    + (
                        "tot"
                        if state.busted[seat]
                        else f"stands on {state.totals[seat]}"
                    )
                )
            elif place == state.pos:
                dice = "+".join(map(str, state.dice))
                now = f"{dice} = {state.total}" if state.dice else "to roll"
                air = ", die in the air" if state.pending else ""
                parts.append(f"{who(seat)} rolling: {now}{air}")
            else:
                parts.append(f"{who(seat)} waits")
        lines.append(f"Round (starter {who(state.starter)}): " + " | ".join(parts))
        if state.phase == Phase.HALF2:
            out = [s for s in range(n) if state.matches[s] == 0]
            if out:
                lines.append("Sitting out: " + ", ".join(who(s) for s in out))
    if state.phase == Phase.OVER:
        lines.append(f"Game over: {who(state.loser)} kept the last match and loses")
    return "\n".join(lines)
