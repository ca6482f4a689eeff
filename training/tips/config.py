"""The pre-registered hypotheses: a game's ``configs/tips/<env>.yaml``, read, checked.

Each tip (or, for Fünfzehn – tot, each claim) is written down with its seed sentence
and its predicted outcome before anything is run; `verdict` and `prediction_matched`
turn a sequential test's result into the hypothesis' language.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..config import CONFIG_DIR as _TRAIN_CONFIGS
from ..stats import SequentialTest

CONFIG_DIR = _TRAIN_CONFIGS / "tips"
METRICS = ("win", "score")  # per game: the candidate's win share and mean reward
PREDICTIONS = ("positive", "negative", "none")
VERDICTS = ("supported", "refuted", "no detectable effect")
CALIBRATION_WARN = 0.075  # a null false-positive rate above this gets a warning

@dataclass(frozen=True)
class Hypothesis:
    """One tip (or claim) as written down before the run, from ``configs/tips``."""

    name: str
    seed: str  # the seed's sentence, in its own language
    gloss: str | None  # an English gloss when the seed is not in English
    switch: str  # what switching it off changes in the bot (claims: what is checked)
    prediction: str  # positive / negative / none (claims: free text)
    why: str = ""


@dataclass(frozen=True)
class TipsConfig:
    """A game's tips file: env, design defaults, tips and (Fünfzehn – tot) claims."""

    env: str
    env_options: dict[str, Any]
    source: str  # the rule book the hypotheses quote, cited by title
    max_deals: int
    looks: int
    opponents: tuple[str, ...]
    primary: str
    seed: int
    tips: tuple[Hypothesis, ...]
    claims: tuple[Hypothesis, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    #: the ``audit`` and ``baseline`` sections (issue 34), read by their modules
    extra_sections: dict[str, Any] = field(default_factory=dict)

    @property
    def short(self) -> str:
        """The file stem of the reports: the env name without its version."""
        return self.env.removesuffix("_v0")

    def tip(self, name: str) -> Hypothesis:
        for t in self.tips:
            if t.name == name:
                return t
        raise ValueError(
            f"no hypothesis written for tip {name!r} of {self.env}; tips in "
            f"configs/tips/{self.env}.yaml: {', '.join(t.name for t in self.tips)}"
        )


def resolve_env(game: str) -> str:
    """The env name for ``game`` (``"german_whist"`` or ``"german_whist_v0"``) that has
    a tips file; ValueError listing the games that do."""
    known = sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))
    if not isinstance(game, str) or not game.strip():
        raise ValueError(f"give a game, one of: {', '.join(known)}")
    for name in (game.strip(), game.strip() + "_v0"):
        if name in known:
            return name
    raise ValueError(
        f"no strategy tips for {game!r}; games with a tips file: {', '.join(known)}"
    )


def _hypothesis(entry: Mapping[str, Any], where: str, claim: bool) -> Hypothesis:
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where}: each entry must be a mapping")
    need = ("name", "seed", "check" if claim else "switch", "prediction")
    missing = [k for k in need if not entry.get(k)]
    if missing:
        raise ValueError(f"{where}: entry {entry.get('name', '?')!r} lacks {missing}")
    prediction = str(entry["prediction"]).strip()
    if not claim and prediction not in PREDICTIONS:
        raise ValueError(
            f"{where}: prediction of {entry['name']!r} must be one of {PREDICTIONS}"
        )
    return Hypothesis(
        name=str(entry["name"]),
        seed=" ".join(str(entry["seed"]).split()),
        gloss=" ".join(str(entry["gloss"]).split()) if entry.get("gloss") else None,
        switch=" ".join(str(entry["check" if claim else "switch"]).split()),
        prediction=" ".join(prediction.split()),
        why=" ".join(str(entry.get("why", "")).split()),
    )


def load_config(game: str) -> TipsConfig:
    """Read ``configs/tips/<env>.yaml`` for ``game``."""
    env = resolve_env(game)
    path = CONFIG_DIR / f"{env}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, Mapping) or data.get("env") != env:
        raise ValueError(f"{path}: must be a mapping with env: {env}")
    if not data.get("source"):
        raise ValueError(f"{path}: source (the rule book the tips quote) is missing")
    design = dict(data.get("design") or {})
    tips = tuple(_hypothesis(e, str(path), False) for e in data.get("tips") or [])
    claims = tuple(_hypothesis(e, str(path), True) for e in data.get("claims") or [])
    primary = design.pop("primary", "win")
    if primary not in METRICS:
        raise ValueError(f"{path}: design.primary must be one of {METRICS}")
    return TipsConfig(
        env=env,
        env_options=dict(data.get("env_options") or {}),
        source=str(data.get("source", "")),
        max_deals=int(design.pop("max_deals", 1000)),
        looks=int(design.pop("looks", 4)),
        opponents=tuple(design.pop("opponents", ["random", "heuristic"])),
        primary=primary,
        seed=int(design.pop("seed", 0)),
        tips=tips,
        claims=claims,
        extra=design,
        extra_sections={
            k: dict(data[k]) for k in ("audit", "baseline") if data.get(k)
        },
    )



def verdict(test: SequentialTest) -> str:
    """supported / refuted / no detectable effect: the sign of a crossed boundary."""
    if test.crossed and test.low > 0:
        return "supported"
    if test.crossed and test.high < 0:
        return "refuted"
    return "no detectable effect"


def prediction_matched(prediction: str, outcome: str) -> bool:
    """Whether the result is what the hypothesis predicted."""
    expected = {
        "positive": "supported",
        "negative": "refuted",
        "none": "no detectable effect",
    }[prediction]
    return expected == outcome
