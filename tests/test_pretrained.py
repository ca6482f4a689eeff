"""The ``pretrained`` agent spec: a game's shipped checkpoint
(`parlour/models/<name>/`).

These tests export a small random network into a temporary models root; what is
shipped is tested in ``test_pretrained_shipped.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from parlour import agents, envs
from parlour.cli import main
from parlour.training import checkpoint as ckpt_io
from parlour.training import pretrained
from parlour.training.arena import run_arena, save_json

ROOT = Path(__file__).resolve().parent.parent
ENV = "german_whist_v0"
FILES = {"manifest.json", "weights.pt", "command.sh", "card.md"}


def tiny_checkpoint(
    path: Path,
    env: str = ENV,
    options: dict | None = None,
    seed: int = 0,
    fingerprint: dict | None = None,
) -> Path:
    """A checkpoint of a random 16-unit network, as training writes one (with the
    value head and an optimiser entry that the export must drop); ``fingerprint``
    replaces the env's rules fingerprint (``{}``: a manifest without one)."""
    options = options or {}
    game = envs.make(env, raw=True, **options).game
    obs, acts = game.observation_size, game.num_actions
    torch.manual_seed(seed)
    policy = {
        "mlp_extractor.policy_net.0.weight": torch.randn(16, obs),
        "mlp_extractor.policy_net.0.bias": torch.randn(16),
        "mlp_extractor.value_net.0.weight": torch.randn(16, obs),
        "mlp_extractor.value_net.0.bias": torch.randn(16),
        "action_net.weight": torch.randn(acts, 16),
        "action_net.bias": torch.randn(acts),
        "value_net.weight": torch.randn(1, 16),
        "value_net.bias": torch.randn(1),
    }
    manifest = {
        "env": env,
        "env_options": options,
        "game_options": envs.game_options(env, options),
        "observation_size": obs,
        "num_actions": acts,
        "net_arch": [16],
        "activation": "relu",
        "step": 1234,
        "config": {"env": env},
        "fingerprint": envs.fingerprint(env, options),
    }
    if fingerprint is not None:
        manifest.pop("fingerprint")
        manifest.update({"fingerprint": fingerprint} if fingerprint else {})
    return ckpt_io.save(path, {"policy": policy, "optimizer": {}}, manifest)


@pytest.fixture
def models(tmp_path, monkeypatch):
    """A models root with a tiny German Whist agent, evaluated against random."""
    source = tiny_checkpoint(tmp_path / "run" / "step_1234")
    result = run_arena(ENV, [f"ckpt:{source}", "random"], games=4, duplicate=True)
    save_json(result, tmp_path / "eval-random.json")
    (tmp_path / "card.md").write_text("# card\n")
    root = tmp_path / "models"
    pretrained.export(
        source,
        root,
        command="parlour train german_whist_v0\n",
        evaluations=[tmp_path / "eval-random.json"],
        card=tmp_path / "card.md",
    )
    monkeypatch.setattr(pretrained, "models_root", lambda: root)
    return root


def test_export_keeps_only_the_actor_and_loads_as_a_checkpoint(models):
    directory = models / ENV
    assert {p.name for p in directory.iterdir()} == FILES
    loaded = ckpt_io.load(directory)  # both SHA-256 checks, weights_only
    assert set(loaded.tensors) == {"policy"}
    assert all(
        k.startswith(("mlp_extractor.policy_net.", "action_net."))
        for k in loaded.tensors["policy"]
    )
    info = loaded.manifest["pretrained"]
    assert info["source_step"] == 1234
    assert info["command"] == "parlour train german_whist_v0\n"
    assert info["evaluation"][0]["field"] == "random"
    assert info["evaluation"][0]["games"] == 4
    assert (directory / "command.sh").read_text() == "parlour train german_whist_v0\n"


