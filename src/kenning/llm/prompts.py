"""Versioned prompt files: ``src/kenning/llm/prompts/<name>_v<N>.txt``.

File format::

    # comment lines before the first section are documentation (they count in the content hash)
    [system]
    You extract ... ${variable} ...
    [user]
    ${candidates}

Sections are ``[system]`` and ``[user]`` (each at most once, ``[user]`` required). Variables use
``string.Template`` syntax (``${name}``, ``$$`` for a literal ``$``), so JSON braces need no escaping.
Non-string values are inserted as sorted, indented JSON. The version used for each name is pinned in
``llm.prompt_versions``; a prompt's reference ``name@vN#sha12`` goes into every call row, and its full hash
into the extractor version (seed 000 §6).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import string
from dataclasses import dataclass
from importlib import resources
from typing import Any, Mapping

from kenning.config import Config
from kenning.llm.errors import PromptError

_FILE = re.compile(r"^([a-z][a-z0-9_]*)_v([0-9]+)\.txt$")
_SECTION = re.compile(r"^\[(system|user)\]\s*$")


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int
    system: str | None
    user: str
    sha256: str  # of the file's bytes

    @property
    def ref(self) -> str:
        return f"{self.name}@v{self.version}#{self.sha256[:12]}"

    def variables(self) -> set[str]:
        found: set[str] = set()
        for text in (self.system or "", self.user):
            for m in string.Template.pattern.finditer(text):
                name = m.group("named") or m.group("braced")
                if name:
                    found.add(name)
        return found

    def render(self, variables: Mapping[str, Any]) -> list[dict[str, str]]:
        """Chat messages with every ``${var}`` filled in; a missing variable is an error."""
        values = {k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, indent=2, sort_keys=True)
                  for k, v in variables.items()}
        missing = sorted(self.variables() - set(values))
        if missing:
            raise PromptError(f"prompt {self.ref} needs variable(s) {', '.join(missing)}")
        out = []
        try:
            if self.system is not None:
                out.append({"role": "system", "content": string.Template(self.system).substitute(values)})
            out.append({"role": "user", "content": string.Template(self.user).substitute(values)})
        except ValueError as e:  # a stray "$" in the template
            raise PromptError(f"prompt {self.ref} has an invalid placeholder: {e} (write $$ for a literal $)") from e
        return out


def parse_prompt(name: str, version: int, text: str) -> Prompt:
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            if m.group(1) in sections:
                raise PromptError(f"prompt {name}_v{version}.txt has two [{m.group(1)}] sections")
            current = m.group(1)
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
        elif line.strip() and not line.startswith("#"):
            raise PromptError(f"prompt {name}_v{version}.txt: text before the first [system]/[user] section")
    if "user" not in sections:
        raise PromptError(f"prompt {name}_v{version}.txt has no [user] section")
    body = {k: "\n".join(v).strip("\n") for k, v in sections.items()}
    return Prompt(name, version, body.get("system"), body["user"],
                  hashlib.sha256(text.encode("utf-8")).hexdigest())


def available() -> dict[str, list[int]]:
    """Every prompt file shipped: name -> sorted versions."""
    found: dict[str, list[int]] = {}
    for entry in resources.files("kenning.llm").joinpath("prompts").iterdir():
        m = _FILE.match(entry.name)
        if m:
            found.setdefault(m.group(1), []).append(int(m.group(2)))
    return {k: sorted(v) for k, v in sorted(found.items())}


@functools.lru_cache(maxsize=None)
def load_prompt(name: str, version: int) -> Prompt:
    fname = f"{name}_v{int(version)}.txt"
    path = resources.files("kenning.llm").joinpath("prompts", fname)
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, OSError) as e:
        have = available().get(name)
        hint = f"; shipped versions: {have}" if have else ""
        raise PromptError(f"no prompt file {fname} in kenning/llm/prompts{hint}") from e
    return parse_prompt(name, int(version), text)


def prompt_for(config: Config, name: str) -> Prompt:
    """The pinned version of prompt ``name`` (``llm.prompt_versions``)."""
    version = config.llm.prompt_versions.get(name)
    if version is None:
        raise PromptError(f"prompt {name!r} is not pinned: add `{name}: N` under llm.prompt_versions in "
                          "src/kenning/config/defaults.yaml")
    return load_prompt(name, version)
