"""Op table entries: convolution, pooling and resampling (``nn.functional.conv2d`` ...).

Samples are small (gradcheck differentiates every element of the two smallest); the configs
cover stride, padding (int, 'same', asymmetric kernels), dilation, groups, bias, unbatched and
non-contiguous inputs. The wider sweep against torch lives in tests/test_nn_conv.py.
"""

from . import OpInfo, Sample, arr


def _conv2d_samples(rng):
    return [
        Sample((arr(rng, 1, 2, 4, 4), arr(rng, 2, 2, 2, 2), arr(rng, 2)), desc="tiny bias"),
        Sample((arr(rng, 1, 2, 3), arr(rng, 2, 1, 2, 2)), {"padding": 1}, desc="unbatched pad"),
        Sample((arr(rng, 2, 2, 5, 6), arr(rng, 3, 2, 3, 3), arr(rng, 3)),
               {"stride": 2, "padding": 1}, desc="stride 2 pad 1"),
        Sample((arr(rng, 2, 2, 5, 5), arr(rng, 3, 2, 2, 3)), {"padding": "same"},
               desc="same even kernel"),
        Sample((arr(rng, 1, 2, 7, 6), arr(rng, 2, 2, 3, 2)), {"dilation": 2, "padding": (2, 1)},
               desc="dilation 2"),
        Sample((arr(rng, 2, 4, 5, 5), arr(rng, 6, 2, 3, 3), arr(rng, 6)),
               {"groups": 2, "stride": (2, 1)}, desc="groups 2"),
        Sample((arr(rng, 2, 6, 5, 3).transpose(0, 3, 1, 2), arr(rng, 2, 3, 2, 2)),
               desc="non-contiguous"),
    ]


def _conv1d_samples(rng):
    return [
        Sample((arr(rng, 1, 2, 5), arr(rng, 2, 2, 2), arr(rng, 2)), desc="tiny"),
        Sample((arr(rng, 2, 4, 9), arr(rng, 4, 2, 3)), {"stride": 2, "padding": 1, "groups": 2},
               desc="stride groups"),
        Sample((arr(rng, 2, 8), arr(rng, 3, 2, 3)), {"padding": "same", "dilation": 2},
               desc="unbatched same dilated"),
    ]


def _conv_transpose2d_samples(rng):
    return [
        Sample((arr(rng, 1, 2, 3, 3), arr(rng, 2, 1, 2, 2), arr(rng, 1)), desc="tiny"),
        Sample((arr(rng, 1, 2, 3, 2), arr(rng, 2, 2, 3, 3)),
               {"stride": 2, "padding": 1, "output_padding": 1}, desc="stride output_padding"),
        Sample((arr(rng, 2, 4, 3, 4), arr(rng, 4, 1, 3, 2), arr(rng, 2)),
               {"stride": (2, 3), "groups": 2, "dilation": (1, 2)}, desc="groups dilation"),
        Sample((arr(rng, 1, 2, 3, 3), arr(rng, 2, 2, 2, 2)), {"dilation": 2, "output_padding": 1},
               desc="stride 1 output_padding"),
    ]


def _pool_input(rng):
    return [
        Sample((arr(rng, 1, 2, 4, 4),), desc="tiny"),
        Sample((arr(rng, 2, 5, 5),), desc="unbatched odd"),
        Sample((arr(rng, 2, 3, 7, 6),), desc="batched"),
        Sample((arr(rng, 2, 6, 5, 3).transpose(0, 3, 1, 2),), desc="non-contiguous"),
    ]


def _with_kwargs(samples_fn, kwargs_list):
    def make(rng):
        out = []
        for kwargs in kwargs_list:
            for s in samples_fn(rng):
                out.append(Sample(s.args, dict(kwargs), desc=f"{s.desc} {kwargs}"))
        return out

    return make


