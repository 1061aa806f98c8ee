"""The verifier's model-judged votes (seed 002 checks 3 and 4, and M1) behind one small protocol.

Deterministic checks decide on their own; a `Judge` is only asked what needs reading comprehension. The
`none` judge answers `not_checked` — recorded as such and never counted as a pass. `LLMJudge` asks the model
layer (every call logged in the stage's transaction, replayable with ``--llm replay``); `CallableJudge` wraps
any ``(prompt) -> JSON`` function (a script, a person, tests).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any, Callable, Literal, Protocol

import orjson
from pydantic import BaseModel

NOT_CHECKED = "not_checked"
STATEMENT_VOTES = ("supports", "partially_supports", "does_not_support")
SUPERSESSION_VOTES = ("contradicts", "refines", "unrelated")


STATEMENT_PROMPT_NAME = "wiki_statement_support"
SUPERSESSION_PROMPT_NAME = "wiki_supersession"


def _prompt(name: str):
    from kenning.config import load_config
    from kenning.llm.prompts import prompt_for

    return prompt_for(load_config(), name)


@functools.cache
def prompt_version() -> str:
    """The pinned prompts' hashes are part of every judged input, so a new prompt re-judges. Computed on first use,
    not at import: it loads the config, which every CLI start would otherwise pay."""
    return hashlib.sha256("\0".join(_prompt(n).sha256 for n in (STATEMENT_PROMPT_NAME, SUPERSESSION_PROMPT_NAME))
                          .encode()).hexdigest()[:12]


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


def _chat_text(name: str, variables: dict[str, str]) -> str:
    """The prompt as one text (for judges that take a plain prompt)."""
    return "\n\n".join(m["content"] for m in _prompt(name).render(variables))


def _quotes(quotes: list[str]) -> str:
    return "\n".join(f'- "{q}"' for q in quotes)


def render_statement_prompt(statement: str, quotes: list[str]) -> str:
    return _chat_text(STATEMENT_PROMPT_NAME, {"statement": statement, "quotes": _quotes(quotes)})


def render_supersession_prompt(old_statement: str, new_statement: str, reason: str) -> str:
    return _chat_text(SUPERSESSION_PROMPT_NAME, {"old_statement": old_statement, "new_statement": new_statement,
                                                 "reason": reason})


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


class StatementVoteOut(BaseModel):
    vote: Literal["supports", "partially_supports", "does_not_support"]
    rationale: str | None = None


class SupersessionVoteOut(BaseModel):
    vote: Literal["contradicts", "refines", "unrelated"]
    rationale: str | None = None


class LLMJudge:
    """The model layer as the judge: structured votes, one repair attempt, every call logged (and replayable)
    in the stage's transaction. A failed item is ``not_checked`` with the reason — never a pass."""

    def __init__(self, llm: Any):
        self.llm = llm
        self.name = f"llm:{llm.model}" if getattr(llm, "model", None) else "llm"

    def _vote(self, prompt: str, variables: dict[str, str], schema: type[BaseModel]) -> Vote:
        key = hashlib.sha256(orjson.dumps(variables, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]
        res = self.llm.structured(prompt, variables, schema, item_key=key)
        if not res.ok:
            return Vote(NOT_CHECKED, error=f"the judge's call failed: {res.error_code}")
        return Vote(res.value.vote, res.value.rationale)

    def statement_support(self, statement: str, quotes: list[str]) -> Vote:
        return self._vote(STATEMENT_PROMPT_NAME, {"statement": statement, "quotes": _quotes(quotes)},
                          StatementVoteOut)

    def supersession(self, old_statement: str, new_statement: str, reason: str) -> Vote:
        return self._vote(SUPERSESSION_PROMPT_NAME, {"old_statement": old_statement, "new_statement": new_statement,
                                                     "reason": reason}, SupersessionVoteOut)


@dataclass(frozen=True)
class ModelJudgeRequest:
    """``--llm live|replay`` for the verifier: the stage opens the LLM run and judges with an `LLMJudge`."""

    mode: str

    @property
    def name(self) -> str:
        return f"llm-{self.mode}"


class JudgeUnavailable(ValueError):
    """The CLI asked for a judge this build cannot provide."""


def judge_for(llm: str | None, default: str) -> Judge | ModelJudgeRequest:
    """The judge a command-line ``--llm`` value (already resolved to none | live | replay) names."""
    choice = llm or default
    if choice == "none":
        return NoJudge()
    if choice in ("live", "replay"):
        return ModelJudgeRequest(choice)
    raise JudgeUnavailable(f"--llm {choice}: not a judge; use none, live or replay")
