"""The Forty-Fives family as a PettingZoo AEC environment (``forty_fives_v0``).

Rules: *Forty-Fives: Ausführliche Regeln* with the rules notes §1; every rule
and option, with the sentence it rests on, is in ``docs/games/forty_fives.md``.

Agents
    ``player_0`` … ``player_{n-1}``, n = ``players`` (2..6, default 4). With 4 players
    seats {0, 2} and {1, 3} are partners, with 6 seats {0, 2, 4} and {1, 3, 5}; with 2,
    3 or 5 everyone plays alone. ``env.unwrapped.game.teams()`` lists the sides. The
    first dealer is a reset option (``options={"dealer": d}``) or drawn from the env's
    seeded generator; the deal then passes to the left.

Actions
    ``Discrete(168)``, one flat space for every decision (the mask shows the legal
    ones):

    ===========  ===================  ==================================================
    ids          names                meaning
    ===========  ===================  ==================================================
    0 .. 51      ``"QS"``             play card c (pack order: S H D C, A K … 2 each)
    52 .. 103    ``"rob:3D"``         rob the turned card, burying card c - 52, then
                                      play (legal only at the robber's first turn)
    104          ``"norob"``          never legal, kept for a stable action space: a
                                      player declines a rob by playing his first card
    105          ``"pass"``           pass in the auction (final)
    106 .. 109   ``"bid:15"`` …       bid 15, 20, 25, 30
    110          ``"hold"``           the dealer takes the contract at the high bid
    111 .. 114   ``"trump:S"`` …      the bidder names trumps S, H, D, C
    115 .. 166   ``"discard:7C"``     discard card c - 115 face down
    167          ``"done"``           finish discarding (then the dealer refills to 5)
    ===========  ===================  ==================================================

    ``env.unwrapped.action_name(a)`` / ``action_id(name)`` convert.

Observation
    ``{"observation": float32[size], "action_mask": int8[168]}``; the vector layout is
    in `parlour.envs.forty_fives.observation` (own hand, every card played with its
    player, the current trick, the turned card and robber, trumps, the auction, scores,
    counts). The mask is all zeros when it is not your turn.

Rewards
    ``episode="match"`` (default), at the end of the game (to ``target``): +1 to every
    seat of the winning side and -1 to every other seat when there are two sides (2, 4
    or 6 players); with 3 or 5 players alone the winner gets +1 and each other player
    -1/(n-1). A game stopped by ``max_deals`` goes to the side in the lead, or is a draw
    (0 for all) if the lead is shared. ``episode="deal"``: one deal; each seat gets its
    side's score change minus the mean change of all sides (a failed bid counts
    negative), so rewards are zero-sum in every mode (``game.zero_sum`` is True).

Infos and tools
    As in every Parlour env (``envs/core/aec.py``): ``infos`` hold the return and the
    illegal-action flag, the public record is ``env.unwrapped.details()``, and
    ``docs/integrations.md`` says which ``illegal_action`` mode each tool needs.

Options
    ``players`` (4), ``variant`` ("forty_fives" | "twenty_five" | "auction" |
    "one_ten"), ``episode`` ("match" | "deal"), ``target`` (45/25/120/110),
    ``void_must_trump`` (True), ``packets`` ("3+2" | "2+3"), auction only:
    ``bidder_leads`` (True), ``thirty_for_sixty`` (False), ``bidder_out_first`` (False);
    ``max_deals`` (100), ``illegal_action`` ("raise" | "penalize"), ``render_mode``
    (None | "human" | "ansi").

Reset options
    ``dealer``; ``deal`` = ``{"dealer": d, "hands": [[5 names] × n], "stock": [top first
    …]}`` (``stock[0]`` is the turned card; each hand lists its first packet first); the
    auction variants add ``"kitty": [3 names]``. Every card appears exactly once.
    ``deals`` = a list of those for a match (later dealers follow the rotation and may
    be left out). Deals of a match after the forced ones are random (a
    ``LaterDealsRandomWarning`` says so, once per env); errors name the deal
    (``deal['stock']``, ``deals[1]['hands'][2]``).

Robbing
    The holder of the ace of trumps (the dealer, when an ace is turned) finds the
    ``rob:X`` actions beside his cards at his first turn to play, as at a real table:
    he robs and then plays, or plays at once and the right lapses. There is no rob
    phase and no separate decline, so neither the turn order nor anyone else's
    observation shows who holds the ace unless he robs (which is public: the turned
    card leaves the table).

Version history
    v0: first release. Revised in place: the rob decision was a phase of its own
    (seen by everyone, even on a decline); it is now part of the robber's first turn.
"""

from __future__ import annotations

from ..core.aec import ParlourAECEnv, wrapped
from .rules import FortyFives


class raw_env(ParlourAECEnv, game=FortyFives, name="forty_fives_v0"):  # noqa: N801
    """The unwrapped env; ``env()`` adds PettingZoo's order enforcement."""


env = wrapped(raw_env)
