"""The record that registers a game: one `GameRecord` named ``GAME`` in its package.

Everything the rest of Parlour needs to know about a game by name is declared there,
once: the env's variants (the generic tests and soak runs go over them), its heuristic
bot, its other agent kinds, the exact solver's move labels and what its strategy-tips
report adds. `parlour.envs` finds the records by looking for ``GAME`` in each package
under ``envs/``; the old tables (`parlour.envs.VARIANTS`, `parlour.agents.HEURISTICS`,
...) are views of them. Agent hooks are ``"module:attribute"`` strings, imported only
when used, so reading the records imports no agent, solver or torch code
(docs/adding_a_game.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GameRecord:
    """One game's registration."""

    name: str
    """the env name, with its version: ``german_whist_v0``"""
    title: str
    """the game's name for people: ``German Whist``"""
    package: str
    """the env package (``__name__`` of the package that declares the record); it has
    ``env()`` and ``raw_env``"""
    variants: tuple[dict[str, Any], ...]
    """every variant the generic tests, soak runs and integrations go over, as
    ``raw_env`` options; the first is the default game"""
    heuristic: str = ""
    """``"module:Class"`` of the heuristic bot (agent spec ``heuristic``)"""
    extra_agents: str = ""
    """``"module:function"``: ``function(kind, arg, seed)`` builds the game's other
    agent kinds, or raises ValueError naming the kinds it knows"""
    extra_kinds: tuple[str, ...] = ()
    """the spec forms `extra_agents` builds, as ``parlour list`` shows them"""
    exact_moves: str = ""
    """``"module:function"``: ``function(game, state)`` gives every optimal action
    where an exact solver values the position, else None (``endgame:SPEC``, the
    warm start's solver labels)"""
    players: tuple[int, ...] = ()
    """the fewest and most players the engine accepts, where `variants` do not show
    them (the OpenSpiel game type's player range)"""
    perfect_information: bool = False
    """every player sees everything (only future chance is unknown)"""
    pays_as_it_goes: bool = False
    """returns are paid as they are scored (per trick, per deal), not only at the end"""
    tips_studies: tuple[str, ...] = field(default=())
    """what the strategy-tips report adds to the tips' experiments: ``agreement``
    (agent agreement on the tips' situations), ``claims`` and ``seat_order`` (the
    dice game's exact claims and seat-order tables)"""
    tips_deal_note: str = ""
    """a sentence for the tips report when one env seed is more than a deal of
    cards"""

    def __post_init__(self) -> None:
        if not self.variants:
            raise ValueError(f"{self.name}: a game record needs at least one variant")
        for hook in ("heuristic", "extra_agents", "exact_moves"):
            value = getattr(self, hook)
            if value and value.count(":") != 1:
                raise ValueError(
                    f"{self.name}: {hook} must be 'module:attribute', got {value!r}"
                )
        if bool(self.extra_agents) != bool(self.extra_kinds):
            raise ValueError(f"{self.name}: extra_agents and extra_kinds go together")
