"""Tests of the Fünfzehnern heuristic bot (``agents/fuenfzehnern.py``).

Each option is checked on a forced deal where it decides the move, then the bot is
checked for legality, for strength against ``random`` in both sizes, and for reading
nothing hidden.
"""

from __future__ import annotations

import numpy as np
import pytest

from parlour import agents
from parlour.agents.base import Turn
from parlour.agents.fuenfzehnern import OPTIONS, FuenfzehnernHeuristic
from parlour.envs.fuenfzehnern import raw_env
from parlour.training.arena import play_game, run_arena

ENV = "fuenfzehnern_v0"


def hands(*rows: str) -> list[list[str]]:
    return [row.split() for row in rows]


# player_3 holds AH and 7H, and every top club and diamond; he is void in spades.
DEAL_W = hands(
    "8H 7S 8S 9S 7D 8D 7C 8C",
    "9H 10S JS QS 9D 10D 9C 10C",
    "QH KH JH 10H KS AS JD QD",
    "AH 7H KD AD JC QC KC AC",
)
# player_0 holds KS and QS (the AS is with player_2), AD and KD.
DEAL_C = hands(
    "KS QS 7H 8H AD KD 7C 8C",
    "10S 9S 9H 10H 9D 10D 9C 10C",
    "AS 8S JH QH JD QD JC QC",
    "JS 7S AH KH 8D 7D AC KC",
)


def start(deal: list[list[str]], moves: str = "", **options) -> raw_env:
    e = raw_env(**options)
    e.reset(seed=0, options={"deal": {"dealer": 3, "hands": deal}})
    for name in moves.split():
        e.step(e.action_id(name))
    return e


def choice(e: raw_env, bot: FuenfzehnernHeuristic) -> str:
    """The bot's move for the agent to act, as a name."""
    seat = e.agent_name_mapping[e.agent_selection]
    obs = e.observe(e.agent_selection)
    turn = Turn(e.game, e.game_state, seat, obs["observation"], obs["action_mask"])
    return e.action_name(bot.act(turn))


# --- each option decides a move -------------------------------------------------------
def test_use_zwang_forces_out_the_ace() -> None:
    """use_zwang: holding KS and QS with the AS elsewhere, lead the Ober with Zwang (the
    seed: "This allows the player to later attempt to win the King")."""
    e = start(DEAL_C)
    assert choice(e, FuenfzehnernHeuristic(seed=0)) == "zwang:QS"
    assert not choice(e, FuenfzehnernHeuristic(seed=0, use_zwang=False)).startswith(
        "zwang"
    )


def test_cash_unbeatable_leads_the_top_diamond() -> None:
    """cash_unbeatable: with Zwang off, the leader cashes his unbeatable AD (the richest
    sure winner) instead of giving the lead away."""
    e = start(DEAL_C)
    assert choice(e, FuenfzehnernHeuristic(seed=0, use_zwang=False)) == "AD"
    plain = FuenfzehnernHeuristic(seed=0, use_zwang=False, cash_unbeatable=False)
    assert choice(e, plain) in {
        "7H",
        "7C",
    }  # the cheapest cards: no points, lowest rank


def test_win_rich_tricks_takes_the_trick_as_last_player() -> None:
    """win_rich_tricks: last to play, player_3 takes 8H 9H QH with his AH (the only card
    that wins); without the option he keeps the Ace and plays the 7H."""
    e = start(DEAL_W, "8H 9H QH")
    assert e.agent_selection == "player_3"
    assert choice(e, FuenfzehnernHeuristic(seed=0)) == "AH"
    assert choice(e, FuenfzehnernHeuristic(seed=0, win_rich_tricks=False)) == "7H"


def test_win_rich_tricks_wins_with_the_cheapest_sure_card() -> None:
    """Holding AH and KH over a QH lead, the KH wins as surely as the AH, and costs
    less."""
    e = start(DEAL_C, "7H 9H JH")
    assert e.agent_selection == "player_3"
    assert choice(e, FuenfzehnernHeuristic(seed=0)) == "KH"


def test_unload_losers_discards_the_worthless_card() -> None:
    """unload_losers: void in spades, player_3 discards the 7H (no points, and his only
    card that cannot win later) and keeps his unbeatable cards; without the option the
    discard is random."""
    e = start(DEAL_W, "7S 10S KS")
    assert e.agent_selection == "player_3"
    assert choice(e, FuenfzehnernHeuristic(seed=0)) == "7H"
    picks = {
        choice(e, FuenfzehnernHeuristic(seed=s, unload_losers=False)) for s in range(20)
    }
    assert len(picks) > 1


# --- options by spec ------------------------------------------------------------------
def test_switches_by_spec() -> None:
    bot = agents.make("heuristic:-use_zwang,-cash_unbeatable", ENV, seed=1)
    assert isinstance(bot, FuenfzehnernHeuristic)
    assert not bot.use_zwang and not bot.cash_unbeatable and bot.win_rich_tricks
    assert bot.spec == "heuristic:-use_zwang,-cash_unbeatable"
    with pytest.raises(ValueError, match="valid options: " + ", ".join(OPTIONS)):
        agents.make("heuristic:-trump_early", ENV)
    with pytest.raises(ValueError, match="True or False"):
        FuenfzehnernHeuristic(use_zwang="yes")


# --- legality, strength, information --------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [{}, {"players": 3}, {"lead_rules": "relaxed", "episode": "match", "num_hands": 2}],
    ids=str,
)
def test_bot_plays_only_legal_moves(options: dict) -> None:
    """The env raises on an illegal action, so whole games prove every move legal."""
    env = raw_env(**options)
    n = env.game.num_players
    bots = [FuenfzehnernHeuristic(seed=s) for s in range(n)]
    for seed in range(30):
        totals = play_game(env, bots, seed=seed)
        assert sum(totals) == 0


@pytest.mark.parametrize("players", [4, 3])
def test_bot_beats_random_clearly(players: int) -> None:
    """The heuristic tops the table far more often than a random player would (1/4 or
    1/3), and its mean game points per deal are clearly positive."""
    result = run_arena(
        ENV,
        ["heuristic", "random"],
        games=300,
        seed=0,
        env_options={"players": players},
    )
    win, score = result.win_rate(), result.mean_score()
    assert win.low > 1 / players + 0.05, result.table()
    assert score.low > 2.0, result.table()


def test_bot_reads_nothing_hidden() -> None:
    """Dealing the other players' unplayed cards differently (same counts) never changes
    the bot's choice: it only reads its own hand and public play."""
    rng = np.random.default_rng(5)
    checked = 0
    for seed in range(40):
        env = raw_env(players=4 if seed % 2 else 3)
        env.reset(seed=seed)
        while not env.terminations[env.agent_selection]:
            seat = env.agent_name_mapping[env.agent_selection]
            obs = env.observe(env.agent_selection)
            twin = env.game_state.clone()
            others = [p for p in range(env.game.num_players) if p != seat]
            pool = [c for p in others for c in range(32) if twin.hands[p] >> c & 1]
            rng.shuffle(pool)
            for p in others:
                k = twin.hands[p].bit_count()
                twin.hands[p] = sum(1 << c for c in pool[:k])
                pool = pool[k:]
            picks = []
            for state in (env.game_state, twin):
                turn = Turn(
                    env.game, state, seat, obs["observation"], obs["action_mask"]
                )
                picks.append(FuenfzehnernHeuristic(seed=seed).act(turn))
            assert picks[0] == picks[1]
            checked += 1
            env.step(picks[0])
    assert checked > 500
