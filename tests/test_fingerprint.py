"""The rules fingerprint (`parlour.envs.core.fingerprint`): every variant of every game
has one, it is the same in every process, and a change of a rule table, of the
observation encoder or of the legal moves moves the component that names it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from parlour import envs
from parlour.envs.core import fingerprint as fp
from parlour.envs.core.engine import Game

VARIANTS = [(name, options) for name in envs.names() for options in envs.VARIANTS[name]]


def _game(name: str, options: dict):
    return envs.make(name, raw=True, **options).game


def _altered(name: str, alter) -> tuple[dict, dict]:
    """The fingerprint of ``name``'s default game before and after ``alter(game)``
    (which changes the engine object only)."""
    options = envs.game_options(name)
    game = _game(name, {})
    before = fp.of_game(game, options)
    alter(game)
    return before, fp.of_game(game, options)


@pytest.mark.parametrize(("name", "options"), VARIANTS)
def test_every_variant_has_a_fingerprint_of_json_tables(name, options):
    game = _game(name, options)
    assert type(game).rule_tables is not Game.rule_tables  # each game gives its own
    tables = game.rule_tables()
    assert tables and json.loads(json.dumps(tables, allow_nan=False)) is not None
    if hasattr(game, "deck"):
        assert tables["pack"]["names"] == list(game.deck.names)
    found = envs.fingerprint(name, options)
    assert set(found) == {*fp.COMPONENTS, "digest"}
    assert all(len(v) == fp.HEX and int(v, 16) >= 0 for v in found.values())
    # the cached value is the one a fresh engine gives
    assert fp.of_game(game, envs.game_options(name, options)) == found
    assert fp.check_shape(found) is None


def test_variants_of_a_game_differ():
    prints = [json.dumps(envs.fingerprint(n, o)) for n, o in VARIANTS]
    assert len(set(prints)) == len(prints)
    german = envs.fingerprint("german_whist_v0")
    honeymoon = envs.fingerprint("german_whist_v0", {"variant": "honeymoon"})
    assert fp.changes(german, honeymoon) == list(fp.COMPONENTS)


def test_options_are_read_with_their_defaults():
    """Spelling out a default option is the same game, so the same fingerprint."""
    assert envs.fingerprint("herzeln_v0") == envs.fingerprint(
        "herzeln_v0", {"players": 4, "domino_layout": "single_cyclic_line"}
    )
    with pytest.raises(ValueError, match="unknown option 'trumps'"):
        envs.fingerprint("herzeln_v0", {"trumps": "H"})


def test_a_changed_rule_table_moves_the_rules_component():
    """Herzeln's Queen penalty of -20 made -25: the rules component changes (and the
    sample games' returns with it), the actions and options do not."""

    def penalty(game):
        row = game.card_value[3]  # NO_QUEENS
        row[:] = [-25 if value else 0 for value in row]

    changed = fp.changes(*_altered("herzeln_v0", penalty))
    assert "rules" in changed
    assert "actions" not in changed and "options" not in changed


def test_a_changed_observation_layout_is_named_alone(monkeypatch):
    """The same features in another order (a layout change of the same size) moves
    the observation component only."""

    def reverse(game):
        encode = game.observe
        monkeypatch.setattr(game, "observe", lambda state, p: encode(state, p)[::-1])

    before, after = _altered("german_whist_v0", reverse)
    assert fp.changes(before, after) == ["observation"]
    assert fp.describe(before, after) == (
        f"observation layout changed (was {before['observation'][:8]}…, now "
        f"{after['observation'][:8]}…)"
    )


def test_a_changed_legal_move_rule_moves_the_play_component(monkeypatch):
    """A rule changed in code, not in a table (here: the last legal move dropped),
    changes the sample games."""

    def fewer(game):
        legal = game.legal_actions

        def moves(state):
            found = legal(state)
            return found[:-1] if len(found) > 1 else found

        monkeypatch.setattr(game, "legal_actions", moves)

    assert "play" in fp.changes(*_altered("fuenfzehnern_v0", fewer))


def test_the_fingerprint_is_the_same_in_another_process():
    """Nothing in it depends on the process (hash seeds, the global RNGs)."""
    code = (
        "import json; from parlour import envs; "
        "print(json.dumps(envs.fingerprint('forty_fives_v0', {'players': 2})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == envs.fingerprint("forty_fives_v0", {"players": 2})


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("abc", "expected a mapping of options, actions"),
        ({"options": "a", "actions": "b"}, "no rules, observation, play, digest"),
    ],
)
def test_check_shape_names_what_is_missing(value, problem):
    assert problem in fp.check_shape(value)
