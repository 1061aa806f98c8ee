"""A workspace run folder (seed 002 "At write time"): ``<workspace>/runs/<run_id>/`` holding

    run.json        what was staged: the new source, where it will live under raw/, how it was drafted
    staged/…        the edited pages and their ``.beliefs.json`` sidecars, mirroring ``wiki/``
    raw/…           the new source, when it comes from outside the workspace (moved into ``raw/`` at commit)
    verdict.json    the verifier's verdict (``kenning wiki verify``)
    committed.json  written once the run is committed (``kenning wiki commit``)

Nothing here touches ``wiki/`` or the vault; it only reads and writes the run's own folder.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from kenning.config import Config
from kenning.sources.jcs import jcs_hash

RUN_FILE = "run.json"
VERDICT_FILE = "verdict.json"
COMMITTED_FILE = "committed.json"


class RunFolderError(ValueError):
    """A run folder a command cannot use (missing, not a run, changed since verify, …); one line for the user."""


def run_id_for(day: str, source_dest: str, source_sha256: str, now: str) -> str:
    """Deterministic under a frozen clock: the same source staged at the same instant is the same run."""
    return f"run-{day}-{jcs_hash([source_dest, source_sha256, now])[:8]}"


def write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    tmp.replace(path)


def read_json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except orjson.JSONDecodeError as e:
        raise RunFolderError(f"{path} is not valid JSON: {e}") from e


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class RunFolder:
    root: Path        # the workspace root (holds wiki/, raw/, runs/)
    dir: Path         # root/runs/<run_id>
    manifest: dict[str, Any]
    config: Config

    @property
    def run_id(self) -> str:
        return self.manifest["run_id"]

    @property
    def staged(self) -> Path:
        return self.dir / self.config.beliefs.write_path.staged_dir

    @property
    def wiki_dir(self) -> str:
        return self.config.beliefs.wiki.wiki_dir.rstrip("/")

    @property
    def raw_dir(self) -> str:
        return self.config.beliefs.wiki.raw_dir.rstrip("/")

    @classmethod
    def open(cls, path: str | Path, config: Config) -> "RunFolder":
        d = Path(path).expanduser().resolve()
        manifest = read_json(d / RUN_FILE) if d.is_dir() else None
        if manifest is None:
            raise RunFolderError(f"{path} is not a run folder (no {RUN_FILE}); `kenning wiki stage` makes one "
                                 f"under WORKSPACE/{config.beliefs.write_path.runs_dir}/")
        if not isinstance(manifest, dict) or not isinstance(manifest.get("run_id"), str):
            raise RunFolderError(f"{d / RUN_FILE} does not describe a run (no run_id)")
        return cls(d.parent.parent, d, manifest, config)

    def wiki_path(self, staged_file: Path) -> str:
        """staged/topics/auth.md → wiki/topics/auth.md"""
        return f"{self.wiki_dir}/{staged_file.relative_to(self.staged).as_posix()}"

    def staged_files(self) -> dict[str, Path]:
        """Every staged page and sidecar, by the wiki path it will take."""
        if not self.staged.is_dir():
            return {}
        return {self.wiki_path(f): f for f in sorted(self.staged.rglob("*")) if f.is_file()}

    def raw_files(self) -> dict[str, Path]:
        """New sources carried by the run, by the raw path they will take."""
        base = self.dir / self.raw_dir
        if not base.is_dir():
            return {}
        return {f"{self.raw_dir}/{f.relative_to(base).as_posix()}": f for f in sorted(base.rglob("*")) if f.is_file()}

    def changed_files(self) -> dict[str, Path]:
        """Staged and carried files whose bytes differ from the workspace's (what a commit writes)."""
        out = {}
        for rel, f in {**self.staged_files(), **self.raw_files()}.items():
            live = self.root / rel
            if not live.is_file() or live.read_bytes() != f.read_bytes():
                out[rel] = f
        return out

    def content_hash(self) -> str:
        """The run's staged bytes and the live wiki they apply to: a verdict holds only for this exact state."""
        wcfg = self.config.beliefs.wiki
        live = self.root / wcfg.wiki_dir
        listing = [("live", f.relative_to(self.root).as_posix(), file_sha256(f))
                   for f in sorted(live.rglob("*")) if f.is_file() and
                   (f.name.endswith(".md") or f.name.endswith(wcfg.sidecar_suffix))] if live.is_dir() else []
        listing += [("staged", rel, file_sha256(f)) for rel, f in self.staged_files().items()]
        listing += [("raw", rel, file_sha256(f)) for rel, f in self.raw_files().items()]
        listing += [("raw-live", rel, file_sha256(self.root / rel)) for rel in self.cited_live_raw()]
        return jcs_hash(listing)

    def cited_live_raw(self) -> list[str]:
        """The workspace raw file this run's source is (when it already lives under raw/)."""
        dest = self.manifest.get("source", {}).get("raw_path")
        if dest and dest not in self.raw_files() and (self.root / dest).is_file():
            return [dest]
        return []

    def verdict(self) -> dict | None:
        return read_json(self.dir / VERDICT_FILE)

    def committed(self) -> dict | None:
        return read_json(self.dir / COMMITTED_FILE)
