"""The belief ledger (seed 002): beliefs as rows with stable identity, supersession history and a provenance
chain to a hash-checked verbatim quote; the wiki importer's verifier checks; `why`; `beliefs verify`; M1."""
