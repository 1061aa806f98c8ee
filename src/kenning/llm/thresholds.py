"""Similarity thresholds per embedding model (seed 000 §5.3; calibrated by ``kenning calibrate``)."""

from __future__ import annotations

import warnings

from kenning.config import Config
from kenning.config.models import Thresholds


def model_name_of(model: str) -> str:
    """"minilm:all-MiniLM-L6-v2" (or "…@256", another token window) → "all-MiniLM-L6-v2" (the thresholds key);
    a bare name is returned as is."""
    name = model.split(":", 1)[1] if ":" in model else model
    return name.split("@", 1)[0]


def thresholds_for(config: Config, model: str, *, warn: bool = True) -> Thresholds:
    """The match / no_match / tension thresholds for an embedding model id or name. A model without a row in
    ``embeddings.thresholds`` gets ``embeddings.default_thresholds`` (the seed's text-embedding-3-small values)
    and a warning, since scores are not comparable across models."""
    name = model_name_of(model)
    found = config.embeddings.thresholds.get(name)
    if found is not None:
        return found
    if warn:
        warnings.warn(f"no calibrated similarity thresholds for embedding model {name!r}; using "
                      "embeddings.default_thresholds. Run `kenning calibrate` and add a row to embeddings.thresholds.",
                      stacklevel=2)
    return config.embeddings.default_thresholds
