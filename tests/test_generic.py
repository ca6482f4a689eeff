"""The generic tier: checks every registered env and variant must pass.

Each test taking ``env_name`` and ``options`` runs once per entry of
``parlour.envs.VARIANTS`` (see ``conftest.py``), so a new game is covered as soon as it
registers. Two checks need to know how a game's forced deals look; they read the
``random_deal`` and ``hidden_twins`` hooks of its record (`deal_hook`) and fail, saying
what to add, for a game without them. PettingZoo's own checkers (``api_test``,
``seed_test``, ``render_test``, the parallel ones) and the trainers' are in
``test_ecosystem.py``.

Timing: the default random soak shares ``SOAK_TOTAL_STEPS`` steps equally among the
variants (so long episodes, such as a Honeymoon match, get fewer games, and the file's
run time does not grow as games register); the ``slow`` test plays ``SOAK_GAMES`` games
of every variant (``make test-slow``).
"""

from __future__ import annotations

import copy
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo.utils.wrappers import BaseWrapper

from parlour import envs
from parlour.envs import IllegalActionError
from parlour.envs.core import soak as soak_module
from parlour.envs.core.cards import cards_in
from parlour.envs.core.soak import soak

SOAK_GAMES = 2000
#: steps the default soak spends over all variants together, so that the file's run time
#: stays put as games register; each variant gets an equal share, and at least
#: SOAK_MIN_GAMES games
SOAK_TOTAL_STEPS = 300_000
SOAK_MIN_GAMES = 50


# --- the game's own deal hooks -------------------------------------------------------
def deal_hook(env_name: str, hook: str) -> Any:
    """The record's ``random_deal`` or ``hidden_twins`` hook of a game; a skip with the
    record's reason for a game without cards or hidden information, a failure saying
    what to add for a game that forgot it."""
    record = envs.record(env_name)
    if record.no_deal:
        pytest.skip(record.no_deal)
    if hook == "hidden_twins" and record.perfect_information:
        pytest.skip("perfect information: nothing is hidden")
    if not getattr(record, hook):
        pytest.fail(
            f"no {hook} hook for {env_name}: add it to its GameRecord "
            "(docs/adding_a_game.md)"
        )
    return record.load(hook)


# --- helpers --------------------------------------------------------------------------
def trajectory(
    env: Any, seed: int, action_seed: int, between: Callable[[], None] | None = None
) -> list[tuple]:
    """Random legal play from ``reset(seed=seed)``: all that every agent got, in order.

    Actions come from a private generator seeded with ``action_seed``; ``between`` runs
    before the reset and before every step (the RNG-disturbance test uses it)."""
    if between:
        between()
    env.reset(seed=seed)
    rng = np.random.default_rng(action_seed)
    out = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        action = None
        if not (term or trunc):
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.integers(len(legal))])
        out.append(
            (
                agent,
                obs["observation"].tobytes(),
                obs["action_mask"].tobytes(),
                reward,
                term,
                trunc,
                repr(info),
                action,
            )
        )
        if between:
            between()
        env.step(action)
    return out


def first_illegal_action(env: Any, seed: int) -> int:
    """Play randomly from ``reset(seed=seed)`` until the agent to act has an in-range
    action that is not legal; return it (skip the test if the game never has one)."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not all(env.terminations.values()):
        mask = env.observe(env.agent_selection)["action_mask"]
        illegal = np.flatnonzero(mask == 0)
        if len(illegal):
            return int(illegal[0])
        env.step(int(rng.integers(len(mask))))
    pytest.skip("every action was legal at every turn of the episode")


def card_lists(deal: dict[str, Any]) -> list[list[str]]:
    """The lists of card names in a forced deal (each hand, the stock, a kitty …)."""
    out = []
    for value in deal.values():
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, list))
    return out


# --- the registry ---------------------------------------------------------------------
def test_every_registered_env_has_variants() -> None:
    for name in envs.names():
        assert envs.VARIANTS.get(name), f"{name} has no entry in parlour.envs.VARIANTS"
    assert set(envs.VARIANTS) <= set(envs.names()), "VARIANTS names an unregistered env"


def test_unknown_env_name() -> None:
    with pytest.raises(
        ValueError, match=r"unknown env 'no_such_game_v0'.*german_whist_v0"
    ):
        envs.make("no_such_game_v0")


# --- PettingZoo's own checks: tests/test_ecosystem.py ------------------------------
def test_order_enforcing_like_pettingzoo(env_name: str, options: dict) -> None:
    """Our wrapper reads the env directly but enforces the order as PettingZoo's
    `OrderEnforcingWrapper` does: nothing before reset, step or reset between the
    agents `agent_iter` hands out, and `last` is the raw env's."""
    env = envs.make(env_name, **options)
    with pytest.raises(AttributeError, match="agent_selection cannot be accessed"):
        env.last()
    env.reset(seed=0)
    assert env.last()[1:] == env.unwrapped.last()[1:]
    it = iter(env.agent_iter())
    next(it)
    with pytest.raises(AssertionError, match="need to call step"):
        next(it)
    assert list(env.agent_iter(max_iter=0)) == []


