"""The chart of a tips run (``<game>.png``): each tip's effect with its interval.

Pooled and per opponent; for Fünfzehn – tot also the round table's seat chances.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...agents.fuenfzehn_tot_rationale import RULE_SETS

if TYPE_CHECKING:
    from .run import TipsRun

def plot_chart(run: TipsRun, path: Path) -> None:
    """Effect ± 95% interval per tip (pooled and per opponent); for Fünfzehn – tot also
    the round's seat chances under each rule set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = run.results
    panels = 2 if run.rounds else 1
    height = max(4.0 if panels > 1 else 2.5, 0.6 * len(res) + 1.5)
    fig, axes = plt.subplots(1, panels, figsize=(7.5 * panels, height))
    axes = np.atleast_1d(axes)
    ax = axes[0]
    primary = res[0].primary if res else "win"
    scale = 100 if primary == "win" else 1
    markers = ["s", "^", "v", "D", "P"]
    for row, r in enumerate(res):
        y = len(res) - 1 - row
        t = r.tests[primary]
        color = {"supported": "tab:green", "refuted": "tab:red"}.get(
            r.verdict, "tab:gray"
        )
        ax.errorbar(
            t.estimate * scale,
            y,
            xerr=[[(t.estimate - t.low) * scale], [(t.high - t.estimate) * scale]],
            fmt="o",
            color=color,
            capsize=4,
            lw=2,
            label="all opponents" if row == 0 else None,
        )
        for i, o in enumerate(r.opponents):
            po = r.per_opponent[o][primary]
            ax.plot(
                po.estimate * scale,
                y - 0.15 * (i + 1),
                markers[i % len(markers)],
                color="black",
                alpha=0.5,
                ms=5,
                label=o if row == 0 else None,
            )
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(res)), [r.name for r in reversed(res)])
    ax.set_ylim(-0.2 - 0.15 * len(res[0].opponents) if res else -0.5, len(res) - 0.5)
    ax.set_xlabel(
        "Δ win rate A − B (points)"
        if primary == "win"
        else "Δ score A − B (reward per game)"
    )
    ax.set_title(f"{run.config.env}: tip on (A) vs off (B), 95% CI")
    ax.grid(axis="x", alpha=0.3)
    if res:
        ax.legend(fontsize=8, loc="best")
    if run.rounds:
        ax = axes[1]
        n = 4 if any(r.players == 4 for r in run.rounds) else run.rounds[0].players
        width = 0.2
        for j, rules in enumerate(RULE_SETS):
            r = next(
                x for x in run.rounds if (x.half, x.players, x.rules) == (1, n, rules)
            )
            ax.bar(
                np.arange(n) + (j - 1.5) * width,
                [float(c) for c in r.chance],
                width,
                label=rules,
            )
        ax.axhline(1 / n, color="black", lw=0.8, ls="--")
        ax.set_xticks(range(n), [f"seat {i + 1}" for i in range(n)])
        ax.set_ylabel("P(taking the match)")
        ax.set_title(f"First-half round, {n} optimal players")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
