"""Checkpoints: safe to write, safe to read, and self-describing.

A checkpoint is a directory holding ``weights.pt`` (tensors only: the policy, the
optimiser, the frozen snapshots of the opponent pool) and ``manifest.json`` (env name
and options, observation and action sizes, network shape, config, step count, package
versions, the SHA-256 of the weights, and the SHA-256 of the manifest itself). It is
written into a temporary directory and renamed into place, so an interrupted write never
leaves a half checkpoint under the final name (`clean_temporary` removes what a killed
write leaves). Loading never unpickles arbitrary objects
(``torch.load(weights_only=True)``) and checks both hashes and the manifest's fields
first, so a truncated, corrupt or edited file, a missing file, weights of the wrong
shapes, or a checkpoint made for another env or other options fails with a one-line
message that names the problem. A run directory's ``latest.json`` names its latest
checkpoint, which must lie inside the run directory.

The manifest's ``fingerprint`` is the rules fingerprint of the env it was trained on
(`parlour.envs.core.fingerprint`): `check_compatible` refuses a checkpoint whose
fingerprint differs from the env's now, naming what changed (the rules, the options'
defaults, the actions, the observation layout), and warns once about a checkpoint
written before manifests carried one.

The manifest's optional ``suit_average`` (true or false) says how the checkpoint is
played where the env's suits can be renamed: the policy averaged over the renamings
(`parlour.training.policy.SuitAverage`) or the network alone (the default);
`set_suit_average` writes it into an existing checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from .. import env_version
from ..paths import check_output_path  # noqa: F401  (the old home, still imported)
from .pause import pause_point

FORMAT = "parlour-checkpoint"
FORMAT_VERSION = 2  # 2: the manifest's own hash
WEIGHTS = "weights.pt"
MANIFEST = "manifest.json"
LATEST = "latest.json"


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or made for something else."""


class UncheckedRulesWarning(UserWarning):
    """A checkpoint without a rules fingerprint (written by an older Parlour): it
    loads, but nothing checks that the rules it was trained on are the env's now."""


#: checkpoints already warned about (once per path and process)
_WARNED: set[str] = set()


def package_versions() -> dict[str, str]:
    """Versions of the packages a checkpoint depends on."""
    out = {}
    for name in (
        "parlour",
        "torch",
        "stable-baselines3",
        "sb3-contrib",
        "pettingzoo",
        "gymnasium",
        "numpy",
    ):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest_digest(manifest: Mapping[str, Any]) -> str:
    """The SHA-256 of a manifest's canonical JSON, without its own hash field."""
    body = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


# the suffixes of the files `write_text_atomic` writes into a run directory: their
# temporaries are named ``.NAME.random``
_ATOMIC_SUFFIXES = (".json.", ".yaml.", ".csv.")


def clean_temporary(run_dir: str | Path) -> list[Path]:
    """Remove what killed atomic writes left in a run directory (the temporary
    checkpoint directories, JSON, YAML and CSV files); returns what was removed."""
    run_dir = Path(run_dir)
    removed = []
    for folder in (run_dir, run_dir / "checkpoints"):
        if not folder.is_dir():
            continue
        for path in folder.glob(".*"):
            name = path.name
            if path.is_dir() and name.startswith(".step_"):
                shutil.rmtree(path, ignore_errors=True)
            elif path.is_file() and any(s in name for s in _ATOMIC_SUFFIXES):
                path.unlink(missing_ok=True)
            else:
                continue
            removed.append(path)
    return removed


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to ``path`` through a temporary file and a rename."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True))


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file (``.NAME.*``, which
    `clean_temporary` removes should the process be killed) and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a result file is not secret
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(
    directory: str | Path, tensors: Mapping[str, Any], manifest: Mapping[str, Any]
) -> Path:
    """Write a checkpoint directory atomically and return its path."""
    import torch

    final = Path(directory)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}."))
    try:
        tmp.chmod(0o755)  # mkdtemp makes it private
        weights = tmp / WEIGHTS
        torch.save(dict(tensors), weights)
        data = {
            **manifest,
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "weights_sha256": _sha256(weights),
            "versions": package_versions(),
        }
        if "env" in data:  # the env's _vN beside Parlour's version (docs/versions.md)
            data["env_version"] = env_version(data["env"])
        data["manifest_sha256"] = manifest_digest(data)
        write_json_atomic(tmp / MANIFEST, data)
        pause_point("checkpoint")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


