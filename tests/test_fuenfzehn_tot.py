"""Scenario tests for Fünfzehn – tot (the rule book and the rules notes §5).

Every game here is scripted: ``reset(options={"starter": s, "dice": [...]})`` fixes who
starts and every die, so each test checks one rule. In a plan a turn is a list of faces
(each a ROLL followed by that die), optionally ending in ``S`` (STAND); ``Off(...)``
adds roll-off dice, which need no action.
"""

from __future__ import annotations

import numpy as np
import pytest

from parlour import agents, envs
from parlour.agents.base import Turn
from parlour.envs.core.engine import CHANCE, TERMINAL, IllegalActionError
from parlour.envs.core.soak import soak
from parlour.envs.fuenfzehn_tot import FuenfzehnTot
from parlour.envs.fuenfzehn_tot.observation import BLOCK, HEADER
from parlour.envs.fuenfzehn_tot.rules import Phase
from parlour.training.arena import run_arena

ENV = "fuenfzehn_tot_v0"
S = "stand"


class Off:
    """Roll-off dice inside a plan (chance only, no actions)."""

    def __init__(self, *faces: int):
        self.faces = faces


def on(total: int) -> list:
    """A turn standing on ``total`` (10 can never stand: rule 1)."""
    if total <= 6:
        return [total, S]
    if total <= 12 and total != 10:
        return [total - 6, 6, S]  # 9 = 3 + 6: STAND is then the only action
    if total in (13, 14):
        return [1, 1, total - 8, 6, S]  # 2, then 7 or 8 (rule 2 rolls on), then 6
    if total == 15:
        return [1, 1, 6, 6, 1, S]
    raise ValueError(f"cannot stand on {total}")


class Table:
    """A scripted game: ``Table(plan, starter=0, **env options)`` plays the plan."""

    def __init__(self, plan: list, starter: int | None = 0, **options):
        dice: list[int] = []
        for turn in plan:
            if isinstance(turn, Off):
                dice.extend(turn.faces)
            else:
                dice.extend(x for x in turn if isinstance(x, int))
        self.env = envs.make(ENV, **options)
        reset = {"dice": dice}
        if starter is not None:
            reset["starter"] = starter
        self.env.reset(seed=0, options=reset)
        self.raw = self.env.unwrapped
        self.game: FuenfzehnTot = self.raw.game
        for turn in plan:
            if not isinstance(turn, Off):
                for x in turn:
                    self.act("roll" if isinstance(x, int) else x)

    @property
    def state(self):
        return self.raw.game_state

    def act(self, name: str) -> None:
        self.env.step(self.game.action_id(name))

    def legal(self) -> list[str]:
        return self.game.legal_names(self.state)

    @property
    def player(self) -> int:
        return self.game.current_player(self.state)


# --- a turn: rules 1 and 2 ------------------------------------------------------------
@pytest.mark.parametrize(
    ("faces", "legal"),
    [
        ([], ["roll"]),  # notes §5.3: a player cannot stand before rolling
        ([6], ["roll", "stand"]),
        ([4, 5], ["stand"]),  # 9 after two rolls
        ([2, 3, 4], ["stand"]),  # 9 after the third roll: rule 1 beats rule 2
        ([1, 1, 1, 1, 5], ["stand"]),  # 9 after five rolls
        ([4, 6], ["roll"]),  # 10 must roll
        ([1, 2, 3, 4], ["roll"]),  # 10 after four rolls still must roll
        ([1, 1, 1], ["roll"]),  # rule 2: the third roll forces a fourth
        ([2, 6, 3], ["roll"]),  # rule 2 at 11
        ([1, 1, 1, 1], ["roll", "stand"]),  # the fourth roll is made: free again
        ([5, 5, 1], ["roll"]),  # 10 after two, then 11 after three: still forced
        ([5, 5, 1, 1], ["roll", "stand"]),  # ... and free after the fourth
        ([6, 6, 3], ["roll"]),  # a first-half 15 on the third roll: rule 2, literally
        ([1, 1, 6, 6, 1], ["roll", "stand"]),  # 15 after five rolls may stand
    ],
)
def test_turn_rules(faces: list[int], legal: list[str]) -> None:
    """Rule 1 "NEUN DARF NICHT MEHR, ZEHN MUSS NOCH MAL" and rule 2 "WER DEN DRITTEN
    MACHT, MUSS AUCH DEN VIERTEN MACHEN"; priority: "Die erste Regel gilt absolut, die
    zweite Regel gilt nur dann, wenn die gewürfelte zusammengezählte Zahl nicht Neun
    ist." """
    t = Table([faces])
    assert t.player == 0 and t.state.rolls == len(faces)
    assert t.state.total == sum(faces)
    assert t.legal() == legal
    obs, _, _, _, _ = t.env.last()
    assert obs["action_mask"].tolist() == [int("roll" in legal), int("stand" in legal)]


