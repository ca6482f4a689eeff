"""The tips audit and the strong baseline (`parlour.training.tips.audit`,
`parlour.training.tips.baseline`, `parlour.training.tips.sections`)."""

from __future__ import annotations

import numpy as np
import pytest
from test_solver import brute_value, turn_for  # tests/ is on sys.path
from test_tips import VOID, VOID_STOCK

from parlour import agents, envs
from parlour.agents.base import Agent, Turn
from parlour.agents.solver import german_whist as sg
from parlour.cli import main as cli
from parlour.envs.german_whist.rules import GermanWhist
from parlour.envs.german_whist.state import Phase
from parlour.training.arena import play_game
from parlour.training.tips import audit as au
from parlour.training.tips import baseline as bl
from parlour.training.tips import sections
from parlour.training.tips.experiments import run_experiments

GW = "german_whist_v0"
FF = "forty_fives_v0"


# --- what the tips recommend ----------------------------------------------------------
def void_turn() -> Turn:
    """Seat 1, void in the spade led, holds six hearts, four diamonds and A K Q of
    clubs (trumps: the first prize is the 3C)."""
    env = envs.make(GW)
    env.reset(options={"deal": {"dealer": 1, "hands": VOID, "stock": VOID_STOCK}})
    raw = env.unwrapped
    env.step(raw.action_id("2S"))
    return turn_for(raw.game, raw.game_state)


def test_rule_tips_recommend_what_tip_situations_allows():
    """save_trumps: any plain card; long_suit: a plain card not from the longest
    suit; win_cheaply says nothing when every winner is the same card (A K Q)."""
    turn = void_turn()
    name = turn.game.action_name
    advice = au.TipAdvisor(GW, ["save_trumps", "long_suit", "win_cheaply"]).advise(turn)
    save, long = advice["save_trumps"], advice["long_suit"]
    assert save.how == long.how == "rule"
    assert {name(c) for c in save.scope} == {name(c) for c in turn.legal_actions()}
    assert {name(c)[-1] for c in save.recommended} == {"H", "D"}
    assert {name(c)[-1] for c in long.scope} == {"H", "D"}
    assert {name(c) for c in long.recommended} == {"AD", "KD", "QD", "JD"}
    assert "win_cheaply" not in advice


def _stage2(cards: int, seed: int, want) -> tuple[GermanWhist, object]:
    game = GermanWhist(variant="german", episode="deal")
    rng = np.random.default_rng(seed)
    while True:
        st = sg.random_stage2_state(game, cards, rng)
        if want(game, st):
            return game, st


def test_exact_judge_finds_a_losing_tip_move():
    """Stage 2: a card that throws a won position away is not best, costs the whole
    win and is confirmed worse; a winning card is best at no cost. Brute force over
    the engine gives the same answer."""

    def mixed(game, st):
        wins = {c for c, v in sg.move_values(game, st).items() if v.wins}
        return wins and len(wins) < len(game.legal_actions(st))

    game, st = _stage2(4, 3, mixed)
    turn = turn_for(game, st)
    legal = tuple(turn.legal_actions())
    judge = au.make_judge(GW, samples=5)
    assert judge.judges(turn)
    val = judge.value(turn, (0,))
    assert val.exact
    seat = st.to_play
    for card in legal:
        after = st.clone()
        game.apply(after, card)
        truth = after.phase == Phase.OVER and after.winner == seat or (
            after.phase != Phase.OVER and brute_value(game, after, seat)
        )
        best, best_b, cost, se, tip_move, judge_move = au.judge_advice(
            au.Advice("open_hands", (card,), legal, "switch"), val
        )
        assert best is best_b is truth
        assert cost == (0.0 if truth else 1.0) and se == 0.0
        finding = au.Finding("open_hands", best, best_b, cost, se, 2, True,
                             tip_move, judge_move)  # fmt: skip
        assert finding.confirmed is (not truth)
        assert tip_move == card and val.a[judge_move][0] == 1.0


