"""Issue 18 miners: each class registers an extractor with ``kenning.intake.extractors`` on import. Order
matters only for corrections, which run last so the restated item exists when the corrected one is marked."""

from kenning.intake.mining import goals, obligations, procedures, standing, directives, model, corrections

# imported for their registrations; listed so a checker sees them used
__all__ = ["goals", "obligations", "procedures", "standing", "directives", "model", "corrections"]
