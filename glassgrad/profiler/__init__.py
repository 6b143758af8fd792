"""``torch.profiler``: ``profile`` with activities, a ``schedule`` of steps and ``on_trace_ready``,
``record_function``, ``tensorboard_trace_handler``, on glassgrad's op profiler
(glassgrad/autograd/profiler.py, NOTE [Profiling]). CPU only."""

from __future__ import annotations

from ..autograd.profiler import ProfilerActivity, record_function  # noqa: F401
from ..autograd.profiler_util import EventList, FunctionEvent  # noqa: F401
from .profiler import (  # noqa: F401
    ProfilerAction,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]
