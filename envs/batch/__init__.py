"""Batched engines: B games held as torch tensors, all stepped by one set of array ops.

The scalar engines (`parlour.envs.german_whist` …) stay the reference; each batched
engine is tested to play exactly the same game (``tests/test_batch.py``). So far:
`GermanWhistBatch` (German Whist and Honeymoon Whist). See ``docs/batch.md``.
"""

from .german_whist import GermanWhistBatch

__all__ = ["GermanWhistBatch"]
