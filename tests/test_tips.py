"""The strategy-tips harness (`parlour.training.tips`, ``parlour tips``).

Statistics first (the sequential design's error rate, intervals, verdicts), then the
harness on real games (reproducibility, an A/A experiment, the shared arm A, parallel
workers), the agreement predicates on forced German Whist deals, the Fünfzehn – tot
analyses against the engine, and the command line.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import parlour
from parlour import agents, envs
from parlour.agents.base import Turn
from parlour.cli import main as cli
from parlour.envs.fuenfzehn_tot.rules import turn_options
from parlour.training import tips
from parlour.training.train import config_from_dict, train

DOCS = Path(__file__).resolve().parents[1] / "docs"
GAMES = ("german_whist_v0", "forty_fives_v0", "fuenfzehn_tot_v0")


# --- the hypotheses files -------------------------------------------------------------
@pytest.mark.parametrize("env", GAMES)
def test_config_names_real_switches(env):
    """Every tip in configs/tips is a switch of the game's heuristic, on by default."""
    config = tips.load_config(env)
    assert config.env == env and config.tips
    for tip in config.tips:
        assert tip.prediction in tips.PREDICTIONS
        assert tip.switch and tip.why
        tips.check_tip_switch(env, tip.name, config.env_options)


@pytest.mark.parametrize("env", GAMES)
def test_config_quotes_the_game_page(env):
    """The hypotheses quote the rule book's own sentences, as the game's page
    (docs/games/) quotes them; German ones come with a gloss."""
    config = tips.load_config(env)
    assert config.source

    def norm(text: str) -> str:
        return " ".join(text.replace("’", "'").split())

    # the page's block quotes, without their '>' markers
    page = (DOCS / "games" / f"{config.short}.md").read_text(encoding="utf-8")
    page = norm(re.sub(r"^> ?", "", page, flags=re.M))
    for h in (*config.tips, *config.claims):
        for fragment in h.seed.split(" … "):
            assert norm(fragment).strip(" …") in page, (h.name, fragment)
        if env != "german_whist_v0":
            assert h.gloss, f"{h.name}: a German sentence needs an English gloss"


def test_tips_file_must_cite_its_rule_book(tmp_path, monkeypatch):
    """A hypotheses file without ``source`` (the rule book it quotes) is refused."""
    text = (tips.CONFIG_DIR / "german_whist_v0.yaml").read_text(encoding="utf-8")
    uncited = "\n".join(
        line for line in text.splitlines() if not line.startswith("source:")
    )
    (tmp_path / "german_whist_v0.yaml").write_text(uncited, encoding="utf-8")
    monkeypatch.setattr("parlour.training.tips.config.CONFIG_DIR", tmp_path)
    with pytest.raises(ValueError, match="source"):
        tips.load_config("german_whist")


def test_unknown_game_and_tip():
    with pytest.raises(ValueError, match="games with a tips file"):
        tips.load_config("skat")
    assert tips.resolve_env("german_whist") == "german_whist_v0"
    with pytest.raises(ValueError, match="win_cheaply"):
        tips.load_config("german_whist").tip("win_expensively")


# --- statistics -----------------------------------------------------------------------
@pytest.mark.parametrize("k", sorted(tips.OBF_CONSTANTS))
def test_obf_boundaries_spend_alpha(k):
    """The O'Brien–Fleming constants give a two-sided 0.05 crossing probability."""
    fractions = [(i + 1) / k for i in range(k)]
    total = sum(tips.crossing_probabilities(fractions, tips.obf_boundaries(k)))
    assert total == pytest.approx(0.05, abs=5e-4)


def test_look_schedule():
    assert tips.look_schedule(2000, 4) == (500, 1000, 1500, 2000)
    assert tips.look_schedule(25, 4) == (12, 25)  # looks of at least MIN_LOOK deals
    assert tips.look_schedule(5, 4) == (5,)
    with pytest.raises(ValueError):
        tips.look_schedule(1, 4)
    with pytest.raises(ValueError):
        tips.look_schedule(100, 9)


