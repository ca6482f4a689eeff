"""Strategy tips, tested: duplicate A/B experiments on the seeds' tips.

``parlour tips GAME`` runs them (`run_tips`).

The seeds make claims about how to play: German Whist's eight "Strategy tips" (the rule
book *German Whist*), Forty-Fives' three "Tipps für Einsteiger" (*Forty-Fives:
Ausführliche Regeln*) and the arithmetic of Fünfzehn – tot's "Sinn der Regeln"
(*Fünfzehn – tot*, German Wikipedia). Each tip is a switch of the game's heuristic bot,
and each hypothesis is written down before it is run, in ``configs/tips/<env>.yaml``.

The package, part by part:

* `config`: the pre-registered hypotheses (`load_config`, `TipsConfig`) and the
  verdict words.
* `runner`: one arm's duplicate games (`Block`, `play_block`) in this process or in
  worker processes (`Runner`).
* `experiments`: one A/B experiment per tip with sequential stopping
  (`run_experiments`), and the A/A control (`aa_experiment`). The group-sequential
  statistics (O'Brien–Fleming boundaries, the stagewise p-value, the null
  calibration) live in `parlour.training.stats`, with the other intervals.
* `agreement`: how often an agent's decisions agree with each German Whist tip; what
  each tip says about a decision is `parlour.agents.german_whist.tip_situations`,
  beside the bot and on the engine's own trick rules.
* `seat_order`: Fünfzehn – tot's seat order over whole simulated games; its exact
  claims and round table are `parlour.agents.fuenfzehn_tot_rationale`.
* `run`: the whole run (`run_tips`, `TipsRun`) and its files; `report` writes the
  Markdown, `chart` the PNG.
* `audit`: ``parlour tips GAME --audit`` (`run_audit`): at each decision of
  heuristic self-play where a tip recommends a move (`TipAdvisor`), the judge (exact
  search, or determinized search with exact endgames) says whether it is the best.
* `baseline`: ``parlour tips GAME --baseline AGENT`` (`run_baseline`): a strong
  agent that follows the tip where it speaks (`TipFollower`) against the agent alone,
  with the same design as the bot-switch experiments.
* `sections`: the audit and baseline sections of ``<game>.md``, each rewritten by
  its own command and kept when the bot-switch report is rewritten.

**The experiment.** For each tip, arm A is the full heuristic and arm B the same bot
with the tip off (``heuristic:-tip``). Both arms play the same deals (the same env
seeds) against the same opponents in the same seats, every deal once per seating (the
candidate's side rotating through the seats) and once per opponent of the pool
(``random`` and the full ``heuristic`` by default, a trained ``ckpt:PATH`` on request).
The unit of analysis is the deal: its paired difference is A's mean result minus B's
over all those games, for the win share (`arena.win_share`) and for the score (the
env's reward). Arm A is the same for every tip, so it is played once and shared.

**The statistics.** The mean paired difference is tested with a paired z-test: a
normal approximation, good with hundreds of deals a look, poor with a handful of deals
or when nearly every deal ties (``null_calibration`` measures it on each run's own
data, and the report warns above ``CALIBRATION_WARN``). A group-sequential design
controls the error rate over ``looks`` pre-planned looks at equal steps up to
``max_deals``: O'Brien–Fleming boundaries ``c_K * sqrt(K / k)`` at look ``k`` of ``K``
with a two-sided overall alpha of 0.05 (``OBF_CONSTANTS``, Jennison & Turnbull 2000,
table 2.3, checked by `crossing_probabilities`). A tip stops at the first look whose
statistic crosses the boundary. Its interval is the repeated confidence interval at that
look (estimate ± boundary × standard error), so a tip is "supported" exactly when the
interval excludes zero on the positive side, "refuted" on the negative side, and shows
"no detectable effect" otherwise; its p-value is the stagewise-ordering p-value of the
sequential design (below 0.05 exactly when a boundary was crossed). The minimum
detectable effect is the true difference the design finds with 80% power at the deals
run: ``(c_K + z_0.8) * sd / sqrt(n)``. `null_calibration` resamples a run's own centred
per-deal differences through the same procedure to measure its false-positive rate.

With ``workers`` > 1 the games run in worker processes started with ``spawn``, so a
script that calls `run_tips` needs the usual ``if __name__ == "__main__":`` guard;
every game's seeds come from its deal, so the results do not depend on the number of
workers.
"""

from __future__ import annotations

from ...agents.fuenfzehn_tot_rationale import (
    RULE_SETS,
    Claim,
    RoundSeats,
    dice_claims,
    round_seat_table,
    round_seats,
)
from ...agents.german_whist.tip_situations import (
    AGREEMENT_TIPS,
    CONTEST_TIPS,
    tip_situations,
)
from ...envs.fuenfzehn_tot.rules import turn_options as variant_turn_options
from ..stats import (
    OBF_CONSTANTS,
    Z_POWER,
    SequentialTest,
    crossing_probabilities,
    look_schedule,
    null_calibration,
    obf_boundaries,
    sequential_test,
    sign_test,
)
from .agreement import Agreement, agreement, run_agreement
from .audit import Advice, AuditRun, TipAdvisor, TipAudit, run_audit
from .baseline import BaselineRun, TipFollower, run_baseline
from .chart import plot_chart
from .config import (
    CALIBRATION_WARN,
    CONFIG_DIR,
    METRICS,
    PREDICTIONS,
    VERDICTS,
    Hypothesis,
    TipsConfig,
    load_config,
    prediction_matched,
    resolve_env,
    verdict,
)
from .experiments import TipResult, aa_experiment, check_tip_switch, run_experiments
from .report import render_report
from .run import TipsRun, default_workers, run_tips, write_outputs
from .runner import Block, Runner, games_per_deal, play_block
from .seat_order import game_seat_order

__all__ = [
    "AGREEMENT_TIPS",
    "Advice",
    "AuditRun",
    "BaselineRun",
    "TipAdvisor",
    "TipAudit",
    "TipFollower",
    "run_audit",
    "run_baseline",
    "CALIBRATION_WARN",
    "CONFIG_DIR",
    "CONTEST_TIPS",
    "METRICS",
    "OBF_CONSTANTS",
    "PREDICTIONS",
    "RULE_SETS",
    "VERDICTS",
    "Z_POWER",
    "Agreement",
    "Block",
    "Claim",
    "Hypothesis",
    "RoundSeats",
    "Runner",
    "SequentialTest",
    "TipResult",
    "TipsConfig",
    "TipsRun",
    "aa_experiment",
    "agreement",
    "check_tip_switch",
    "crossing_probabilities",
    "default_workers",
    "dice_claims",
    "game_seat_order",
    "games_per_deal",
    "load_config",
    "look_schedule",
    "null_calibration",
    "obf_boundaries",
    "play_block",
    "plot_chart",
    "prediction_matched",
    "render_report",
    "resolve_env",
    "round_seat_table",
    "round_seats",
    "run_agreement",
    "run_experiments",
    "run_tips",
    "sequential_test",
    "sign_test",
    "tip_situations",
    "variant_turn_options",
    "verdict",
    "write_outputs",
]