# --- seeding and determinism ----------------------------------------------------------
def test_different_seeds_give_different_games(env_name: str, options: dict) -> None:
    env = envs.make(env_name, **options)
    games = {str(trajectory(env, seed, action_seed=0)[:8]) for seed in range(20)}
    assert len(games) >= 15, f"only {len(games)} different openings from 20 seeds"


def test_same_seed_same_game(env_name: str, options: dict) -> None:
    env = envs.make(env_name, **options)
    first = trajectory(env, seed=7, action_seed=3)
    trajectory(env, seed=8, action_seed=4)  # something else in between
    assert trajectory(env, seed=7, action_seed=3) == first
    assert trajectory(envs.make(env_name, **options), seed=7, action_seed=3) == first


def test_global_rng_disturbance_changes_nothing(env_name: str, options: dict) -> None:
    """Reseeding and drawing from ``random`` and ``np.random`` between steps (RLCard's
    determinism test) must not change a seeded episode."""
    junk = np.random.default_rng(12345)

    def disturb() -> None:
        random.seed(int(junk.integers(2**32)))
        np.random.seed(int(junk.integers(2**32)))
        random.random()
        np.random.random(3)

    env = envs.make(env_name, **options)
    for seed in (0, 1, 2):
        calm = trajectory(env, seed, action_seed=seed)
        assert trajectory(env, seed, action_seed=seed, between=disturb) == calm


# --- random play soak -----------------------------------------------------------------
def test_random_soak(env_name: str, options: dict) -> None:
    """Random legal games, checked at every step (masks, observations, invariants,
    zero-sum rewards, bounded length): this variant's share of `SOAK_TOTAL_STEPS`, at
    least `SOAK_MIN_GAMES` and at most `SOAK_GAMES` games."""
    pilot = soak(env_name, options, games=10, seed=10_000)
    budget = SOAK_TOTAL_STEPS / sum(len(v) for v in envs.VARIANTS.values())
    games = int(budget // max(pilot["mean_length"], 1.0))
    games = max(SOAK_MIN_GAMES, min(SOAK_GAMES, games))
    result = soak(env_name, options, games=games, seed=0)
    assert result["games"] == games and result["steps"] >= games
    assert sum(1 for w in result["wins"] if w) >= 2, f"one seat always wins: {result}"


@pytest.mark.slow
def test_random_soak_full(env_name: str, options: dict) -> None:
    result = soak(env_name, options, games=SOAK_GAMES, seed=1)
    assert result["games"] == SOAK_GAMES
    assert sum(1 for w in result["wins"] if w) >= 2, f"one seat always wins: {result}"


class _CorruptMask(BaseWrapper):
    """Shows the agent to act a mask with its first legal action switched off."""

    def observe(self, agent: str) -> dict:
        obs = dict(super().observe(agent))
        mask = obs["action_mask"].copy()
        if mask.sum() > 1:
            mask[np.flatnonzero(mask)[0]] = 0
        obs["action_mask"] = mask
        return obs


def test_soak_catches_broken_envs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The soak's checks can fail: a wrong mask, non-zero-sum rewards, invariants."""
    game_cls = type(envs.make("german_whist_v0").unwrapped.game)
    real_make = soak_module.make
    monkeypatch.setattr(
        soak_module, "make", lambda n, **o: _CorruptMask(real_make(n, **o))
    )
    with pytest.raises(AssertionError, match=r"mask allows .* the engine"):
        soak("german_whist_v0", {}, games=3, seed=0)
    monkeypatch.setattr(soak_module, "make", real_make)

    real_returns = game_cls.returns
    monkeypatch.setattr(
        game_cls,
        "returns",  # seat 0 gets a point from nowhere at the end
        lambda self, s: [
            r + (i == 0 and self.is_terminal(s))
            for i, r in enumerate(real_returns(self, s))
        ],
    )
    with pytest.raises(AssertionError, match="do not sum to 0"):
        soak("german_whist_v0", {}, games=3, seed=0)
    monkeypatch.setattr(game_cls, "returns", real_returns)

    def broken(self: Any, state: Any) -> None:
        raise AssertionError("cards not conserved")

    monkeypatch.setattr(game_cls, "check_invariants", broken)
    with pytest.raises(AssertionError, match=r"soak seed 5, game 0, step 0: cards not"):
        soak("german_whist_v0", {}, games=3, seed=5)


def test_soak_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="games must be"):
        soak("german_whist_v0", {}, games=-1, seed=0)
    with pytest.raises(ValueError, match="seed must be"):
        soak("german_whist_v0", {}, games=1, seed="x")  # type: ignore[arg-type]


