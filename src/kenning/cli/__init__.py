"""The ``kenning`` command line."""