@dataclass
class Checkpoint:
    """A loaded checkpoint: its manifest and its tensors."""

    path: Path
    manifest: dict[str, Any]
    tensors: dict[str, Any]

    @property
    def env_name(self) -> str:
        return self.manifest["env"]

    @property
    def env_options(self) -> dict[str, Any]:
        return dict(self.manifest.get("env_options", {}))

    @property
    def step(self) -> int:
        return int(self.manifest.get("step", 0))

    @property
    def suit_average(self) -> bool:
        """Whether the checkpoint is played averaged over the suit renamings (its
        manifest's ``suit_average``; False where the manifest says nothing)."""
        return suit_average_of(self.manifest)

    @property
    def canonical_form(self) -> bool:
        """Whether the network reads positions in their canonical form (its
        manifest's ``canonical_form``: `parlour.training.policy.CanonicalPolicy`)."""
        return canonical_form_of(self.manifest)


#: the manifest field that asks for the suit-averaged policy
SUIT_AVERAGE = "suit_average"


def suit_average_of(manifest: dict[str, Any]) -> bool:
    """Whether a manifest asks for the suit-averaged policy (False where it says
    nothing)."""
    return bool(manifest.get(SUIT_AVERAGE, False))


#: the manifest field of a network fitted to positions in their canonical form
CANONICAL_FORM = "canonical_form"


def canonical_form_of(manifest: dict[str, Any]) -> bool:
    """Whether a manifest's network reads positions in their canonical form (False
    where it says nothing); CheckpointError for a value that is not true or false."""
    value = manifest.get(CANONICAL_FORM, False)
    if not isinstance(value, bool):
        raise CheckpointError(
            f"the manifest's {CANONICAL_FORM} must be true or false, got {value!r}"
        )
    return value


def set_suit_average(directory: str | Path, on: bool) -> Path:
    """Write ``suit_average`` into a checkpoint's manifest (the checkpoint loaded and
    verified first, the manifest's own hash renewed, the weights untouched); refused
    (one line) for an env whose record renames no suits. Returns the directory."""
    from .policy import check_suit_renaming

    if not isinstance(on, bool):
        raise ValueError(f"suit_average must be true or false, got {on!r}")
    loaded = load(directory)
    if on:
        check_suit_renaming(loaded.env_name)
    manifest = {**loaded.manifest, SUIT_AVERAGE: on}
    manifest["manifest_sha256"] = manifest_digest(manifest)
    write_json_atomic(loaded.path / MANIFEST, manifest)
    return loaded.path


def resolve(path: str | Path) -> Path:
    """The checkpoint directory for a path: the directory itself, its manifest, or a run
    directory (then the latest checkpoint in it)."""
    p = Path(path)
    if p.is_file() and p.name in (MANIFEST, WEIGHTS):
        p = p.parent
    if (p / LATEST).is_file():  # a run directory
        try:
            latest = json.loads((p / LATEST).read_text())
        except (ValueError, OSError) as err:
            raise CheckpointError(f"{p / LATEST} is corrupt: {err}") from None
        if not isinstance(latest, dict) or not isinstance(
            latest.get("checkpoint"), str
        ):
            raise CheckpointError(
                f'{p / LATEST} is corrupt: expected {{"checkpoint": "PATH"}}, '
                f"got {json.dumps(latest)[:60]}"
            )
        target = (p / latest["checkpoint"]).resolve()
        if not target.is_relative_to(p.resolve()) or target == p.resolve():
            raise CheckpointError(
                f"{p / LATEST} points outside its run directory: "
                f"{latest['checkpoint']!r}"
            )
        p = target
    if not p.exists():
        raise CheckpointError(f"no checkpoint at {path}: the path does not exist")
    if not p.is_dir():
        raise CheckpointError(
            f"{path} is not a checkpoint: "
            f"expected a directory with {MANIFEST} and {WEIGHTS}"
        )
    return p


