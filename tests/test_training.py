"""Smoke and safety tests of self-play training, checkpoints, resume and evaluation."""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pytest
import torch
from helpers import TINY_TRAINING

import parlour
from parlour import envs
from parlour.agents import make as make_agent
from parlour.cli import main as cli
from parlour.envs.core import fingerprint
from parlour.training import checkpoint as ckpt_io
from parlour.training.policy import NumpyPolicy
from parlour.training.selfplay import OpponentPool, SelfPlayEnv
from parlour.training.train import config_from_dict, load_config, train

TINY = {**TINY_TRAINING, "net_arch": [32, 32], "eval_games": 4}


def tiny_config(env: str = "german_whist_v0", **extra):
    return config_from_dict({**TINY, "env": env, **extra})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run")
    result = train(tiny_config(), run_dir=run_dir, progress=False)
    return result


@pytest.mark.parametrize("env_name", envs.names())
def test_every_registered_env_trains(env_name, tmp_path):
    """Each registered env survives a few hundred steps of self-play and is
    evaluated."""
    options = envs.VARIANTS[env_name][0]
    result = train(
        tiny_config(env_name, env_options=options), run_dir=tmp_path, progress=False
    )
    assert result.steps >= TINY["total_timesteps"]
    assert (result.checkpoint / ckpt_io.MANIFEST).is_file()
    assert {r["opponent"] for r in result.evaluations} == {"random"}
    assert result.plot is not None and result.plot.stat().st_size > 0


def test_run_directory_contents(trained):
    run = trained.run_dir
    assert json.loads((run / "config.json").read_text())["total_timesteps"] == 256
    assert (run / "evaluations.csv").read_text().startswith("step,opponent")
    assert (run / "learning_curve.png").stat().st_size > 1000
    latest = json.loads((run / ckpt_io.LATEST).read_text())["checkpoint"]
    assert (run / latest) == trained.checkpoint
    # the versions the run depends on: Parlour's and the env's _vN
    manifest = json.loads((trained.checkpoint / ckpt_io.MANIFEST).read_text())
    assert manifest["versions"]["parlour"] == parlour.__version__
    assert manifest["env_version"] == 0


def test_numpy_actor_matches_torch_policy(trained):
    """The numpy forward pass used by opponents and ckpt agents equals MaskablePPO's
    logits."""
    ckpt = ckpt_io.load(trained.checkpoint)
    policy = NumpyPolicy(ckpt_io.to_numpy(ckpt.tensors["policy"]), "tanh")
    w = ckpt.tensors["policy"]
    obs = torch.rand(5, policy.observation_size)
    x = obs
    for i in range(len(policy.layers)):
        x = torch.tanh(
            x @ w[f"mlp_extractor.policy_net.{2 * i}.weight"].T
            + w[f"mlp_extractor.policy_net.{2 * i}.bias"]
        )
    expected = x @ w["action_net.weight"].T + w["action_net.bias"]
    np.testing.assert_allclose(policy.logits(obs.numpy()), expected.numpy(), atol=1e-5)


def test_checkpoint_agent_plays_legal_moves(trained):
    from parlour.training.arena import run_arena

    result = run_arena(
        "german_whist_v0",
        [f"ckpt:{trained.run_dir}", "random"],
        games=6,
        duplicate=True,
        seed=3,
    )
    assert result.games == 6


