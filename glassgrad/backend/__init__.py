"""The array backend: the only place that knows devices.

NOTE [Backend]: every array call in glassgrad goes through ``xp`` from here (NumPy on the CPU now).
A CuPy backend would add ``cupy_backend.py`` and pick ``xp`` per tensor device in ``Primitive.apply``.
"""

from .numpy_backend import CPU as CPU_DEVICE, device, is_array, to_array, xp  # noqa: F401