def _null_rate(sampler, experiments: int, n: int, looks: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    schedule = tips.look_schedule(n, looks)
    hits = sum(tips.sequential_test(sampler(rng, n), schedule).crossed
               for _ in range(experiments))  # fmt: skip
    return hits / experiments


def test_false_positive_rate_under_no_effect():
    """A/A data (per-deal differences shaped like German Whist duplicate play: -1 … 1
    in quarters, symmetric about 0): the sequential test rejects at about its nominal
    5%."""
    values = np.array([-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1])
    weights = np.array([1, 2, 4, 6, 20, 6, 4, 2, 1], dtype=float)

    def sampler(rng, n):
        return rng.choice(values, size=n, p=weights / weights.sum())

    rate = _null_rate(sampler, 3000, 400, 4, seed=1)
    # 3000 experiments: the binomial standard error at 0.05 is 0.004
    assert 0.038 <= rate <= 0.062


def test_null_calibration_matches_the_test():
    """The vectorised calibration runs the same looks and boundaries as the test."""
    rng = np.random.default_rng(2)
    data = rng.normal(size=300)
    schedule = tips.look_schedule(300, 3)
    rate = tips.null_calibration(data, schedule, experiments=2000, seed=3)
    assert 0.035 <= rate <= 0.065
    assert tips.null_calibration(np.zeros(50), tips.look_schedule(50, 2)) == 0.0


def test_power_at_the_minimum_detectable_effect():
    """A true effect equal to the MDE is found about 80% of the time."""
    n, looks = 400, 4
    mde = (tips.obf_boundaries(looks)[-1] + tips.Z_POWER) / math.sqrt(n)
    rate = _null_rate(lambda rng, m: rng.normal(mde, 1.0, size=m), 600, n, looks, 4)
    assert 0.74 <= rate <= 0.86


def test_verdicts_follow_the_interval():
    """Never "supported" on an interval that includes zero; crossed exactly when the
    sequential p-value is below 0.05."""
    rng = np.random.default_rng(5)
    schedule = tips.look_schedule(200, 4)
    seen = set()
    for i in range(150):
        effect = (i % 5 - 2) * 0.12
        t = tips.sequential_test(rng.normal(effect, 1.0, size=200), schedule)
        v = tips.verdict(t)
        seen.add(v)
        assert (v == "supported") == (t.crossed and t.low > 0)
        assert (v == "refuted") == (t.crossed and t.high < 0)
        if v == "no detectable effect":
            assert t.low <= 0 <= t.high
        assert t.crossed == (t.p < 0.05) or abs(t.p - 0.05) < 2e-3
        assert t.low <= t.estimate <= t.high
    assert seen == set(tips.VERDICTS)


def test_sign_test_is_exact():
    assert tips.sign_test(np.r_[np.ones(10), np.zeros(5)]) == (10, 0, 2 / 1024)
    pos, neg, p = tips.sign_test(np.r_[np.ones(380), -np.ones(350)])
    assert (pos, neg) == (380, 350) and p == pytest.approx(0.28311, abs=1e-5)
    assert tips.sign_test(np.zeros(4)) == (0, 0, 1.0)


def test_calibration_flags_sparse_data():
    """With nearly every deal tied the normal approximation is optimistic; the null
    calibration shows it (and the report then points to the sign test)."""
    schedule = tips.look_schedule(1000, 4)
    sparse = np.zeros(1000)
    sparse[:10] = 0.25
    assert tips.null_calibration(sparse, schedule, 2000, seed=1) > tips.CALIBRATION_WARN
    dense = np.zeros(1000)
    dense[:300], dense[300:600] = 0.25, -0.25
    assert tips.null_calibration(dense, schedule, 2000, seed=1) < 0.065


def test_early_stop_and_degenerate_data():
    schedule = tips.look_schedule(400, 4)
    big = np.full(400, 0.5) + np.random.default_rng(0).normal(0, 0.1, 400)
    t = tips.sequential_test(big, schedule)
    assert t.crossed and t.look == 1 and t.n == 100 and tips.verdict(t) == "supported"
    zero = tips.sequential_test(np.zeros(400), schedule)
    assert not zero.crossed and zero.p == 1.0 and zero.look == 4
    assert tips.verdict(zero) == "no detectable effect"
    constant = tips.sequential_test(np.full(400, -0.25), schedule)
    assert constant.crossed and tips.verdict(constant) == "refuted"
    assert tips.prediction_matched("none", "no detectable effect")
    assert not tips.prediction_matched("positive", "refuted")


# --- the harness on real games --------------------------------------------------------
WIN_CHEAPLY = tips.load_config("german_whist").tip("win_cheaply")
VALUE_PRIZES = tips.load_config("german_whist").tip("value_prizes")
TWO_TIPS = ("win_cheaply", "value_prizes")


def _small(seed: int = 8, runner=None, deals: int = 12):
    return tips.run_experiments(
        "german_whist_v0", [WIN_CHEAPLY, VALUE_PRIZES], opponents=["random"],
        max_deals=deals, looks=2, seed=seed, runner=runner,
    )  # fmt: skip


def test_same_seed_same_results():
    """Experiments are reproducible from their seed; another seed plays other deals."""
    one, two = _small(), _small()
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a.a, b.a)
        np.testing.assert_array_equal(a.b, b.b)
        assert a.as_dict() == b.as_dict()
    other = _small(seed=9)
    assert not np.array_equal(one[0].a, other[0].a)


