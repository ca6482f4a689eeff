"""Exact double-dummy solver and PIMC bots for German Whist and Honeymoon Whist.

Implements the last strategy tip of the rule book (*German Whist*) — "Play stage 2
with both hands face up. … There's nothing left to guess, only to calculate." — over the
engine in `parlour.envs.german_whist` (both ``variant="german"`` and
``variant="honeymoon"``), and bots built on it. ``docs/solvers.md`` is the user's page.

**The solver** (`Stage2Solver`). Stage 2 is perfect information: the stock is empty, so
every card not played is in one of the two hands. A position is searched trick by trick
with alpha-beta over the question "can seat 0 take at least ``k`` of the tricks left?":

* *Relative ranks.* Inside each suit only the order of the cards still out matters, so a
  group (the trump suit with the jokers, then each plain suit) is stored as a 16-bit
  word ``(1 << n) | b`` where bit ``i`` of ``b`` says that seat 0 holds the ``i``-th
  weakest of the ``n`` cards left in it. Four words make one int; the three plain-suit
  words are sorted, since plain suits are interchangeable. Positions that differ only in
  which small cards were played, or in which plain suit is which, share one key.
* *Equivalent cards.* Cards of one hand adjacent in rank among the cards left are
  interchangeable; only the highest of each run is searched (``_TOPS``). The led card
  counts while the trick is open, so a follower's K and J around a led Q stay distinct.
* *Transposition table* keyed on (position word, leader), holding proven bounds on seat
  0's tricks and the best lead; it is shared by every search (relative keys never go
  stale), and cleared when it outgrows ``TT_LIMIT`` entries (``JIT_TT_LIMIT`` for the
  compiled search, whose entries are smaller).
* *Quick tricks* give a lower bound on the leader's tricks (top trumps, and top cards of
  suits the opponent must follow), cutting many nodes without searching.
* *Move ordering*: the leader tries sure winners first, then low cards; the follower the
  cheapest card that wins, then its lowest cards; the table's best lead first of all.

German Whist asks one question (``k = 7 - stage-2 tricks so far``): whoever takes 7 of
the 13 wins, and the game stopping at the 7th trick does not change who gets there.
Honeymoon Whist counts every trick, so `Stage2Solver.max_tricks` finds the most tricks
by a binary search over ``k`` whose probes share the table (a null-window search in
MTD(f) style). The trick rule is copied from ``GermanWhist._beats``;
``tests/test_solver.py`` checks the solver against brute force over the engine itself so
the two cannot drift.

**The bots** (``parlour.agents.make("solver" | "pimc:N", "german_whist_v0")``):

* `SolverAgent` (``solver``): stage 2 exactly (see `SolverAgent` for the tie-breaks);
  stage 1 as ``pimc:DEFAULT_SAMPLES``.
* `PIMCAgent` (``pimc:N``): stage 1 by Perfect Information Monte Carlo: ``N`` deals of
  the unseen cards consistent with what the seat knows (`Knowledge`, `sample_world`);
  in each, every legal card is played, the opponent's answer and the rest of stage 1
  by a fast `Rollout` policy, and stage 2 solved exactly. PIMC is used as a
  policy-improvement step over the heuristic bot: its card is kept unless another card
  wins at least `default_margin` more of the sampled deals. Stage 2 has one consistent
  deal, so there it plays as the solver does.

`stage2_quality` measures any agent's stage-2 play against perfect play.

The search runs compiled with numba when it imports (`jit`, the same search giving the
same answers, and with it PIMC's rollouts), else in pure Python; ``PARLOUR_JIT=0`` or
``Stage2Solver(backend="python")`` forces the latter.

The package, part by part: `search` (the word tables, `Layout`, `Stage2Solver`), `jit`
(the search compiled), `positions` (engine positions, `solve`, `optimal_moves`), `pimc`
(`Knowledge`, `sample_world`, `Rollout`, `pimc_card`), `bots` (`PIMCAgent`,
`SolverAgent`, `make_agent`) and `quality` (`score_decision`, `stage2_quality`).
"""

from __future__ import annotations

from .bots import (
    BASES,
    DEFAULT_SAMPLES,
    MAX_SAMPLES,
    PIMCAgent,
    SolverAgent,
    make_agent,
)
from .pimc import (
    Knowledge,
    Rollout,
    World,
    _stage1_classes,
    default_margin,
    pimc_card,
    pimc_choice,
    pimc_values,
    rollout_card,
    sample_world,
)
from .positions import (
    MoveValue,
    PositionSolver,
    Stage2Position,
    best_stage2_card,
    german_target,
    move_values,
    optimal_moves,
    solve,
)
from .quality import (
    DecisionScore,
    Stage2Quality,
    random_stage2_state,
    score_decision,
    stage2_quality,
)
from .search import (
    JIT_TT_LIMIT,
    SHARED,
    STAGE2_TRICKS,
    TT_LIMIT,
    Layout,
    Stage2Solver,
)

__all__ = [
    "BASES",
    "DEFAULT_SAMPLES",
    "JIT_TT_LIMIT",
    "MAX_SAMPLES",
    "SHARED",
    "STAGE2_TRICKS",
    "TT_LIMIT",
    "DecisionScore",
    "Knowledge",
    "Layout",
    "MoveValue",
    "PIMCAgent",
    "PositionSolver",
    "Rollout",
    "SolverAgent",
    "Stage2Position",
    "Stage2Quality",
    "Stage2Solver",
    "World",
    "_stage1_classes",
    "best_stage2_card",
    "default_margin",
    "german_target",
    "make_agent",
    "move_values",
    "optimal_moves",
    "pimc_card",
    "pimc_choice",
    "pimc_values",
    "random_stage2_state",
    "rollout_card",
    "sample_world",
    "score_decision",
    "solve",
    "stage2_quality",
]
