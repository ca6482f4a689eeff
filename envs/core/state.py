"""The base of the games' states: plain data in ``__slots__``, cheaply cloned."""

from __future__ import annotations

from typing import Self


class SlotState:
    """A state whose fields are its class's ``__slots__``: ints, bitmasks and flat
    lists. `clone` copies the lists and shares everything else (immutable values), so a
    state with nested lists copies those itself after calling it."""

    __slots__ = ()

    def clone(self) -> Self:
        cls = type(self)
        s = cls.__new__(cls)
        for name in cls.__slots__:
            value = getattr(self, name)
            setattr(s, name, value[:] if isinstance(value, list) else value)
        return s
