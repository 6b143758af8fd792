"""``glassgrad._dynamo.exc``: the compiler's exception types (``torch._dynamo.exc``)."""


class TorchDynamoException(RuntimeError):
    """Base of the compiler's errors (``torch._dynamo.exc.TorchDynamoException``)."""


class InvalidBackend(TorchDynamoException):
    """``torch.compile(backend=<unknown name>)`` (``torch._dynamo.exc.InvalidBackend``)."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available "
            "backends."
        )
