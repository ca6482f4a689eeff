"""Text play (`parlour.text`): the parser, the prompts, text agents in the arena, and
recorded games.

- The parser over a table of answers per game: good ones (in several spellings) read as
  the move meant, ambiguous, illegal and unreadable ones refused with that reason.
- The scripted text agent (``text:scripted``) plays every variant through the arena
  (`training/arena.py`) on duplicate deals; every answer it meant as a move is read as
  that move and no bad answer is ever accepted (the env raises on an illegal move).
  The default suite plays 20 games per variant, the ``slow`` test 200 against random
  play and the heuristic bot.
- Prompts against the hidden-information twins of each game's record (its
  ``hidden_twins`` hook): two deals that differ only in cards a seat cannot know give
  that seat identical prompts.
- Each variant's rules summary holds its key rules (the record's ``key_rules``), and a
  forfeit scores as the record's ``decided_by`` says.
- Recorded games (JSONL) replay to the same final scores; a changed record is caught.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from test_generic import deal_hook

from parlour import agents, envs
from parlour.agents import Turn
from parlour.envs.core.engine import TERMINAL
from parlour.text import (
    Forfeit,
    ScriptedAnswerer,
    TextAgent,
    TextEnv,
    engine_state,
    forfeit_scores,
    load_records,
    parse_move,
    play_game,
    prompt,
    replay,
    run_text_arena,
    save_records,
    scripted_agent,
    summary,
    view,
)
from parlour.text.scripted import legal_moves_in
from parlour.training.arena import run_arena


# --- the parser -------------------------------------------------------------------
def engine(env_name: str, **options: Any) -> Any:
    return envs.make(env_name, **options).unwrapped.game


def registered(env_name: str, **engine_has: Any) -> dict[str, Any]:
    """The options of the first registered variant (``envs.VARIANTS``) whose engine
    has the given attribute values, e.g. three-player Herzeln, so that the tests do
    not spell option names that belong to the env."""
    for options in envs.VARIANTS[env_name]:
        game = engine(env_name, **options)
        if all(getattr(game, k) == v for k, v in engine_has.items()):
            return dict(options)
    raise LookupError(f"no registered {env_name} variant with {engine_has}")


#: (env, options, legal move names, [(answer, expected move or status), …]); an
#: expected value that is a status ("ambiguous", "illegal", "unreadable") means refused
PARSER_TABLE = [
    (
        "german_whist_v0",
        {},
        ["QS", "10H", "KD"],
        [
            ("QS", "QS"),
            ("qs", "QS"),
            (" `QS`. ", "QS"),
            ("Q♠", "QS"),
            ("queen of spades", "QS"),
            ("I play the Q of spades", "QS"),
            ("I play the Queen of Spades.", "QS"),
            ("ten of hearts", "10H"),
            ("10 of hearts", "10H"),
            ("T♥", "10H"),
            ("th", "10H"),
            ("Think: the AS is gone and QS is weak. MOVE: KD", "KD"),
            ("QS or KD", "ambiguous"),
            ("queen of spades, then the king of diamonds", "ambiguous"),
            ("AS", "illegal"),
            ("I play the ace of spades", "illegal"),
            ("MOVE: 2C", "illegal"),
            ("", "unreadable"),
            ("hello there", "unreadable"),
            ("play a spade", "unreadable"),  # "a spade" is no ace
            ("As I said, I am thinking", "unreadable"),
        ],
    ),
    (
        "german_whist_v0",
        {"variant": "honeymoon"},
        ["JKH", "JKL", "AS"],
        [
            ("JKH", "JKH"),
            ("the high joker", "JKH"),
            ("jkl", "JKL"),
            ("low joker", "JKL"),
            ("a joker", "unreadable"),
            ("high joker or AS", "ambiguous"),
        ],
    ),
    (
        "forty_fives_v0",
        {"players": 4},
        ["rob:2C", "rob:9H", "norob"],
        [
            ("rob:2C", "rob:2C"),
            ("rob 2C", "rob:2C"),
            ("I rob, burying the two of clubs", "rob:2C"),
            ("Rob and bury the 9♥", "rob:9H"),
            ("norob", "norob"),
            ("no rob", "norob"),
            ("I don't rob.", "norob"),
            ("I decline", "norob"),
            ("rob", "ambiguous"),
            ("rob 2C or 9H", "ambiguous"),
            ("rob 5S", "illegal"),
            ("pass", "illegal"),
            ("???", "unreadable"),
        ],
    ),
    (
        # a rob decision offered together with the first card (the rob question may
        # come at the ace holder's first turn to play): a bare card is the card
        "forty_fives_v0",
        {"players": 4},
        ["2C", "9H", "AS", "rob:2C", "rob:9H", "norob"],
        [
            ("2C", "2C"),
            ("I play the nine of hearts", "9H"),
            ("rob 2C", "rob:2C"),
            ("rob:9h", "rob:9H"),
            ("no rob", "norob"),
            ("rob AS", "illegal"),
            ("rob", "ambiguous"),
        ],
    ),
    (
        "forty_fives_v0",
        {"players": 4, "variant": "auction"},
        ["pass", "bid:20", "bid:25", "bid:30"],
        [
            ("bid:20", "bid:20"),
            ("bid 20", "bid:20"),
            ("I bid 25.", "bid:25"),
            ("30", "bid:30"),
            ("pass", "pass"),
            ("I pass.", "pass"),
            ("bid 20 or 25", "ambiguous"),
            ("bid 15", "illegal"),
            ("hold", "illegal"),
            ("hmm", "unreadable"),
        ],
    ),
    (
        "forty_fives_v0",
        {"players": 4, "variant": "auction"},
        ["trump:S", "trump:H", "trump:D", "trump:C"],
        [
            ("trump:h", "trump:H"),
            ("spades", "trump:S"),
            ("I name diamonds as trumps", "trump:D"),
            ("♣", "trump:C"),
            ("hearts or clubs", "ambiguous"),
            ("the best suit", "unreadable"),
        ],
    ),
    (
        "forty_fives_v0",
        {"players": 4, "variant": "auction"},
        ["discard:4H", "discard:10D", "done"],
        [
            ("discard:4H", "discard:4H"),
            ("discard 4H", "discard:4H"),
            ("I discard the ten of diamonds", "discard:10D"),
            ("4H", "discard:4H"),  # a bare card: the only move of that card
            ("done", "done"),
            ("I'm done.", "done"),
            ("discard 4H and 10D", "ambiguous"),
            ("discard 9C", "illegal"),
            ("banana", "unreadable"),
        ],
    ),
    (
        "forty_fives_v0",
        {"players": 4, "variant": "auction"},
        ["pass", "hold", "bid:30"],
        [("hold", "hold"), ("I hold", "hold"), ("bid 30", "bid:30")],
    ),
    (
        "fuenfzehnern_v0",
        {},
        ["QS", "zwang:QS", "7H"],
        [
            ("QS", "QS"),
            ("Laub-Ober", "QS"),
            ("I play the queen of spades", "QS"),
            ("zwang:QS", "zwang:QS"),
            ("QS with Zwang", "zwang:QS"),
            ("I lead the queen of spades, Zwang!", "zwang:QS"),
            ("Zwang", "zwang:QS"),
            ("Herz-7", "7H"),
            ("QS or 7H", "ambiguous"),
            ("AS", "illegal"),
            ("Herz-Ober", "illegal"),
            ("what?", "unreadable"),
        ],
    ),
    (
        "herzeln_v0",
        {"contract": "domino"},
        ["QH@top", "QH@bottom", "9C@bottom"],
        [
            ("QH@top", "QH@top"),
            ("qh@bottom", "QH@bottom"),
            ("QH at the top", "QH@top"),
            ("lay the queen of hearts on the bottom end", "QH@bottom"),
            ("9C", "9C@bottom"),  # only one end takes it
            ("Eichel-9 at the bottom", "9C@bottom"),
            ("QH", "ambiguous"),
            ("the queen of hearts", "ambiguous"),
            ("KS", "illegal"),
            ("pass", "illegal"),
            ("nothing fits", "unreadable"),
        ],
    ),
    (
        "herzeln_v0",
        {"contract": "domino"},
        ["pass"],
        [("pass", "pass"), ("I pass", "pass"), ("QH@top", "illegal")],
    ),
    (
        "herzeln_v0",
        {},
        ["JS", "10S"],
        [("Laub-Unter", "JS"), ("ten of spades", "10S"), ("Herz-Ober", "illegal")],
    ),
    (
        "fuenfzehn_tot_v0",
        {},
        ["roll", "stand"],
        [
            ("roll", "roll"),
            ("ROLL", "roll"),
            ("I roll again.", "roll"),
            ("stand", "stand"),
            ("I'll stand on that.", "stand"),
            ("roll or stand", "ambiguous"),
            ("maybe", "unreadable"),
        ],
    ),
    (
        "fuenfzehn_tot_v0",
        {},
        ["roll"],
        [("roll", "roll"), ("stand", "illegal"), ("I stop here", "illegal")],
    ),
]
PARSER_CASES = [
    pytest.param(
        env_name, options, legal, answer, expected, id=f"{env_name}:{answer!r}"
    )
    for env_name, options, legal, answers in PARSER_TABLE
    for answer, expected in answers
]
REFUSALS = ("ambiguous", "illegal", "unreadable")


@pytest.mark.parametrize(
    ("game_name", "game_options", "legal", "answer", "expected"), PARSER_CASES
)
def test_parser_table(
    game_name: str, game_options: dict, legal: list[str], answer: str, expected: str
) -> None:
    game = engine(game_name, **game_options)
    ids = [game.action_id(n) for n in legal]
    parsed = parse_move(answer, ids, game)
    if expected in REFUSALS:
        assert parsed.status == expected, parsed.message
        assert parsed.action is None
        assert "\n" not in parsed.message
        for name in legal:  # a refusal lists the legal moves
            assert name in parsed.message
    else:
        assert parsed.status == "ok", parsed.message
        assert game.action_name(parsed.action) == expected


def test_parser_refuses_non_text() -> None:
    game = engine("german_whist_v0")
    parsed = parse_move(None, [game.action_id("QS")], game)  # type: ignore[arg-type]
    assert parsed.status == "unreadable" and "QS" in parsed.message


# --- rules summaries --------------------------------------------------------------
def test_rules_summary_names_the_variants_key_rules(
    env_name: str, options: dict
) -> None:
    """The summary holds every phrase of the record's ``key_rules`` for the variant,
    and none that it marks as absent (a rule switched off)."""
    game = engine(env_name, **options)
    text = summary(game)
    key_rules = envs.record(env_name).load("key_rules")(game)
    assert any(key_rules.values()), "key_rules names no phrase the summary must hold"
    wrong = [w for w, present in key_rules.items() if (w in text) != present]
    assert not wrong, f"{env_name} {options} summary: wrong about {wrong}"


def test_rules_summary_unknown_game() -> None:
    class Other:
        name = "chess_v0"

    with pytest.raises(ValueError, match="no text rules summary for 'chess_v0'"):
        summary(Other())


# --- the scripted agent in the arena -----------------------------------------------
class CheckedScripted(TextAgent):
    """The ``text:scripted`` agent, observed: after each decision it checks that an
    answer meant as a move was read as that move, and that a decision whose last answer
    was bad ended in the fallback (a bad answer is never accepted)."""

    def __init__(self, seed: int):
        self.answerer = ScriptedAnswerer(seed)
        super().__init__(self.answerer, seed=seed, spec="text:scripted")
        self.checked = 0

    def act(self, turn: Turn) -> int:
        action = super().act(turn)
        exchange = self.last_exchange
        assert exchange is not None
        if self.answerer.last_kind == "good":
            assert exchange["action"] == self.answerer.last_intent, exchange
            assert exchange["outcome"] in ("parsed", "retried")
        else:
            assert exchange["outcome"] == "fallback", exchange
        # every refusal is for a bad answer: the good ones never come back
        assert len(exchange["refusals"]) == len(exchange["answers"]) - (
            exchange["outcome"] != "fallback"
        )
        self.checked += 1
        return action


def arena_check(env_name: str, options: dict, field: str, games: int) -> None:
    candidate = CheckedScripted(seed=11)
    result = run_arena(
        env_name, [candidate, field], games=games, duplicate=True, seed=5,
        env_options=options,
    )  # fmt: skip
    assert result.games >= games
    assert candidate.checked > 0
    counts = candidate.counts
    # the scripted agent answers badly 20% of the time: refusals and retries happen
    assert counts["retried"] > 0 and counts["parsed"] > counts["retried"]
    assert sum(counts[k] for k in ("ambiguous", "illegal", "unreadable")) > 0


def test_scripted_agent_in_the_arena(env_name: str, options: dict) -> None:
    arena_check(env_name, options, "random", 20)


@pytest.mark.slow
@pytest.mark.parametrize("field", ["random", "heuristic"])
def test_scripted_agent_in_the_arena_200(
    env_name: str, options: dict, field: str
) -> None:
    arena_check(env_name, options, field, 200)


def test_text_scripted_spec() -> None:
    agent = agents.make("text:scripted", "german_whist_v0", seed=3)
    assert isinstance(agent, TextAgent) and agent.spec == "text:scripted"
    for spec in ("text", "text:gpt"):
        with pytest.raises(ValueError, match="write text:scripted"):
            agents.make(spec, "german_whist_v0")


def test_text_agent_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="callable"):
        TextAgent("not callable")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fallback"):
        TextAgent(str, fallback="draw")
    with pytest.raises(ValueError, match="retries"):
        TextAgent(str, retries=-1)


# --- hidden information -------------------------------------------------------------
def test_prompts_hide_what_the_seat_cannot_know(env_name: str, options: dict) -> None:
    """The hidden-information twins of the generic tier: two deals that differ only in
    cards ``observer`` cannot know. While the games look alike to him (``same_view``),
    his table view — and his whole prompt when he is to act — must be identical."""
    twins = deal_hook(env_name, "hidden_twins")
    rng = np.random.default_rng(1)
    compared = prompts = 0
    for trial in range(15):
        env_a, env_b = envs.make(env_name, **options), envs.make(env_name, **options)
        game = env_a.unwrapped.game
        opts_a, opts_b, observer, same_view = twins(game, rng)
        env_a.reset(seed=trial, options=opts_a)
        env_b.reset(seed=trial, options=opts_b)
        while same_view(engine_state(env_a), engine_state(env_b)):
            a, b = engine_state(env_a), engine_state(env_b)
            assert view(game, a, observer) == view(game, b, observer), (
                f"trial {trial}: player_{observer}'s view depends on hidden cards"
            )
            compared += 1
            if game.current_player(a) == observer:
                legal_a, legal_b = game.legal_actions(a), game.legal_actions(b)
                assert legal_a == legal_b
                assert prompt(game, a, observer, legal_a) == prompt(
                    game, b, observer, legal_b
                )
                prompts += 1
            common = sorted(set(game.legal_actions(a)) & set(game.legal_actions(b)))
            if not common:
                break
            action = int(common[rng.integers(len(common))])
            env_a.step(action)
            env_b.step(action)
    assert compared >= 5 * 15 and prompts > 0


def test_german_whist_prompt_shows_the_seen_rows() -> None:
    """Seed: "Every card drawn face up stays in the Seen row until it’s played"."""
    env = envs.make("german_whist_v0")
    hands = [
        "AS KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S 2S".split(),
        "AH KH QH JH 10H 9H 8H 7H 6H 5H 4H 3H 2H".split(),
    ]
    stock = [r + s for s in "DC" for r in "A K Q J 10 9 8 7 6 5 4 3 2".split()]
    env.reset(options={"deal": {"dealer": 1, "hands": hands, "stock": stock}})
    env.step(env.unwrapped.action_id("AS"))  # player_0 leads, wins the AD
    env.step(env.unwrapped.action_id("2H"))
    game, state = env.unwrapped.game, engine_state(env)
    mine = view(game, state, 0)
    theirs = view(game, state, 1)
    assert "Your Seen row (face-up prizes you won and still hold" in mine
    assert "sees them): AD" in mine
    assert (
        "Opponent player_0's Seen row: AD; plus 12 cards you have not seen." in theirs
    )
    assert "this trick's prize) is QD" in mine  # the next prize, face up
    # the loser's hidden draw (stock card 2) is in his hand, unseen by the winner
    assert "KD" in theirs.split("Your hand")[1].split("\n")[0]
    assert "KD" not in mine


# --- recorded games and replay -------------------------------------------------------
def test_records_replay_to_the_same_scores(
    env_name: str, options: dict, tmp_path
) -> None:
    n = engine(env_name, **options).num_players
    players = [
        scripted_agent(seed=s)
        if s % 2 == 0
        else agents.make("heuristic", env_name, seed=s)
        for s in range(n)
    ]
    records = []
    for seed in (1, 2):
        for p in players:
            p.reset(seed=seed + 17 * players.index(p))
        records.append(play_game(env_name, players, seed=seed, env_options=options))
    path = tmp_path / "games.jsonl"
    assert save_records(records, path) == 2
    loaded = load_records(path)
    for record in loaded:
        assert any("answers" in m for m in record["moves"])
        assert replay(record) == record["scores"]
    # a changed answer is caught: the replay reads another move (or none)
    record = loaded[0]
    i, move, legal = next(
        (i, m, legal_moves_in(m["prompt"]))
        for i, m in enumerate(record["moves"])
        if m.get("outcome") == "parsed" and len(legal_moves_in(m["prompt"])) > 1
    )
    record["moves"][i]["answers"] = [next(n for n in legal if n != move["action"])]
    with pytest.raises(ValueError, match=f"move {i}: read"):
        replay(record)


@pytest.mark.parametrize(
    ("game_name", "game_options"),
    [
        ("forty_fives_v0", registered("forty_fives_v0", num_players=4)),
        ("herzeln_v0", registered("herzeln_v0", num_players=3)),
    ],
)
def test_recorded_arena_plays_the_arenas_games(
    game_name: str, game_options: dict, tmp_path
) -> None:
    """run_text_arena plays exactly the games run_arena plays with the same specs and
    seed, and every recorded game replays to its scores."""
    path = tmp_path / "arena.jsonl"
    specs = ["text:scripted", "heuristic"]
    kw = {"games": 6, "duplicate": True, "seed": 2, "env_options": game_options}
    recorded = run_text_arena(game_name, specs, path, **kw)
    plain = run_arena(game_name, specs, **kw)
    assert recorded.candidate_scores == plain.candidate_scores
    assert recorded.field_scores == plain.field_scores
    records = load_records(path)
    assert len(records) == recorded.games
    for record in records:
        assert set(record["seats"]) == set(specs)
        assert replay(record) == record["scores"]


def test_load_records_names_a_bad_line(tmp_path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"env": "german_whist_v0"}\nnot json\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1: not a game record"):
        load_records(path)
    path.write_text("not json\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: not a JSON line"):
        load_records(path)


# --- TextEnv, retries and fallbacks ---------------------------------------------------
def test_text_env_game_with_retries_and_fallback(tmp_path) -> None:
    env = TextEnv("fuenfzehn_tot_v0", players=2, matches=2)
    first = env.reset(seed=4)
    assert "Legal moves: roll" in first and env.seat >= 0
    step = env.step("hmm")
    assert step.status == "unreadable" and not step.done
    assert (
        "Your last answer was refused" in env.prompt and "2 attempts left" in env.prompt
    )
    env.step("?")
    step = env.step("!")  # the third refusal: out of retries, a random legal move
    assert step.status == "fallback" and step.move in ("roll", "stand")
    while not env.done:
        env.step(env.legal_moves[0])
    assert sorted(env.scores()) == [-1.0, 1.0]
    env.save(tmp_path / "g.jsonl")
    (record,) = load_records(tmp_path / "g.jsonl")
    assert record["moves"][0]["outcome"] == "fallback"
    assert replay(record) == env.scores()
    with pytest.raises(RuntimeError, match="game is over"):
        env.step("roll")


def test_text_env_forfeit_is_a_loss(tmp_path) -> None:
    """fallback="loss": a win/loss game is lost by the forfeiting seat's side."""
    env = TextEnv("forty_fives_v0", retries=0, fallback="loss", players=4)
    env.reset(seed=2)
    seat = env.seat
    step = env.step("no idea")
    assert step.status == "forfeit" and step.done and env.done
    scores = env.scores()
    assert scores[seat] == scores[(seat + 2) % 4] == -1.0
    assert scores[(seat + 1) % 4] == scores[(seat + 3) % 4] == 1.0
    assert env.record["forfeit"] == seat
    assert replay(env.record) == scores