def test_resume_continues_steps_and_optimizer(trained, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(trained.run_dir, run)
    before = ckpt_io.load(run)
    adam_steps = [s["step"] for s in before.tensors["optimizer"]["state"].values()]
    config = tiny_config(total_timesteps=512)
    result = train(config, run_dir=run, resume=True, progress=False)
    after = ckpt_io.load(run)
    assert before.step == 256 and after.step == result.steps == 512
    new_steps = [s["step"] for s in after.tensors["optimizer"]["state"].values()]
    # Adam's per-parameter step counts went on from the saved ones instead of
    # restarting.
    assert all(n > b for n, b in zip(new_steps, adam_steps, strict=True))
    updates_per_rollout = 2 * 64 * 1 // 64  # n_envs * n_steps * n_epochs / batch_size
    assert new_steps[0] == adam_steps[0] + 2 * updates_per_rollout
    steps = [r["step"] for r in result.evaluations]
    # the step-0 point is the policy before any update
    assert steps == [0, 128, 256, 384, 512]


def test_fresh_run_refuses_nonempty_dir(trained):
    with pytest.raises(ValueError, match="not empty"):
        train(tiny_config(), run_dir=trained.run_dir, progress=False)


def test_resume_rejects_other_env_options(trained, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(trained.run_dir, run)
    config = tiny_config(env_options={"variant": "honeymoon", "episode": "deal"})
    with pytest.raises(ckpt_io.CheckpointError, match="holds a run for"):
        train(config, run_dir=run, resume=True, progress=False)


def corrupt_copy(trained, tmp_path):
    dst = tmp_path / "ckpt"
    shutil.copytree(trained.checkpoint, dst)
    return dst


def test_truncated_weights_rejected(trained, tmp_path):
    ckpt = corrupt_copy(trained, tmp_path)
    data = (ckpt / ckpt_io.WEIGHTS).read_bytes()
    (ckpt / ckpt_io.WEIGHTS).write_bytes(data[: len(data) // 2])
    with pytest.raises(ckpt_io.CheckpointError, match="corrupt or truncated"):
        ckpt_io.load(ckpt)


def test_corrupt_manifest_rejected(trained, tmp_path):
    ckpt = corrupt_copy(trained, tmp_path)
    (ckpt / ckpt_io.MANIFEST).write_text("{not json")
    with pytest.raises(ckpt_io.CheckpointError, match="not valid JSON"):
        ckpt_io.load(ckpt)


def test_missing_files_rejected(trained, tmp_path):
    with pytest.raises(ckpt_io.CheckpointError, match="does not exist"):
        ckpt_io.load(tmp_path / "nowhere")
    ckpt = corrupt_copy(trained, tmp_path)
    (ckpt / ckpt_io.WEIGHTS).unlink()
    with pytest.raises(ckpt_io.CheckpointError, match="incomplete"):
        ckpt_io.load(ckpt)


def test_checkpoint_for_other_options_rejected(trained):
    with pytest.raises(ckpt_io.CheckpointError, match="trained with options"):
        make_agent(
            f"ckpt:{trained.checkpoint}",
            "german_whist_v0",
            env_options={"variant": "honeymoon", "episode": "deal"},
        )


def edit_manifest(ckpt, rehash: bool = True, **changes):
    """Change manifest fields (None deletes one); with ``rehash`` the manifest's own
    hash is brought up to date, as a deliberate forger would."""
    manifest = json.loads((ckpt / ckpt_io.MANIFEST).read_text())
    for key, value in changes.items():
        if value is None:
            manifest.pop(key, None)
        else:
            manifest[key] = value
    if rehash:
        manifest["manifest_sha256"] = ckpt_io.manifest_digest(manifest)
    (ckpt / ckpt_io.MANIFEST).write_text(json.dumps(manifest))


def test_checkpoint_for_other_env_rejected(trained, tmp_path):
    ckpt = corrupt_copy(trained, tmp_path)
    edit_manifest(ckpt, env="herzeln_v0")
    with pytest.raises(ckpt_io.CheckpointError, match="trained on herzeln_v0"):
        make_agent(f"ckpt:{ckpt}", "german_whist_v0")
    edit_manifest(ckpt, env="some_other_env_v0")
    with pytest.raises(ckpt_io.CheckpointError, match="not a registered env"):
        make_agent(f"ckpt:{ckpt}", "german_whist_v0")


def test_weights_file_is_not_unpickled_blindly(trained, tmp_path):
    """A weights file that needs arbitrary unpickling is refused by weights_only
    loading, and PyTorch's long advice to load it anyway never reaches the user."""
    ckpt = corrupt_copy(trained, tmp_path)
    torch.save({"policy": object()}, ckpt / ckpt_io.WEIGHTS)
    edit_manifest(ckpt, weights_sha256=ckpt_io._sha256(ckpt / ckpt_io.WEIGHTS))
    with pytest.raises(ckpt_io.CheckpointError, match="cannot be read") as err:
        ckpt_io.load(ckpt)
    text = str(err.value)
    assert "\n" not in text and "weights_only" not in text


def test_edited_manifest_rejected(trained, tmp_path):
    """The manifest's own hash: an edited step no longer passes."""
    ckpt = corrupt_copy(trained, tmp_path)
    edit_manifest(ckpt, rehash=False, step=999_999)
    with pytest.raises(ckpt_io.CheckpointError, match="was edited or is corrupt"):
        ckpt_io.load(ckpt)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"game_options": ["variant", "german"]}, "'game_options' must be a dict"),
        ({"config": None}, "has no 'config'"),
        ({"step": "12"}, "'step' must be a int"),
        ({"env": "nowhere_v0"}, "not a registered env"),
        ({"net_arch": [32, 16]}, r"has shape \(32, 32\), the manifest's network"),
        ({"fingerprint": {"rules": "ab"}}, "'fingerprint' is malformed: no options"),
    ],
)
def test_malformed_manifest_is_one_line_error(trained, tmp_path, changes, message):
    ckpt = corrupt_copy(trained, tmp_path)
    edit_manifest(ckpt, **changes)
    with pytest.raises(ckpt_io.CheckpointError, match=message) as err:
        ckpt_io.load(ckpt)
    assert "\n" not in str(err.value)


