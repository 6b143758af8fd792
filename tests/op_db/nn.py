"""Op table entries: nn ops."""

OPS: list = []
