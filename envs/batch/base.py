"""What every batched engine shares: options, seeding, reset, forced deals, the action
check and its error, bit unpacking, the seat argument, the state size.

`BatchEngine` is the base of the five engines; each engine adds only its game: its
tables and state tensors (`BatchEngine._build`), how a game starts
(`BatchEngine._restart`), the legal moves, `step`, `observe` and `deal`.
`CardBatchEngine` adds the deals of the card games: B deals drawn from the engine's
generator, and forced deals given as the scalar env's deal dicts or as the scalar
engine's chance outcomes (dealer, then the cards of each deal in deal order).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, NoReturn

import numpy as np
import torch

from ..core.deal import LaterDealsRandomWarning
from ..core.engine import IllegalActionError

#: forced deals as ``reset`` takes them: B dicts, or an int array of chance outcomes
Deals = Sequence[Any] | np.ndarray | torch.Tensor


def check_batch_size(batch_size: Any) -> int:
    """``batch_size`` as an int; ValueError (one line) unless a positive integer."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
    return int(batch_size)


def check_device(device: Any) -> torch.device:
    """``device`` as a ``torch.device``; ValueError (one line) for one torch refuses."""
    try:
        return torch.device(device)
    except RuntimeError as err:
        raise ValueError(f"device {device!r}: {err}") from None