def test_ten_after_the_second_roll_forces_two_more() -> None:
    """ "Bei einer gewürfelten zusammengezählten Zehn im zweiten Würfelzug müssen also
    (mindestens) noch zwei Würfelzüge folgen." """
    t = Table([[4, 6]])
    assert t.legal() == ["roll"]
    with pytest.raises(IllegalActionError, match="rule 1.*10 must roll.*legal: roll"):
        t.act("stand")
    t = Table([[4, 6, 2]])
    assert (t.state.total, t.state.rolls) == (12, 3)
    assert t.legal() == ["roll"]
    with pytest.raises(IllegalActionError, match="rule 2.*legal: roll"):
        t.act("stand")
    t = Table([[4, 6, 2, 1]])
    assert t.legal() == ["roll", "stand"]


@pytest.mark.parametrize(
    ("faces", "rules", "legal"),
    [
        ([4, 5], {"rule1": False}, ["roll", "stand"]),  # 9 may roll on
        ([4, 6], {"rule1": False}, ["roll", "stand"]),  # 10 may stand
        ([1, 1, 1], {"rule1": False}, ["roll"]),  # rule 2 still forces the fourth
        ([2, 3, 4], {"rule1": False}, ["roll"]),  # 9 on the third roll: rule 2 only
        ([1, 1, 1], {"rule2": False}, ["roll", "stand"]),  # no fourth roll needed
        ([4, 5], {"rule2": False}, ["stand"]),  # rule 1 still holds
        ([2, 3, 4], {"rule1": False, "rule2": False}, ["roll", "stand"]),
        ([], {"rule1": False, "rule2": False}, ["roll"]),  # still no standing on 0
    ],
)
def test_rules_switched_off(faces: list[int], rules: dict, legal: list[str]) -> None:
    """The ``rule1``/``rule2`` options (a variant for studying the seed's "Sinn der
    Regeln", not a reading of it) take away exactly their rule."""
    t = Table([faces], **rules)
    assert t.legal() == legal
    obs, _, _, _, _ = t.env.last()
    assert obs["action_mask"].tolist() == [int("roll" in legal), int("stand" in legal)]
    if legal == ["roll"] and faces:
        with pytest.raises(IllegalActionError, match="rule 2"):
            t.act("stand")


def test_rolling_on_nine_is_illegal_and_says_why() -> None:
    """ "Bei einer gewürfelten zusammengezählten Neun darf nicht nochmal gewürfelt
    werden." """
    t = Table([[2, 3, 4]])
    with pytest.raises(IllegalActionError, match="rule 1: a total of 9.*legal: stand"):
        t.act("roll")
    t.act("stand")
    assert t.state.totals[0] == 9 and t.player == 1


def test_standing_before_the_first_roll_is_illegal() -> None:
    """Notes §5.3: "k == 0: {ROLL} — a player cannot stand before rolling"."""
    t = Table([])
    with pytest.raises(IllegalActionError, match="starts with a roll.*legal: roll"):
        t.act("stand")


@pytest.mark.parametrize("auto", [False, True])
def test_fifteen_on_the_third_roll_in_the_first_half(auto: bool) -> None:
    """Notes §5.3 [SEED-LITERAL]: a first-half 15 on the third roll must roll a fourth
    time (rule 2 applies whenever the total is not 9) and busts;
    ``auto_stand_at_15_half1`` stands on it instead."""
    plan = [[6, 6, 3]] if auto else [[6, 6, 3], [6]]
    t = Table(plan, players=3, auto_stand_at_15_half1=auto)
    if auto:
        assert t.state.totals[0] == 15 and t.player == 1 and t.state.pool == 10
    else:
        # The forced fourth roll busted: player_0 took a match and starts again.
        assert t.state.matches[0] == 1 and t.state.last_round == (1, 0, "bust")
        assert t.state.round_no == 2 and t.player == 0


# --- the roll-off ("Herauskommen") ----------------------------------------------------
def test_roll_off_with_repeated_ties() -> None:
    """ "Der Spieler mit der geringsten Augenzahl hat das Herauskommen verloren und muss
    zur ersten Spielrunde beginnen. Hat es keine Entscheidung gegeben ... wird noch mal
    von diesen Mitspielern gewürfelt, diesmal im Gegenuhrzeigersinn. Ist wieder keine
    Entscheidung gefallen, wird ein drittes Mal (wieder im Uhrzeigersinn) gewürfelt"."""
    # Pass 1 (clockwise from seat 0): 0:2 1:5 2:2 3:2 -> seats 0, 2, 3 tie on 2.
    # Pass 2 (counter-clockwise): 0:4 3:1 2:1 -> seats 3 and 2 tie on 1.
    # Pass 3 (clockwise): 2:6 3:3 -> seat 3 rolled lowest and starts.
    t = Table([Off(2, 5, 2, 2, 4, 1, 1, 6, 3)], starter=None, players=4)
    assert t.state.phase == Phase.HALF1 and t.player == 3
    assert t.state.order == [3, 0, 1, 2]
    passes = (
        ((0, 2), (1, 5), (2, 2), (3, 2)),
        ((0, 4), (3, 1), (2, 1)),
        ((2, 6), (3, 3)),
    )
    assert t.game.info(t.state)["roll_offs"] == (("start", passes),)


