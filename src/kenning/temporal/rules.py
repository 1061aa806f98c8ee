"""Invalidation rules (seed 001 §5.2.2, §5.10.1): a shipped YAML file seeded into ``invalidation_rules``."""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from kenning.config.loader import load_yaml
from kenning.sources.jcs import canonicalize
from kenning.temporal.lifecycle import Rule

POLICIES = ("none", "close_previous_on_newer_state")


class RulesError(ValueError):
    pass


def read_rules_file(name_or_path: str) -> tuple[str, str]:
    p = Path(name_or_path).expanduser()
    if p.is_file():
        return p.read_text(encoding="utf-8"), str(p)
    try:
        return resources.files("kenning.temporal").joinpath(name_or_path).read_text(encoding="utf-8"), \
            f"kenning/temporal/{name_or_path}"
    except (FileNotFoundError, OSError) as e:
        raise RulesError(f"invalidation rules file {name_or_path!r} not found (neither a file nor a packaged "
                         f"resource)") from e


def plan_rules(text: str, origin: str, ids: Any, predicate_ids: dict[str, str]) -> tuple[list[tuple], list[dict]]:
    """(rows, skipped): the rows to write, default rule first, and the YAML entries that produced no row (a label
    no predicate has — never a wildcard, T2). Later entries with the same (predicate, type) win, as an upsert."""
    try:
        data = load_yaml(text) or {}
    except yaml.YAMLError as e:
        raise RulesError(f"{origin} is not valid YAML: {e}") from e
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    version = data.get("version")
    default_id = ids.make("invalidation_rule", None, "*")
    out: dict[str, tuple] = {default_id: (default_id, None, "*", 0, "none", canonicalize(
        {"default": True, "file_sha256": sha, "origin": origin, "version": version, "load_order": -1}))}
    skipped = []
    for i, spec in enumerate(data.get("rules") or []):
        if not isinstance(spec, dict):
            raise RulesError(f"{origin}: rule #{i} is not a mapping")
        stype = str(spec.get("subject_entity_type", "*"))
        policy = spec.get("invalidation_policy", "none")
        if policy not in POLICIES:
            raise RulesError(f"{origin}: rule #{i}: invalidation_policy must be one of {', '.join(POLICIES)}")
        functional = spec.get("is_functional", False)
        if not isinstance(functional, bool):
            raise RulesError(f"{origin}: rule #{i}: is_functional must be true or false")
        label = spec.get("predicate_label")
        pid = spec.get("predicate_id")
        if label is not None:
            pid = predicate_ids.get(str(label).strip().lower())
            if pid is None:
                skipped.append({"load_order": i, "predicate_label": label, "subject_entity_type": stype})
                continue
        rid = ids.make("invalidation_rule", pid, stype)
        notes = canonicalize({"file_sha256": sha, "origin": origin, "version": version, "load_order": i,
                              "predicate_label": label, "notes": spec.get("notes")})
        out[rid] = (rid, pid, stype, int(functional), policy, notes)
    return [out[k] for k in sorted(out)], skipped


class RuleBook:
    """§5.10.1 selection: (predicate, type) > (predicate, '*') > (NULL, type) > (NULL, '*')."""

    def __init__(self, rows: list[tuple]):
        self.by = {(r[1], r[2]): Rule(r[0], r[1], r[2], bool(r[3]), r[4]) for r in rows}

    def rule_for(self, predicate_id: str, subject_type: str) -> Rule:
        for k in ((predicate_id, subject_type), (predicate_id, "*"), (None, subject_type), (None, "*")):
            if k in self.by:
                return self.by[k]
        raise RulesError("the default invalidation rule is missing")
