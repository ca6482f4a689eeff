"""Agent specs (`parlour.agents.spec`): one parser for every kind, its canonical text,
its one-line errors, and the table of kinds that `parlour.agents.make` builds from."""

from __future__ import annotations

import pytest

from parlour import agents, envs
from parlour.agents.spec import AgentSpec, checkpoint_path, forms, kinds, parse
from parlour.training import pretrained

# canonical text -> the parsed spec: at least one of every kind in the table
CANONICAL = {
    "random": AgentSpec("random"),
    "heuristic": AgentSpec("heuristic"),
    "heuristic:-win_cheaply,+duck_duds": AgentSpec(
        "heuristic", switches=(("win_cheaply", False), ("duck_duds", True))
    ),
    "ckpt:runs/x": AgentSpec("ckpt", path="runs/x"),
    "ckpt:runs/a@b/step_9@sample": AgentSpec(
        "ckpt", path="runs/a@b/step_9", sample=True
    ),
    "pretrained": AgentSpec("pretrained"),
    "pretrained@sample": AgentSpec("pretrained", sample=True),
    "pretrained:german_whist_v0.honeymoon": AgentSpec(
        "pretrained", name="german_whist_v0.honeymoon"
    ),
    "pretrained:herzeln_v0@sample": AgentSpec(
        "pretrained", name="herzeln_v0", sample=True
    ),
    "endgame:ckpt:runs/x@sample": AgentSpec(
        "endgame", inner=AgentSpec("ckpt", path="runs/x", sample=True)
    ),
    "endgame:endgame:pimc:4": AgentSpec(
        "endgame", inner=AgentSpec("endgame", inner=AgentSpec("pimc", n=4))
    ),
    "text:scripted": AgentSpec("text", name="scripted"),
    "expert": AgentSpec("expert"),
    "endgame:expert": AgentSpec("endgame", inner=AgentSpec("expert")),
    "solver": AgentSpec("solver"),
    "pimc:12": AgentSpec("pimc", n=12),
    "optimal": AgentSpec("optimal"),
    "threshold:13": AgentSpec("threshold", n=13),
}


@pytest.mark.parametrize("text", list(CANONICAL))
def test_parse_and_format_round_trip(text: str) -> None:
    spec = AgentSpec.parse(text)
    assert spec == CANONICAL[text]
    assert str(spec) == text
    assert AgentSpec.parse(str(spec)) == spec


def test_every_kind_of_the_table_is_covered_above() -> None:
    assert {s.kind for s in CANONICAL.values()} == set(kinds())


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("  random ", "random"),
        ("heuristic:", "heuristic"),
        ("heuristic: -win_cheaply , ,+duck_duds", "heuristic:-win_cheaply,+duck_duds"),
        ("pimc:007", "pimc:7"),
        ("pretrained:", "pretrained"),
    ],
)
def test_other_spellings_read_as_their_canonical_form(text, canonical) -> None:
    assert str(AgentSpec.parse(text)) == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "agent spec must be a non-empty string"),
        ("wizard", "unknown agent kind 'wizard'; use random, heuristic"),
        ("random:3", "the random agent takes no options"),
        ("solver:4", "the solver agent takes no options"),
        ("heuristic:win_cheaply", "bad switch 'win_cheaply'"),
        ("heuristic:+", "bad switch '\\+'"),
        ("pimc:x", "write pimc:N with N a whole number, got 'x'"),
        ("threshold:", "write threshold:N"),
        ("ckpt:", "write ckpt:PATH"),
        ("ckpt:@sample", "write ckpt:PATH"),
        ("endgame:", "write endgame:SPEC"),
        ("endgame:oracle", "unknown agent kind 'oracle'"),
        ("endgame:pimc:x", "write pimc:N"),
        ("text:gpt", "write text:scripted"),
        ("text", "write text:scripted"),
        ("random@sample", "only ckpt:PATH and pretrained take @sample"),
        ("heuristic@sample", "only ckpt:PATH and pretrained take @sample"),
    ],
)
def test_malformed_specs_are_refused_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        AgentSpec.parse(text)
    assert "\n" not in str(err.value)


