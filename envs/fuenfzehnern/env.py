"""Fünfzehnern as a PettingZoo AEC environment (``fuenfzehnern_v0``).

Rules: *How to Play Fünfzehnern* with the rules notes §3; every choice
is in ``docs/games/fuenfzehnern.md``.

Agents
    ``player_0 … player_3`` (``player_0 … player_2`` with ``players=3``), each playing
    for himself. Play passes clockwise (seat i to i + 1). The first dealer is a reset
    option (``options={"dealer": d}``) or drawn from the env's seeded generator; eldest
    (the dealer's left, ``dealer + 1``) leads the first trick, and in a match the deal
    passes clockwise.

Actions
    ``Discrete(36)`` in both sizes, with stable ids:

    * ``0 … 31``: play the card with that id of the 32-card German pack, suits S H D C
      (Laub, Herz, Schellen, Eichel), ranks A K Q J 10 9 8 7 in each suit: ``0`` =
      ``"AS"``, ``2`` = ``"QS"``, ``8`` = ``"AH"``, ``31`` = ``"7C"``. With
      ``players=3`` the removed suit's ids are never legal.
    * ``32 + s``: lead the Ober (Q) of suit s announcing "Zwang" (``"zwang:QS"``,
      ``"zwang:QH"``, ``"zwang:QD"``, ``"zwang:QC"``), offered when the Ober is a legal
      lead and the King is in the same hand; the Ace's holder must then play the Ace to
      that trick.

    ``env.unwrapped.action_name(a)`` gives the name, ``env.unwrapped.action_id(name)``
    the id.

Observation
    ``{"observation": float32[32 (4 + P) + 9P + 38], "action_mask": int8[36]}`` for P
    players (4: 330 entries, 3: 289). It holds the own hand, every card each seat played
    this deal, the current trick and led card, the own unbeatable cards, the
    capture-suit chain and the lead obligation it puts on me, Zwang announcements, shown
    voids, card points and tricks taken per seat, and the cumulative game points; the
    layout is in `parlour.envs.fuenfzehnern.observation`. The mask is all zeros when it
    is not your turn.

Rewards
    Game points: card points taken minus 15 (A 5, K 4, Q 3, J 2, 10 1; 60 points with 4
    players, 45 with 3, so zero-sum), or with ``tying_scoring`` +15 / −15 when exactly
    two players won every trick. A deal's game points arrive as the rewards of the step
    that ends it; in a match they accumulate, so each seat's episode return is its
    session total.

Infos and tools
    As in every Parlour env (``envs/core/aec.py``): ``infos`` hold the return and the
    illegal-action flag, the public record is ``env.unwrapped.details()``, and
    ``docs/integrations.md`` says which ``illegal_action`` mode each tool needs.

Options
    ``players`` (4 | 3), ``removed_suit`` ("C"; 3 players only), ``lead_rules``
    ("strict" | "relaxed"; rules-notes' ``rules``), ``unbeatable_duty_on_first_suit``
    (True; strict only), ``tying_scoring`` (False; rules-notes' ``tying_rule``; 4
    players only), ``episode`` ("deal" | "match"), ``num_hands`` (match only; default
    the number of players), ``illegal_action`` ("raise" | "penalize"), ``render_mode``
    (None | "human" | "ansi").

Reset options
    ``dealer``; ``deal`` = ``{"dealer": d, "hands": [[8 names] × P]}``; ``deals`` = a
    list of those for a match (later dealers follow the rotation and may be left out).

Version history
    v0: first release.
"""

from __future__ import annotations

from ..core.aec import ParlourAECEnv, wrapped
from .rules import Fuenfzehnern


class raw_env(ParlourAECEnv, game=Fuenfzehnern, name="fuenfzehnern_v0"):  # noqa: N801
    """The unwrapped env; ``env()`` adds PettingZoo's order enforcement."""


env = wrapped(raw_env)
