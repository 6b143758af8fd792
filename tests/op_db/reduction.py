"""Op table entries: reduction ops."""

OPS: list = []