def test_forfeit_in_a_points_game_puts_the_seat_last() -> None:
    """Herzeln is scored in points: a forfeit stops play and puts the seat one point
    below the lowest score at the table; the others keep theirs."""
    answerer = ScriptedAnswerer(seed=3, bad_rate=0.0)
    quitter = TextAgent(lambda p: "no move", retries=1, fallback="loss")
    players = [TextAgent(answerer, seed=0), quitter, TextAgent(answerer, seed=2)]
    options = registered("herzeln_v0", num_players=3, contracts=(0,))  # No Hearts
    record = play_game("herzeln_v0", players, seed=9, env_options=options)
    assert record["forfeit"] == 1
    assert record["moves"][-1]["outcome"] == "forfeit"
    # its first decision comes in trick 1, before anybody has scored
    assert record["scores"] == [0.0, -1.0, 0.0]
    assert replay(record) == record["scores"]


def test_forfeit_outside_a_forfeit_driver_is_a_clear_error() -> None:
    env = envs.make("german_whist_v0")
    env.reset(seed=0)
    raw = env.unwrapped
    seat = raw.game.current_player(engine_state(env))
    obs = raw.observe(raw.possible_agents[seat])
    turn = Turn(
        raw.game, engine_state(env), seat, obs["observation"], obs["action_mask"]
    )
    agent = TextAgent(lambda p: "", retries=0, fallback="loss")
    with pytest.raises(Forfeit, match=f"player_{seat} forfeits"):
        agent.act(turn)


