"""Learning curves of benchmarks: ``parlour bench-plot DIR... --out PNG``.

A training benchmark (`training.bench`) keeps each seed's learning curve in its row of
``bench.json`` (``curve``: the training run's evaluations along the way, every
``eval_every`` learner steps, ``eval_games`` duplicate games against each of
``eval_opponents``). `plot` draws several benchmarks of one game, typically one per
algorithm, into one figure: a panel per opponent, x the learner steps, y the win share,
one line per benchmark (the mean over its seeds) with a band from its lowest to its
highest seed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .bench import _sides
from .checkpoint import check_output_path


@dataclass(frozen=True)
class Curves:
    """One benchmark's seeds' learning curves, by opponent: the steps every seed was
    evaluated at and each seed's win share there (a row per seed)."""

    label: str
    env: str
    options: dict[str, Any]
    steps: dict[str, list[int]]
    win_share: dict[str, np.ndarray]
    seeds: list[int]

    def mean_band(
        self, opponent: str
    ) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
        """(steps, mean over the seeds, lowest seed, highest seed) against
        ``opponent``."""
        w = self.win_share[opponent]
        return self.steps[opponent], w.mean(axis=0), w.min(axis=0), w.max(axis=0)


def read_bench(path: str | Path) -> dict[str, Any]:
    """A benchmark's ``bench.json`` (``path`` is its directory or the file);
    ValueError (one line) when there is none or it is not a benchmark's."""
    p = Path(path)
    file = p / "bench.json" if p.is_dir() else p
    if not file.is_file():
        raise ValueError(f"{path}: no bench.json (not a `parlour bench` output)")
    try:
        data = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{file}: not a readable bench.json ({err})") from None
    if not isinstance(data, dict) or not {"env", "rows", "recipe"} <= data.keys():
        raise ValueError(f"{file}: not a bench.json (no env, recipe and rows)")
    return data


def curves_of(data: Mapping[str, Any], label: str, source: str) -> Curves:
    """The seeds' curves of one benchmark's JSON; ValueError (one line) for a
    benchmark of existing agents, or a seed without a curve."""
    if data["recipe"] is None or not data["rows"]:
        raise ValueError(f"{source}: measures existing agents, no training to plot")
    per_seed: list[dict[str, dict[int, float]]] = []
    for row in data["rows"]:
        if not row.get("curve"):
            raise ValueError(
                f"{source}: {row.get('label', 'a row')} has no learning curve "
                "(bench it again with this version)"
            )
        points: dict[str, dict[int, float]] = {}
        for point in row["curve"]:
            points.setdefault(point["opponent"], {})[int(point["step"])] = float(
                point["win_rate"]
            )
        per_seed.append(points)
    steps, shares = {}, {}
    for opponent in per_seed[0]:
        if not all(opponent in seed for seed in per_seed):
            continue
        # the steps every seed was evaluated at (the same schedule in every seed)
        common = sorted(set.intersection(*(set(seed[opponent]) for seed in per_seed)))
        if not common:
            raise ValueError(f"{source}: the seeds share no evaluated step")
        steps[opponent] = common
        shares[opponent] = np.array(
            [[seed[opponent][s] for s in common] for seed in per_seed]
        )
    return Curves(
        label,
        data["env"],
        dict(data.get("options", {})),
        steps,
        shares,
        [int(row.get("seed", i)) for i, row in enumerate(data["rows"])],
    )


def load(
    paths: Sequence[str | Path],
    labels: Sequence[str] = (),
    opponents: Sequence[str] = (),
) -> tuple[list[Curves], list[str]]:
    """The curves of each benchmark in ``paths`` (labelled ``labels``, else by the
    directory's name) and the opponents to draw (``opponents``, else every one the
    first has). Every check is made here, before anything is drawn: ValueError (one
    line) for a path that is not a training benchmark with curves, benchmarks of
    different games or options, a label count that does not match, an opponent
    a benchmark has no curve against."""
    if not paths:
        raise ValueError("give at least one benchmark directory")
    if labels and len(labels) != len(paths):
        raise ValueError(
            f"--label: {len(labels)} labels for {len(paths)} benchmarks (one each)"
        )
    out = []
    for i, path in enumerate(paths):
        p = Path(path)
        name = labels[i] if labels else (p if p.is_dir() else p.parent).resolve().name
        out.append(curves_of(read_bench(p), name, str(path)))
    first = out[0]
    for c, path in zip(out[1:], paths[1:], strict=True):
        if (c.env, c.options) != (first.env, first.options):
            raise ValueError(
                f"{path} benchmarks {c.env} {c.options}, {paths[0]} "
                f"{first.env} {first.options}: one game per figure"
            )
    chosen = list(opponents) or list(first.steps)
    for c, path in zip(out, paths, strict=True):
        missing = [o for o in chosen if o not in c.steps]
        if missing:
            raise ValueError(
                f"{path}: no learning curve against {', '.join(missing)} "
                f"(it has {', '.join(c.steps) or 'none'})"
            )
    return out, chosen


def plot(
    curves: Sequence[Curves],
    opponents: Sequence[str],
    out: str | Path,
    title: str | None = None,
) -> Path:
    """Draw ``curves`` into one PNG: a panel per opponent, one line per benchmark
    (the mean over its seeds) with its seeds' band (lowest to highest)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    first = curves[0]
    even = 1 / _sides(first.env, first.options)
    fig, axes = plt.subplots(
        1, len(opponents), figsize=(5.2 * len(opponents), 4.2), squeeze=False
    )
    for ax, opponent in zip(axes[0], opponents, strict=True):
        top = even
        for c in curves:
            x, mean, low, high = c.mean_band(opponent)
            (line,) = ax.plot(x, mean, marker="o", ms=3, label=c.label)
            ax.fill_between(x, low, high, color=line.get_color(), alpha=0.18)
            top = max(top, float(high.max()))
        ax.axhline(even, color="grey", lw=0.8, ls="--")
        # from 0 to a little above the highest band: small shares stay readable
        ax.set_ylim(0, min(1.0, top + 0.1))
        ax.set_xlabel("learner steps")
        ax.set_ylabel(f"win share vs {opponent}")
        ax.set_title(f"vs {opponent}")
        ax.grid(alpha=0.3)
    seeds = len(first.seeds)
    axes[0][0].legend(loc="upper left", fontsize="small")
    opts = ", ".join(f"{k}={v}" for k, v in first.options.items())
    game = first.env + (f" ({opts})" if opts else "")
    fig.suptitle(title or f"{game}: mean of {seeds} seeds, band lowest to highest")
    fig.tight_layout()
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def bench_plot(
    paths: Sequence[str | Path],
    out: str | Path,
    labels: Sequence[str] = (),
    opponents: Sequence[str] = (),
    title: str | None = None,
) -> Path:
    """Check everything (`load`, the output path), then draw the figure (`plot`)."""
    if Path(out).suffix.lower() != ".png":
        raise ValueError(f"--out {out}: the figure is a PNG, give a .png path")
    check_output_path(out, what="--out")
    curves, chosen = load(paths, labels, opponents)
    return plot(curves, chosen, out, title)
