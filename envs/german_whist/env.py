"""German Whist and Honeymoon Whist as a PettingZoo AEC environment
(``german_whist_v0``).

Rules: the rule book *German Whist* (a rules summary); every choice is in
``docs/games/german_whist.md``.

Agents
    ``player_0``, ``player_1``. The dealer is a reset option (``options={"dealer": d}``)
    or drawn from the env's seeded generator; the non-dealer leads the first trick.

Actions
    ``Discrete(52)`` (``Discrete(54)`` for Honeymoon): play card ``a``. Cards are
    numbered in pack order, suits S H D C, ranks A K … 2 in each suit, then ``JKH``,
    ``JKL``. ``env.unwrapped.action_name(a)`` gives ``"QS"``;
    ``env.unwrapped.action_id("QS")`` the id.

Observation
    ``{"observation": float32[8n + 18], "action_mask": int8[n]}``; the vector layout is
    in `parlour.envs.german_whist.observation`. The mask is all zeros when it is not
    your turn.

Rewards
    German Whist: +1 to the player who takes 7 of the 13 stage-2 tricks, -1 to the
    other, at the moment the 7th is taken (the episode ends there). Honeymoon Whist with
    ``episode="deal"``: ±(tricks − 13) for the deal; with ``episode="match"`` (default):
    +1 / -1 when a player reaches ``match_target`` match points. Zero-sum throughout.

Infos and tools
    As in every Parlour env (``envs/core/aec.py``): ``infos`` hold the return and the
    illegal-action flag, the public record is ``env.unwrapped.details()``, and
    ``docs/integrations.md`` says which ``illegal_action`` mode each tool needs.

Options
    ``variant`` ("german" | "honeymoon"), ``episode`` ("deal" | "match"),
    ``match_target`` (14), ``illegal_action`` ("raise" | "penalize"), ``render_mode``
    (None | "human" | "ansi").

Reset options
    ``dealer``; ``deal`` =
    ``{"dealer": d, "hands": [[13 names], [13 names]], "stock": [...]}`` with
    ``stock[0]`` the first face-up card; ``deals`` = a list of those for a Honeymoon
    match.

Version history
    v0: first release.
"""

from __future__ import annotations

from ..core.aec import ParlourAECEnv, wrapped
from .rules import GermanWhist


class raw_env(ParlourAECEnv, game=GermanWhist, name="german_whist_v0"):  # noqa: N801
    """The unwrapped env; ``env()`` adds PettingZoo's order enforcement."""


env = wrapped(raw_env)
