"""§4.1 scope inference at write time: who may see a node (scope) and why it got that scope (basis)."""

from __future__ import annotations

from kenning.knowledge.contracts import SCOPE_FIELD, SCOPES, PayloadError
from kenning.knowledge.kinds import check_kind


class ScopeError(PayloadError):
    """A scope override outside §4.1's four values."""

    def __init__(self, value: object):
        super().__init__("scope", "scope", value,
                         f"must be one of {', '.join(SCOPES)} (got {value!r})")

    def __str__(self) -> str:
        return f"scope override: {self.reason}"


def infer_scope(*, matter_linked: bool = False, professional_profile: bool = False, personal_surface: bool = False,
                user_marked_private: bool = False, user_override: str | None = None) -> dict:
    """``{"scope", "scope_inference_basis"}`` for a new node (DOC72 §4.1, decision K36).

    The user's word comes first (an override, then a private marking), because §4.1 lets the user override and
    privacy must never be widened by an inferred link; then matter-linked or professional-profile content is
    firm_shared; personal content, and anything ambiguous, is personal."""
    if user_override is not None:
        if user_override not in SCOPES:
            raise ScopeError(user_override)
        return {"scope": user_override, "scope_inference_basis": "user_override"}
    if user_marked_private:
        return {"scope": "private", "scope_inference_basis": "user_override"}
    if matter_linked:
        return {"scope": "firm_shared", "scope_inference_basis": "matter_linked"}
    if professional_profile:
        return {"scope": "firm_shared", "scope_inference_basis": "domain_profile"}
    if personal_surface:
        return {"scope": "personal", "scope_inference_basis": "personal_surface"}
    return {"scope": "personal", "scope_inference_basis": "default"}


def scope_field(kind: str) -> str:
    """The payload key holding a ``kind`` node's §4.1 scope (memory_directive's `scope` is §4A's, K23)."""
    return SCOPE_FIELD[check_kind(kind)]


def with_scope(kind: str, payload: dict, **signals) -> dict:
    """``payload`` with its §4.1 scope and basis inferred from ``signals`` (infer_scope's arguments) unless the
    payload already states a scope; a new dict, the input is not changed."""
    key = scope_field(kind)
    if payload.get(key) is not None:
        return dict(payload)
    inferred = infer_scope(**signals)
    out = dict(payload)
    out[key] = inferred["scope"]
    out.setdefault("scope_inference_basis", inferred["scope_inference_basis"])
    return out