def test_soak_bounds_the_episode_length() -> None:
    with pytest.raises(AssertionError, match="no end after 10 steps"):
        soak("german_whist_v0", {}, games=1, seed=0, max_steps=10)


# --- the action mask is the engine's legal actions ------------------------------------
def test_mask_is_engine_legal_actions(env_name: str, options: dict) -> None:
    env = envs.make(env_name, **options)
    raw = env.unwrapped
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    steps = 0
    while not all(env.terminations.values()) and steps < 300:
        actor = raw.game.current_player(raw.game_state)
        for seat, agent in enumerate(raw.possible_agents):
            mask = env.observe(agent)["action_mask"]
            assert mask.dtype == np.int8
            legal = raw.game.legal_actions(raw.game_state) if seat == actor else []
            assert np.flatnonzero(mask).tolist() == legal
            assert raw.legal_actions(agent) == legal
        legal = raw.game.legal_actions(raw.game_state)
        legal_bits = getattr(raw.game, "legal_bits", None)
        if legal_bits is not None:  # the adapter's fast path, when the engine has one
            assert cards_in(legal_bits(raw.game_state)) == legal
        env.step(legal[int(rng.integers(len(legal)))])
        steps += 1


# --- hidden information ---------------------------------------------------------------
def test_hidden_information(env_name: str, options: dict) -> None:
    """Two starts that differ only in what one player cannot know give that player the
    same observations (and mask) at every corresponding point of play."""
    twins = deal_hook(env_name, "hidden_twins")
    rng = np.random.default_rng(0)
    trials, compared = 60, 0
    for trial in range(trials):
        env_a, env_b = envs.make(env_name, **options), envs.make(env_name, **options)
        opts_a, opts_b, observer, same_view = twins(env_a.unwrapped.game, rng)
        assert opts_a != opts_b
        env_a.reset(seed=trial, options=opts_a)
        env_b.reset(seed=trial, options=opts_b)
        raw_a, raw_b = env_a.unwrapped, env_b.unwrapped
        watcher = raw_a.possible_agents[observer]
        while same_view(raw_a.game_state, raw_b.game_state):
            obs_a, obs_b = env_a.observe(watcher), env_b.observe(watcher)
            where = f"trial {trial}, step {compared}: {watcher}'s"
            assert np.array_equal(obs_a["observation"], obs_b["observation"]), (
                f"{where} observation depends on cards it cannot know; entries "
                f"{np.flatnonzero(obs_a['observation'] != obs_b['observation'])} differ"
            )
            assert np.array_equal(obs_a["action_mask"], obs_b["action_mask"]), where
            compared += 1
            actor = env_a.agent_selection
            assert env_b.agent_selection == actor
            both = (
                env_a.observe(actor)["action_mask"]
                & env_b.observe(actor)["action_mask"]
            )
            common = np.flatnonzero(both)
            if not len(common):
                break
            action = int(common[rng.integers(len(common))])
            env_a.step(action)
            env_b.step(action)
    assert compared >= 5 * trials, (
        f"only {compared} comparable steps in {trials} trials"
    )