def test_roll_off_is_chance_only() -> None:
    """Notes §5.3: HERAUSKOMMEN is chance only; the first decision is the starter's."""
    env = envs.make(ENV, players=5)
    env.reset(seed=3)
    raw = env.unwrapped
    assert raw.game_state.phase == Phase.HALF1 and raw.game_state.rolls == 0
    last_pass = raw.game_state.rolloffs[0][1][-1]
    lowest = min(face for _, face in last_pass)
    assert [s for s, f in last_pass if f == lowest] == [raw.game_state.starter]
    assert raw.agent_selection == f"player_{raw.game_state.starter}"


# --- the first half -------------------------------------------------------------------
def test_lowest_total_takes_the_match_and_starts() -> None:
    """ "In der ersten Hälfte bekommt der Mitspieler mit der niedrigsten Zahl das
    Streichholz ... und er beginnt in der ersten Hälfte auch die neue Spielrunde." """
    t = Table([on(12), on(7), on(8)], players=3)
    assert t.state.matches == [0, 1, 0] and t.state.pool == 9
    assert t.state.last_round == (1, 1, "lowest")
    assert t.state.order == [1, 2, 0] and t.player == 1 and t.state.round_no == 2


@pytest.mark.parametrize(
    ("totals", "loser"),
    [
        ((8, 8, 11), 1),
        ((7, 11, 7), 2),
        ((5, 5, 5), 2),
        ((12, 4, 4), 2),
        ((4, 12, 4), 2),
    ],
)
def test_first_half_tie_the_later_total_loses(totals: tuple, loser: int) -> None:
    """ "Eine vorgelegte Zahl ist immer höher als eine nachgewürfelte, das heißt, in der
    ersten Hälfte hat man zum Beispiel mit einer nachgewürfelten Neun verloren." """
    t = Table([on(x) for x in totals], players=3)
    assert t.state.matches[loser] == 1 and sum(t.state.matches) == 1


def test_nine_rolled_later_loses_to_a_nine_set_earlier() -> None:
    """The seed's own example: "mit einer nachgewürfelten Neun verloren"."""
    t = Table([[4, 5, S], on(12), [3, 6, S]], players=3)
    assert t.state.matches == [0, 0, 1]


def test_first_half_bust_takes_a_match_at_once() -> None:
    """ "Hat aber ein Mitspieler eine höhere Zahl als fünfzehn gewürfelt, so muss er
    sofort ein Streichholz nehmen und die Spielrunde ist augenblicklich beendet. Der
    Verlierer spielt auch sofort zur neuen Spielrunde aus." """
    t = Table([on(3), [6, 6, 6]], players=3)  # player_2 never plays this round
    assert t.state.matches == [0, 1, 0] and t.state.last_round == (1, 1, "bust")
    assert t.state.round_no == 2 and t.state.order == [1, 2, 0] and t.player == 1


def test_end_of_first_half_starts_second_half() -> None:
    """Notes §5.3: once the pool is empty the second half begins; "Der Mitspieler mit
    den meisten Streichhölzern beginnt die erste Spielrunde der zweiten Hälfte." Who
    has none sits out: "hat in der zweiten Hälfte eine Spielpause"."""
    plan = [
        *(on(12), on(7), on(8)),  # starter 0: player_1 takes match 1
        *(on(6), on(11), on(12)),  # starter 1 (1, 2, 0): player_1 again
        *(on(11), on(12), on(5)),  # starter 1: player_0
    ]
    t = Table(plan, players=3, matches=3)
    assert t.state.pool == 0 and t.state.matches == [1, 2, 0]
    assert t.state.phase == Phase.HALF2
    assert t.state.starter == 1 and t.state.order == [1, 0]  # player_2 sits out


