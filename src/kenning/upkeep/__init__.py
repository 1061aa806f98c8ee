"""Graph upkeep (issue 20): the §42A.2 back-link pipeline (mentions → evidence bundles → promoted edges, the review
queue) and the nightly maintenance (``upkeep/maintain/``)."""
