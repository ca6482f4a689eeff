"""The per-game records (`parlour.envs.GameRecord`): every game package under envs/
registers one, and the old name tables are views of them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from parlour import agents, envs
from parlour.cli import EXTRA_KINDS, agent_kinds
from parlour.envs import GameRecord
from parlour.envs.core.record import HOOKS, REQUIRED

ENVS_DIR = Path(envs.__file__).parent


def test_every_game_package_registers_one_record():
    packages = sorted(
        p.parent.name
        for p in ENVS_DIR.glob("*/__init__.py")
        if p.parent.name not in envs._NOT_GAMES
    )
    assert set(envs._NOT_GAMES) == {"core", "batch"}  # shared code, batched engines
    assert sorted(r.package.rsplit(".", 1)[1] for r in envs.records()) == packages
    for r in envs.records():
        assert envs.module(r.name).GAME is r
        assert re.fullmatch(r"[a-z_]+_v\d+", r.name) and r.title


@pytest.mark.parametrize("name", envs.names())
def test_every_record_has_every_hook_and_each_resolves(name):
    """The hooks every game needs are declared (`GameRecord.missing`), and every hook
    string names something that imports: a typo fails here, not in the first game a
    user plays."""
    record = envs.record(name)
    assert record.missing() == []
    for hook in HOOKS:
        if getattr(record, hook):
            assert callable(record.load(hook)), f"{name}.{hook} is not callable"


def test_a_record_missing_hooks_says_which():
    bare = GameRecord(name="x_v0", title="X", package="x", variants=({},))
    assert bare.missing() == [*REQUIRED, "random_deal", "hidden_twins"]
    with pytest.raises(ValueError, match="x_v0 has no text_view hook"):
        bare.load("text_view")
    with pytest.raises(ValueError, match="'nothing' is not a hook"):
        bare.load("nothing")
    dice = GameRecord(
        name="d_v0", title="D", package="d", variants=({},), no_deal="dice",
        perfect_information=True,
    )  # fmt: skip
    assert "random_deal" not in dice.missing()
    assert "hidden_twins" not in dice.missing()


def test_tables_are_views_of_the_records():
    records = {r.name: r for r in envs.records()}
    assert list(envs.VARIANTS) == envs.names() == sorted(records)
    for name, r in records.items():
        assert envs.VARIANTS[name] == [dict(o) for o in r.variants]
        assert agents.HEURISTICS[name] == r.heuristic
        assert EXTRA_KINDS[name] == list(r.extra_kinds)
    assert agents.EXACT_MOVES == {
        "german_whist_v0": records["german_whist_v0"].exact_moves
    }
    assert agents.EXTRA_AGENTS == {
        name: r.extra_agents for name, r in records.items() if r.extra_agents
    }
    # the views are copies: a caller changing one changes no record
    envs.VARIANTS["german_whist_v0"][0]["variant"] = "changed"
    assert envs.VARIANTS["german_whist_v0"][0] == {"variant": "german"}


def test_agent_kinds_come_from_the_record():
    assert agent_kinds("german_whist_v0") == [
        "random",
        "heuristic",
        "heuristic:-tip,+tip",
        "solver",
        "pimc:N",
        "endgame:SPEC",
        "pretrained",
        "expert",
        "ckpt:PATH",
        "text:scripted",
    ]


def test_importing_the_registry_loads_no_game_and_no_torch():
    code = (
        "import sys, parlour.envs as e; "
        "assert not [m for m in sys.modules if m.startswith('parlour.envs.german')]; "
        "e.names(); assert 'parlour.envs.german_whist' in sys.modules; "
        "assert 'torch' not in sys.modules and 'parlour.agents' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"variants": ()}, "at least one variant"),
        ({"heuristic": "no_colon"}, "module:attribute"),
        ({"extra_agents": "m:f"}, "go together"),
        ({"text_view": "no_colon"}, "module:attribute"),
        ({"random_deal": "m:f", "no_deal": "dice"}, "not both"),
    ],
)
def test_a_bad_record_is_refused(kwargs, message):
    base = {"name": "x_v0", "title": "X", "package": "x", "variants": ({},)}
    with pytest.raises(ValueError, match=message):
        GameRecord(**{**base, **kwargs})


def test_unknown_env_names_the_known_ones():
    with pytest.raises(ValueError, match="known: forty_fives_v0"):
        envs.record("nope_v0")
