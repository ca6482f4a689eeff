"""The imitation warm start: teacher data, the fit, and its place in a training run."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv
from test_training import TINY  # tests/ is on sys.path (pytest's rootdir-less modules)

from parlour import agents, envs
from parlour.agents.base import Turn
from parlour.training import imitation
from parlour.training.backends.sb3 import MaskedMlpPolicy
from parlour.training.selfplay import OpponentPool, SelfPlayEnv
from parlour.training.train import config_from_dict, train


def test_collect_records_legal_teacher_moves_and_final_returns():
    data = imitation.collect("german_whist_v0", {}, "heuristic", games=3, seed=1)
    n = len(data)
    assert data.games == 3
    assert data.observations.shape == (n, data.observations.shape[1])
    assert data.masks.shape == (n, 52) and data.masks.dtype == bool
    # every label is legal where it was chosen
    assert data.masks[np.arange(n), data.actions].all()
    # German Whist: 26 stage-1 decisions a deal and 14 to 26 in stage 2 (the deal
    # ends at a player's 7th stage-2 trick), each labelled with its seat's +1 / -1
    assert 3 * 40 <= n <= 3 * 52
    assert set(np.unique(data.returns)) <= {-1.0, 1.0}
    # all of it is paid at the end: every decision has the whole return to come
    np.testing.assert_array_equal(data.to_go, data.returns)


def test_to_go_is_what_the_deciding_seat_receives_after_it_decides():
    """Herzeln pays every trick as it is taken: a decision's value target is the sum of
    the rewards its seat receives from then on (replayed here with the env's own
    rewards), not the partie's total."""
    data = imitation.collect("herzeln_v0", {"players": 4}, "heuristic", games=1, seed=3)
    env = envs.make("herzeln_v0", players=4)
    teacher = agents.make("heuristic", "herzeln_v0", seed=3000)
    # collect's seeding: chunk 0 of seed 3 plays with seed 3000, game 0
    env.reset(seed=3000 * 100_003)
    teacher.reset(seed=3000 * 100_003)
    raw = env.unwrapped
    received = dict.fromkeys(env.possible_agents, 0.0)
    decided: list[tuple[str, float]] = []
    actions = []
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = raw.agent_name_mapping[agent]
        turn = Turn(
            raw.game, raw.game_state, seat, obs["observation"], obs["action_mask"]
        )
        actions.append(int(teacher.act(turn)))
        decided.append((agent, received[agent]))
        env.step(actions[-1])
        for other, reward in env.rewards.items():
            received[other] += reward
    assert actions == data.actions.tolist()  # the same partie
    want = [received[agent] - before for agent, before in decided]
    np.testing.assert_allclose(data.to_go, want)
    finals = [received[agent] for agent, _ in decided]
    np.testing.assert_allclose(data.returns, finals)
    assert (data.to_go != data.returns).mean() > 0.5


def test_the_value_head_learns_the_return_to_come_in_reward_scale_units(one_thread):
    """``fit`` regresses the critic on ``to_go * value_scale``, not on the final
    return."""
    torch.manual_seed(0)
    data = imitation.collect("german_whist_v0", {}, "random", games=2, seed=0)
    data.returns[:] = 50.0  # what the critic must not learn
    data.to_go[:] = 4.0
    model = _model("german_whist_v0", {})
    imitation.fit(model.policy, data, epochs=30, learning_rate=3e-3, value_scale=0.25)
    values = model.policy.predict_values(torch.from_numpy(data.observations))
    assert values.mean().item() == pytest.approx(1.0, abs=0.1)


def test_chunks_of_an_older_format_are_played_again(tmp_path):
    """A store written before the return to come was kept is not read back: its games
    are played again (and counted only then)."""
    store = tmp_path / "store"
    first = imitation.collect("german_whist_v0", {}, "random", 2, seed=1, store=store)
    paths = sorted(store.glob("games_*.npz"))
    for path in paths:  # as the previous format wrote them
        with np.load(path) as f:
            arrays = dict(f)
        meta = json.loads(str(arrays["meta"]))
        arrays["meta"] = np.array(json.dumps({**meta, "format": 1}, sort_keys=True))
        del arrays["to_go"]
        with open(path, "wb") as f:
            np.savez_compressed(f, **arrays)
    path = paths[0]
    with pytest.raises(ValueError, match="chunk format 1, this Parlour reads 2"):
        imitation.load_chunk(path)
    assert imitation.stored_games(store) == 0
    again = imitation.collect("german_whist_v0", {}, "random", 2, seed=1, store=store)
    np.testing.assert_array_equal(again.actions, first.actions)
    assert imitation.stored_games(store) == 2