def test_forfeit_scores_as_the_record_decides(env_name: str, options: dict) -> None:
    """A forfeit mid-game scores as the record's ``decided_by`` says: a game that pays
    a win or a loss is lost by the forfeiting side (-1 each) and won by the others
    (+1 each against one side of partners or one opponent, shares of +1 where everyone
    plays alone, 0 without zero-sum); a game in points keeps the others' scores and
    puts the forfeiting side one point below the lowest."""
    env = envs.make(env_name, **options)
    env.reset(seed=7)
    rng = np.random.default_rng(7)
    game = env.unwrapped.game
    for _ in range(int(rng.integers(1, 30))):  # some moves in, never the last one
        legal = game.legal_actions(engine_state(env))
        action = legal[int(rng.integers(len(legal)))]
        after = engine_state(env).clone()
        game.apply(after, action)
        if game.current_player(after) == TERMINAL:
            break
        env.step(action)
    state = engine_state(env)
    seat = game.current_player(state)
    decided = envs.record(env_name).load("decided_by")(game)
    scores = forfeit_scores(game, state, seat)
    n = len(scores)
    teams = game.teams() if hasattr(game, "teams") else [[s] for s in range(n)]
    side = next(list(t) for t in teams if seat in t)
    others = [s for s in range(n) if s not in side]
    if decided == "win":
        assert [scores[s] for s in side] == [-1.0] * len(side)
        if not getattr(game, "zero_sum", True):
            assert [scores[s] for s in others] == [0.0] * len(others)
        elif len(teams) == 2:
            assert [scores[s] for s in others] == [1.0] * len(others)
        else:
            assert (
                sum(scores) == pytest.approx(0.0) and min(scores[s] for s in others) > 0
            )
    else:
        assert decided == "points"
        so_far = game.returns(state)
        assert [scores[s] for s in others] == [so_far[s] for s in others]
        assert [scores[s] for s in side] == [min(so_far) - 1.0] * len(side)


