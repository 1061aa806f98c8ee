"""Errors of the model layer. Each message names what to fix; none ever contains an API key."""

from __future__ import annotations


class ModelLayerError(RuntimeError):
    """Base class: a model-layer failure phrased for the person who must fix it."""


class LLMConfigError(ModelLayerError):
    """The LLM settings do not allow what was asked (e.g. ``--llm live`` with no endpoint)."""


class LLMDisabled(ModelLayerError):
    """``structured()`` was called while the mode is ``none``; check ``client.enabled`` first."""


class LLMUnavailable(ModelLayerError):
    """The endpoint cannot be reached or keeps failing. The message names the (redacted) URL."""


class LLMEndpointError(ModelLayerError):
    """The endpoint answered in a way that will fail every request (401/403/404: key, permission, model)."""


class ReplayMissing(ModelLayerError):
    """``--llm replay`` found no stored response for a request. Never answered by a live call."""


class PromptError(ModelLayerError):
    """A prompt file is missing, unpinned, malformed, or a template variable is missing."""


class EmbeddingError(ModelLayerError):
    """An embedding backend could not be loaded or did not answer as expected."""


class VectorIndexError(ModelLayerError):
    """Misuse of the vector index (wrong dimension/model) or a migration that cannot proceed."""