def test_workers_give_the_same_results():
    """Worker processes play the same games as one process (seeds come from deals)."""
    with tips.Runner(2) as runner:
        parallel = _small(runner=runner, deals=10)
    serial = _small(deals=10)
    for a, b in zip(parallel, serial, strict=True):
        np.testing.assert_array_equal(a.a, b.a)
        np.testing.assert_array_equal(a.b, b.b)


def test_arms_and_pairing():
    """Arm A (the full bot) is shared by every tip; arm B switches one tip off; both
    arms' data line up deal by deal, seat by seat."""
    res = _small()
    assert [r.arm_b for r in res] == [f"heuristic:-{t}" for t in TWO_TIPS]
    assert all(r.arm_a == "heuristic" for r in res)
    n = min(r.deals for r in res)
    np.testing.assert_array_equal(res[0].a[:n], res[1].a[:n])
    for r in res:
        # deal, opponent, seat, metric
        assert r.a.shape == r.b.shape == (r.deals, 1, 2, 2)
        # German Whist: win share 1/0 and reward ±1 are the same result
        np.testing.assert_array_equal(r.a[..., 1], 2 * r.a[..., 0] - 1)


def test_block_matches_the_arena():
    """A block's games are the arena's duplicate games for the same deal seeds."""
    from parlour.training.arena import run_arena

    seeds = np.random.SeedSequence(4).generate_state(3, dtype=np.uint32).tolist()
    block = tips.Block("german_whist_v0", (), "heuristic", ("random",), tuple(seeds))
    mine = tips.play_block(block)
    arena = run_arena("german_whist_v0", ["heuristic", "random"], games=6,
                      duplicate=True, seed=4)  # fmt: skip
    np.testing.assert_array_equal(mine[:, 0, :, 1].ravel(), arena.candidate_scores)
    np.testing.assert_array_equal(mine[:, 0, :, 0].ravel(), arena.candidate_wins)


def test_aa_experiments_stay_within_the_nominal_rate():
    """Both arms identical (random play, different seeds): over 60 A/A experiments on
    real games the harness reports an effect about 5% of the time, never far more."""
    opts = {"players": 2, "episode": "deal"}
    found = 0
    for seed in range(60):
        r = tips.aa_experiment("forty_fives_v0", "random", env_options=opts,
                               max_deals=40, looks=2, seed=seed)  # fmt: skip
        assert not np.array_equal(r.a, r.b)  # the arms really play differently
        found += r.verdict != "no detectable effect"
    # binomial(60, 0.05): P(X >= 9) < 0.005
    assert found <= 8