def test_forfeit_scores_per_game() -> None:
    tot = engine("fuenfzehn_tot_v0", players=3)
    state = tot.new_state()
    assert forfeit_scores(tot, state, 1) == [0.5, -1.0, 0.5]
    alone = engine("forty_fives_v0", players=3)
    assert forfeit_scores(alone, alone.new_state(), 0) == [-1.0, 0.5, 0.5]
    whist = engine("german_whist_v0", variant="honeymoon", episode="deal")
    assert forfeit_scores(whist, whist.new_state(), 0) == [-1.0, 0.0]
    german = engine("german_whist_v0")
    assert forfeit_scores(german, german.new_state(), 0) == [-1.0, 1.0]


def test_transcript_jsonl(tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    agent = TextAgent(ScriptedAnswerer(seed=1), seed=1, transcript=path)
    run_arena("german_whist_v0", [agent, "random"], games=2, duplicate=True, seed=3)
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert {"game", "seed", "seat", "prompt", "answers", "action", "outcome"} <= set(
        first
    )
    assert {json.loads(line)["game"] for line in lines} == {1, 2}


def test_arena_command_records_games_that_replay(tmp_path, capsys) -> None:
    """``parlour arena … --record FILE`` appends every game to JSONL (the text seats'
    prompts and answers included), and each record replays to its scores; a path that
    cannot be written is refused before any game."""
    from parlour.cli import main

    path = tmp_path / "out" / "games.jsonl"
    argv = ["arena", "german_whist_v0", "--agents", "text:scripted", "random"]
    assert (
        main([*argv, "--games", "4", "--duplicate", "--quiet", "--record", str(path)])
        == 0
    )
    records = load_records(path)
    assert len(records) == 4
    assert any("answers" in m for m in records[0]["moves"])
    for record in records:
        assert replay(record) == record["scores"]
    capsys.readouterr()
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main([*argv, "--games", "2", "--record", str(blocker / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "--record" in err and err.count("\n") == 1
