"""One module per page of the UI."""
