"""Batched engines: B games held as torch tensors, all stepped by one set of array ops.

The scalar engines (`parlour.envs.german_whist` …) stay the reference; each batched
engine is tested to play exactly the same game (``tests/test_batch.py``). So far:
`GermanWhistBatch` (German Whist and Honeymoon Whist). See ``docs/batch.md``.

`ENGINES` maps an env name to its batched engine class; the batched self-play
environment and ``parlour train ENV --backend batch`` look engines up there.
"""

from .german_whist import GermanWhistBatch

ENGINES: dict[str, type] = {"german_whist_v0": GermanWhistBatch}

__all__ = ["ENGINES", "GermanWhistBatch"]
