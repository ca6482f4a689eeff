"""Fünfzehn – tot, the dice game, as a PettingZoo AEC env (``fuenfzehn_tot_v0``).

Rules: *Fünfzehn – tot* (German Wikipedia); every choice is in
``docs/games/fuenfzehn_tot.md`` and the rules notes §5.

Agents
    ``player_0 … player_{n-1}`` (``players`` = 2..10, default 4), seated clockwise. Who
    starts the first round is settled by the roll-off ("Herauskommen"), which is chance
    only: seat 0 rolls first, the lowest roll starts, tied players roll again,
    counter-clockwise, then clockwise, and so on.

Actions
    ``Discrete(2)``: ``0`` = ``"roll"``, ``1`` = ``"stand"``, masked by rules 1 and 2 (a
    turn starts with a roll; 9 must stand; 10 must roll; the third roll forces a fourth
    unless the total is 9). The die is a chance node drawn from the env's seeded
    generator.

Observation
    ``{"observation": float32[20 + 9n], "action_mask": int8[2]}``; the layout is in
    `parlour.envs.fuenfzehn_tot.observation`: phase, pool, everybody's matches, this
    round's standing totals and bust flags in turn order, the current total and roll
    count, and the rule-1/rule-2 obligations, all scaled to [0, 1]. Everything is public
    except the dice still to come.

Rewards
    At the end of the game only: the loser (the last player holding matches) gets -1 and
    every other player +1/(n-1), so rewards sum to zero; ``zero_sum=False`` gives the
    others 0 (then ``env.unwrapped.game.zero_sum`` is False).

Infos and tools
    As in every Parlour env (``envs/core/aec.py``): ``infos`` hold the return and the
    illegal-action flag, the public record is ``env.unwrapped.details()``, and
    ``docs/integrations.md`` says which ``illegal_action`` mode each tool needs.

Options
    ``players`` (4), ``matches`` (10), ``auto_stand_at_15_half1`` (False),
    ``half2_bust`` ("out" | "ends_round"), ``all_bust`` ("replay" | "next_starter"),
    ``zero_sum`` (True), ``auto_forced_moves`` (False), ``rule1`` and ``rule2`` (True:
    the seed's rules; off only to study them), ``illegal_action`` ("raise" |
    "penalize"), ``render_mode`` (None | "human" | "ansi"). `FuenfzehnTot` says what
    each does.

Reset options
    ``dice``: the faces (1..6) in the order they are rolled, the roll-off included;
    ``None`` entries are random; a game that needs a die after the list raises
    ValueError (no silent random dice); dice left over when the game ends are ignored.
    ``starter``: the seat that starts the first round (it scripts the roll-off: that
    seat rolls 1, the others 2; ``dice`` then begin with the first turn, and without
    ``dice`` every later die is random).

Version history
    v0: first release.
"""

from __future__ import annotations

from ..core.aec import ParlourAECEnv, wrapped
from .rules import FuenfzehnTot


class raw_env(ParlourAECEnv, game=FuenfzehnTot, name="fuenfzehn_tot_v0"):  # noqa: N801
    """The unwrapped env; ``env()`` adds PettingZoo's order enforcement."""


env = wrapped(raw_env)
