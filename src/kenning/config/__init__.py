"""Configuration: ``defaults.yaml`` holds every default; pydantic models validate the merged result."""

from kenning.config.loader import Config, config_hash, load_config

__all__ = ["Config", "config_hash", "load_config"]