def test_open_hands_speaks_where_the_switch_changes_the_card():
    """open_hands recommends the full bot's card where the bot without it plays
    another; in a small endgame the full bot searches exactly, so the judge finds
    its card best."""
    on = agents.make("heuristic", GW, seed=0)
    off = agents.make("heuristic:-open_hands", GW, seed=0)

    def differ(game, st):
        turn = turn_for(game, st)
        if len(turn.legal_actions()) < 2:
            return False
        on.reset(seed=0)
        off.reset(seed=0)
        return on.act(turn) != off.act(turn)

    game, st = _stage2(5, 7, differ)
    turn = turn_for(game, st)
    advice = au.TipAdvisor(GW, ["open_hands"]).advise(turn)["open_hands"]
    on.reset(seed=0)
    assert advice.recommended == (on.act(turn),) and advice.how == "switch"
    val = au.make_judge(GW, 3).value(turn, (1,))
    assert au.judge_advice(advice, val)[0]


def test_sampled_judge_is_seeded_and_paired():
    """Stage 1: two sample sets per decision, the same for the same key, each a value
    per sampled deal for every legal card."""
    turn = void_turn()
    judge = au.make_judge(GW, samples=2)
    one, two = judge.value(turn, (5, 1)), judge.value(turn, (5, 1))
    assert not one.exact and set(one.a) == set(turn.legal_actions())
    for c in one.a:
        assert one.a[c].shape == one.b[c].shape == (2,)
        assert np.array_equal(one.a[c], two.a[c])
        assert np.all((one.a[c] >= 0) & (one.a[c] <= 1))


# --- the run and its report -----------------------------------------------------------
def test_audit_run_and_report_shape(tmp_path):
    """One short game per game: every tip asked for gets a row, its numbers hang
    together, and the section replaces itself and survives the bot-switch report."""
    seen = []
    run = au.run_audit(FF, tips=["know_order"], games=1, samples=2, seed=3,
                       command="parlour tips forty_fives --audit",
                       on_game=seen.append)  # fmt: skip
    assert [r.games for r in seen] == [1]
    data = run.as_dict()
    assert seen[0].as_dict() == data
    assert data["unit"] == "points" and data["games"] == 1
    (tip,) = data["tips"]
    assert tip["tip"] == "know_order" and tip["applies"] >= 1
    assert 0 <= tip["best"] <= tip["applies"]
    assert tip["best_share"][1] <= tip["best_share"][0] <= tip["best_share"][2]
    assert set(tip["examples"]) <= {"best", "worse"} and tip["examples"]
    for ex in tip["examples"].values():
        assert "You are player_" in ex["position"]
    report = tmp_path / "forty_fives.md"
    report.write_text("# Strategy tips, tested: Forty-Fives\n\nbody\n")
    sections.write_run(tmp_path, "forty_fives", "audit", data)
    sections.write_run(tmp_path, "forty_fives", "audit", data)
    text = report.read_text()
    assert text.startswith("# Strategy tips")
    assert text.count("<!-- begin audit -->") == 1
    assert "| `know_order` | switch |" in text and "```text" in text
    assert "parlour tips forty_fives --audit" in text
    assert (tmp_path / "forty_fives_audit.json").exists()
    assert sections.kept_sections("new report\n" + text).startswith(
        "<!-- begin audit -->"
    )


def test_bad_audit_input():
    with pytest.raises(ValueError, match="--samples"):
        au.run_audit(GW, samples=0)
    with pytest.raises(ValueError, match="no hypothesis"):
        au.run_audit(GW, tips=["nope"])
    with pytest.raises(ValueError, match="audit covers"):
        au.run_audit("fuenfzehn_tot")
    with pytest.raises(ValueError, match="tip advice"):
        au.TipAdvisor("herzeln_v0", ["x"])


