"""Op table entries: linalg ops."""

OPS: list = []
