"""``benchmarks/leaderboard.py``: the shipped agents join the tables whose options a
model is shipped for, and ``--no-shipped`` leaves them out."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from parlour.league.identity import checkpoint_hash, expert_hash

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
spec = importlib.util.spec_from_file_location("leaderboard", BENCH / "leaderboard.py")
leaderboard = importlib.util.module_from_spec(spec)
sys.modules["leaderboard"] = leaderboard
spec.loader.exec_module(leaderboard)


@pytest.mark.parametrize(
    ("game", "options", "expected"),
    [
        ("german_whist_v0", {}, ["pretrained", "expert"]),
        ("german_whist_v0", {"variant": "honeymoon"}, ["pretrained", "expert"]),
        ("forty_fives_v0", {}, ["pretrained", "expert"]),
        # the shipped Forty-Fives model plays matches to 45, not single deals
        ("forty_fives_v0", {"episode": "deal"}, []),
        ("forty_fives_v0", {"players": 2}, []),
    ],
)
def test_shipped_agents_follow_the_models_options(game, options, expected):
    assert leaderboard.shipped_agents(game, options) == expected


def _names(markdown: str) -> list[str]:
    return [
        line.split("|")[2].strip().strip("`")
        for line in markdown.splitlines()
        if line.startswith("| ") and line.split("|")[1].strip().isdigit()
    ]


@pytest.mark.parametrize("shipped", [True, False])
def test_a_small_leaderboard_rates_the_shipped_agents(tmp_path, shipped):
    out = tmp_path / "docs" / "leaderboard.md"
    argv = ["--only", "fuenfzehn_tot_v0", "--scale", "0.01"]
    argv += ["--db", str(tmp_path / "l.sqlite"), "--out", str(out)]
    argv += [] if shipped else ["--no-shipped"]
    assert leaderboard.main(argv) == 0
    names = _names(out.read_text())
    assert "optimal" in names and "random" in names
    rated = [n.split("#")[0] for n in names if "#" in n]
    assert sorted(rated) == (["expert", "pretrained"] if shipped else [])
    # pretrained is named by its weights' hash, expert by that and its search's budget
    hashes = {n.split("#")[0]: n.split("#")[1] for n in names if "#" in n}
    if shipped:
        network = checkpoint_hash("pretrained", "fuenfzehn_tot_v0")
        assert hashes["pretrained"] == network[:12]
        assert hashes["expert"] == expert_hash(network, {})[:12]
    made_by = "--no-shipped" in out.read_text()
    assert made_by is not shipped
    assert (out.parent / "leaderboard" / "fuenfzehn_tot_v0.png").stat().st_size > 0