def test_second_half_tie_for_most_matches_rolls_off() -> None:
    """ "Haben zwei oder mehr Mitspieler die gleiche höchste Anzahl von Streichhölzern,
    so wird analog wie oben in der Herauskomm-Runde vorgegangen": the tied players roll,
    the lowest starts."""
    plan = [
        *(on(12), on(7), on(8)),  # starter 0: player_1 takes one
        *(on(12), on(6), on(11)),  # starter 1 (1, 2, 0): player_2 takes one
        Off(4, 4, 5, 2),  # 1:4 2:4 tie, then counter-clockwise 2:5 1:2
    ]
    t = Table(plan, players=3, matches=2)
    assert t.state.matches == [0, 1, 1] and t.state.phase == Phase.HALF2
    assert t.state.rolloffs[-1] == ("half2", (((1, 4), (2, 4)), ((2, 5), (1, 2))))
    assert t.state.starter == 1 and t.state.order == [1, 2]


def test_one_player_with_every_match_loses_at_once() -> None:
    """Notes §5.3 HALF2_START: if only one player holds matches, the game is over and
    he loses; nothing is played in the second half."""
    plan = [on(12), on(7), on(8), on(5), on(11), on(12)]
    t = Table(plan, players=3, matches=2)
    assert t.state.phase == Phase.OVER and t.state.loser == 1
    assert t.game.returns(t.state) == [0.5, -1.0, 0.5]
    assert all(t.raw.terminations.values())


# --- the second half ------------------------------------------------------------------
def half2(players: int = 3) -> list:
    """A plan to a second half in which player_0 and player_1 hold one match each
    (``matches=2``) and player_0 starts; the other players sit out."""
    others = [on(11)] * (players - 2)
    return [
        *(on(5), on(12), *others),  # starter 0: player_0 lowest
        *(on(12), on(6), *others),  # starter 0 again: player_1 lowest
        Off(1, 2),  # one match each: player_0 rolls 1 and starts
    ]


def test_second_half_setup() -> None:
    t = Table(half2(4), players=4, matches=2)
    assert t.state.phase == Phase.HALF2 and t.state.matches == [1, 1, 0, 0]
    assert t.state.order == [0, 1] and t.player == 0


@pytest.mark.parametrize(
    ("plan", "winner"),
    [
        ([on(11), on(8)], 0),
        ([on(8), on(11)], 1),
        ([on(11), on(11)], 0),
        ([[6, 6, 6], on(2)], 1),
        ([on(2), [6, 6, 6]], 0),
    ],
)
def test_second_half_highest_total_discards(plan: list, winner: int) -> None:
    """ "In der zweiten Hälfte kann der Mitspieler mit der höchsten Zahl ein Streichholz
    ablegen" and "in der zweiten Hälfte [hat man] mit einer vorgelegten Fünfzehn
    gewonnen": an equal total set earlier wins; a bust has no total (notes §5.3
    [ENGINE CHOICE])."""
    t = Table(half2() + plan, players=3, matches=2)
    assert t.state.phase == Phase.OVER
    assert t.state.matches[winner] == 0 and t.state.loser == 1 - winner


def test_second_half_fifteen_wins_at_once_even_on_the_third_roll() -> None:
    """ "Hat ein Spieler die Zahl fünfzehn erreicht, kann er sofort ein Streichholz
    ablegen und die Spielrunde ist augenblicklich beendet" — it overrides rule 2 (notes
    §5.3)."""
    t = Table(half2() + [[6, 6, 3]], players=3, matches=2)
    assert t.state.phase == Phase.OVER and t.state.loser == 1
    assert t.state.last_round == (2, 0, "fifteen")


# matches [2, 0, 0, 1] after the first half; player_0 starts the second; order 0, 3
FOUR_TO_HALF2 = [
    *(on(5), on(12), on(12), on(12)),  # starter 0: player_0 takes one
    *(on(6), on(12), on(12), on(12)),  # starter 0: player_0 again
    *(on(12), on(12), on(12), on(6)),  # starter 0: player_3
]


def test_second_half_bust_has_no_total() -> None:
    """A second-half bust scores nothing: the best valid total wins (notes §5.3)."""
    t = Table(FOUR_TO_HALF2 + [on(7), [6, 6, 6]], players=4, matches=3)
    assert t.state.phase == Phase.HALF2 and t.state.matches == [1, 0, 0, 1]
    assert t.state.last_round == (2, 0, "highest")
    # the winner still holds a match, so he starts again
    assert t.state.starter == 0 and t.state.order == [0, 3]


@pytest.mark.parametrize("rule", ["out", "ends_round"])
def test_second_half_bust_rule(rule: str) -> None:
    """``half2_bust`` [ENGINE CHOICE]: with "out" the players after a buster still
    play; with "ends_round" the round ends at once, and as nobody stands yet it is
    replayed."""
    t = Table(FOUR_TO_HALF2 + [[6, 6, 6]], players=4, matches=3, half2_bust=rule)
    if rule == "out":
        assert t.player == 3 and t.state.busted[0] and t.state.pos == 1
    else:
        assert t.state.last_round == (2, -1, "all bust")
        assert t.state.order == [0, 3] and t.state.pos == 0 and t.player == 0


