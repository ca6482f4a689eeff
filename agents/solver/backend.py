"""Choosing between a compiled (numba) search and its pure-Python original.

German Whist's stage-2 search (`german_whist.jit`) and the trick-play searches of
Fünfzehnern (`fuenfzehnern_jit`), Forty-Fives (`forty_fives_jit`) and Herzeln
(`herzeln_jit`) each exist twice, giving the same answers; a solver picks one at its
first search with `compiled_module` (the trick games' solvers through `CompiledSearch`),
so importing parlour never imports numba.
``backend`` is ``"auto"`` (numba when it imports and its JIT is on), ``"numba"`` or
``"python"``; None reads `JIT_ENV`.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Any

import numpy as np

BACKENDS = ("auto", "numba", "python")
#: the environment variable that picks the backend when the constructor does not:
#: ``0`` pure Python, ``1`` numba (an error without it), unset or empty: ``auto``
JIT_ENV = "PARLOUR_JIT"
_ENV_BACKENDS = {"": "auto", "0": "python", "1": "numba"}


def requested_backend(backend: str | None = None) -> str:
    """The backend asked for: ``backend`` when given, else from `JIT_ENV`; ValueError
    for anything but `BACKENDS` (or ``0``/``1`` in the environment)."""
    if backend is None:
        env = os.environ.get(JIT_ENV, "").strip()
        if env not in _ENV_BACKENDS:
            raise ValueError(f"{JIT_ENV} must be 0 or 1 (or unset), got {env!r}")
        return _ENV_BACKENDS[env]
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {list(BACKENDS)}, got {backend!r}")
    return backend


def compiled_module(requested: str, module: str, what: str) -> ModuleType | None:
    """The kernel module ``module`` when the ``requested`` backend searches with it,
    else None (pure Python): ``auto`` takes it when numba imports and its JIT is on
    (with ``NUMBA_DISABLE_JIT=1`` the kernel would run as plain Python, far slower
    than the search it copies); ``numba`` always, and without numba it is an
    ImportError saying what to do (``what``: the search, for the message)."""
    if requested == "python":
        return None
    try:
        jit = importlib.import_module(module)
    except ImportError as err:
        if requested == "numba":
            raise ImportError(
                f"the compiled {what} needs numba ({err}); install numba, or set "
                f"{JIT_ENV}=0"
            ) from None
        return None
    if jit.compiled() or requested == "numba":
        return jit
    return None


def njit_cached(fn: Any) -> Any:
    """``numba.njit(cache=True)``, or without the disk cache when numba finds no
    writable place for it (it then raises when the function is decorated)."""
    from numba import njit

    try:
        return njit(cache=True)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return njit(fn)


def slots_for(tt_limit: int) -> int:
    """The most slots a table holding ``tt_limit`` entries grows to: at least twice as
    many (a power of two), so it is at most half full before it is cleared (or, German
    Whist's, starts a new generation)."""
    size = 64
    while size < 2 * tt_limit:
        size *= 2
    return size


class SlotTable:
    """A transposition table of int64 slots of `words` words (key words first, the
    entry last) that the solvers of a process share, each owning a *generation*: a slot
    of another generation is free. Holds the slots and the next free generation."""

    words = 4

    def __init__(self, slots: int) -> None:
        self.tt = np.zeros(self.words * slots, dtype=np.int64)
        self.next_gen = np.ones(1, dtype=np.int64)

    @classmethod
    def shared(cls, slots: int) -> SlotTable:
        """The table of this class the solvers of this process share (made at the first
        call, with ``slots`` slots)."""
        if "_shared" not in cls.__dict__:
            cls._shared = cls(slots)
        return cls.__dict__["_shared"]

    @property
    def slots(self) -> int:
        """The number of slots."""
        return self.tt.size // self.words

    def generation(self) -> int:
        """A generation no solver of this table has had."""
        gen = int(self.next_gen[0])
        self.next_gen[0] += 1
        return gen


class KernelCounters:
    """The counters of a compiled search's kernel, kept by the compiled code in the
    int64 array ``stats``: positions searched at index 0, its entries in the table at
    1, table entries dropped (a key finding all its slots taken) at 2, its generation
    at 3 and its table limit at 4; and its `SlotTable`."""

    stats: Any
    table: SlotTable
    most: int

    def take_table(self, shared: SlotTable, first: int, tt_limit: int) -> None:
        """Search in ``shared``, or in a table of its own of at most ``first`` slots
        when ``shared`` is larger than ``tt_limit`` entries need (`slots_for`); a new
        generation of it, and fresh counters."""
        most = slots_for(tt_limit)
        self.most = most
        self.table = shared if shared.slots <= most else type(shared)(min(first, most))
        self.stats = np.zeros(5, dtype=np.int64)
        self.stats[3] = self.table.generation()
        self.stats[4] = tt_limit

    def grow(self, rehash: Any) -> None:
        """Double the table while this solver fills over half of it (up to its
        limit's size), its entries moved by the kernel's ``rehash``."""
        table = self.table
        if 2 * self.stats[1] > table.slots and table.slots < self.most:
            old = table.tt
            table.tt = np.zeros(2 * old.size, dtype=np.int64)
            rehash(old, table.tt, self.stats)

    @property
    def nodes(self) -> int:
        """Positions searched so far."""
        return int(self.stats[0])

    @property
    def dropped(self) -> int:
        """Entries overwritten by another key so far (each costs only time)."""
        return int(self.stats[2])


class CompiledSearch:
    """A `tricks.TrickSolver` mix-in whose `_search` runs in a compiled kernel (the
    module `kernel_module`) or in the pure-Python search, by `backend`: settled at the
    first search, so building a solver imports nothing. A solver calls
    `choose_backend` in its constructor and makes its kernel in `new_kernel`."""

    kernel_module = ""  # the kernel's module, as importlib names it
    kernel_what = ""  # the search, for the error without numba
    _requested: str | None = None
    _kernel: Any = None
    _backend: str | None = None

    def choose_backend(self, backend: str | None) -> None:
        """Check ``backend`` now (None reads `JIT_ENV` at the first search)."""
        self._requested = None if backend is None else requested_backend(backend)
        self._kernel = None
        self._backend = None

    def new_kernel(self, jit: ModuleType) -> Any:
        """The kernel of module ``jit`` for this solver."""
        raise NotImplementedError

    def kernel_search(
        self, leader: int, trick: list[int], ext: Any, alpha: int, beta: int
    ) -> int:
        """The kernel's `TrickSolver.value` of the hands as they are."""
        return self._kernel.search(self.hands, leader, trick, ext, alpha, beta)

    @property
    def backend(self) -> str:
        """The backend that searches: ``"numba"`` or ``"python"``."""
        if self._backend is None:
            jit = compiled_module(
                self._requested or requested_backend(),
                self.kernel_module,
                self.kernel_what,
            )
            if jit is not None:
                self._kernel = self.new_kernel(jit)
            self._backend = "python" if jit is None else "numba"
        return self._backend

    def _search(
        self, leader: int, trick: list[int], ext: Any, alpha: int, beta: int
    ) -> int:
        if self.backend == "python":
            return super()._search(leader, trick, ext, alpha, beta)  # type: ignore[misc]
        before = self._kernel.nodes
        value = self.kernel_search(leader, trick, ext, alpha, beta)
        self.nodes += self._kernel.nodes - before  # type: ignore[attr-defined]
        return value