def test_ctrl_c_inside_the_zip_writer_is_an_interrupt(tmp_path, monkeypatch):
    """Ctrl-C while numpy writes a chunk's zip makes zipfile raise "Can't close the
    ZIP file …" while the interrupt is handled; the save says KeyboardInterrupt (so
    the run stops as interrupted, exit 130) and leaves no temporary file."""
    data = imitation.collect("german_whist_v0", {}, "random", 1, seed=1)

    def interrupted(f, **arrays):
        try:
            raise KeyboardInterrupt
        finally:
            raise ValueError("Can't close the ZIP file while there is an open handle")

    monkeypatch.setattr(np, "savez_compressed", interrupted)
    path = tmp_path / "store" / "games_0.npz"
    with pytest.raises(KeyboardInterrupt):
        imitation.save_chunk(path, data, {})
    assert list(path.parent.iterdir()) == []

    def broken(f, **arrays):  # a real error stays what it is
        raise ValueError("disk says no")

    monkeypatch.setattr(np, "savez_compressed", broken)
    with pytest.raises(ValueError, match="disk says no"):
        imitation.save_chunk(path, data, {})

def test_exact_labels_are_every_optimal_move_in_stage_2(monkeypatch):
    """With ``exact`` the German Whist stage-2 decisions (and only they) are labelled
    with every card the solver values best; the rest keep the teacher's move."""
    from parlour import agents
    from parlour.agents.solver.german_whist import optimal_moves

    answers = []  # the solver's answer at each decision, in order

    def recording(env_name):
        def moves(game, state):
            answers.append(optimal_moves(game, state))
            return answers[-1]

        return moves

    monkeypatch.setattr(agents, "exact_moves", recording)
    data = imitation.collect(
        "german_whist_v0", {}, "heuristic", games=4, seed=3, noise=0.2, exact=True
    )
    plain = imitation.collect(
        "german_whist_v0", {}, "heuristic", games=4, seed=3, noise=0.2
    )
    np.testing.assert_array_equal(data.observations, plain.observations)
    np.testing.assert_array_equal(data.actions, plain.actions)
    assert not plain.exact.any()
    np.testing.assert_array_equal(plain.targets, np.eye(52, dtype=bool)[plain.actions])
    # stage 2 is flagged in the observation (entry 8n + 8, see the encoder's docs)
    stage2 = data.observations[:, 8 * 52 + 8] == 1.0
    np.testing.assert_array_equal(data.exact, stage2)
    assert len(answers) == len(data)
    for row, best in enumerate(answers):
        assert (best is not None) == stage2[row]
        if best is not None:
            assert np.flatnonzero(data.targets[row]).tolist() == best
    np.testing.assert_array_equal(data.targets[~stage2], plain.targets[~stage2])
    assert (data.targets <= data.masks).all()
    assert (data.targets[stage2].sum(axis=1) > 1).any()  # equal cards, all labelled


