"""The record that registers a game: one `GameRecord` named ``GAME`` in its package.

Everything the rest of Parlour needs to know about a game by name is declared there,
once: the env's variants (the generic tests and soak runs go over them), its heuristic
bot, its other agent kinds, the exact solver's move labels, the search of its
``expert`` agent, its batched engine, how a game is decided, its text view and rules
summary for text play, how to force a random deal and hidden-information twins (the
generic tests), and what its strategy-tips report adds. `parlour.envs` finds the
records by looking for ``GAME`` in each package under ``envs/``; the old tables
(`parlour.envs.VARIANTS`, `parlour.agents.HEURISTICS`, `parlour.envs.batch.ENGINES`,
...) are views of them. Hooks are ``"module:attribute"`` strings, imported only when
used (`load`), so reading the records imports no agent, solver, text or torch code
(docs/adding_a_game.md).
"""

from __future__ import annotations

import importlib
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
    suit_renaming: str = ""
    """``"module:function"``: ``function(game, perm)`` gives the index arrays that
    rename the four suits of an observation and of an action vector, where the rules
    treat the suits alike (DAgger's and the refit's ``suit_symmetry``)"""
    canonical_form: str = ""
    """``"module:function"``: ``function(game, observations)`` gives ``(canonical,
    action_index)``: the observations (any leading shape) mapped to one position of
    those that are the same game, where the game has such a form, and the renaming of
    the actions (canonical action ``j`` is real action ``action_index[..., j]``): the
    input of a network fitted with ``canonical_form`` (`parlour.training.policy.
    CanonicalPolicy`)"""
    expert_labels: str = ""
    """``"module:function"``: ``function(game, state, seat, move, rng)`` gives the moves
    the ``expert`` agent's search plays where it overrides the network's ``move`` (and,
    where the expert plays exactly, every optimal move), else None: DAgger's
    ``expert`` teacher (expert iteration)"""
    exact_yardstick: str = ""
    """``"module:attribute"`` of the game's exact yardstick (a
    `parlour.training.yardsticks.Yardstick`: what it measures and its report), where
    an exact solution scores any agent (``parlour eval AGENT --exact``)"""
    expert: str = ""
    """``"module:function"``: ``function(network, game, seed)`` is the game's
    ``expert`` agent: search at play time over ``network``, the shipped model's
    greedy policy agent, for the engine ``game`` (its variant); the strongest player
    Parlour ships for the game (`parlour.agents.expert`)"""
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
    batched: str = ""
    """``"module:Class"`` of the batched engine (`parlour.envs.batch`, torch), where
    the game has one (``parlour train --backend batch``)"""
    decided_by: str = ""
    """``"module:function"``: ``function(game)`` says how the engine's episode is
    decided: ``"win"`` (it pays a win or a loss) or ``"points"`` (a score); a text
    seat's forfeit scores by it (`parlour.text.forfeit_scores`)"""
    text_view: str = ""
    """``"module:function"``: ``function(game, state, seat)`` is what that seat can
    see, as text (`parlour.text.view`)"""
    text_rules: str = ""
    """``"module:function"``: ``function(game)`` is the rules summary of the variant
    the engine plays (`parlour.text.summary`)"""
    key_rules: str = ""
    """``"module:function"``: ``function(game)`` maps each phrase the variant's
    rules summary must hold to True (and a phrase it must not hold to False); the
    text tests check the summary against it"""
    random_deal: str = ""
    """``"module:function"``: ``function(game, rng)`` is a random valid forced deal
    (``reset(options={"deal": ...})``), which the generic tests break in every way
    they know"""
    no_deal: str = ""
    """instead of `random_deal`, for a game without cards: why it has no forced deal
    (the generic deal tests skip with this reason)"""
    hidden_twins: str = ""
    """``"module:function"``: ``function(game, rng)`` gives ``(options A, options B,
    observer, same_view)``: two starts that differ only in what seat ``observer``
    cannot know, and ``same_view(state A, state B)``, true while the two games still
    look alike to it (the generic hidden-information tests); not needed with
    `perfect_information`"""

    def __post_init__(self) -> None:
        if not self.variants:
            raise ValueError(f"{self.name}: a game record needs at least one variant")
        for hook in HOOKS:
            value = getattr(self, hook)
            if value and value.count(":") != 1:
                raise ValueError(
                    f"{self.name}: {hook} must be 'module:attribute', got {value!r}"
                )
        if bool(self.extra_agents) != bool(self.extra_kinds):
            raise ValueError(f"{self.name}: extra_agents and extra_kinds go together")
        if self.random_deal and self.no_deal:
            raise ValueError(f"{self.name}: give random_deal or no_deal, not both")

    def missing(self) -> list[str]:
        """The hooks every game needs that this record lacks (`REQUIRED`; a forced
        deal or the reason for none; hidden-information twins unless everything is
        open)."""
        out = [hook for hook in REQUIRED if not getattr(self, hook)]
        if not (self.random_deal or self.no_deal):
            out.append("random_deal")
        if not (self.hidden_twins or self.perfect_information):
            out.append("hidden_twins")
        return out

    def load(self, hook: str) -> Any:
        """What a hook names, imported: ``record.load("text_view")`` is the view
        function. ValueError when the record leaves that hook out."""
        if hook not in HOOKS:
            raise ValueError(f"{hook!r} is not a hook; hooks: {', '.join(HOOKS)}")
        value = getattr(self, hook)
        if not value:
            raise ValueError(
                f"{self.name} has no {hook} hook (its GameRecord in {self.package}; "
                "docs/adding_a_game.md)"
            )
        module, attr = value.split(":")
        return getattr(importlib.import_module(module), attr)


def decided_by_win(game: Any) -> str:
    """`GameRecord.decided_by` of a game whose every variant pays a win or a loss."""
    return "win"


def decided_by_points(game: Any) -> str:
    """`GameRecord.decided_by` of a game whose every variant pays points."""
    return "points"


#: the record's ``"module:attribute"`` fields, imported when used
HOOKS = (
    "heuristic",
    "extra_agents",
    "exact_moves",
    "suit_renaming",
    "canonical_form",
    "expert_labels",
    "exact_yardstick",
    "expert",
    "batched",
    "decided_by",
    "text_view",
    "text_rules",
    "key_rules",
    "random_deal",
    "hidden_twins",
)
#: the hooks every game declares (text play, forfeits); `GameRecord.missing`
REQUIRED = ("decided_by", "text_view", "text_rules", "key_rules")