def column(t: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """``t[i, idx[i]]`` for a ``(B, k)`` tensor and ``(B,)`` indices."""
    return t.gather(1, idx[:, None]).squeeze(1)


def first_bad(bad: torch.Tensor) -> int:
    """The index of the first True of a ``(B,)`` bool tensor."""
    return int(bad.nonzero()[0])


class BatchEngine:
    """``batch_size`` games of one scalar rules engine, stepped together.

    Args:
        batch_size: B, the number of games.
        device: a torch device (``"cpu"``, ``"cuda"``); the same code runs on both.
        seed: seeds the generator that deals every game; None draws one from the OS.
        **options: the scalar env's game options, same names, defaults and one-line
            errors: ``rules_class(**options)`` checks them (an unknown name is a
            TypeError) and is kept as ``rules``; ``num_players``, ``num_actions``
            and ``observation_size`` are its.

    Subclasses set ``rules_class`` and ``state_tensors`` and write `_build`,
    `_restart`, the deal forms (`_deal_array`, `_deal_outcomes`), ``legal_mask``,
    ``step``, ``observe`` and ``deal``. Illegal actions raise `IllegalActionError` (a
    ValueError) naming the first game with an illegal action, the action and the
    legal ones, before any game changes.
    """

    #: the scalar rules engine of the game (checks the options, parses forced deals)
    rules_class: type
    #: the per-game state tensors, by attribute name (`state_bytes`)
    state_tensors: tuple[str, ...] = ()
    num_players: int
    num_actions: int
    observation_size: int
    to_play: torch.Tensor

    def __init__(
        self,
        batch_size: int,
        *,
        device: str | torch.device = "cpu",
        seed: int | None = None,
        **options: Any,
    ):
        self.batch_size = check_batch_size(batch_size)
        # The scalar rules check every option and combination, with the same messages.
        self.rules = rules = self.rules_class(**options)
        self.num_players = rules.num_players
        self.num_actions = rules.num_actions
        self.observation_size = rules.observation_size
        self.device = check_device(device)
        self._cpu = self.device.type == "cpu"
        dev = self.device
        self.generator = torch.Generator(device=dev)
        self._seeded = False
        self._one = torch.ones((), device=dev, dtype=torch.int64)
        self._arange_b = torch.arange(self.batch_size, device=dev)
        self._shifts64 = torch.arange(64, device=dev, dtype=torch.int64)
        self._build()
        self.reset(seed=seed)

    def _build(self) -> None:
        """The engine's tables and state tensors (before the first `reset`)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(batch_size={self.batch_size}, {self.rules!r}, "
            f"device={str(self.device)!r})"
        )

    # --- starting games ---------------------------------------------------------------
    def reset(self, seed: int | None = None, deals: Deals | None = None) -> None:
        """Start every game afresh (a new episode).

        ``seed`` reseeds the generator (None keeps it running; at construction None
        seeds it from the OS). ``deals`` forces the start of each game, in either of
        the forms the engine's class docstring gives: B entries of the scalar env's
        reset options, or an int array of the scalar engine's chance outcomes. What
        they leave open is drawn. Bad deals raise ValueError before anything changes.
        """
        forced = None if deals is None else self._parse_deals(deals)
        if seed is not None:
            self.generator.manual_seed(int(seed))
        elif not self._seeded:
            self.generator.seed()
        self._seeded = True
        self._restart(forced)

    def _restart(self, forced: Any) -> None:
        """Every game starts a new episode, on the ``forced`` deals (what
        `_parse_deals` returned; None: all drawn)."""
        raise NotImplementedError

    def _parse_deals(self, deals: Any) -> Any:
        """Forced deals, checked: an array goes to `_deal_array`, B entries each to
        the scalar engine's ``forced_chance`` and the outcomes to `_deal_outcomes`."""
        B = self.batch_size
        if isinstance(deals, (np.ndarray, torch.Tensor)):
            rows = torch.as_tensor(
                np.asarray(deals) if isinstance(deals, np.ndarray) else deals
            )
            if rows.dtype.is_floating_point or rows.dtype == torch.bool:
                raise ValueError(
                    f"deals as an array must be integers, got {rows.dtype}"
                )
            return self._deal_array(rows.to(self.device, torch.int64))
        if isinstance(deals, Mapping) or not isinstance(deals, Sequence):
            raise ValueError(
                f"deals must be a list of {B} {self._deal_entry} or a "
                f"{self._deal_array_shape()} array, got {type(deals).__name__}"
            )
        if len(deals) != B:
            raise ValueError(f"deals must give {B} deals, got {len(deals)}")
        outcomes = []
        for i, entry in enumerate(deals):
            options = self._deal_options(i, entry)
            try:
                with warnings.catch_warnings():
                    # one entry at a time; the deals it leaves open are drawn here
                    warnings.simplefilter("ignore", LaterDealsRandomWarning)
                    outcomes.append(self.rules.forced_chance(options))
            except ValueError as err:
                raise ValueError(f"deals[{i}]: {err}") from None
        return self._deal_outcomes(outcomes)

    #: what one entry of ``deals`` is, for the message when ``deals`` is no list
    _deal_entry = "deal dicts"

    def _deal_options(self, i: int, entry: Any) -> Mapping[str, Any]:
        """The scalar engine's reset options for ``deals[i]`` (a deal dict)."""
        if not isinstance(entry, Mapping):
            raise ValueError(f"deals[{i}] must be a dict, got {entry!r}")
        return {"deal": entry}

    def _deal_array_shape(self) -> str:
        """The shape of the array form, as messages write it."""
        raise NotImplementedError

    def _deal_array(self, rows: torch.Tensor) -> Any:
        """The array form ``rows`` (int64 on the device), checked."""
        raise NotImplementedError

    def _deal_outcomes(self, outcomes: list[list[Any]]) -> Any:
        """The scalar engine's chance outcomes of each game (None: left open)."""
        raise NotImplementedError

    # --- actions ----------------------------------------------------------------------
    def _actions(self, actions: Any) -> torch.Tensor:
        """``actions`` as ``(B,)`` int64 on the device; ValueError unless B ints."""
        B = self.batch_size
        a = torch.as_tensor(actions, device=self.device)
        if a.shape != (B,) or a.dtype.is_floating_point or a.is_complex():
            raise ValueError(
                f"actions must be {B} integers (shape ({B},)), got {a.dtype} of shape "
                f"{tuple(a.shape)}"
            )
        return a.to(torch.int64)

    def _raise_illegal(self, a: torch.Tensor, bad: torch.Tensor) -> NoReturn:
        """`IllegalActionError` for the first game in ``bad`` (nothing has changed:
        its legal moves are the position's)."""
        i = first_bad(bad)
        others = int(bad.sum()) - 1
        action, A = int(a[i]), self.num_actions
        name = self.rules.action_name
        what = name(action) if 0 <= action < A else f"out of range 0..{A - 1}"
        legal = self.legal_mask()[i].nonzero().flatten().tolist()
        raise IllegalActionError(
            f"game {i}: action {action} ({what}) is not legal for player_"
            f"{int(self.to_play[i])}{self._illegal_context(i)}; legal: "
            + " ".join(name(x) for x in legal)
            + (f" (and {others} other game(s) with illegal actions)" if others else "")
        )

    def _illegal_context(self, i: int) -> str:
        """What the illegal-action message adds about game ``i`` after its player."""
        return ""

    def legal_mask(self) -> torch.Tensor:
        """``(B, num_actions)`` bool: the legal actions of the player to act."""
        raise NotImplementedError

    # --- observation ------------------------------------------------------------------
    def _seat(self, seat: Any) -> torch.Tensor:
        """The observing seat of each game: the player to act for None, else ``seat``
        (an int or B ints) as a ``(B,)`` tensor, or a one-line error."""
        if seat is None:
            return self.to_play
        B, P = self.batch_size, self.num_players
        t = torch.as_tensor(seat, device=self.device)
        kind_ok = not (t.dtype.is_floating_point or t.dtype == torch.bool)
        if not kind_ok or t.shape not in ((), (B,)):
            raise ValueError(f"seat must be an int or {B} ints, got {seat!r}")
        if ((t < 0) | (t >= P)).any():
            raise ValueError(f"seat must be 0..{P - 1}, got {seat!r}")
        return t.to(torch.int64).expand(B)

    def _unpack(self, words: torch.Tensor, count: int) -> torch.Tensor:
        """Bits ``0..count-1`` of the int64 words along the last axis, read as one
        little-endian bit string: ``(..., K)`` to ``(..., count)`` bool."""
        if self._cpu:
            # numpy's unpackbits on the tensor's own memory: about 3x torch's
            # shift-and-mask on CPU (docs/batch.md has the figures).
            raw = words.contiguous().numpy().view(np.uint8)
            raw = raw.reshape(*words.shape[:-1], -1)
            bits = np.unpackbits(raw, axis=-1, count=count, bitorder="little")
            return torch.from_numpy(bits.view(np.bool_))
        bits = (words[..., None] >> self._shifts64) & 1
        return bits.flatten(-2)[..., :count].bool()

    def _write_bits(
        self,
        out: torch.Tensor,
        col: int,
        words: torch.Tensor,
        count: int,
        block_major: bool = False,
    ) -> None:
        """Bits ``0..count-1`` of each int64 word of ``words`` as 0/1 floats into
        ``out[:, col : col + K * count]``, word after word: ``words`` is ``(B, K)``,
        or ``(K, B)`` with ``block_major``."""
        K, B = words.shape if block_major else words.shape[::-1]
        if self._cpu:
            # numpy's unpackbits, and numpy's uint8-to-float32 copy into the
            # output's own memory: about 3x torch's bool-to-float copy on CPU.
            # Unpacking the whole buffer flat (all 64 bits of each word) is about
            # 1.5x faster than along an axis with a count.
            raw = words.contiguous().numpy().view(np.uint8)
            bits = np.unpackbits(raw, bitorder="little")
            bits.shape = (*words.shape, 64)  # a view or an error, never a silent copy
            dest = out.numpy()[:, col : col + K * count]
            dest.shape = (B, K, count)
            src = bits[:, :, :count]
            dest[...] = src.transpose(1, 0, 2) if block_major else src
        else:
            bits = (words[:, :, None] >> self._shifts64[:count]) & 1
            if block_major:
                bits = bits.transpose(0, 1)
            out[:, col : col + K * count] = bits.reshape(B, K * count)

    # --- size -------------------------------------------------------------------------
    def state_bytes(self) -> int:
        """Bytes of game state per game (the tensors `step` reads and writes)."""
        tensors = [getattr(self, name) for name in self.state_tensors]
        total = sum(t.element_size() * t.nelement() for t in tensors)
        return total // self.batch_size


class ForcedDeals(NamedTuple):
    """Forced card deals, one row a game."""

    dealer: torch.Tensor
    """``(B,)`` int64, -1 where the first dealer is left to be drawn"""
    cards: torch.Tensor
    """``(B, K, n)`` int64: each forced deal's cards in deal order"""
    count: torch.Tensor
    """``(B,)`` int64: how many deals are forced (1..K); rows past it are 0"""


class CardBatchEngine(BatchEngine):
    """A `BatchEngine` whose games are deals of cards.

    Subclasses set, in `_build`, the cards one deal deals (`_set_pack`) and, where an
    episode has several deals fixed when it starts, ``_deals_per_episode``. Forced
    deals: B deal dicts in the scalar env's format (``{"dealer": d, "hands": …}``),
    or an int array ``(B, 1 + k n)`` of the scalar engine's chance outcomes (the
    dealer, then the ``n`` cards of each of ``k`` deals in deal order).
    """

    _pack: torch.Tensor
    _full_pack: bool
    _deals_per_episode = 1

    def _set_pack(self, ids: Sequence[int]) -> None:
        """The card ids one deal deals."""
        ids = sorted(ids)
        self._pack = torch.tensor(ids, device=self.device, dtype=torch.int64)
        # every id from 0: a shuffled order is the cards themselves
        self._full_pack = ids == list(range(len(ids)))

    def _draw_deals(
        self, k: int, deals: int | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``k`` dealers and shuffled packs, ``(k, n)`` (``(k, deals, n)`` with
        ``deals``), from the generator."""
        g, dev = self.generator, self.device
        dealer = torch.randint(0, self.num_players, (k,), generator=g, device=dev)
        n = self._pack.numel()
        shape = (k, n) if deals is None else (k, deals, n)
        order = torch.rand(shape, generator=g, device=dev).argsort(dim=-1)
        if self._full_pack:
            return dealer, order
        return dealer, self._pack[order]

    def _deal_array_shape(self) -> str:
        B, K, n = self.batch_size, self._deals_per_episode, self._pack.numel()
        return f"({B}, {n + 1})" if K == 1 else f"({B}, 1 + k*{n})"

    def _deal_array(self, rows: torch.Tensor) -> ForcedDeals:
        B, K, n, P = (
            self.batch_size,
            self._deals_per_episode,
            self._pack.numel(),
            self.num_players,
        )
        k = (rows.shape[1] - 1) // n if rows.dim() == 2 else 0
        if rows.dim() != 2 or rows.shape[0] != B or rows.shape[1] != 1 + k * n:
            what = f"(dealer, then {n} cards" + (
                ")" if K == 1 else f" per deal, k = 1..{K})"
            )
            raise ValueError(
                f"deals as an array must have shape {self._deal_array_shape()} "
                f"{what}, got {tuple(rows.shape)}"
            )
        if not 1 <= k <= K:
            raise ValueError(
                f"deals as an array give {k} deals per game; the episode has {K}"
            )
        bad = (rows[:, 0] < 0) | (rows[:, 0] >= P)
        if bad.any():
            i = first_bad(bad)
            raise ValueError(
                f"deals[{i}]: dealer must be a seat 0..{P - 1}, got {int(rows[i, 0])}"
            )
        cards = rows[:, 1:].reshape(B, k, n)
        bad = (cards.sort(dim=2).values != self._pack).any(dim=2)
        if bad.any():
            i, j = (int(x) for x in bad.nonzero()[0])
            which = "the" if K == 1 else f"deal {j}'s"
            ids = (
                f"0..{n - 1}"
                if self._full_pack
                else f"of the pack ({' '.join(map(str, self._pack.tolist()))})"
            )
            raise ValueError(
                f"deals[{i}]: {which} {n} cards must be each card id {ids} once"
            )
        full = torch.zeros(B, K, n, device=self.device, dtype=torch.int64)
        full[:, :k] = cards
        count = torch.full((B,), k, device=self.device, dtype=torch.int64)
        return ForcedDeals(rows[:, 0], full, count)

    def _deal_outcomes(self, outcomes: list[list[Any]]) -> ForcedDeals:
        B, K, n = self.batch_size, self._deals_per_episode, self._pack.numel()
        cards = np.zeros((B, K, n), dtype=np.int64)
        counts = []
        for i, row in enumerate(outcomes):
            deals = np.array(row[1:], dtype=np.int64).reshape(-1, n)
            cards[i, : len(deals)] = deals
            counts.append(len(deals))
        dev = self.device
        return ForcedDeals(
            torch.tensor(
                [-1 if row[0] is None else row[0] for row in outcomes],
                device=dev,
                dtype=torch.int64,
            ),
            torch.from_numpy(cards).to(dev),
            torch.tensor(counts, device=dev, dtype=torch.int64),
        )

    def _dealt(self, forced: ForcedDeals | None) -> tuple[torch.Tensor, torch.Tensor]:
        """One deal per game for `reset`: drawn, with the forced dealer and cards in
        place where given (the draw runs either way, so a seed deals alike)."""
        dealer, cards = self._draw_deals(self.batch_size)
        if forced is None:
            return dealer, cards
        dealer = torch.where(forced.dealer >= 0, forced.dealer, dealer)
        return dealer, forced.cards[:, 0]