# --- agreement predicates on forced deals ---------------------------------------------
def _deal(hands, stock):
    env = envs.make("german_whist_v0")
    env.reset(options={"deal": {"dealer": 1, "hands": hands, "stock": stock}})
    return env, env.unwrapped


def _play(env, name):
    env.step(env.unwrapped.action_id(name))


FOLLOW = (
    ["7S", "6S", "5S", "4S", "2S", "2H", "3H", "4H", "2D", "3D", "4D", "2C", "4C"],
    ["AS", "KS", "QS", "3S", "AH", "QH", "AD", "KD", "QD", "JD", "10D", "AC", "KC"],
)
FOLLOW_STOCK = ["3C", "9D", "5H", "JS", "10S", "9S", "8S", "KH", "JH", "10H", "9H",
                "8H", "7H", "6H", "8D", "7D", "6D", "5D", "QC", "JC", "10C", "9C", "8C",
                "7C", "6C", "5C"]  # fmt: skip


@pytest.mark.parametrize(
    "card, win_cheaply",
    [("QS", True), ("KS", True), ("AS", True)],  # A K Q all own: the same card
)
def test_win_cheaply_equivalent_cards(card, win_cheaply):
    """win_cheaply, "Take it with the lowest card that still wins": cards with
    nothing unseen between them count as the lowest."""
    env, raw = _deal([list(h) for h in FOLLOW], FOLLOW_STOCK)
    _play(env, "7S")  # seat 0 leads; seat 1 holds A K Q 3 of spades
    found = tips.tip_situations(raw.game, raw.game_state, 1, raw.action_id(card))
    assert found["win_cheaply"] is win_cheaply
    assert found["value_prizes"] == ("trump", True)  # the first prize turned trumps
    assert found["fight_late"] == ("early", True)
    assert "duck_duds" not in found and "save_trumps" not in found


@pytest.mark.parametrize(
    "card, expected",
    [
        ("QH", {"win_cheaply": True, "duck_duds": True}),
        ("AH", {"win_cheaply": False, "duck_duds": False}),  # KH unseen between
    ],
)
def test_duck_duds_and_win_cheaply(card, expected):
    """duck_duds, "If it's a dud, throw your lowest card of the led suit" (prize 5H)."""
    env, raw = _deal([list(h) for h in FOLLOW], FOLLOW_STOCK)
    _play(env, "7S")
    _play(env, "3S")  # seat 1 ducks trick 1; seat 0 takes the 3C, seat 1 draws 9D
    _play(env, "2H")  # seat 0 leads a heart to the prize 5H
    assert raw.game.action_name(raw.game_state.face_up) == "5H"
    found = tips.tip_situations(raw.game, raw.game_state, 1, raw.action_id(card))
    assert {k: found[k] for k in expected} == expected
    assert found["value_prizes"] == ("dud", True)


VOID = (
    ["AS", "KS", "QS", "JS", "10S", "9S", "8S", "7S", "6S", "5S", "4S", "3S", "2S"],
    ["AH", "KH", "QH", "JH", "10H", "9H", "AD", "KD", "QD", "JD", "AC", "KC", "QC"],
)
VOID_STOCK = ["3C", "8H", "7H", "6H", "5H", "4H", "3H", "2H", "10D", "9D", "8D", "7D",
              "6D", "5D", "4D", "3D", "2D", "JC", "10C", "9C", "8C", "7C", "6C", "5C",
              "4C", "2C"]  # fmt: skip