# --- bad input ------------------------------------------------------------------------
def test_unknown_option(env_name: str, options: dict) -> None:
    with pytest.raises(ValueError, match="no_such_option"):
        envs.make(env_name, **options, no_such_option=1)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"render_mode": "rgb_array"}, "render_mode"),
        ({"illegal_action": "ignore"}, "illegal_action"),
    ],
)
def test_bad_adapter_option(
    env_name: str, options: dict, extra: dict, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        envs.make(env_name, **options, **extra)


@pytest.mark.parametrize("key", ["no_such_key", "options"])  # a typo; api_test's probe
def test_unknown_reset_option_warns_and_is_ignored(
    env_name: str, options: dict, key: str
) -> None:
    """An unknown reset-option key is a warning naming it and the allowed keys, not an
    error (the ecosystem's checkers probe reset with keys they make up); the game is the
    one the same seed gives without it."""
    env = envs.make(env_name, **options)
    with pytest.warns(
        UserWarning, match=rf"unknown reset option\(s\) \['{key}'\].*allowed"
    ):
        env.reset(seed=3, options={key: 1})
    first = env.observe(env.agent_selection)["observation"]
    env.reset(seed=3)
    assert np.array_equal(env.observe(env.agent_selection)["observation"], first)


def test_reset_options_must_be_a_dict(env_name: str, options: dict) -> None:
    env = envs.make(env_name, **options)
    with pytest.raises(ValueError, match="must be a dict"):
        env.reset(options="deal")


MALFORMED: list[tuple[str, Callable[[dict], str]]] = []


def malformed(name: str) -> Callable:
    """Register a deal mutation: it breaks the deal in place and returns the text the
    error message must contain."""

    def register(fn: Callable[[dict], str]) -> Callable[[dict], str]:
        MALFORMED.append((name, fn))
        return fn

    return register


@malformed("duplicate card")
def _duplicate(deal: dict) -> str:
    cards = card_lists(deal)
    cards[-1][0] = cards[0][0]
    return cards[0][0]


@malformed("unknown card name")
def _unknown(deal: dict) -> str:
    card_lists(deal)[0][1] = "XQ"
    return "'XQ'"


@malformed("one card short")
def _short(deal: dict) -> str:
    cards = card_lists(deal)[0]
    cards.pop()
    return f"got {len(cards)}"


@malformed("one card short in the last list")
def _short_last(deal: dict) -> str:
    cards = card_lists(deal)[-1]
    cards.pop()
    return f"got {len(cards)}"


@malformed("card given as a number")
def _number(deal: dict) -> str:
    card_lists(deal)[0][0] = 17
    return "must be a string, got 17"


@malformed("cards given as one string")
def _string(deal: dict) -> str:
    key = "hands" if "hands" in deal else next(iter(deal))
    deal[key] = "AS KS QS"
    return "list"


@malformed("an extra hand")
def _extra_hand(deal: dict) -> str:
    deal["hands"].append(list(deal["hands"][0]))
    return f"got {len(deal['hands'])}"


@malformed("unknown deal key")
def _unknown_key(deal: dict) -> str:
    deal["joker_pile"] = []
    return "joker_pile"


@malformed("dealer out of range")
def _dealer(deal: dict) -> str:
    deal["dealer"] = 99
    return "dealer"


@malformed("dealer of the wrong type")
def _dealer_type(deal: dict) -> str:
    deal["dealer"] = "north"
    return "'north'"


def test_malformed_deals(env_name: str, options: dict) -> None:
    """Each mutation in `MALFORMED` of a valid forced deal raises ValueError whose
    message names the problem; a deal that is not a dict too."""
    make_deal = deal_hook(env_name, "random_deal")
    env = envs.make(env_name, **options)
    good = make_deal(env.unwrapped.game, np.random.default_rng(0))
    env.reset(options={"deal": good})  # the unbroken deal is fine
    cases = [(name, mutation, copy.deepcopy(good)) for name, mutation in MALFORMED]
    for name, mutation, bad in cases:
        expected = mutation(bad)
        try:
            env.reset(options={"deal": bad})
        except ValueError as err:
            assert expected in str(err), f"{name}: {str(err)!r} lacks {expected!r}"
        else:
            pytest.fail(f"{name}: the malformed deal was accepted: {bad}")
    with pytest.raises(ValueError, match="must be a dict"):
        env.reset(options={"deal": ["AS", "KS"]})


# --- actions --------------------------------------------------------------------------
def test_illegal_action_raises_naming_the_legal_ones(
    env_name: str, options: dict
) -> None:
    env = envs.make(env_name, **options)
    raw = env.unwrapped
    bad = first_illegal_action(env, seed=0)
    legal = [raw.action_name(a) for a in raw.legal_actions()]
    with pytest.raises(IllegalActionError) as err:
        env.step(bad)
    message = str(err.value)
    assert raw.action_name(bad) in message
    assert "legal: " + ", ".join(legal) in message
    assert isinstance(err.value, ValueError)


def test_illegal_action_penalize(env_name: str, options: dict) -> None:
    env = envs.make(env_name, **options, illegal_action="penalize")
    bad = first_illegal_action(env, seed=0)
    offender = env.agent_selection
    env.step(bad)
    assert all(env.terminations.values())
    assert env.rewards[offender] == -1.0
    assert all(r == 0.0 for a, r in env.rewards.items() if a != offender)
    assert env.infos[offender]["illegal_action"] is True
    for agent in env.agent_iter():  # the episode is over: everyone only steps out
        _, reward, term, _, _ = env.last()
        assert term
        if agent == offender:
            assert reward == -1.0
        env.step(None)


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (-1, "out of range"),
        ("big", "out of range"),
        ("QS", "must be an integer"),
        ("2", "must be an integer"),
        (2.7, "must be an integer"),
        (1.0, "must be an integer"),
        (True, "must be an integer"),
        (None, "must choose an action"),
    ],
)
def test_out_of_range_action(
    env_name: str, options: dict, action: Any, message: str
) -> None:
    env = envs.make(env_name, **options)
    env.reset(seed=0)
    if action == "big":
        action = env.action_space(env.agent_selection).n
    with pytest.raises(IllegalActionError, match=message):
        env.step(action)


