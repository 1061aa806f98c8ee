"""Kenning: a personal, bitemporal knowledge and belief graph."""

__version__ = "0.1.0"