def test_second_half_ends_round_gives_the_round_to_the_best_standing() -> None:
    """With "ends_round" a bust after a valid total ends the round: that total wins,
    even if players are still to come."""
    plan = [
        *(on(5), on(12), on(12)),  # starter 0: player_0
        *(on(12), on(6), on(12)),  # starter 0: player_1
        *(on(12), on(12), on(4)),  # starter 1 (1, 2, 0): player_0
        *(on(12), on(12), on(6)),  # starter 0: player_2
        on(3),  # second half, order 0, 1, 2: player_0 stands on 3
        [6, 6, 6],  # player_1 busts: the round ends before player_2 plays
    ]
    t = Table(plan, players=3, matches=4, half2_bust="ends_round")
    assert t.state.last_round == (2, 0, "highest") and t.state.matches == [1, 1, 1]


@pytest.mark.parametrize(
    ("rule", "starter", "order"), [("replay", 0, [0, 3]), ("next_starter", 3, [3, 0])]
)
def test_everybody_busts(rule: str, starter: int, order: list) -> None:
    """Notes §5.3 [ENGINE CHOICE] ``all_bust``: no match is discarded and the round is
    played again, by the same starter ("replay") or the next holder clockwise
    ("next_starter")."""
    plan = FOUR_TO_HALF2 + [[6, 6, 6], [6, 6, 6]]
    t = Table(plan, players=4, matches=3, all_bust=rule)
    assert t.state.matches == [2, 0, 0, 1]
    assert t.state.last_round == (2, -1, "all bust")
    assert t.state.starter == starter and t.state.order == order
    assert t.state.rolls == 0


def _to_the_right_plan() -> list:
    return [
        *(on(12), on(11), on(12), on(7)),  # starter 0: player_3 takes one
        *(on(12), on(11), on(12), on(5)),  # starter 3 (3, 0, 1, 2): player_2
        *(on(12), on(12), on(4), on(11)),  # starter 2 (2, 3, 0, 1): player_0
        Off(5, 3, 4),  # 0, 2, 3 hold one each: 0:5 2:3 3:4 -> player_2 starts
        *(on(12), on(8), on(11)),  # order 2, 3, 0 (player_1 sits out): player_2 wins
    ]


def test_start_passes_to_the_right_skipping_players_without_matches() -> None:
    """ "Hat der Sieger der Spielrunde kein Streichholz mehr, so spielt der rechts von
    ihm sitzende Mitspieler zur nächsten Spielrunde aus." Right = counter-clockwise; a
    player without matches sits out, so the nearest holder on the right starts."""
    t = Table(_to_the_right_plan(), players=4, matches=3)
    assert t.state.matches == [1, 0, 0, 1]
    # player_2 has none left: his right is player_1 (none either), then player_0
    assert t.state.starter == 0 and t.state.order == [0, 3]


@pytest.mark.parametrize("zero_sum", [True, False])
def test_end_of_the_game_last_holder_loses(zero_sum: bool) -> None:
    """ "Es geht darum, dass man das Gesamtspiel verloren hat, wenn man in der zweiten
    Hälfte als Letzter noch ein Streichholz ... übrigbehält." Rewards: the loser -1,
    the others +1/(n-1) (zero-sum), or 0 with ``zero_sum=False``."""
    plan = _to_the_right_plan() + [on(11), on(12)]  # player_3 wins and is out
    t = Table(plan, players=4, matches=3, zero_sum=zero_sum)
    assert t.state.phase == Phase.OVER and t.state.loser == 0
    assert t.player == TERMINAL and t.game.zero_sum is zero_sum
    share = 1 / 3 if zero_sum else 0.0
    rewards = [t.raw.rewards[a] for a in t.raw.possible_agents]
    assert rewards == pytest.approx([-1.0, share, share, share])


def test_no_reward_before_the_end() -> None:
    t = Table([on(12), on(7), on(8)], players=3)
    assert all(r == 0 for r in t.raw.rewards.values())
    assert t.game.returns(t.state) == [0.0, 0.0, 0.0]