@pytest.mark.parametrize(
    "card, expected",
    [
        ("9H", {"save_trumps": True, "long_suit": False}),  # hearts: the long suit
        ("JD", {"save_trumps": True, "long_suit": True}),
        ("QC", {"save_trumps": False, "win_cheaply": True}),
        # A K Q of trumps held: all three are the cheapest winner
        ("AC", {"save_trumps": False, "win_cheaply": True}),
    ],
)
def test_save_trumps_and_long_suit(card, expected):
    """Void in the led suit: "Trumps are stage-2 cards" (a plain card) and "Build one
    long suit" (discard from another suit)."""
    env, raw = _deal([list(h) for h in VOID], VOID_STOCK)
    _play(env, "2S")
    found = tips.tip_situations(raw.game, raw.game_state, 1, raw.action_id(card))
    assert {k: found[k] for k in expected} == expected
    if card in ("9H", "JD"):
        assert "win_cheaply" not in found


def test_agreement_separates_the_switch():
    """The heuristic follows win_cheaply and save_trumps; switched off, it does not."""
    on = tips.agreement("heuristic", deals=4, seed=1)
    for tip in ("win_cheaply", "save_trumps"):
        off = tips.agreement(f"heuristic:-{tip}", deals=4, seed=1)
        assert on.rate(tip).estimate > off.rate(tip).estimate + 0.2
    assert on.rate("open_hands") is not None and on.games == 8
    with pytest.raises(ValueError, match="german_whist_v0"):
        tips.agreement("heuristic", env="forty_fives_v0")


# --- a trained checkpoint as opponent and subject -------------------------------------
TINY = {
    "total_timesteps": 256, "n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1,
    "net_arch": [32, 32], "opponents": {"self": 0.5, "random": 0.5},
    "snapshot_every": 128, "checkpoint_every": 128, "eval_every": 128, "eval_games": 4,
    "eval_opponents": ["random"], "tensorboard": False,
}  # fmt: skip


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("tips-run")
    config = config_from_dict({**TINY, "env": "german_whist_v0",
                               "env_options": {"variant": "german"}})  # fmt: skip
    return train(config, run_dir=run_dir, progress=False).checkpoint


def test_run_with_checkpoint_writes_report(checkpoint, tmp_path):
    """A checkpoint joins the opponent pool and gets an agreement table; the report
    states deals, minimum detectable effect and a verdict for every tip."""
    run = tips.run_tips("german_whist", tips=["win_cheaply"], games=10,
                        opponents=["random"], checkpoint=str(checkpoint),
                        out=tmp_path, agreement_deals=2, calibrate=100)  # fmt: skip
    assert run.opponents[0] == "random" and run.opponents[1].startswith("ckpt:")
    assert [a.agent for a in run.agreement][1:] == ["heuristic", "random"]
    report = (tmp_path / "german_whist.md").read_text()
    assert "## Agent agreement" in report and "MDE" in report
    assert re.search(r"\| `win_cheaply` \| positive \| \*\*(supported|refuted|no "
                     r"detectable effect)\*\*", report)  # fmt: skip
    assert "10 deals" in report or "| 10 |" in report
    assert (tmp_path / "german_whist.png").stat().st_size > 5000
    data = json.loads((tmp_path / "german_whist.json").read_text())
    assert data["tips"][0]["tip"] == "win_cheaply"
    assert data["parlour_version"] == parlour.__version__ and data["env_version"] == 0
    assert f"with Parlour {parlour.__version__} (env `german_whist_v0`, version 0)" in (
        report
    )
    assert set(data["tips"][0]["per_opponent"]) == set(run.opponents)
    assert data["agreement"][0]["agreement"]["win_cheaply"]["situations"] > 0


# --- Fünfzehn – tot -------------------------------------------------------------------
def test_variant_rules_default_to_the_engine():
    for total in range(16):
        for rolls in range(7):
            assert tips.variant_turn_options(total, rolls) == turn_options(total, rolls)
    assert tips.variant_turn_options(9, 2, rule1=False) == (True, True)
    assert tips.variant_turn_options(10, 1, rule1=False) == (True, True)
    assert tips.variant_turn_options(12, 3, rule2=False) == (True, True)
    assert tips.variant_turn_options(9, 3, rule1=False) == (True, False)