def test_weights_without_policy_or_wrong_shapes(trained, tmp_path):
    ckpt = corrupt_copy(trained, tmp_path)
    tensors = torch.load(ckpt / ckpt_io.WEIGHTS, weights_only=True)
    torch.save({"optimizer": tensors["optimizer"]}, ckpt / ckpt_io.WEIGHTS)
    edit_manifest(ckpt, weights_sha256=ckpt_io._sha256(ckpt / ckpt_io.WEIGHTS))
    with pytest.raises(ckpt_io.CheckpointError, match="holds no 'policy' tensors"):
        ckpt_io.load(ckpt)
    tensors["policy"]["action_net.weight"] = torch.zeros(3, 32)
    torch.save(tensors, ckpt / ckpt_io.WEIGHTS)
    edit_manifest(ckpt, weights_sha256=ckpt_io._sha256(ckpt / ckpt_io.WEIGHTS))
    with pytest.raises(ckpt_io.CheckpointError, match=r"action_net.weight has shape"):
        ckpt_io.load(ckpt)


def test_manifest_carries_the_rules_fingerprint(trained):
    manifest = ckpt_io.load(trained.checkpoint).manifest
    assert manifest["fingerprint"] == envs.fingerprint("german_whist_v0")


@pytest.mark.parametrize("component", list(fingerprint.COMPONENTS))
def test_checkpoint_for_other_rules_refused(trained, tmp_path, capsys, component):
    """One component of the manifest's fingerprint altered: the ckpt agent and
    ``parlour eval`` refuse it in one line naming what changed."""
    ckpt = corrupt_copy(trained, tmp_path)
    stored = ckpt_io.load(ckpt).manifest["fingerprint"]
    edit_manifest(ckpt, fingerprint={**stored, component: "0" * 16})
    words = fingerprint.COMPONENTS[component]
    message = (
        f"checkpoint {ckpt} was trained on other rules of german_whist_v0: "
        f"{words} (was 00000000…, now {stored[component][:8]}…); retrain it or use "
        "a matching Parlour version (it was trained with parlour "
    )
    with pytest.raises(ckpt_io.CheckpointError) as err:
        make_agent(f"ckpt:{ckpt}", "german_whist_v0")
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
    assert cli(["eval", str(ckpt), "--games", "2", "--quiet"]) == 2
    err_lines = capsys.readouterr().err.strip().splitlines()
    assert len(err_lines) == 1 and words in err_lines[0]


def test_checkpoint_without_fingerprint_loads_with_one_warning(trained, tmp_path):
    """A manifest written before fingerprints (an older Parlour's) still plays, with
    one warning per checkpoint."""
    ckpt = corrupt_copy(trained, tmp_path)
    edit_manifest(ckpt, fingerprint=None)
    with pytest.warns(ckpt_io.UncheckedRulesWarning, match="has no rules fingerprint"):
        agent = make_agent(f"ckpt:{ckpt}", "german_whist_v0")
    assert agent.step == 256
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_agent(f"ckpt:{ckpt}", "german_whist_v0")  # warned once already


