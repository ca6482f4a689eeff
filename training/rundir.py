"""The run directory and its lifecycle, shared by every training backend.

A run directory holds ``config.json``/``config.yaml`` (the resolved config),
``state.json`` (the phase the run is in, `PHASES`, and the seconds spent on it),
``checkpoints/`` with ``latest.json`` (`training.checkpoint`), ``warm_start/`` (the
teacher's games, `training.imitation`), ``evaluations.csv`` (`training.evaluation`) and
at the end ``learning_curve.png``. `RunDir.open` checks a fresh start or a resume
before anything is written; `RunDir` then keeps the phase clock and writes checkpoints
atomically, so Ctrl-C in any phase keeps what is finished (docs/training.md).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import checkpoint as ckpt_io
from . import imitation
from .config import TrainConfig, apply_overrides, config_from_dict

STATE = "state.json"
WARM_START_DIR = "warm_start"
# The phases of a run, in order; state.json names the one a run is in (or stopped in).
PHASES = ("teacher games", "fit", "self-play", "done")
# Keys a resumed run keeps: its checkpoints' network and its stored teacher games were
# made with them (and its checkpoints hold the networks of its algo).
FROZEN_ON_RESUME = (
    "algo",
    "env",
    "env_options",
    "seed",
    "net_arch",
    "activation",
    "warm_start",
    "warm_start_games",
    "warm_start_noise",
    "warm_start_exact",
)


@dataclass
class TrainResult:
    run_dir: Path
    checkpoint: Path | None  # None when interrupted before the first checkpoint
    steps: int
    interrupted: bool
    evaluations: list[dict[str, Any]]
    plot: Path | None
    seconds: float
    """time spent on the run, summed over every session that worked on it"""
    phase: str = "done"
    """the phase the run stopped in (`PHASES`)"""
    session_seconds: float = 0.0
    """time spent by this call"""
    teacher_games: int = 0
    """teacher games kept in the run directory"""
    phase_seconds: dict[str, float] = field(default_factory=dict)
    """seconds spent in each phase (evaluations apart), over every session"""


def default_run_dir(config: TrainConfig) -> Path:
    """``runs/ENV-VARIANT-seedS`` (reproducible: the same config names the same
    directory)."""
    tag = "-".join(str(v) for _, v in sorted(config.env_options.items()))
    name = f"{config.env}" + (f"-{tag}" if tag else "") + f"-seed{config.seed}"
    return Path("runs") / name


def run_state(run_dir: str | Path) -> dict[str, Any] | None:
    """The phase a run directory's run is in and the seconds spent on it so far; None
    when the directory holds no run. `CheckpointError` for a corrupt state file."""
    run_dir = Path(run_dir)
    path = run_dir / STATE
    if path.is_file():
        try:
            data = json.loads(path.read_text())
        except (ValueError, OSError) as err:
            raise ckpt_io.CheckpointError(f"{path} is corrupt: {err}") from None
        elapsed = data.get("elapsed_s") if isinstance(data, dict) else None
        if (
            not isinstance(data, dict)
            or data.get("phase") not in PHASES
            or not isinstance(elapsed, int | float)
            or isinstance(elapsed, bool)
        ):
            raise ckpt_io.CheckpointError(
                f"{path} is corrupt: expected {{'phase': one of {list(PHASES)}, "
                "'elapsed_s': seconds}"
            )
        return data
    if (run_dir / ckpt_io.LATEST).is_file():  # a run written before state.json
        return {"phase": "self-play", "elapsed_s": 0.0}
    return None


def stored_config(run_dir: str | Path) -> TrainConfig:
    """The config a run directory's run was started with (``config.json``)."""
    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise ValueError(f"{run_dir} has no config.json: not a Parlour run directory")
    try:
        data = json.loads(path.read_text())
    except (ValueError, OSError) as err:
        raise ValueError(f"{path} is corrupt: {err}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} is corrupt: expected a mapping of settings")
    try:
        return config_from_dict(data)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def resume_config(
    run_dir: str | Path, overrides: Sequence[str] = ()
) -> tuple[TrainConfig, list[str]]:
    """The config to resume a run with: the stored one, with ``--set`` overrides
    applied on purpose. Returns it and one line per changed key; ValueError for a key
    in `FROZEN_ON_RESUME` (the run's checkpoints or teacher games depend on it)."""
    stored = stored_config(run_dir)
    data = dataclasses.asdict(stored)
    apply_overrides(data, overrides)
    config = config_from_dict(data)
    changes = []
    for f in dataclasses.fields(TrainConfig):
        old, new = getattr(stored, f.name), getattr(config, f.name)
        if old == new:
            continue
        if f.name in FROZEN_ON_RESUME:
            raise ValueError(
                f"--set {f.name}: a resumed run keeps its {f.name} ({old!r}); start a "
                "new run (another --run-dir) to change it"
            )
        changes.append(f"{f.name}: {old!r} -> {new!r}")
    return config, changes