# --- options --------------------------------------------------------------------------
def test_auto_forced_moves_leaves_only_real_choices() -> None:
    """``auto_forced_moves``: a forced action (the first roll, 9 stands, 10 rolls, rule
    2) is applied by the engine, so every decision left offers both actions."""
    env = envs.make(ENV, players=3, auto_forced_moves=True)
    # the scripted dice, then random ones (None) for the random play below
    dice = [4, 5, 5, 5, 1, 1, 3] + [None] * 2000
    env.reset(seed=0, options={"starter": 0, "dice": dice})
    raw = env.unwrapped
    # player_0: 4 (rolled by itself), he rolls: 9 stands by itself.
    assert (raw.game_state.total, raw.game_state.rolls) == (4, 1)
    env.step(0)
    assert raw.game_state.totals[0] == 9
    # player_1: 5 by itself; he rolls: 10 must roll, 11 (third roll) must roll, 12.
    assert (raw.game_state.total, raw.game_state.rolls) == (5, 1)
    env.step(0)
    assert (raw.game_state.total, raw.game_state.rolls) == (12, 4)
    rng = np.random.default_rng(0)
    for _ in range(300):
        if all(raw.terminations.values()):
            break
        assert raw.game.legal_actions(raw.game_state) == [0, 1]
        env.step(int(rng.integers(2)))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"players": 1}, "players must be 2..10"),
        ({"players": 11}, "players must be 2..10"),
        ({"players": "4"}, "players must be an integer"),
        ({"players": True}, "players must be an integer"),
        ({"matches": 0}, "matches must be 1..100"),
        ({"half2_bust": "lose"}, "half2_bust must be one of"),
        ({"all_bust": "nobody"}, "all_bust must be one of"),
        ({"zero_sum": "yes"}, "zero_sum must be True or False"),
        ({"auto_stand_at_15_half1": 1}, "auto_stand_at_15_half1 must be True or"),
        ({"auto_forced_moves": None}, "auto_forced_moves must be True or False"),
    ],
)
def test_bad_options(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        envs.make(ENV, **kwargs)


@pytest.mark.parametrize(
    ("reset", "message"),
    [
        ({"dice": [3, 0]}, r"options\['dice'\]\[1\] must be a die face 1..6, got 0"),
        ({"dice": [7]}, r"options\['dice'\]\[0\] must be a die face 1..6, got 7"),
        ({"dice": ["3"]}, r"must be a die face 1..6, got '3'"),
        ({"dice": [True]}, r"must be a die face 1..6, got True"),
        ({"dice": [2.0]}, r"must be a die face 1..6, got 2.0"),
        ({"dice": "1234"}, r"options\['dice'\] must be a list of die faces"),
        ({"dice": 5}, r"options\['dice'\] must be a list of die faces"),
        ({"starter": 4}, r"options\['starter'\] must be a seat number 0..3"),
        ({"starter": "0"}, r"options\['starter'\] must be a seat number"),
        ({"deal": {"hands": []}}, "has no deal; script the dice"),
    ],
)
def test_bad_reset_options(reset: dict, message: str) -> None:
    env = envs.make(ENV, players=4)
    with pytest.raises(ValueError, match=message):
        env.reset(options=reset)


def test_unknown_reset_option_warns_naming_the_allowed_ones() -> None:
    """A misspelt key (``seat`` for ``starter``) is a warning, not an error
    (PettingZoo's checkers probe reset with made-up keys), naming the keys that
    exist."""
    env = envs.make(ENV, players=4)
    with pytest.warns(
        UserWarning, match=r"unknown reset option\(s\) \['seat'\].*'starter'"
    ):
        env.reset(options={"seat": 1})


def test_bad_actions() -> None:
    t = Table([[3]])
    with pytest.raises(IllegalActionError, match="out of range"):
        t.env.step(2)
    with pytest.raises(ValueError, match="unknown action 'hold'; actions: roll, stand"):
        t.game.action_id("hold")
    assert t.game.action_id(" Stand ") == 1 and t.game.action_name(0) == "roll"
    with pytest.raises(ValueError, match="unknown action id"):
        t.game.action_name(5)
    state = t.state.clone()
    t.game.apply(state, 0)  # a ROLL: the die is now a chance node
    assert t.game.current_player(state) == CHANCE and t.game.legal_actions(state) == []
    with pytest.raises(IllegalActionError, match="a die shows a face 1..6"):
        t.game.apply(state, 7)


def test_scripted_dice_that_run_out_are_an_error() -> None:
    """A game that needs a die after the scripted list raises ValueError saying so (it
    does not go on with random dice unnoticed); ``None`` entries leave single dice to
    chance; with ``starter`` alone every die after the roll-off is random."""
    env = envs.make(ENV, players=2)
    env.reset(seed=5, options={"starter": 1, "dice": [None, 4]})
    raw = env.unwrapped
    env.step(0)
    env.step(0)
    assert raw.game_state.player == 1 and raw.game_state.dice[1] == 4
    assert 1 <= raw.game_state.dice[0] <= 6
    env.reset(seed=5, options={"starter": 1, "dice": [2, 3]})
    env.step(0)
    env.step(0)  # 2 + 3: he may roll again
    message = r"options\['dice'\] ran out: the game needs another die after the 2 "
    with pytest.raises(ValueError, match=message):
        env.step(0)  # a third roll
    with pytest.raises(ValueError, match=r"after the 0 scripted ones"):
        env.reset(seed=5, options={"dice": []})  # the roll-off already needs dice
    faces = set()
    for seed in range(30):  # unscripted dice vary with the seed
        env.reset(seed=seed, options={"starter": 0})
        env.step(0)
        faces.add(raw.game_state.dice[0])
    assert len(faces) >= 4


# --- observation ----------------------------------------------------------------------
def test_observation_of_a_known_position() -> None:
    """The documented layout: player_1 faces player_0's 12 with 4+6 = 10 (rule 1: he
    must roll)."""
    t = Table([on(12), [4, 6]], players=3)
    obs = t.game.observe(t.state, 1)
    assert obs.dtype == np.float32 and obs.shape == (HEADER + BLOCK * 3,)
    assert obs[1] == 1.0  # first half
    assert obs[5] == 1.0  # pool 10/10
    assert obs[6] == pytest.approx(10 / 15) and obs[7] == pytest.approx(2 / 16)
    assert obs[8] == 1.0 and obs[12] == 1.0 and obs[11] == obs[13] == obs[14] == 0.0
    assert obs[15] == 1.0 and obs[16] == obs[17] == pytest.approx(12 / 15)
    assert obs[18] == pytest.approx(1 / 2)  # player_2 still to come
    me, left, right = (HEADER + BLOCK * j for j in range(3))  # seats 1, 2, 0
    assert obs[me + 7] == 1.0 and obs[me + 5] == pytest.approx(1 / 2)
    assert obs[right + 2] == 1.0 and obs[right + 3] == pytest.approx(12 / 15)
    assert obs[right + 6] == 1.0 and obs[left + 2] == 0.0
    other = t.game.observe(t.state, 0)
    assert other[8] == 0.0 and other[HEADER + BLOCK * 1 + 7] == 1.0


def _observations(prefix: list[int], seed: int) -> list[list[np.ndarray]]:
    """Every seat's observation after each step while only scripted dice are used."""
    env = envs.make(ENV, players=3)
    env.reset(seed=seed, options={"dice": prefix})
    raw = env.unwrapped
    bot = agents.make("threshold:11", ENV)
    rolls = 0  # each ROLL uses one die, the roll-offs (public in details()) the others
    seen = [[env.observe(a)["observation"] for a in raw.possible_agents]]
    while True:
        passes = (p for _, ps in raw.details()["roll_offs"] for p in ps)
        if sum(len(p) for p in passes) + rolls >= len(prefix):
            return seen
        seat = raw.game.current_player(raw.game_state)
        obs = env.observe(raw.possible_agents[seat])
        turn = Turn(
            raw.game, raw.game_state, seat, obs["observation"], obs["action_mask"]
        )
        action = bot.act(turn)
        rolls += action == 0
        env.step(action)
        seen.append([env.observe(a)["observation"] for a in raw.possible_agents])


def test_observation_does_not_depend_on_future_dice() -> None:
    """Perfect information apart from the dice still to come (notes §5.3): two games
    whose dice agree up to a point look the same to every seat up to that point."""
    rng = np.random.default_rng(7)
    prefix = [int(x) for x in rng.integers(1, 7, size=60)]
    a = _observations(prefix, seed=1)
    b = _observations(prefix, seed=2)  # other random dice after the prefix
    assert len(a) > 20 and len(a) == len(b)
    for obs_a, obs_b in zip(a, b, strict=True):
        for x, y in zip(obs_a, obs_b, strict=True):
            np.testing.assert_array_equal(x, y)
    # ... and the dice after the prefix do show once they are rolled.
    env_a, env_b = envs.make(ENV, players=3), envs.make(ENV, players=3)
    env_a.reset(seed=1, options={"dice": prefix + [1, 1]})
    env_b.reset(seed=1, options={"dice": prefix + [6, 6]})
    differs = False
    for _ in range(200):
        for env in (env_a, env_b):
            legal = env.unwrapped.game.legal_actions(env.unwrapped.game_state)
            env.step(0 if 0 in legal else 1)
        view_a = env_a.observe("player_0")["observation"]
        if not np.array_equal(view_a, env_b.observe("player_0")["observation"]):
            differs = True
            break
    assert differs


def test_render_tells_the_story() -> None:
    t = Table([on(12), [6, 6, 6], [3, 4]], players=3, render_mode="ansi")
    text = t.env.render()
    assert "first half" in text and "player_1 went over 15 and took a match" in text
    assert "player_1 rolling: 3+4 = 7" in text and "Herauskommen" in text
    t = Table(half2(4) + [on(11), on(8)], players=4, matches=2)
    text = t.game.render(t.state)
    assert "Game over: player_1 kept the last match and loses" in text
    assert "player_1 (you)" in t.game.render(t.state, 1)


# --- invariants under random play, every option ---------------------------------------
@pytest.mark.parametrize(
    "opts",
    [
        {"players": 3},
        {"players": 6, "matches": 4, "zero_sum": False},
        {"players": 4, "matches": 6, "auto_forced_moves": True,
         "half2_bust": "ends_round"},
        {"players": 10, "matches": 3, "auto_stand_at_15_half1": True,
         "all_bust": "next_starter"},
    ],
    ids=["3p", "6p-not-zero-sum", "4p-auto-ends-round", "10p-autostand-next"],
)  # fmt: skip
def test_random_play_keeps_the_invariants(opts: dict) -> None:
    """The generic soak (masks = legal actions, observation space, invariants, rewards
    summing to zero when ``zero_sum``) on multi-player sizes, and the engine alone."""
    game = envs.make(ENV, raw=True, **opts).game
    result = soak(ENV, opts, games=40, seed=3, zero_sum=game.zero_sum)
    assert result["games"] == 40
    rng = np.random.default_rng(1)
    losers = set()
    for _ in range(60):
        state = game.new_state()
        while game.current_player(state) != TERMINAL:
            game.check_invariants(state)
            if game.current_player(state) == CHANCE:
                game.apply(state, game.sample_chance(state, rng)[0])
            else:
                legal = game.legal_actions(state)
                game.apply(state, legal[int(rng.integers(len(legal)))])
        game.check_invariants(state)
        losers.add(state.loser)
        assert sum(state.matches) == state.matches[state.loser] >= 1
    assert len(losers) >= 2


def test_invariant_check_can_fail() -> None:
    t = Table([on(12)], players=3)
    state = t.state.clone()
    state.matches[2] = 1  # a match from nowhere
    with pytest.raises(AssertionError, match="matches not conserved"):
        t.game.check_invariants(state)
    state = t.state.clone()
    state.total = 20
    with pytest.raises(AssertionError):
        t.game.check_invariants(state)


# --- bots -----------------------------------------------------------------------------
def test_agent_specs() -> None:
    assert agents.make("threshold:12", ENV).spec == "threshold:12"
    assert agents.make("optimal", ENV).spec == "optimal"
    assert agents.make("heuristic", ENV).spec == "optimal"
    assert agents.make("heuristic:-lookahead", ENV).spec == "heuristic:-lookahead"
    for spec, message in [
        ("threshold:x", "threshold:N"),
        ("threshold:16", "1..15"),
        ("threshold:0", "1..15"),
        ("optimal:fast", "takes no options"),
        ("heuristic:+greedy", "unknown switch.*valid: lookahead"),
        ("wizard", "unknown agent kind 'wizard' for fuenfzehn_tot_v0; .*threshold:N"),
    ]:
        with pytest.raises(ValueError, match=message):
            agents.make(spec, ENV)
    with pytest.raises(ValueError, match="threshold"):  # not a kind for other games
        agents.make("threshold:3", "german_whist_v0")


def _turn(t: Table, seat: int) -> Turn:
    obs = t.env.observe(f"player_{seat}")
    return Turn(t.game, t.state, seat, obs["observation"], obs["action_mask"])


@pytest.mark.parametrize(
    ("faces", "action"),
    [([3, 4], 0), ([4, 4], 1), ([4, 5], 1), ([4, 6], 0), ([1, 1, 6], 0),
     ([1, 1, 6, 1], 1)],
)  # fmt: skip
def test_threshold_bot_stands_at_its_mark(faces: list, action: int) -> None:
    bot = agents.make("threshold:8", ENV)
    assert bot.act(_turn(Table([faces]), 0)) == action


@pytest.mark.parametrize(
    ("faces", "action"), [([5, 6], 0), ([1, 1, 5, 6], 1), ([6, 6], 0), ([2, 6], 0)]
)
def test_optimal_bot_follows_the_solver_last(faces: list, action: int) -> None:
    """Last seat against a standing 12: 11 after two rolls rolls on (11 loses), 12 too
    (the later 12 loses the tie), 13 after four rolls stands."""
    bot = agents.make("optimal", ENV)
    assert bot.act(_turn(Table([on(12), faces], players=2), 1)) == action


def test_bots_play_legal_moves_and_optimal_beats_random() -> None:
    """Every bot plays legal moves only (the env raises otherwise), and loses far less
    often than random play, which stands on tiny totals."""
    for spec in ("optimal", "heuristic:-lookahead", "threshold:11"):
        result = run_arena(ENV, [spec, "random"], games=30, seed=4,
                           env_options={"players": 3})  # fmt: skip
        losses = sum(1 for c in result.candidate_scores if c < 0)
        assert losses <= 3, (spec, losses)
    result = run_arena(ENV, ["random", "optimal"], games=30, seed=4,
                       env_options={"players": 3})  # fmt: skip
    assert sum(1 for c in result.candidate_scores if c < 0) >= 24
