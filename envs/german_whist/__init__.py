"""German Whist and Honeymoon Whist."""

from ..core.record import GameRecord
from .env import env, raw_env
from .rules import GermanWhist

# The game's registration (envs/core/record.py; docs/adding_a_game.md).
GAME = GameRecord(
    name="german_whist_v0",
    title="German Whist",
    package=__name__,
    variants=(
        {"variant": "german"},
        {"variant": "honeymoon", "episode": "deal"},
        {"variant": "honeymoon", "episode": "match"},
    ),
    heuristic="parlour.agents.german_whist:GermanWhistHeuristic",
    extra_agents="parlour.agents.solver.german_whist:make_agent",
    exact_moves="parlour.agents.solver.german_whist:optimal_moves",
    suit_renaming="parlour.envs.german_whist.observation:suit_permutation",
    canonical_form="parlour.envs.german_whist.observation:canonical_form",
    extra_kinds=("solver", "pimc:N"),
    tips_studies=("agreement",),
    exact_yardstick="parlour.training.yardsticks:STAGE2",
    batched="parlour.envs.batch.german_whist:GermanWhistBatch",
    expert="parlour.envs.german_whist.hooks:expert",
    expert_labels="parlour.envs.german_whist.hooks:expert_labels",
    decided_by="parlour.envs.german_whist.hooks:decided_by",
    text_view="parlour.text.views:german_whist",
    text_rules="parlour.text.rules:german_whist",
    key_rules="parlour.text.rules:german_whist_key_rules",
    random_deal="parlour.envs.german_whist.hooks:random_deal",
    hidden_twins="parlour.envs.german_whist.hooks:hidden_twins",
)

__all__ = ["GAME", "GermanWhist", "env", "raw_env"]