_MAX_POOL = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": (2, 3), "stride": 1, "dilation": (2, 1), "ceil_mode": True},
]
_AVG_POOL = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
    {"kernel_size": (3, 2), "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": 2, "stride": 1, "divisor_override": 3},
]


def _fold_samples(rng):
    return [
        Sample((arr(rng, 1, 4, 4),), {"output_size": (3, 3), "kernel_size": 2}, desc="tiny"),
        Sample((arr(rng, 2, 12, 9),), {"output_size": (4, 5), "kernel_size": (2, 3),
                                       "stride": 2, "padding": 1}, desc="stride pad"),
    ]


OPS = [
    OpInfo("conv2d", lambda m, *a, **k: m.nn.functional.conv2d(*a, **k), _conv2d_samples),
    OpInfo("conv1d", lambda m, *a, **k: m.nn.functional.conv1d(*a, **k), _conv1d_samples),
    OpInfo("conv_transpose2d", lambda m, *a, **k: m.nn.functional.conv_transpose2d(*a, **k),
           _conv_transpose2d_samples),
    OpInfo("max_pool2d", lambda m, x, **k: m.nn.functional.max_pool2d(x, **k),
           _with_kwargs(_pool_input, _MAX_POOL)),
    OpInfo("avg_pool2d", lambda m, x, **k: m.nn.functional.avg_pool2d(x, **k),
           _with_kwargs(_pool_input, _AVG_POOL)),
    OpInfo("adaptive_avg_pool2d", lambda m, x, **k: m.nn.functional.adaptive_avg_pool2d(x, **k),
           _with_kwargs(_pool_input, [{"output_size": 1}, {"output_size": (3, 2)},
                                      {"output_size": (None, 3)}])),
    OpInfo("adaptive_max_pool2d", lambda m, x, **k: m.nn.functional.adaptive_max_pool2d(x, **k),
           _with_kwargs(_pool_input, [{"output_size": 1}, {"output_size": (3, 2)}])),
    OpInfo("max_pool1d", lambda m, x, **k: m.nn.functional.max_pool1d(x, **k),
           lambda rng: [Sample((arr(rng, 2, 2, 7),), {"kernel_size": 3, "stride": 2,
                                                      "padding": 1})]),
    OpInfo("interpolate_nearest", lambda m, x, **k: m.nn.functional.interpolate(x, **k),
           lambda rng: [Sample((arr(rng, 1, 2, 2, 3),), {"scale_factor": 2}, desc="x2"),
                        Sample((arr(rng, 2, 3, 3, 4),), {"size": (5, 3)}, desc="size"),
                        Sample((arr(rng, 2, 2, 5),), {"scale_factor": 1.5}, desc="1-D x1.5")]),
    OpInfo("unfold", lambda m, x, **k: m.nn.functional.unfold(x, **k),
           _with_kwargs(_pool_input, [{"kernel_size": 2}, {"kernel_size": (2, 3), "padding": 1,
                                                           "stride": 2, "dilation": (1, 2)}])),
    OpInfo("fold", lambda m, x, **k: m.nn.functional.fold(x, **k), _fold_samples),
    OpInfo("pixel_shuffle", lambda m, x, r: m.nn.functional.pixel_shuffle(x, r),
           lambda rng: [Sample((arr(rng, 1, 4, 2, 3), 2)), Sample((arr(rng, 2, 1, 9, 2, 1), 3),
                                                                desc="5-D x3")]),
    OpInfo("pixel_unshuffle", lambda m, x, r: m.nn.functional.pixel_unshuffle(x, r),
           lambda rng: [Sample((arr(rng, 1, 2, 4, 2), 2)), Sample((arr(rng, 3, 6, 3), 3),
                                                                desc="unbatched x3")]),
    OpInfo("channel_shuffle", lambda m, x, g: m.nn.functional.channel_shuffle(x, g),
           lambda rng: [Sample((arr(rng, 2, 6, 2), 3)), Sample((arr(rng, 1, 4, 2, 2), 2),
                                                             desc="4-D")]),
]
