"""Any agent's stage-2 play scored against perfect play (``parlour eval --stage2``).

`random_stage2_state` makes test and benchmark positions; `score_decision` scores one
decision; `stage2_quality` plays games and sums the scores into `Stage2Quality`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ....envs.core.cards import cards_in, mask_of
from ....envs.german_whist.rules import TRICKS_TO_WIN, GermanWhist
from ....envs.german_whist.state import Phase, State
from ...base import Agent
from .positions import PositionSolver, Stage2Position, german_target
from .search import STAGE2_TRICKS


# --- test and benchmark positions -----------------------------------------------------
def random_stage2_state(
    game: GermanWhist,
    cards: int,
    rng: np.random.Generator,
    leader: int | None = None,
    tricks: tuple[int, int] | None = None,
) -> State:
    """A consistent engine state at a stage-2 trick boundary with ``cards`` cards in
    each hand, dealt at random from the pack (the rest played; trumps from a random
    first stock card). ``tricks``: each seat's stage-2 tricks so far (default: a random
    split of the ``13 - cards`` played that leaves German Whist undecided)."""
    if not 1 <= cards <= STAGE2_TRICKS:
        raise ValueError(f"cards must be 1..13, got {cards}")
    deck = game.deck
    perm = rng.permutation(deck.size).tolist()
    top, rest = perm[0], perm[1:]
    h0, h1 = mask_of(rest[:cards]), mask_of(rest[cards : 2 * cards])
    st = State()
    st.phase = Phase.PLAY
    st.dealer = int(rng.integers(2))
    st.trump = 0 if (1 << top) & game.jokers else deck.suit[top]
    st.trump_mask = deck.suit_mask[st.trump] | game.jokers
    st.hands = [h0, h1]
    # the deal as the engine records it: hands, then the stock (first face-up card
    # first)
    played = rest[2 * cards :]
    hand0 = cards_in(h0) + played[: 13 - cards]
    hand1 = cards_in(h1) + played[13 - cards : 26 - 2 * cards]
    st.stock = [top] + played[26 - 2 * cards :]
    st.dealt = hand0 + hand1 + st.stock
    st.stock_pos = len(st.stock)
    st.played = deck.all_mask & ~(h0 | h1)
    done = STAGE2_TRICKS - cards
    if tricks is None:
        low, high = max(0, done - (TRICKS_TO_WIN - 1)), min(TRICKS_TO_WIN - 1, done)
        a = int(rng.integers(low, high + 1))
        tricks = (a, done - a)
    if sum(tricks) != done:
        raise ValueError(f"tricks {tricks} must add up to the {done} tricks played")
    st.tricks2 = list(tricks)
    stage1 = game.stock_size // 2
    a1 = int(rng.integers(stage1 + 1))
    st.tricks1 = [a1, stage1 - a1]
    st.leader = st.to_play = int(rng.integers(2)) if leader is None else leader
    return st


# --- agent quality in stage 2 ---------------------------------------------------------
@dataclass(frozen=True)
class DecisionScore:
    """One stage-2 decision scored against perfect play (`score_decision`)."""

    choice: bool  # the legal cards were not all equivalent
    critical: bool  # some legal card would have changed the exact value
    optimal: bool  # the card kept the exact value
    won: bool  # German: the position was won before the card
    tricks_lost: int  # see `Stage2Quality.mean_tricks_lost`


@dataclass(frozen=True)
class Stage2Quality:
    """How close an agent's stage-2 play is to perfect play (`stage2_quality`).

    Counts are over the agent's stage-2 *decisions with a choice*: positions where its
    legal cards are not all equivalent (cards adjacent in rank among those left are the
    same card for the outcome), so forced plays do not dilute the figures. *Critical*
    decisions are those where some legal card would change the exact value (German: a
    won position with a losing card; Honeymoon: cards worth different trick counts).
    """

    agent: str
    variant: str
    games: int
    decisions: int
    optimal: int  # the card kept the position's exact value
    critical: int  # decisions where a card could change the value
    critical_optimal: int  # of those, the card kept it
    won_positions: int  # German: decisions taken in a won position
    blunders: int  # German: of those, the card turned the win into a loss
    tricks_lost: int  # summed over decisions (see `mean_tricks_lost`)

    @property
    def optimal_fraction(self) -> float:
        """Fraction of decisions whose card keeps the exact value: German Whist, a won
        position stays won (any card is optimal in a lost one); Honeymoon, the most
        tricks."""
        return self.optimal / self.decisions if self.decisions else 1.0

    @property
    def critical_optimal_fraction(self) -> float:
        """The same over critical decisions only: the sharper measure, since a decision
        where every card has the same value cannot go wrong."""
        return self.critical_optimal / self.critical if self.critical else 1.0

    @property
    def blunder_rate(self) -> float:
        """German Whist: fraction of all decisions that turned a won position into a
        lost one (0 for Honeymoon)."""
        return self.blunders / self.decisions if self.decisions else 0.0

    @property
    def mean_tricks_lost(self) -> float:
        """Tricks given away per decision against perfect play: the most tricks the seat
        could still take minus the most it can take after its card. Honeymoon counts
        every trick; German Whist counts tricks toward 7 only (both numbers capped at
        the tricks still needed), so a winning card loses nothing and a losing one what
        it gives up."""
        return self.tricks_lost / self.decisions if self.decisions else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "variant": self.variant,
            "games": self.games,
            "decisions": self.decisions,
            "optimal_fraction": self.optimal_fraction,
            "critical": self.critical,
            "critical_optimal_fraction": self.critical_optimal_fraction,
            "won_positions": self.won_positions,
            "blunders": self.blunders,
            "blunder_rate": self.blunder_rate,
            "mean_tricks_lost": self.mean_tricks_lost,
        }


def score_decision(game: GermanWhist, state: State, card: int) -> DecisionScore:
    """Score one stage-2 decision (the seat to play plays ``card``) against perfect
    play; ValueError if ``card`` is not legal."""
    pos = Stage2Position.from_state(state)
    ps = PositionSolver(game, state.trump_mask)
    classes = ps.classes(pos)
    if not any(card in cls for cls in classes):
        raise ValueError(f"{game.action_name(card)} is not a legal card here")
    if len(classes) == 1:
        return DecisionScore(False, False, True, False, 0)
    seat = pos.to_play
    cap = german_target(pos, seat) if not game.honeymoon else STAGE2_TRICKS
    chosen = next(cls for cls in classes if card in cls)
    values = {
        cls[0]: min(ps.max_tricks_after(pos, cls[0], seat), cap) for cls in classes
    }
    best = max(values.values())
    mine = values[chosen[0]]
    if game.honeymoon:
        critical = min(values.values()) < best
        return DecisionScore(True, critical, mine == best, False, best - mine)
    won = best >= cap
    critical = won and min(values.values()) < cap
    return DecisionScore(True, critical, (mine >= cap) == won, won, best - mine)


def stage2_quality(
    agent: str | Agent,
    games: int = 100,
    seed: int = 0,
    *,
    opponent: str | Agent = "heuristic",
    env_options: Mapping[str, Any] | None = None,
) -> Stage2Quality:
    """Play ``games`` games of ``agent`` against ``opponent`` (the agent's seat
    alternates) and score each of the agent's stage-2 decisions against perfect play.

    Args:
        agent: an agent spec for ``german_whist_v0`` (``"heuristic"``, ``"ckpt:PATH"``,
            …) or an `Agent`.
        games: games to play (a Honeymoon match counts every deal's stage 2).
        seed: seeds the deals and the agents: game ``i`` uses the ``i``-th seed drawn
            from ``SeedSequence(seed)``, so equal seeds give equal deals.
        opponent: the other seat's agent (spec or `Agent`); the positions the agent
            faces depend on it.
        env_options: options of ``german_whist_v0``, e.g. ``{"variant": "honeymoon"}``.

    Returns:
        A `Stage2Quality` with ``optimal_fraction``, ``critical_optimal_fraction``,
        ``blunder_rate`` (German: won positions turned into lost ones) and
        ``mean_tricks_lost``, per decision with a choice.
    """
    from .... import agents as agents_mod
    from .... import envs
    from ....training.arena import play_game

    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive integer, got {games!r}")
    env_options = dict(env_options or {})
    env = envs.make("german_whist_v0", **env_options)
    raw = env.unwrapped
    game = raw.game

    def build(spec: str | Agent, agent_seed: int) -> Agent:
        if isinstance(spec, Agent):
            return spec
        return agents_mod.make(
            spec, "german_whist_v0", seed=agent_seed, env_options=env_options
        )

    me = build(agent, seed)
    other = build(opponent, seed + 1)
    scores: list[DecisionScore] = []
    seeds = np.random.SeedSequence(seed).generate_state(games, dtype=np.uint32).tolist()

    def score(p: int, action: int) -> None:
        if p == seat and raw.game_state.stage == 2:
            scored = score_decision(game, raw.game_state, action)
            if scored.choice:
                scores.append(scored)

    for i, game_seed in enumerate(seeds):
        seat = i % 2
        me.reset(seed=game_seed)
        other.reset(seed=game_seed + 7919)
        players = [me, other] if seat == 0 else [other, me]
        play_game(env, players, seed=game_seed, on_move=score)
    env.close()
    return Stage2Quality(
        agent=agent if isinstance(agent, str) else agent.spec,
        variant=game.variant,
        games=games,
        decisions=len(scores),
        optimal=sum(d.optimal for d in scores),
        critical=sum(d.critical for d in scores),
        critical_optimal=sum(d.critical and d.optimal for d in scores),
        won_positions=sum(d.won for d in scores),
        blunders=sum(d.won and not d.optimal for d in scores),
        tricks_lost=sum(d.tricks_lost for d in scores),
    )
