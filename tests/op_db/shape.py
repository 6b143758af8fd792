"""Op table entries: shape ops."""

OPS: list = []
