"""German Whist's own scenarios for its batched engine, and the benchmark of every
batched engine. What every engine shares is tested in `test_batch_conformance.py`,
the step-by-step agreement with the scalar engine in `test_batch_scalar.py`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from parlour.envs import batch
from parlour.envs.batch import GermanWhistBatch


def test_deals_are_whole_packs() -> None:
    """Every drawn deal deals each card once (52, or 54 with Honeymoon's jokers)."""
    for variant, n in (("german", 52), ("honeymoon", 54)):
        games = GermanWhistBatch(16, variant=variant, seed=5)
        for _ in range(2):
            for i in range(16):
                assert sorted(games.cards[i].tolist()) == list(range(n))
            games.reset()


def test_batch_speed_benchmark_writes_rows_for_every_covered_variant(tmp_path) -> None:
    """benchmarks/batch_speed.py runs every engine of the registry (tiny budget: the
    figures are not checked, only that the table and the JSON rows are there)."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "batch_speed.py"
    out = tmp_path / "sub" / "rows.json"
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            "--seconds",
            "0.05",
            "--repeats",
            "1",
            "--sizes",
            "8",
            "--variants",
            "first",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())["rows"]
    assert {r["env"] for r in rows} == set(batch.ENGINES)
    assert {r["kind"] for r in rows} == {"scalar", "batch"}
    assert all(r["card_plays_per_s"] > 0 for r in rows)
    bad = subprocess.run(
        [sys.executable, str(script), "--json", str(Path(__file__)) + "/x.json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "is a file, not a directory" in bad.stderr
