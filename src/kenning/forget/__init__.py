"""`kenning forget` (issue 23 §1): remove conversations and everything derived from them, in every layer."""

from kenning.forget.apply import ForgetError, ForgetReport, forget

__all__ = ["ForgetError", "ForgetReport", "forget"]