# --- the strong baseline --------------------------------------------------------------
class Extreme(Agent):
    """Plays the first (``end=0``) or last (``end=-1``) action its mask allows, so a
    masked turn shows."""

    spec = "extreme"

    def __init__(self, end: int):
        self.end = end

    def act(self, turn: Turn) -> int:
        return int(np.flatnonzero(turn.mask)[self.end])


@pytest.mark.parametrize(
    "env, options, tip, end",
    [
        (GW, {}, "save_trumps", -1),
        (GW, {}, "win_cheaply", 0),  # the base's own card, when it does not win
        (GW, {}, "duck_duds", 0),  # card ids run from the Ace down: 0 plays high
        (GW, {}, "value_prizes", -1),
        (FF, {}, "hold_top_trumps", -1),
    ],
)
def test_follower_plays_the_tip_exactly_where_it_speaks(env, options, tip, end):
    """Where the tip speaks of the base's move, the follower plays one of the tip's
    moves (the base's favourite among them), elsewhere the base's own move."""
    follower = bl.make_follower(f"follow:{tip}:extreme", env, options, Extreme(end))
    check = au.TipAdvisor(env, [tip], options)
    seen = {"spoke": 0, "changed": 0, "quiet": 0}

    class Checked(Agent):
        def act(self, turn: Turn) -> int:
            move = follower.act(turn)
            legal = turn.legal_actions()
            advice = check.advise(turn).get(tip)
            if advice is None or legal[end] not in advice.scope:
                assert move == legal[end]
                seen["quiet"] += 1
            else:
                assert move == sorted(advice.recommended)[end]
                seen["spoke"] += 1
                seen["changed"] += legal[end] not in advice.recommended
            return move

    game_env = envs.make(env, **options)
    n = game_env.unwrapped.game.num_players
    other = agents.make("heuristic", env, seed=1, env_options=options)
    for seed in range(3):
        play_game(game_env, [Checked() if s % 2 == 0 else other for s in range(n)],
                  seed=seed)  # fmt: skip
    assert seen["spoke"] and seen["changed"] and seen["quiet"]
    assert (follower.spoke, follower.changed) == (seen["spoke"], seen["changed"])


def test_baseline_arms_and_section():
    """Arm A follows the tip, arm B is the agent alone, on the same deals; the
    section has a row per tip."""
    command = "parlour tips forty_fives --baseline heuristic"
    run = bl.run_baseline(
        FF, "heuristic", tips=["play_for_bonus"], games=2, command=command
    )
    (res,) = run.results
    assert (res.arm_a, res.arm_b) == ("follow:play_for_bonus:heuristic", "heuristic")
    assert res.a.shape == res.b.shape and res.deals == 2
    text = sections.render_baseline(run.as_dict())
    assert "| `play_for_bonus` | none |" in text


def test_bad_baseline_input():
    with pytest.raises(ValueError, match="unknown agent kind"):
        bl.run_baseline(GW, "nosuch")
    with pytest.raises(ValueError, match="not a follow"):
        bl.run_baseline(GW, "follow:win_cheaply:pretrained")
    with pytest.raises(ValueError, match="follow:TIP:AGENT"):
        bl.parse_follower("follow:win_cheaply")
    with pytest.raises(ValueError, match="tip_arm"):
        run_experiments(GW, [], tip_arm="C")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["tips", "german_whist", "--audit", "--baseline", "pretrained"], "not both"),
        (["tips", "german_whist", "--audit", "--samples", "0"], "--samples"),
        (["tips", "german_whist", "--baseline", "bogus"], "bogus"),
        (["tips", "fuenfzehn_tot", "--audit"], "audit covers"),
        (["tips", "german_whist", "--audit", "--opponents", "random"], "--opponents"),
        (["tips", "german_whist", "--samples", "4"], "--samples is for --audit"),
    ],
)
def test_cli_bad_audit_arguments(argv, message, capsys):
    assert cli(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
