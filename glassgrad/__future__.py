"""``glassgrad.__future__`` (``torch.__future__``): process-wide switches for how
``nn.Module`` conversions (``.to()``, ``.double()``, ``.to_empty()``, ...) treat parameters.

- ``set_overwrite_module_params_on_conversion(True)``: a conversion puts a NEW ``Parameter``
  object (and a new ``.grad``) in the module, as torch does; references held elsewhere (an
  optimizer built before the conversion) keep the old tensor.
- ``set_swap_module_params_on_conversion(True)``: takes precedence; torch swaps the new values
  into the same Python object. glassgrad's conversions already keep the object and replace its
  array, so this is glassgrad's default behaviour made explicit.

Both default to False.
"""

_overwrite_module_params_on_conversion: bool = False
_swap_module_params_on_conversion: bool = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Whether module conversions assign new Parameter objects instead of changing the existing
    ones in place (``torch.__future__.set_overwrite_module_params_on_conversion``)."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """The value set by ``set_overwrite_module_params_on_conversion`` (default False)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Whether module conversions swap the new values into the existing Parameter objects
    (``torch.__future__.set_swap_module_params_on_conversion``); takes precedence over the
    overwrite switch."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """The value set by ``set_swap_module_params_on_conversion`` (default False)."""
    return _swap_module_params_on_conversion