def test_resume_of_a_run_on_other_rules_refused(trained, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(trained.run_dir, run)
    ckpt = ckpt_io.resolve(run)
    stored = ckpt_io.load(ckpt).manifest["fingerprint"]
    edit_manifest(ckpt, fingerprint={**stored, "rules": "0" * 16})
    config = tiny_config(total_timesteps=512)
    with pytest.raises(ckpt_io.CheckpointError, match="rule tables changed"):
        train(config, run_dir=run, resume=True, progress=False)
    assert ckpt_io.load(run).step == 256


@pytest.mark.parametrize(
    ("latest", "message"),
    [
        ("[]", "is corrupt: expected"),
        ("7", "is corrupt: expected"),
        ('{"checkpoint": 3}', "is corrupt: expected"),
        ("{oops", "is corrupt"),
        ('{"checkpoint": "../elsewhere"}', "points outside its run directory"),
        ('{"checkpoint": "/etc"}', "points outside its run directory"),
    ],
)
def test_bad_latest_json(trained, tmp_path, latest, message, capsys):
    run = tmp_path / "run"
    shutil.copytree(trained.run_dir, run)
    (run / ckpt_io.LATEST).write_text(latest)
    with pytest.raises(ckpt_io.CheckpointError, match=message):
        ckpt_io.load(run)
    assert cli(["eval", str(run), "--games", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message.split()[0] in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("seat", [0, 1])
def test_selfplay_delivers_terminal_reward_to_learner(seat):
    """The learner's rewards add up to its final return, also when the opponent moved
    last."""
    env = SelfPlayEnv(
        "german_whist_v0",
        pool=OpponentPool("german_whist_v0", {"random": 1}),
        seed=seat,
        learner_seats=[seat],
    )
    rng = np.random.default_rng(seat)
    finals, opponent_last = [], 0
    for _ in range(60):
        env.reset()
        total, done = 0.0, False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            # then the opponent plays the trick's end
            learner_leads = env.env.game_state.lead < 0
            _, reward, done, _, info = env.step(int(rng.choice(legal)))
            total += reward
        state = env.env.game_state
        assert total == info["final_return"] == env.game.returns(state)[seat]
        finals.append(total)
        opponent_last += int(learner_leads)
    assert -1.0 in finals and 1.0 in finals
    assert opponent_last > 0


def test_selfplay_scales_the_learners_rewards_not_its_final_return():
    """With ``reward_scale`` the rewards of a Herzeln partie (paid trick by trick) add
    up to the scaled final return, while ``final_return`` (what evaluations and the
    logs read) stays in points."""
    env = SelfPlayEnv(
        "herzeln_v0",
        pool=OpponentPool("herzeln_v0", {"random": 1}),
        seed=2,
        reward_scale=0.02,
    )
    rng = np.random.default_rng(2)
    env.reset()
    rewards, done = [], False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        _, reward, done, _, info = env.step(int(rng.choice(legal)))
        rewards.append(reward)
    final = env.game.returns(env.env.game_state)[env.seat]
    assert info["final_return"] == final and abs(final) > 10
    assert sum(rewards) == pytest.approx(0.02 * final)
    assert sum(r != 0 for r in rewards[:-1]) >= 2  # paid as it goes, not at the end
    with pytest.raises(ValueError, match="reward_scale must be positive"):
        SelfPlayEnv("herzeln_v0", reward_scale=0)


def team_envs():
    out = []
    for name in envs.names():
        for options in envs.VARIANTS[name]:
            game = envs.make(name, raw=True, **options).game
            teams = getattr(game, "teams", None)
            if callable(teams) and any(len(t) > 1 for t in teams()):
                out.append((name, options))
                break
    return out


@pytest.mark.parametrize("name,opts", team_envs())
def test_selfplay_partners_share_reward(name, opts):
    """In partnership games the learner's reward is its team's, like its partner's."""
    env = SelfPlayEnv(
        name, opts, pool=OpponentPool(name, {"random": 1}, env_options=opts), seed=1
    )
    rng = np.random.default_rng(0)
    for _ in range(5):
        env.reset()
        total, done = 0.0, False
        while not done:
            _, reward, done, _, _ = env.step(
                int(rng.choice(np.flatnonzero(env.action_masks())))
            )
            total += reward
        returns = env.game.returns(env.env.game_state)
        team = next(t for t in env.game.teams() if env.seat in t)
        assert all(returns[p] == pytest.approx(total) for p in team)


def test_config_validation(tmp_path):
    with pytest.raises(ValueError, match="unknown config key"):
        config_from_dict({"total_timestep": 5})
    with pytest.raises(ValueError, match="must be int"):
        config_from_dict({"total_timesteps": "many"})
    with pytest.raises(ValueError, match="unknown option"):
        config_from_dict({"env_options": {"variantt": "german"}})
    cfg = load_config(
        None,
        env="german_whist_v0",
        overrides=["env_options.variant=honeymoon", "learning_rate=1e-3"],
    )
    assert cfg.env_options["variant"] == "honeymoon" and cfg.learning_rate == 1e-3
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(ValueError, match="mapping"):
        load_config(bad)
    with pytest.raises(ValueError, match="torch_threads must be a positive integer"):
        config_from_dict({"torch_threads": 0}).validate()


@pytest.mark.parametrize("env_name", envs.names())
def test_every_env_has_a_valid_default_config(env_name):
    """configs/ENV.yaml exists for every registered env, validates, and its warm-start
    teacher is a known agent of that env."""
    from parlour.training.train import CONFIG_DIR

    assert (CONFIG_DIR / f"{env_name}.yaml").is_file()
    cfg = load_config(None, env=env_name)
    assert cfg.env == env_name
    if cfg.warm_start:
        make_agent(cfg.warm_start, env_name, seed=0, env_options=cfg.env_options)


def test_cli_eval_and_bad_checkpoint(trained, tmp_path, capsys):
    assert (
        cli(["eval", str(trained.run_dir), "--vs", "random", "--games", "4", "--quiet"])
        == 0
    )
    assert "win rate" in capsys.readouterr().out
    assert cli(["eval", str(tmp_path / "missing"), "--quiet"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_train_bad_set(capsys):
    assert cli(["train", "german_whist_v0", "--set", "nonsense"]) == 2
    assert "key=value" in capsys.readouterr().err
