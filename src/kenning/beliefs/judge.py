"""The verifier's model-judged votes (seed 002 checks 3 and 4, and M1) behind one small protocol.

Deterministic checks decide on their own; a `Judge` is only asked what needs reading comprehension. The
`none` judge answers `not_checked` — recorded as such and never counted as a pass. `CallableJudge` wraps any
``(prompt) -> JSON`` function, which is where the LLM client (model layer, issue 3) plugs in.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from typing import Any, Callable, Protocol

import orjson

NOT_CHECKED = "not_checked"
STATEMENT_VOTES = ("supports", "partially_supports", "does_not_support")
SUPERSESSION_VOTES = ("contradicts", "refines", "unrelated")


def _prompt(name: str) -> str:
    return resources.files("kenning.beliefs").joinpath("prompts", name).read_text(encoding="utf-8")


STATEMENT_PROMPT = _prompt("statement_support.txt")
SUPERSESSION_PROMPT = _prompt("supersession.txt")
# Versioned prompts: their hash is part of every judged input, so a new prompt re-judges.
PROMPT_VERSION = hashlib.sha256((STATEMENT_PROMPT + "\0" + SUPERSESSION_PROMPT).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Vote:
    vote: str                  # one of the task's votes, or "not_checked"
    rationale: str | None = None
    error: str | None = None   # why there is no vote (no model, a failed call, an answer that did not parse)

    @property
    def checked(self) -> bool:
        return self.vote != NOT_CHECKED


class Judge(Protocol):
    name: str

    def statement_support(self, statement: str, quotes: list[str]) -> Vote: ...

    def supersession(self, old_statement: str, new_statement: str, reason: str) -> Vote: ...


class NoJudge:
    """``--llm none``: nothing is judged, and nothing is passed by default."""

    name = "none"

    def statement_support(self, statement: str, quotes: list[str]) -> Vote:
        return Vote(NOT_CHECKED, error="no model configured (--llm none)")

    def supersession(self, old_statement: str, new_statement: str, reason: str) -> Vote:
        return Vote(NOT_CHECKED, error="no model configured (--llm none)")


def render_statement_prompt(statement: str, quotes: list[str]) -> str:
    return STATEMENT_PROMPT.format(statement=statement, quotes="\n".join(f'- "{q}"' for q in quotes))


def render_supersession_prompt(old_statement: str, new_statement: str, reason: str) -> str:
    return SUPERSESSION_PROMPT.format(old_statement=old_statement, new_statement=new_statement, reason=reason)


def parse_vote(answer: Any, allowed: tuple[str, ...]) -> Vote:
    """A judge's answer (a dict, or JSON text) → a Vote; anything else is not_checked with the reason."""
    if isinstance(answer, (bytes, str)):
        try:
            answer = orjson.loads(answer)
        except orjson.JSONDecodeError:
            return Vote(NOT_CHECKED, error="the judge's answer is not JSON")
    if not isinstance(answer, dict):
        return Vote(NOT_CHECKED, error="the judge's answer is not a JSON object")
    vote = answer.get("vote")
    if vote not in allowed:
        return Vote(NOT_CHECKED, error=f"the judge voted {vote!r}, not one of {', '.join(allowed)}")
    rationale = answer.get("rationale")
    return Vote(vote, rationale if isinstance(rationale, str) else None)


class CallableJudge:
    """Any ``(prompt: str) -> dict | JSON text`` function as a judge (an LLM client, a script, a person)."""

    def __init__(self, fn: Callable[[str], Any], name: str = "callable"):
        self.fn = fn
        self.name = name

    def _ask(self, prompt: str, allowed: tuple[str, ...]) -> Vote:
        try:
            answer = self.fn(prompt)
        except Exception as e:  # a failed call is not a vote
            return Vote(NOT_CHECKED, error=f"the judge failed: {type(e).__name__}: {e}")
        return parse_vote(answer, allowed)

    def statement_support(self, statement: str, quotes: list[str]) -> Vote:
        return self._ask(render_statement_prompt(statement, quotes), STATEMENT_VOTES)

    def supersession(self, old_statement: str, new_statement: str, reason: str) -> Vote:
        return self._ask(render_supersession_prompt(old_statement, new_statement, reason), SUPERSESSION_VOTES)


class JudgeUnavailable(ValueError):
    """The CLI asked for a judge this build cannot provide."""


def judge_for(llm: str | None, default: str) -> Judge:
    """The judge a command-line ``--llm`` value names. The model layer (issue 3, ``kenning.llm``) exists; wiring
    a live/replay judge through it (an ``open_llm_run`` inside the wiki stage) is still to do."""
    choice = llm or default
    if choice == "none":
        return NoJudge()
    raise JudgeUnavailable(f"--llm {choice}: the wiki verifier's model-judged checks are not connected to the model "
                           "layer yet; use --llm none (they are then recorded as not_checked)")