def test_action_names_round_trip(env_name: str, options: dict) -> None:
    raw = envs.make(env_name, **options).unwrapped
    n = raw.action_space(raw.possible_agents[0]).n
    action_names = [raw.action_name(a) for a in range(n)]
    assert len(set(action_names)) == n, "two actions share a name"
    for a, name in enumerate(action_names):
        assert raw.action_id(name) == a
    with pytest.raises(ValueError, match="no-such-action"):
        raw.action_id("no-such-action")


def test_render_ansi(env_name: str, options: dict) -> None:
    env = envs.make(env_name, **options, render_mode="ansi")
    env.reset(seed=0)
    first = env.render()
    assert isinstance(first, str) and first.strip()
    legal = env.unwrapped.legal_actions()
    env.step(legal[0])
    assert isinstance(env.render(), str)


# --- the soak command line (benchmarks/soak.py) ---------------------------------------
SOAK_CLI = Path(__file__).resolve().parents[1] / "benchmarks" / "soak.py"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SOAK_CLI), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_soak_cli_runs_and_prints_a_table() -> None:
    done = run_cli(
        "german_whist_v0", "--games", "3", "--variant-index", "1", "--no-progress"
    )
    assert done.returncode == 0, done.stderr
    assert (
        "variant=honeymoon, episode=deal" in done.stdout
        and "wins per seat" in done.stdout
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no_such_game_v0"], "unknown env 'no_such_game_v0'"),
        (["german_whist_v0", "--games", "0"], "expected a positive integer, got 0"),
        (
            ["german_whist_v0", "--games", "many"],
            "expected a positive integer, got 'many'",
        ),
        (
            ["german_whist_v0", "--variant-index", "99"],
            "--variant-index 99 is out of range",
        ),
        (["german_whist_v0", "--seed", "-3"], "expected an integer >= 0, got -3"),
        ([], "required: ENV"),
    ],
)
def test_soak_cli_bad_arguments(args: list[str], message: str) -> None:
    done = run_cli(*args)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
