"""What every batched engine checks the same way: the batch size, the device and forced
deals given as the scalar env's deal dicts."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch


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


def deal_dict_rows(
    deals: Any,
    batch_size: int,
    width: int,
    forced_chance: Callable[[Mapping[str, Any]], Sequence[Any]],
    device: torch.device,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(dealer, cards)`` of ``batch_size`` deal dicts in the scalar env's format,
    each parsed by the scalar engine's ``forced_chance({"deal": deal})`` (dealer -1
    where a dict leaves it to be drawn). ``width`` is the length of one row of the
    array form (dealer and cards), for the message when ``deals`` is neither."""
    B = batch_size
    if isinstance(deals, Mapping) or not isinstance(deals, Sequence):
        raise ValueError(
            f"deals must be a list of {B} deal dicts or a ({B}, {width}) array, "
            f"got {type(deals).__name__}"
        )
    if len(deals) != B:
        raise ValueError(f"deals must give {B} deals, got {len(deals)}")
    out = []
    for i, deal in enumerate(deals):
        if not isinstance(deal, Mapping):
            raise ValueError(f"deals[{i}] must be a dict, got {deal!r}")
        try:
            outcomes = forced_chance({"deal": deal})
        except ValueError as err:
            raise ValueError(f"deals[{i}]: {err}") from None
        out.append([-1 if outcomes[0] is None else outcomes[0], *outcomes[1:]])
    rows = torch.tensor(out, device=device, dtype=torch.int64)
    return rows[:, 0], rows[:, 1:]
