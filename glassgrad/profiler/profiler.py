"""``torch.profiler.profile`` and its schedule (``torch.profiler.profiler``).

A profile records while its schedule says RECORD (every step when there is no schedule): each
recording window is one ``torch.autograd.profiler.profile`` over the window's steps, each step
inside it a ``ProfilerStep#<n>`` event as torch's; the window ends at the step the schedule marks
RECORD_AND_SAVE (or at ``stop()``), which calls ``on_trace_ready(prof)``. ``key_averages()``,
``events()`` and ``export_chrome_trace`` read the last finished window. ``with_stack`` adds the
module call spans torch's Python tracer names (``nn.Module: Linear_0``); ``with_modules`` adds
those and, glassgrad's own, each module's backward span (``nn.Module: Linear_0.backward``).
"""

from __future__ import annotations

import enum
import gzip
import json
import os
import socket
import time

from .._user_warning import warn_user
from ..autograd import profiler as _autograd_profiler
from ..autograd.profiler import ProfilerActivity, record_function


class ProfilerAction(enum.Enum):
    """What a profile does at a step (``torch.profiler.ProfilerAction``)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities() -> set:
    """``{ProfilerActivity.CPU}``: glassgrad runs on the CPU (``torch.profiler.supported_activities``)."""
    return {ProfilerActivity.CPU}


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """``step -> ProfilerAction``: skip ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` and ``active`` recorded steps (the last one RECORD_AND_SAVE), ``repeat`` cycles
    (0: no end) (``torch.profiler.schedule``). AssertionError for a negative count or
    ``active <= 0``."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warn_user("Profiler won't be using warmup, this can skew profiler results")
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _always_record(_step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False):
    """An ``on_trace_ready`` that writes each finished window's Chrome trace to
    ``dir_name/<worker>.<ms>.pt.trace.json[.gz]`` (``torch.profiler.tensorboard_trace_handler``;
    the worker defaults to ``<host>_<pid>``)."""

    def handler(prof) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json" + (".gz" if use_gzip else "")
        path = os.path.join(dir_name, name)
        prof.export_chrome_trace(path)
        if use_gzip:  # export wrote plain JSON under the .gz name
            with open(path, "rb") as f:
                data = f.read()
            with gzip.open(path, "wb") as f:
                f.write(data)

    return handler


class profile:
    """Profile the ops (and, with ``with_stack`` / ``with_modules``, the module calls) run in a
    ``with`` block or between ``start()`` and ``stop()`` (``torch.profiler.profile``).

    ``activities``: ProfilerActivity values; only CPU is recorded (a device activity warns).
    ``schedule``: from ``schedule(...)``, advanced by ``step()``; ``on_trace_ready(prof)`` runs
    when a recording window ends. ``record_shapes``, ``profile_memory``, ``with_stack``,
    ``with_flops`` as torch.autograd.profiler.profile's. Example::

        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            model(x).sum().backward()
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False, with_modules: bool = False,
                 experimental_config=None, execution_trace_observer=None, acc_events: bool = False,
                 use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None) -> None:
        acts = set(activities) if activities else supported_activities()
        if use_cuda:
            acts.add(ProfilerActivity.CUDA)
        if acts - supported_activities():
            names = ", ".join(sorted(a.name for a in acts - supported_activities()))
            warn_user(f"glassgrad profiles the CPU only: the {names} activity records nothing")
        self.activities = acts
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.step_num = 0
        self.current_action = self.schedule(0)
        self.profiler = None  # the autograd profile of the window being (or last) recorded
        self._window = None  # that profile while it records
        self._step_rec = None  # the open ProfilerStep#<n> record_function
        self._metadata: dict = {}
        self._running = False

    # --- recording windows ---------------------------------------------------------------------
    def _open_window(self) -> None:
        self._window = _autograd_profiler.profile(
            record_shapes=self.record_shapes, profile_memory=self.profile_memory,
            with_stack=self.with_stack, with_flops=self.with_flops,
            with_modules=self.with_modules)
        self._window.__enter__()
        self.profiler = self._window

    def _close_window(self, save: bool) -> None:
        self._close_step()
        self._window.__exit__(None, None, None)
        self._window = None
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _open_step(self) -> None:
        if self._window is not None and self.schedule is not _always_record:  # as torch
            self._step_rec = record_function(f"ProfilerStep#{self.step_num}")
            self._step_rec.__enter__()

    def _close_step(self) -> None:
        if self._step_rec is not None:
            self._step_rec.__exit__(None, None, None)
            self._step_rec = None

    def _enter_action(self) -> None:
        if self.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            if self._window is None:
                self._open_window()
            self._open_step()

    def start(self) -> None:
        """Begin profiling at step 0's action (``torch.profiler.profile.start``)."""
        self._running = True
        self._enter_action()

    def stop(self) -> None:
        """End profiling; a window still recording ends and is handed to ``on_trace_ready``."""
        if self._window is not None:
            self._close_window(save=True)
        self._running = False

    def step(self) -> None:
        """Mark the end of a step: the schedule's next action takes effect
        (``torch.profiler.profile.step``)."""
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if self._window is not None:
            if prev == ProfilerAction.RECORD_AND_SAVE or self.current_action not in (
                    ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
                self._close_window(save=prev == ProfilerAction.RECORD_AND_SAVE
                                   or self.schedule is _always_record)
            else:
                self._close_step()
        if self._running:
            self._enter_action()

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        self.stop()
        return False

    # --- results -------------------------------------------------------------------------------
    def _finished(self):
        if self.profiler is None or self.profiler.function_events is None:
            raise AssertionError("glassgrad: the profile has no finished recording window yet "
                                 "(a schedule still in wait/warmup, or inside the window)")
        return self.profiler

    def events(self):
        """The finished window's EventList (``torch.profiler.profile.events``)."""
        return self._finished().function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False):
        """Events averaged by name (and input shapes / stack when asked), for ``.table()``."""
        return self._finished().key_averages(group_by_input_shape, group_by_stack_n,
                                              group_by_overload_name)

    def add_metadata(self, key: str, value: str) -> None:
        """A top-level string entry of the exported trace."""
        self._metadata[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        """A top-level entry of the exported trace, given as JSON text."""
        self._metadata[key] = json.loads(value)

    def export_chrome_trace(self, path: str) -> None:
        """The finished window as Chrome trace JSON, with torch.profiler's top-level keys."""
        # torch writes each of these flags only when it is on
        meta = {k: 1 for k in ("record_shapes", "profile_memory", "with_stack", "with_modules")
                if getattr(self, k)}
        meta.update(host_name=socket.gethostname(), baseTimeNanoseconds=0, traceName=path)
        meta.update(self._metadata)
        self._finished().function_events.export_chrome_trace(path, meta)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """One line per recorded stack, ``frame;frame;... value`` (flame-graph input), from
        ``with_stack`` events (``torch.profiler.profile.export_stacks``)."""
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        with open(path, "w") as f:
            for e in self.events():
                if e.stack:
                    value = int(getattr(e, metric.replace("cuda", "device")))
                    f.write(";".join(reversed(e.stack)) + f";{e.name} {value}\n")