def test_export_carries_the_rules_fingerprint_of_now(models, tmp_path):
    """The exported manifest holds the env's fingerprint; a run trained on other
    rules is refused before anything is written, and one from before fingerprints is
    exported (with a warning) under the fingerprint of now."""
    manifest = ckpt_io.load(models / ENV).manifest
    assert manifest["fingerprint"] == envs.fingerprint(ENV)
    other = {**envs.fingerprint(ENV), "play": "0" * 16}
    source = tiny_checkpoint(tmp_path / "other", fingerprint=other)
    with pytest.raises(ckpt_io.CheckpointError, match="sample games changed"):
        pretrained.export(source, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    legacy = tiny_checkpoint(tmp_path / "legacy", fingerprint={})
    with pytest.warns(ckpt_io.UncheckedRulesWarning):
        out = pretrained.export(legacy, tmp_path / "out")
    assert ckpt_io.load(out).manifest["fingerprint"] == envs.fingerprint(ENV)


def test_pretrained_plays_as_its_checkpoint_does(models):
    a = run_arena(ENV, ["pretrained", "random"], games=4, duplicate=True, seed=3)
    b = run_arena(
        ENV, [f"ckpt:{models / ENV}", "random"], games=4, duplicate=True, seed=3
    )
    assert a.specs[0] == "pretrained"
    assert a.candidate_scores == b.candidate_scores
    agent = agents.make("pretrained@sample", ENV, seed=1)
    assert agent.spec == "pretrained@sample" and not agent.deterministic


def test_env_without_a_model_names_the_envs_that_have_one(models):
    with pytest.raises(ValueError) as err:
        agents.make("pretrained", "herzeln_v0", env_options={"players": 4})
    message = str(err.value)
    assert "\n" not in message
    assert "no pretrained agent is shipped for herzeln_v0" in message
    assert "envs that have one: german_whist_v0" in message


def test_other_options_are_refused_with_the_options_it_was_trained_for(models):
    with pytest.raises(ValueError) as err:
        agents.make("pretrained", ENV, env_options={"variant": "honeymoon"})
    message = str(err.value)
    assert "\n" not in message
    assert "trained for -o variant=german, not variant=honeymoon" in message
    with pytest.raises(ValueError, match="no pretrained agent named x is shipped"):
        agents.make("pretrained:x", ENV)


def test_cli_arena_play_eval_and_list(models, tmp_path, monkeypatch, capsys):
    assert (
        main(
            [
                "arena",
                ENV,
                "--agents",
                "pretrained",
                "heuristic",
                "--games",
                "2",
                "--quiet",
            ]
        )
        == 0
    )
    assert "pretrained vs heuristic" in capsys.readouterr().out
    assert (
        main(["eval", f"pretrained:{ENV}", "--vs", "random", "--games", "2", "--quiet"])
        == 0
    )
    assert f"checkpoint {models / ENV}" in capsys.readouterr().out
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert f"pretrained {ENV}: default options; vs random" in out
    monkeypatch.setattr("builtins.input", lambda prompt="": "quit")
    assert main(["play", ENV, "--opponent", "pretrained"]) == 0
    capsys.readouterr()
    code = main(
        ["arena", ENV, "-o", "variant=honeymoon", "--agents", "pretrained", "random"]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "trained for" in err
    assert main(["arena", "fuenfzehn_tot_v0", "--agents", "pretrained", "random"]) == 2
    assert "envs that have one" in capsys.readouterr().err


def test_league_stores_pretrained_with_its_weights_hash(models, tmp_path):
    import sqlite3

    from parlour import league

    db = tmp_path / "l.sqlite"
    league.run_league(ENV, ["pretrained", "random"], games=2, db=db)
    digest = pretrained.manifest(ENV)["weights_sha256"]
    with sqlite3.connect(db) as con:
        (hashes,) = con.execute("SELECT hashes FROM games LIMIT 1").fetchone()
    assert json.loads(hashes) == {f"pretrained#{digest[:12]}": digest}


def test_a_model_per_variant_is_chosen_by_the_game_options(models, tmp_path, capsys):
    source = tiny_checkpoint(
        tmp_path / "hm" / "step_1234", options={"variant": "honeymoon"}, seed=1
    )
    out = pretrained.export(source, models, command="parlour train\n")
    assert out == models / f"{ENV}.honeymoon"
    assert pretrained.models_of(ENV) == [models / ENV, out]
    assert pretrained.model_dir(ENV) == models / ENV
    assert pretrained.model_dir(ENV, {"variant": "honeymoon"}) == out
    from parlour import league

    # each variant's pretrained is its own model, with its own weights in a league
    honeymoon = league.checkpoint_hash("pretrained", ENV, {"variant": "honeymoon"})
    assert honeymoon == pretrained.manifest(ENV, {"variant": "honeymoon"})[
        "weights_sha256"
    ]
    assert honeymoon != league.checkpoint_hash("pretrained", ENV)
    # pretrained:NAME names a model: the honeymoon one, asked for by its name
    named = f"pretrained:{ENV}.honeymoon"
    options = {"variant": "honeymoon"}
    assert league.checkpoint_hash(named, ENV, options) == honeymoon
    bot = agents.make(f"{named}@sample", ENV, seed=0, env_options=options)
    assert bot.spec == f"{named}@sample" and not bot.deterministic
    with pytest.raises(ValueError, match="trained with options|trained for"):
        agents.make(named, ENV)  # the default options: not that model's game
    with pytest.raises(ValueError, match=f"{named} plays {ENV}, not herzeln_v0"):
        agents.make(named, "herzeln_v0")
    run_arena(
        ENV, ["pretrained", "random"], games=2, env_options={"variant": "honeymoon"}
    )
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    assert f"pretrained {ENV}.honeymoon: -o variant=honeymoon; no evaluation" in listed
    assert (
        main(["eval", f"pretrained:{ENV}.honeymoon", "--vs", "random", "--games", "2"])
        == 0
    )
    assert f"checkpoint {out}" in capsys.readouterr().out
    assert main(["eval", "pretrained:nope", "--vs", "random"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"shipped: {ENV}, {ENV}.honeymoon" in err


def test_options_no_model_was_trained_for_name_every_model(models, tmp_path):
    source = tiny_checkpoint(
        tmp_path / "hm" / "step_1234", options={"variant": "honeymoon"}
    )
    pretrained.export(source, models, command="parlour train\n")
    game = envs.game_options(ENV)
    other = next(k for k in game if k != "variant")
    with pytest.raises(ValueError) as err:
        pretrained.model_dir(ENV, {other: "x"})
    message = str(err.value)
    assert "\n" not in message
    assert "agents were trained for" in message and " or " in message


def test_headline_names_each_evaluation_s_games_when_they_differ(models, tmp_path):
    source = tiny_checkpoint(tmp_path / "run2" / "step_1234")
    result = run_arena(ENV, [f"ckpt:{source}", "heuristic"], games=2, duplicate=True)
    save_json(result, tmp_path / "eval-heuristic.json")
    out = pretrained.export(
        source,
        tmp_path / "models2",
        command="parlour train\n",
        evaluations=[tmp_path / "eval-random.json", tmp_path / "eval-heuristic.json"],
    )
    line = pretrained.headline(out)
    assert "vs random" in line and "(4 games); vs heuristic" in line
    assert line.endswith("(2 games) (win share, even 0.50)")
    assert pretrained.headline(models / ENV).endswith("(win share, even 0.50, 4 games)")
