"""Batched engines: B games held as torch tensors, all stepped by one set of array ops.

The scalar engines (`parlour.envs.german_whist` …) stay the reference; each batched
engine is tested to play exactly the same game (``tests/test_batch*.py``). See
``docs/batch.md``.

Every engine subclasses `base.BatchEngine` (the card games `base.CardBatchEngine`),
which writes the shared part once, so they have the same interface and the benchmark,
the vectorised self-play env and ``parlour train --backend batch`` work with any of
them:

* ``Engine(batch_size, device="cpu", seed=None, **options)``: ``options`` are the
  scalar env's (same names, defaults and one-line errors; ``engine.rules`` is the
  scalar rules engine that checked them);
* ``batch_size``, ``num_players``, ``num_actions``, ``observation_size``, ``device``,
  ``generator``, ``to_play`` (``(B,)`` int64, the seat to act);
* ``reset(seed=None, deals=None)``, ``legal_mask()`` (``(B, A)`` bool),
  ``observe(seat=None)`` (``(B, observation_size)`` float32, the scalar env's
  observation), ``step(actions)`` → ``(rewards (B, num_players) float32,
  terminated (B,) bool)`` with automatic reset, ``deal(i)``, ``state_bytes()``.

`ENGINES` maps an env name to its engine (a view of the game records' ``batched``
hooks, `parlour.envs.GameRecord`); `make` builds one.
"""

from __future__ import annotations

from typing import Any

from .. import records
from .forty_fives import FortyFivesBatch
from .fuenfzehn_tot import FuenfzehnTotBatch
from .fuenfzehnern import FuenfzehnernBatch
from .german_whist import GermanWhistBatch
from .herzeln import HerzelnBatch

ENGINES: dict[str, type] = {r.name: r.load("batched") for r in records() if r.batched}


def make(env_name: str, batch_size: int, **options: Any) -> Any:
    """The batched engine of ``env_name`` (ValueError, one line, if it has none)."""
    if env_name not in ENGINES:
        have = ", ".join(sorted(ENGINES))
        raise ValueError(f"{env_name!r} has no batched engine (batched: {have})")
    return ENGINES[env_name](batch_size, **options)


__all__ = [
    "ENGINES",
    "FortyFivesBatch",
    "FuenfzehnTotBatch",
    "FuenfzehnernBatch",
    "GermanWhistBatch",
    "HerzelnBatch",
    "make",
]