def load(path: str | Path) -> Checkpoint:
    """Load and verify a checkpoint; `CheckpointError` says what is wrong."""
    import torch

    directory = resolve(path)
    manifest_path, weights_path = directory / MANIFEST, directory / WEIGHTS
    if not manifest_path.is_file():
        raise CheckpointError(
            f"{directory} has no {MANIFEST}: not a checkpoint or incomplete"
        )
    if not weights_path.is_file():
        raise CheckpointError(
            f"{directory} has no {WEIGHTS}: the checkpoint is incomplete"
        )
    try:
        manifest = json.loads(manifest_path.read_text())
    except ValueError as err:
        raise CheckpointError(
            f"{manifest_path} is corrupt (not valid JSON: {err})"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CheckpointError(f"{manifest_path} is not a Parlour checkpoint manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{directory}: checkpoint format version "
            f"{manifest.get('format_version')} is not "
            f"supported (this Parlour reads version {FORMAT_VERSION})"
        )
    if manifest.get("manifest_sha256") != manifest_digest(manifest):
        raise CheckpointError(
            f"{manifest_path} was edited or is corrupt: "
            "its SHA-256 does not match the one it holds"
        )
    digest = _sha256(weights_path)
    if digest != manifest.get("weights_sha256"):
        raise CheckpointError(
            f"{weights_path} is corrupt or truncated: "
            "its SHA-256 does not match the manifest"
        )
    _check_manifest(manifest, manifest_path)
    try:
        tensors = torch.load(weights_path, map_location="cpu", weights_only=True)
    except Exception:  # noqa: BLE001 (torch raises many types; its text is long)
        # torch's own message explains weights_only=False over many lines: never
        # show it, since loading arbitrary objects is exactly what is refused here
        raise CheckpointError(
            f"{weights_path} cannot be read: not a file of plain tensors "
            "(corrupt, or it holds other objects, which are never loaded)"
        ) from None
    _check_tensors(manifest, tensors, weights_path)
    return Checkpoint(directory, manifest, tensors)


def _check_manifest(manifest: dict[str, Any], path: Path) -> None:
    """One-line errors for a manifest whose fields have the wrong types."""
    from .. import envs

    expected = {
        "env": str,
        "env_options": dict,
        "game_options": dict,
        "observation_size": int,
        "num_actions": int,
        "net_arch": list,
        "activation": str,
        "step": int,
        "config": dict,
    }
    for key, kind in expected.items():
        value = manifest.get(key)
        if value is None:
            raise CheckpointError(f"{path} has no {key!r}: the manifest is incomplete")
        if not isinstance(value, kind) or isinstance(value, bool):
            raise CheckpointError(
                f"{path}: {key!r} must be a {kind.__name__}, got {value!r:.60}"
            )
    if manifest["env"] not in envs.names():
        raise CheckpointError(
            f"{path} was made for {manifest['env']!r}, which is not a registered env"
        )
    if manifest["step"] < 0 or any(
        not isinstance(h, int) or h < 1 for h in manifest["net_arch"]
    ):
        raise CheckpointError(f"{path}: a negative step or a bad net_arch")
    if not isinstance(manifest.get(SUIT_AVERAGE, False), bool):
        raise CheckpointError(
            f"{path}: {SUIT_AVERAGE!r} must be true or false, got "
            f"{manifest[SUIT_AVERAGE]!r:.60}"
        )
    if "fingerprint" in manifest:
        from ..envs.core import fingerprint

        problem = fingerprint.check_shape(manifest["fingerprint"])
        if problem is not None:
            raise CheckpointError(f"{path}: 'fingerprint' is malformed: {problem}")


def _check_tensors(manifest: dict[str, Any], tensors: Any, path: Path) -> None:
    """One-line errors for weights that lack the policy or do not have the shapes
    the manifest describes."""
    import torch

    from .policy import actor_state

    policy = tensors.get("policy") if isinstance(tensors, dict) else None
    if not isinstance(policy, dict) or not policy:
        raise CheckpointError(f"{path} holds no 'policy' tensors")
    sizes = [manifest["observation_size"], *manifest["net_arch"]]
    actions = manifest["num_actions"]
    want = actor_state(
        [((b, a), (b,)) for a, b in zip(sizes, sizes[1:], strict=False)],
        ((actions, sizes[-1]), (actions,)),
    )
    for key, shape in want.items():
        tensor = policy.get(key)
        if not isinstance(tensor, torch.Tensor):
            raise CheckpointError(f"{path}: the policy has no tensor {key!r}")
        if tuple(tensor.shape) != shape:
            raise CheckpointError(
                f"{path}: {key} has shape {tuple(tensor.shape)}, the manifest's "
                f"network needs {shape}"
            )


def check_compatible(
    ckpt: Checkpoint,
    env_name: str,
    game_options: Mapping[str, Any],
    observation_size: int,
    num_actions: int,
) -> None:
    """Raise `CheckpointError` unless ``ckpt`` was trained for this env and these
    options."""
    if ckpt.env_name != env_name:
        raise CheckpointError(
            f"checkpoint {ckpt.path} was trained on {ckpt.env_name}, not {env_name}"
        )
    mine, theirs = _canon(game_options), _canon(ckpt.manifest.get("game_options", {}))
    if mine != theirs:
        raise CheckpointError(
            f"checkpoint {ckpt.path} was trained with options {theirs}, not {mine}"
        )
    sizes = (ckpt.manifest.get("observation_size"), ckpt.manifest.get("num_actions"))
    if sizes != (observation_size, num_actions):
        raise CheckpointError(
            f"checkpoint {ckpt.path} expects observation/action sizes {sizes}, "
            f"the env has {(observation_size, num_actions)}"
        )
    check_rules(ckpt, env_name, game_options)


def check_rules(
    ckpt: Checkpoint, env_name: str, game_options: Mapping[str, Any]
) -> None:
    """Raise `CheckpointError` naming what changed when ``ckpt``'s rules fingerprint
    is not the one ``env_name`` has now with ``game_options``; warn once
    (`UncheckedRulesWarning`) about a checkpoint that has none."""
    from .. import envs
    from ..envs.core import fingerprint

    stored = ckpt.manifest.get("fingerprint")
    if stored is None:
        if str(ckpt.path) not in _WARNED:
            _WARNED.add(str(ckpt.path))
            # located at the manifest, line 0: Python then prints no source line, and
            # the warning is the one line "MANIFEST:0: UncheckedRulesWarning: ..."
            warnings.warn_explicit(
                f"checkpoint {ckpt.path} has no rules fingerprint (written by an "
                "older Parlour): loaded without checking that it was trained on "
                f"the rules of {env_name} this Parlour plays",
                UncheckedRulesWarning,
                str(ckpt.path / MANIFEST),
                0,
            )
        return
    current = envs.fingerprint(env_name, dict(game_options))
    changed = fingerprint.describe(stored, current)
    if changed:
        trained = ckpt.manifest.get("versions", {}).get("parlour", "unknown")
        raise CheckpointError(
            f"checkpoint {ckpt.path} was trained on other rules of {env_name}: "
            f"{changed}; retrain it or use a matching Parlour version (it was "
            f"trained with parlour {trained})"
        )


def _canon(options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in sorted(options.items()) if v is not None}


def to_numpy(state_dict: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """A state dict's tensors as float32 numpy arrays."""
    return {
        k: v.detach().cpu().numpy().astype(np.float32) for k, v in state_dict.items()
    }


def to_torch(arrays: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Numpy arrays as torch tensors (contiguous copies where they are views)."""
    import torch

    return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in arrays.items()}