def test_collect_is_seeded_and_workers_change_nothing():
    kwargs = {"games": 6, "seed": 4, "noise": 0.3}
    one = imitation.collect("fuenfzehn_tot_v0", {"players": 3}, "optimal", **kwargs)
    again = imitation.collect("fuenfzehn_tot_v0", {"players": 3}, "optimal", **kwargs)
    two = imitation.collect(
        "fuenfzehn_tot_v0", {"players": 3}, "optimal", workers=2, **kwargs
    )
    for other in (again, two):
        np.testing.assert_array_equal(one.observations, other.observations)
        np.testing.assert_array_equal(one.actions, other.actions)
        np.testing.assert_array_equal(one.returns, other.returns)
    other_seed = imitation.collect(
        "fuenfzehn_tot_v0", {"players": 3}, "optimal", games=6, seed=5, noise=0.3
    )
    assert not np.array_equal(one.actions, other_seed.actions[: len(one.actions)])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"games": 0}, "games must be positive"),
        ({"noise": 1.0}, "noise must lie"),
        ({"workers": 0}, "workers must be positive"),
        ({"teacher": "nonsense"}, "unknown agent"),
    ],
)
def test_collect_rejects_bad_arguments(kwargs, message):
    args = {"teacher": "random", "games": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        imitation.collect("german_whist_v0", {}, **args)


def _model(env: str, options: dict) -> MaskablePPO:
    pool = OpponentPool(env, {"random": 1.0}, seed=0, env_options=options)
    venv = DummyVecEnv([lambda: SelfPlayEnv(env, options, pool=pool, seed=0)])
    return MaskablePPO(
        MaskedMlpPolicy,
        venv,
        policy_kwargs={"net_arch": [64, 64]},
        device="cpu",
        seed=0,
    )


@pytest.fixture
def one_thread():
    """Small networks train several times faster on one thread (as train() runs)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_fit_learns_a_simple_teacher(one_thread):
    """Fünfzehn – tot's threshold bot is a function of two observation entries: the
    student must copy it almost perfectly, and the value head must learn."""
    torch.manual_seed(0)
    options = {"players": 2}
    data = imitation.collect("fuenfzehn_tot_v0", options, "threshold:11", 100, seed=2)
    model = _model("fuenfzehn_tot_v0", options)
    before = imitation.fit(model.policy, data, epochs=1, learning_rate=1e-6)
    after = imitation.fit(model.policy, data, epochs=15, learning_rate=3e-3)
    assert after.agreement > 0.97 > before.agreement
    assert after.policy_loss < before.policy_loss
    assert after.value_loss < before.value_loss


def test_fit_puts_the_mass_on_the_target_set(one_thread):
    """Set targets: the loss is -log of the set's probability, so the student may
    spread its mass inside the set but must leave the rest. A synthetic task: the
    first observation entry's sign picks the set {0, 1} or {2, 3} of four legal moves;
    the teacher's own move (always the first of the set) is not what counts."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = _model("german_whist_v0", {})
    n, size = 4000, model.observation_space.shape[0]
    obs = np.zeros((n, size), dtype=np.float32)
    obs[:, 0] = rng.choice([0.0, 1.0], n)
    obs[:, 1:9] = rng.random((n, 8))  # entries that do not matter
    masks = np.zeros((n, 52), dtype=bool)
    masks[:, :4] = True
    targets = np.zeros((n, 52), dtype=bool)
    first = np.where(obs[:, 0] > 0.5, 0, 2)
    targets[np.arange(n), first] = targets[np.arange(n), first + 1] = True
    teacher = (first + 2) % 4  # outside the set: a fit to it would fail the test
    data = imitation.Demonstrations(
        obs, masks, teacher, np.zeros(n, np.float32), 1, targets, np.ones(n, bool)
    )
    report = imitation.fit(model.policy, data, epochs=10, learning_rate=3e-3)
    assert report.agreement > 0.97 and report.exact_agreement == report.agreement
    assert report.exact_decisions == report.held_out_decisions
    assert report.policy_loss < 0.1  # -log P(set): the set holds > 90% of the mass


def test_the_sb3_and_batch_networks_are_imitation_policies(one_thread):
    """Both backends' own networks are what `fit` trains (no adapter): masked
    log-probabilities normalised over the legal moves, the same for both layouts
    when they hold the same weights (the batch network uses SB3's parameter names)."""
    from parlour.training.backends.batch import ActorCritic

    torch.manual_seed(0)
    data = imitation.collect("german_whist_v0", {}, "random", games=1, seed=0)
    obs = torch.from_numpy(data.observations[:16])
    masks = torch.from_numpy(data.masks[:16])
    sb3 = _model("german_whist_v0", {}).policy
    batch = ActorCritic(obs.shape[1], masks.shape[1], [64, 64], "tanh")
    batch.load_state_dict(sb3.state_dict(), strict=False)
    for net in (sb3, batch):
        assert isinstance(net, imitation.ImitationPolicy)
        logp = net.masked_log_probs(obs, masks)
        torch.testing.assert_close(logp.exp().sum(1), torch.ones(16))
        assert (logp[~masks] < -1e7).all()
    with torch.no_grad():
        torch.testing.assert_close(
            batch.masked_log_probs(obs, masks)[masks],
            sb3.masked_log_probs(obs, masks)[masks],
        )
        torch.testing.assert_close(batch.predict_values(obs), sb3.predict_values(obs))


def test_fit_rejects_bad_arguments(one_thread):
    data = imitation.collect("german_whist_v0", {}, "random", games=1, seed=0)
    model = _model("german_whist_v0", {})
    with pytest.raises(ValueError, match="epochs must be positive"):
        imitation.fit(model.policy, data, epochs=0)
    with pytest.raises(ValueError, match="at least two"):
        tiny = imitation.Demonstrations(
            data.observations[:1], data.masks[:1], data.actions[:1], data.returns[:1], 1
        )
        imitation.fit(model.policy, tiny, epochs=1)


def test_training_run_with_warm_start(tmp_path, one_thread):
    config = config_from_dict(
        {
            **TINY,
            "env": "german_whist_v0",
            "warm_start": "heuristic",
            "warm_start_games": 4,
            "warm_start_epochs": 2,
        }
    )
    result = train(config, run_dir=tmp_path, progress=False)
    report = json.loads((tmp_path / "warm_start.json").read_text())
    assert 4 * 40 <= report["train_decisions"] + report["held_out_decisions"] <= 4 * 52
    assert 0 <= report["agreement"] <= 1
    manifest = json.loads((result.checkpoint / "manifest.json").read_text())
    assert "self@warm_start" in manifest["snapshots"]
    # the imitated network is saved at step 0, so a resumed run never repeats it
    start = json.loads(
        (tmp_path / "checkpoints/step_000000000/manifest.json").read_text()
    )
    assert start["step"] == 0 and start["snapshots"] == ["self@warm_start"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"warm_start": "nonsense"}, "warm_start: unknown agent"),
        ({"warm_start_noise": 1.5}, "warm_start_noise"),
        ({"warm_start_games": 0}, "warm_start_games must be a positive integer"),
        ({"warm_start_lr": 0.0}, "warm_start_lr must be positive"),
        ({"warm_start_exact": 1}, "'warm_start_exact' must be bool"),
    ],
)
def test_warm_start_config_validation(extra, message):
    with pytest.raises(ValueError, match=message):
        config_from_dict(
            {**TINY, "env": "german_whist_v0", "warm_start": "heuristic", **extra}
        )


