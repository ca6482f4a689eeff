"""Herzeln as a PettingZoo AEC environment (``herzeln_v0``).

Rules: *Herzeln* (English Wikipedia) with the rules notes §4; every choice
is in ``docs/games/herzeln.md``.

Agents
    ``player_0`` … ``player_{n-1}`` for ``players`` = 3 (24 French cards, ranked
    A 10 K Q J 9) or 4 (32 German cards, Daus 10 K O U 9 8 7). Play passes clockwise
    (seat ``i`` to ``i + 1``). The first dealer is a reset option
    (``options={"dealer": d}``) or drawn from the env's seeded generator; the deal
    passes clockwise each deal; the player on the dealer's left leads trick 1 and starts
    the Domino deal (with ``domino_layout="per_suit_rows"`` the holder of the Jack of
    hearts starts).

Actions
    One flat ``Discrete(3N + 1)`` space, ``N`` = 24 or 32 cards in pack order (suits
    S H D C, ranks A K Q J 10 9 (8 7) in each suit):

    ======  ===============  ==========================================================
    id      name             meaning
    ======  ===============  ==========================================================
    c       ``"QS"``         play card c to the trick; in Domino, lay a Jack that opens
                             a line (only while its line is not opened)
    N + c   ``"QS@top"``     Domino: lay card c at the top (upward) end
    2N + c  ``"QS@bottom"``  Domino: lay card c at the bottom (downward) end
    3N      ``"pass"``       Domino: nothing fits (then the only legal action)
    ======  ===============  ==========================================================

    ``env.unwrapped.action_name(a)`` gives the name,
    ``env.unwrapped.action_id("QS@top")`` the id. A card that fits both ends of the line
    has both actions legal.

Observation
    ``{"observation": float32[size], "action_mask": int8[3N + 1]}``; the vector (own
    hand, contract, current trick, cards played and taken by each seat, voids shown,
    points this deal, partie totals, Domino layout ends and card counts; seats relative
    to the observer) is laid out in `parlour.envs.herzeln.observation`. The mask is all
    zeros when it is not your turn.

Rewards
    Each deal's points as they are scored: a trick's points when it is taken (No Hearts
    −11 … −1 per heart, Tricks +10, No Tricks −10, No Queens −20 per Queen/Ober, King of
    Hearts −40, Last Trick +40 / No Last Trick −40 on the eighth trick), Domino 0, −10,
    −20 (, −30) as players go out. Returns are the partie totals so far. NOT zero-sum
    (``game.zero_sum`` is False): one deal distributes −33 (3 players −31), +80, −80,
    −80, −40, +40, −40, −60 (−30). The highest total wins; equal totals share the win
    (``env.unwrapped.details()["winners"]`` at the end).

Infos and tools
    As in every Parlour env (``envs/core/aec.py``): ``infos`` hold the return and the
    illegal-action flag, the public record is ``env.unwrapped.details()``, and
    ``docs/integrations.md`` says which ``illegal_action`` mode each tool needs.

Options
    ``players`` (3 | 4, default 4); ``episode`` ("partie": the eight deals in the
    seed's order | "deal": one deal of ``contract``); ``contract`` (no_hearts, tricks,
    no_tricks, no_queens, king_of_hearts, last_trick, no_last_trick, domino; implies
    ``episode="deal"``); ``domino_layout`` ("single_cyclic_line" | "per_suit_rows");
    ``early_end`` (False: play all eight tricks; True: stop a penalty-card deal once its
    penalty cards are all taken); ``illegal_action`` ("raise" | "penalize");
    ``render_mode`` (None | "human" | "ansi").

Reset options
    ``dealer``; ``deal`` = ``{"dealer": d, "hands": [[8 names] × n]}``; ``deals`` = a
    list of those for the deals of a partie in order (later dealers follow the
    rotation).

Version history
    v0: first release.
"""

from __future__ import annotations

from ..core.aec import ParlourAECEnv, wrapped
from .rules import Herzeln


class raw_env(ParlourAECEnv, game=Herzeln, name="herzeln_v0"):  # noqa: N801
    """The unwrapped env; ``env()`` adds PettingZoo's order enforcement."""


env = wrapped(raw_env)
