"""A `struct.Struct` that pickles and deep-copies.

The observation encoders keep a precompiled `struct.Struct` on the game (one
``pack_into`` writes all the scalars of an observation). The standard type cannot be
pickled, so an env holding one could not be deep-copied or sent to a worker process
(Ray, subprocess vector envs, search that copies the env mid-game). This subclass
rebuilds itself from its format string; packing is the same C code.
"""

from __future__ import annotations

import struct


class Struct(struct.Struct):
    """`struct.Struct` that survives `pickle` and `copy.deepcopy`."""

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return (type(self), (self.format,))


__all__ = ["Struct"]