def test_a_spec_made_in_code_must_be_whole() -> None:
    assert str(AgentSpec("pimc", n=3)) == "pimc:3"
    for bad in (
        {"kind": "pimc"},
        {"kind": "endgame"},
        {"kind": "ckpt"},
        {"kind": "random", "sample": True},
        {"kind": "wizard"},
    ):
        with pytest.raises(ValueError):
            AgentSpec(**bad)


def test_an_env_refuses_a_kind_it_has_not_naming_its_own() -> None:
    with pytest.raises(ValueError) as err:
        AgentSpec.parse("threshold:3", "german_whist_v0")
    assert str(err.value) == (
        "unknown agent kind 'threshold' for german_whist_v0; use "
        + ", ".join(forms("german_whist_v0"))
    )
    assert "threshold:N" in forms("fuenfzehn_tot_v0")
    assert AgentSpec.parse("threshold:3", "fuenfzehn_tot_v0").n == 3


def test_the_table_says_what_carries_weights_and_where_the_checkpoint_is() -> None:
    weights = {k for k, kind in kinds().items() if kind.weights}
    assert weights == {"ckpt", "pretrained", "expert"}
    assert parse("endgame:pretrained").carries_weights
    assert not parse("endgame:solver").carries_weights
    assert parse("endgame:ckpt:runs/x@sample").checkpoint_path == "runs/x"
    assert checkpoint_path("ckpt:runs/y") == "runs/y"
    # an agent's name that is no spec (a user's Agent) has no checkpoint
    assert checkpoint_path("agent") is None and checkpoint_path("pretrained") is None
    samplers = {k for k, kind in kinds().items() if kind.samples}
    assert samplers == {"ckpt", "pretrained"}


def test_list_shows_the_table_in_its_order() -> None:
    for name in envs.names():
        listed = forms(name)
        record = envs.record(name)
        assert listed[0] == "random" and listed[-2:] == ["ckpt:PATH", "text:scripted"]
        assert ("endgame:SPEC" in listed) == bool(record.exact_moves)
        assert [f for f in listed if f in record.extra_kinds] == list(
            record.extra_kinds
        )


SHIPPED = str(pretrained.named("german_whist_v0"))


@pytest.mark.parametrize(
    ("env_name", "text"),
    [
        ("german_whist_v0", "random"),
        ("german_whist_v0", "heuristic:-win_cheaply"),
        ("german_whist_v0", "solver"),
        ("german_whist_v0", "pimc:2"),
        ("german_whist_v0", f"ckpt:{SHIPPED}@sample"),
        ("german_whist_v0", "pretrained"),
        ("german_whist_v0", "pretrained:german_whist_v0"),
        ("german_whist_v0", "endgame:pimc:2"),
        ("german_whist_v0", "expert"),
        ("german_whist_v0", "text:scripted"),
        ("fuenfzehn_tot_v0", "optimal"),
        ("fuenfzehn_tot_v0", "threshold:12"),
        ("herzeln_v0", "pimc:3"),
    ],
)
def test_make_builds_every_kind_named_by_its_canonical_spec(env_name, text) -> None:
    agent = agents.make(text, env_name, seed=0)
    assert agent.spec == text
    # a parsed spec builds the same agent as its text
    again = agents.make(AgentSpec.parse(text), env_name, seed=0)
    assert type(again) is type(agent) and again.spec == agent.spec


def test_make_refuses_a_kind_of_another_game_even_when_parsed_elsewhere() -> None:
    spec = AgentSpec.parse("threshold:3")
    with pytest.raises(ValueError, match="unknown agent kind 'threshold' for herz"):
        agents.make(spec, "herzeln_v0")