def test_solver_rule_options():
    from parlour.agents import fuenfzehn_tot_solver as solver

    both = solver.solve_turn(1, [8], 0, exact=True)
    assert both == solver.solve_turn(1, [8], 0, exact=True, rule1=True, rule2=True)
    free = solver.solve_turn(1, [8], 0, exact=True, rule1=False, rule2=False)
    assert free.win_probability > both.win_probability  # no rule to obey: better
    assert both.decision(9, 2) == "stand" and both.forced[9][2]
    assert not free.forced[9][2]  # without rule 1 a 9 is a free choice


@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("half", [1, 2])
def test_round_seats_are_a_distribution(half, players):
    for rules in tips.RULE_SETS.values():
        r = tips.round_seats(half, players, *rules)
        assert sum(r.chance) == 1 and all(isinstance(c, Fraction) for c in r.chance)
        assert all(0 < c < 1 for c in r.chance)


def test_round_seats_match_the_engine():
    """The exact first-half round of two optimal players against 3,000 first rounds
    played by the env with the solver bots (seat 0 starts)."""
    env = envs.make("fuenfzehn_tot_v0", players=2)
    raw = env.unwrapped
    bots = [agents.make("heuristic", "fuenfzehn_tot_v0", seed=s) for s in (0, 1)]
    starter_lost, n = 0, 3000
    for seed in range(n):
        env.reset(seed=seed, options={"starter": 0})
        while raw.game_state.pool == raw.game.total_matches:
            seat = raw.game.current_player(raw.game_state)
            obs = env.observe(env.agent_selection)
            mask = obs["action_mask"]
            turn = Turn(raw.game, raw.game_state, seat, obs["observation"], mask)
            env.step(bots[seat].act(turn))
        starter_lost += raw.game_state.matches[0]
    exact = float(tips.round_seats(1, 2).chance[0])
    assert abs(starter_lost / n - exact) < 3 * math.sqrt(exact * (1 - exact) / n)


def test_dice_claims():
    claims = {c.name: c for c in tips.dice_claims()}
    assert all(c.verdict == "supported" for c in claims.values())
    assert claims["ten_is_risky"].numbers["p_bust_one_roll_from_10"] == "1/6"
    assert claims["nine_is_safe"].numbers["p_bust_one_roll_from_9"] == "0"
    assert claims["nine_is_safe"].numbers["p_bust_third_and_fourth_from_9"] == "7/12"
    assert claims["three_rolls"].numbers["p_over_15"] == "5/108"  # 10/216
    assert claims["four_rolls"].numbers["p_over_15"] == "145/432"


def test_game_seat_order_counts_every_game():
    out = tips.game_seat_order(12, players=3, seed=2)
    assert sum(out["losses"]) == 12 and len(out["losses"]) == 3


# --- command line ---------------------------------------------------------------------
def test_cli_runs_and_writes(tmp_path, capsys):
    # a section another command wrote (the audit's) survives the rewrite
    kept = "<!-- begin audit -->\n## Audit\n<!-- end audit -->\n"
    (tmp_path / "fuenfzehn_tot.md").write_text("# old report\n\n" + kept)
    code = cli(["tips", "fuenfzehn_tot", "--games", "10", "--opponents", "random",
                "--out", str(tmp_path), "--quiet", "--workers", "1"])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "lookahead" in out and "wrote" in out
    report = (tmp_path / "fuenfzehn_tot.md").read_text()
    assert "## The seed's arithmetic, checked exactly" in report
    assert "## Seat order in the whole game" in report
    assert "# old report" not in report and report.endswith(kept)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["tips", "skat"], "no strategy tips"),
        (["tips", "german_whist", "--tip", "nope"], "no hypothesis written"),
        (["tips", "german_whist", "--games", "0"], "--games"),
        (["tips", "german_whist", "--opponents", "bogus"], "bogus"),
        (["tips", "german_whist", "--checkpoint", "/no/such/dir"], "no checkpoint"),
        (["tips", "german_whist", "--workers", "0"], "--workers"),
    ],
)
def test_cli_bad_arguments(argv, message, capsys):
    assert cli(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
