"""The one store: SQLite through apsw with sqlite-vec. All SQL in Kenning lives in this package."""

from kenning.store.connection import StoreError, open_store, transaction

__all__ = ["StoreError", "open_store", "transaction"]
