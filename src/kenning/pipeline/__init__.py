"""The one pipeline: stages that each run in one transaction and leave a run row behind."""
