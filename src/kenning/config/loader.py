"""Load ``defaults.yaml``, overlay the user's file, validate, and hash."""

from __future__ import annotations

import copy
import functools
import os
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from kenning.config.models import Config
from kenning.sources.jcs import jcs_hash

DEFAULTS_FILE = "defaults.yaml"
# libyaml's parser when PyYAML was built with it: the same documents, ~8x faster than the pure-Python one (the
# defaults file is parsed on every CLI start)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Environment variables that override config keys (after config files, before programmatic overrides).
ENV_KEYS: dict[str, tuple[str, ...]] = {
    "KENNING_LLM_BASE_URL": ("llm", "base_url"),
    "KENNING_LLM_MODEL": ("llm", "model"),
    "KENNING_LLM_API_KEY": ("llm", "api_key"),
    "KENNING_EMBEDDINGS_BASE_URL": ("embeddings", "openai", "base_url"),
    "KENNING_EMBEDDINGS_API_KEY": ("embeddings", "openai", "api_key"),
}


class ConfigError(ValueError):
    pass


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` through libyaml where available; raises ``yaml.YAMLError`` the same way."""
    return yaml.load(text, Loader=_LOADER)


@functools.cache
def _defaults() -> dict[str, Any]:
    return load_yaml(resources.files("kenning.config").joinpath(DEFAULTS_FILE).read_text(encoding="utf-8"))


def defaults_dict() -> dict[str, Any]:
    """The packaged defaults, parsed once per process; each caller gets its own copy to change."""
    return copy.deepcopy(_defaults())


def deep_merge(base: dict, override: dict) -> dict:
    """Dicts merge key by key; every other value (lists included) is replaced whole."""
    out = copy.deepcopy(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _read_yaml(path: Path) -> dict:
    try:
        data = load_yaml(path.read_text(encoding="utf-8")) or {}
    except OSError as e:
        raise ConfigError(f"cannot read config file {path}: {e.strerror}") from e
    except yaml.YAMLError as e:
        raise ConfigError(f"config file {path} is not valid YAML: {e}") from e
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    return data


def config_files(config_path: str | Path | None, db_path: str | Path | None) -> list[Path]:
    """User overrides, lowest priority first: the vault's own config.yaml, then KENNING_CONFIG / --config."""
    files: list[Path] = []
    if db_path is not None:
        beside = Path(db_path).expanduser().parent / "config.yaml"
        if beside.is_file():
            files.append(beside)
    explicit = config_path or os.environ.get("KENNING_CONFIG")
    if explicit:
        p = Path(explicit).expanduser()
        if not p.is_file():
            raise ConfigError(f"config file {p} does not exist")
        files.append(p)
    return files


def env_overrides(environ: dict[str, str] | None = None) -> dict:
    """The config keys set through ``KENNING_LLM_*`` / ``KENNING_EMBEDDINGS_*`` (empty values are ignored)."""
    env = os.environ if environ is None else environ
    out: dict = {}
    for var, path in ENV_KEYS.items():
        value = env.get(var)
        if value:
            node = out
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = value
    return out


def load_config(
    config_path: str | Path | None = None,
    db_path: str | Path | None = None,
    overrides: dict | None = None,
) -> Config:
    data = defaults_dict()
    for f in config_files(config_path, db_path):
        data = deep_merge(data, _read_yaml(f))
    data = deep_merge(data, env_overrides())
    if overrides:
        data = deep_merge(data, overrides)
    try:
        return Config.model_validate(data)
    except Exception as e:  # pydantic.ValidationError: say which key, in one message
        raise ConfigError(f"invalid configuration: {e}") from e


def config_hash(cfg: Config) -> str:
    return jcs_hash(cfg.model_dump(mode="json"))