EVAL_FIELDS = [
    "step",
    "opponent",
    "games",
    "win_rate",
    "win_low",
    "win_high",
    "mean_score",
    "score_low",
    "score_high",
    "elapsed_s",
]


def write_evaluations(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``evaluations.csv`` whole, atomically: a process killed while writing
    leaves the previous file (and a temporary that `RunDir.start` removes), never a
    half row."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=EVAL_FIELDS)
    writer.writeheader()
    writer.writerows(rows)
    ckpt_io.write_text_atomic(path, text.getvalue())


def read_evaluations(path: Path) -> list[dict[str, Any]]:
    """The rows of ``evaluations.csv`` (none when it does not exist); ValueError for a
    file that is not a run's evaluations."""
    if not path.exists():
        return []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != EVAL_FIELDS:
            raise ValueError(
                f"{path} has the header {reader.fieldnames}, not {EVAL_FIELDS}: "
                "not this run's evaluations file"
            )
        rows = list(reader)
    out = []
    for line, r in enumerate(rows, start=2):
        try:
            row = {k: (r[k] if k == "opponent" else float(r[k])) for k in EVAL_FIELDS}
            row["step"] = int(row["step"])
            row["games"] = int(row["games"])
        except (TypeError, ValueError):
            raise ValueError(f"{path}, line {line}: a malformed row {r}") from None
        out.append(row)
    return out


def plot_learning_curve(
    evaluations: list[dict[str, Any]],
    path: Path,
    config: TrainConfig,
    method: str = "self-play MaskablePPO",
) -> Path | None:
    """Win rate against each baseline over training, with 95% CI bands."""
    if not evaluations:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for opponent in dict.fromkeys(r["opponent"] for r in evaluations):
        rows = sorted(
            (r for r in evaluations if r["opponent"] == opponent),
            key=lambda r: r["step"],
        )
        x = [r["step"] for r in rows]
        ax.plot(x, [r["win_rate"] for r in rows], marker="o", label=f"vs {opponent}")
        ax.fill_between(
            x, [r["win_low"] for r in rows], [r["win_high"] for r in rows], alpha=0.2
        )
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_ylim(0, 1)
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate (duplicate deals, 95% CI)")
    opts = ", ".join(f"{k}={v}" for k, v in config.env_options.items())
    ax.set_title(f"{config.env}" + (f" ({opts})" if opts else "") + f" — {method}")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def summary_table(result: TrainResult) -> str:
    """The final evaluation as a table."""
    if not result.evaluations:
        return "no evaluation"
    last_step = max(r["step"] for r in result.evaluations)
    lines = [
        f"{'opponent':<14} {'games':>6}  {'win rate [95% CI]':<26} mean score [95% CI]"
    ]
    for r in result.evaluations:
        if r["step"] != last_step:
            continue
        lines.append(
            f"{r['opponent']:<14} {int(r['games']):>6}  "
            f"{r['win_rate']:.3f} [{r['win_low']:.3f}, {r['win_high']:.3f}]"
            f"{'':<4} {r['mean_score']:+.3f} "
            f"[{r['score_low']:+.3f}, {r['score_high']:+.3f}]"
        )
    return "\n".join(lines)


class RunDir:
    """One run directory while a backend works on it: the checks of a fresh start or a
    resume (`open`), the phase clock behind ``state.json``, atomic checkpoints and the
    evaluation record."""

    def __init__(
        self,
        path: Path,
        config: TrainConfig,
        state: dict[str, Any] | None,
        saved: ckpt_io.Checkpoint | None,
        evaluations: list[dict[str, Any]],
    ) -> None:
        self.path, self.config = path, config
        self.saved = saved
        """the checkpoint a resumed run continues from (None for a fresh start)"""
        self.evaluations = evaluations
        self.phase = (
            state["phase"]
            if state is not None
            else ("teacher games" if config.warm_start else "self-play")
        )
        if self.phase == "done":
            self.phase = "self-play"  # a finished run trained further, or re-reported
        self.fresh = state is None or state["phase"] == "teacher games"
        self.session_start = time.time()
        self._earlier = float(state["elapsed_s"]) if state is not None else 0.0
        # seconds by phase, evaluations apart, over every session
        self.seconds: dict[str, float] = (
            dict(state.get("phase_seconds", {})) if state else {}
        )
        self._clock: dict[str, Any] = {"phase": self.phase, "since": time.time()}

    @classmethod
    def check(
        cls, config: TrainConfig, run_dir: str | Path | None, resume: bool, say
    ) -> RunDir:
        """Check that ``run_dir`` (default `default_run_dir`) may hold this run, and
        read back what a resumed run needs; writes nothing. ``say`` prints a line."""
        path = Path(run_dir) if run_dir is not None else default_run_dir(config)
        ckpt_io.check_output_path(path, directory=True, what="run directory")
        state = run_state(path) if path.is_dir() else None
        if state is None:
            if path.is_dir() and any(path.iterdir()):
                raise ValueError(
                    f"run directory {path} is not empty and holds no Parlour run: "
                    "choose another --run-dir"
                )
            if resume:
                raise ValueError(f"nothing to resume: {path} holds no run")
        else:
            stored = stored_config(path)
            if stored.env != config.env or stored.env_options != config.env_options:
                raise ckpt_io.CheckpointError(
                    f"{path} holds a run for {stored.env} {stored.env_options}, not "
                    f"{config.env} {config.env_options}"
                )
            if not resume:
                if stored != config:
                    raise ValueError(
                        f"run directory {path} is not empty: it holds a run with "
                        "another config; pass --resume to continue it (with its "
                        "stored config), or choose another --run-dir"
                    )
                if state["phase"] == "done":
                    raise ValueError(
                        f"run directory {path} is not empty: it holds a finished run; "
                        "pass --resume with --set total_timesteps=N to train it "
                        "further, or choose another --run-dir"
                    )
                say(f"continuing the interrupted run in {path} (same config)")
            else:
                for key in FROZEN_ON_RESUME:
                    if getattr(stored, key) != getattr(config, key):
                        raise ValueError(
                            f"{path} was started with {key}="
                            f"{getattr(stored, key)!r}; a resumed run keeps it (got "
                            f"{getattr(config, key)!r})"
                        )
        saved, evaluations = None, []
        if state is not None and state["phase"] in ("self-play", "done"):
            if (path / ckpt_io.LATEST).is_file():  # else killed before the first one
                saved = ckpt_io.load(path)
            evaluations = read_evaluations(path / "evaluations.csv")
        return cls(path, config, state, saved, evaluations)

    def _drop_lost_evaluations(self, say) -> None:
        """Forget the evaluations of steps after the checkpoint the run resumes from:
        a killed process (kill -9, power loss) lost the weights they measured, and
        the resumed run plays those steps, and their evaluations, again."""
        start = self.saved.step if self.saved is not None else 0
        kept = [r for r in self.evaluations if r["step"] <= start]
        if len(kept) < len(self.evaluations):
            steps = sorted({r["step"] for r in self.evaluations if r["step"] > start})
            say(
                f"dropped the evaluations at step(s) {steps}: the run resumes from "
                f"step {start}, the last checkpoint"
            )
            self.evaluations[:] = kept
            write_evaluations(self.path / "evaluations.csv", kept)

    def start(self, say) -> None:
        """Create the directory, remove what an interrupted write left, and write the
        config and the phase."""
        self.path.mkdir(parents=True, exist_ok=True)
        removed = ckpt_io.clean_temporary(self.path) + imitation.clean_temporary(
            self.path / WARM_START_DIR
        )
        if removed:
            say(
                f"removed {len(removed)} temporary file(s) left by an interrupted write"
            )
        self._drop_lost_evaluations(say)
        config = dataclasses.asdict(self.config)
        ckpt_io.write_json_atomic(self.path / "config.json", config)
        ckpt_io.write_text_atomic(self.path / "config.yaml", yaml.safe_dump(config))
        self.write_state(self.phase)

    def elapsed(self) -> float:
        """Seconds spent on the run, over every session."""
        return self._earlier + time.time() - self.session_start

    def mark(self, now: str) -> None:
        """Charge the time since the last mark to the phase it was in; ``now`` is the
        phase (or "evaluation") from here on."""
        t = time.time()
        key = self._clock["phase"]
        self.seconds[key] = self.seconds.get(key, 0.0) + t - self._clock["since"]
        self._clock.update(phase=now, since=t)

    def write_state(self, now: str) -> None:
        """Enter phase ``now`` and write ``state.json``."""
        self.mark(now)
        self.phase = now
        data = {
            "phase": now,
            "elapsed_s": round(self.elapsed(), 1),
            "phase_seconds": {k: round(v, 1) for k, v in self.seconds.items()},
        }
        ckpt_io.write_json_atomic(self.path / STATE, data)

    def read_phase(self) -> str:
        """The phase ``state.json`` names now (a backend's warm start may move it)."""
        return json.loads((self.path / STATE).read_text())["phase"]

    def save_checkpoint(
        self, steps: int, tensors: dict[str, Any], manifest: dict[str, Any]
    ) -> Path:
        """Write the checkpoint of step ``steps`` atomically and point
        ``latest.json`` at it."""
        data = dict(manifest)
        data["step"] = steps
        data["elapsed_s"] = round(self.elapsed(), 1)
        path = ckpt_io.save(
            self.path / "checkpoints" / f"step_{steps:09d}", tensors, data
        )
        ckpt_io.write_json_atomic(
            self.path / ckpt_io.LATEST,
            {"checkpoint": str(path.relative_to(self.path))},
        )
        # the elapsed time, should the process be killed
        self.write_state(self._clock["phase"])
        return path

    def record(self, rows: list[dict[str, Any]]) -> None:
        """Append one whole evaluation (all opponents or none: an interrupted one is
        redone on resume)."""
        write_evaluations(self.path / "evaluations.csv", [*self.evaluations, *rows])

    def result(
        self,
        now: str,
        checkpoint: Path | None,
        steps: int,
        interrupted: bool,
        plot: Path | None = None,
    ) -> TrainResult:
        """What a session of the run leaves, after ``state.json`` names ``now``."""
        self.write_state(now)
        return TrainResult(
            self.path,
            checkpoint,
            steps,
            interrupted,
            self.evaluations,
            plot,
            self.elapsed(),
            now,
            time.time() - self.session_start,
            imitation.stored_games(self.path / WARM_START_DIR),
            dict(self.seconds),
        )