def test_exact_labels_need_a_solver_for_the_env():
    with pytest.raises(ValueError, match="no exact solver labels for 'forty_fives_v0'"):
        config_from_dict(
            {
                **TINY,
                "env": "forty_fives_v0",
                "warm_start": "heuristic",
                "warm_start_exact": True,
            }
        )
    with pytest.raises(ValueError, match="no exact solver labels"):
        imitation.collect("forty_fives_v0", {}, "random", games=1, exact=True)
    # like every warm_start_* key it is inert without a teacher
    config_from_dict({**TINY, "env": "forty_fives_v0", "warm_start_exact": True})


# --- the learner's own decisions labelled during self-play ----------------------------
def test_selfplay_labels_the_learners_stage_2_decisions():
    """With a labeler and fraction 1 every learner decision the solver values is kept
    with the observation the learner got and the solver's optimal cards."""
    from parlour.agents.solver.german_whist import optimal_moves

    env = SelfPlayEnv(
        "german_whist_v0", seed=3, labeler=optimal_moves, label_fraction=1
    )
    rng = np.random.default_rng(0)
    seen, stage2 = [], 0
    for _ in range(3):
        obs, _ = env.reset()
        done = False
        while not done:
            mask = env.action_masks()
            if obs[8 * 52 + 8] == 1.0:  # the stage-2 flag
                stage2 += 1
                seen.append(
                    (obs.copy(), mask, optimal_moves(env.game, env.env.game_state))
                )
            obs, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
    assert stage2 > 0 and len(env.labelled) == stage2
    for (obs, mask, best), (l_obs, l_mask, l_best) in zip(
        seen, env.labelled, strict=True
    ):
        np.testing.assert_array_equal(obs, l_obs)
        np.testing.assert_array_equal(mask, l_mask)
        assert list(l_best) == best and mask[best].all()
    quiet = SelfPlayEnv(
        "german_whist_v0", seed=3, labeler=optimal_moves, label_fraction=0
    )
    quiet.reset()
    assert quiet.labelled == []


def test_training_passes_over_the_labelled_decisions(tmp_path, one_thread, monkeypatch):
    """``exact_aux_fraction``: after each PPO update the policy takes one pass over the
    decisions labelled in the rollout, and the buffers start empty again."""
    passes = []
    real = imitation.policy_pass

    def recording(policy, optimizer, obs, masks, targets, batch_size, rng):
        passes.append((obs, masks, targets))
        return real(policy, optimizer, obs, masks, targets, batch_size, rng)

    monkeypatch.setattr(imitation, "policy_pass", recording)
    config = config_from_dict(
        {**TINY, "env": "german_whist_v0", "exact_aux_fraction": 1.0}
    )
    train(config, run_dir=tmp_path, progress=False)
    assert passes  # a rollout's labels are passed over before the next rollout
    for obs, masks, targets in passes:
        assert (obs[:, 8 * 52 + 8] == 1.0).all()  # stage-2 decisions only
        assert (targets <= masks).all() and targets.any(axis=1).all()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"exact_aux_fraction": 1.5}, "exact_aux_fraction must lie in"),
        ({"exact_aux_fraction": -0.1}, "exact_aux_fraction must lie in"),
        (
            {"env": "herzeln_v0", "exact_aux_fraction": 0.5},
            "exact_aux_fraction: no exact solver labels",
        ),
    ],
)
def test_exact_aux_config_validation(extra, message):
    with pytest.raises(ValueError, match=message):
        config_from_dict({**TINY, "env": "german_whist_v0", **extra})
