"""Op table entries: indexing ops."""

OPS: list = []
