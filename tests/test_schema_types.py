"""Operator schemas and JIT types: every schema torch registers, parsed by glassgrad from torch's
printed text, gives torch's printed schema, names, types, defaults and alias flags; the type
objects print, compare, subtype and unify as torch's (issue 15, lane surface)."""

from __future__ import annotations

import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)


def _facts(s):
    args = [(a.name, str(a.type), repr(a.default_value), a.has_default_value(), a.kwarg_only,
             a.N, a.is_write, a.is_out) for a in s.arguments]
    rets = [(r.name, str(r.type), r.is_write) for r in s.returns]
    return str(s), s.name, s.overload_name, args, rets, s.is_mutable


def test_every_registered_schema_round_trips_as_torch():
    schemas = torch._C._jit_get_all_schemas()
    assert len(schemas) > 1000
    readable = []
    for s in schemas:
        try:  # an extension registered in this process (torch.distributed's PyObject ops)
            torch._C.parse_schema(str(s))  # may print what torch's own parser refuses
        except RuntimeError:
            with pytest.raises(RuntimeError, match="expected a type"):
                glassgrad.parse_schema(str(s))
            continue
        readable.append(s)
    assert len(readable) > 1000
    wrong = [str(s) for s in readable if _facts(glassgrad.parse_schema(str(s))) != _facts(s)]
    assert not wrong, wrong[:5]


WRITTEN = [  # as people write them: non-canonical defaults, spacing, enum names, quotes
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::f(int r=Mean, float e=1e-05, str s='a\\'b', float z=1, float? w=1, int[2] k=1) -> ()",
    "aten::g(Tensor(a!) self, Tensor(b -> *) y, Tensor(a!)[] z) -> (Tensor(a!) out, Tensor)",
    "aten::h(Scalar v=2.5, Scalar u=-3, bool b=True, int[] e=[1,2], ScalarType? t=None) -> int",
    "aten::k(Dict(str, t) d, (int, float) p, Future(t) f, SymInt[] s, Generator? g=None) -> t",
    "prim::Print(...) -> ()",
]


@pytest.mark.parametrize("text", WRITTEN)
def test_written_schemas_print_as_torch(text):
    theirs, ours = (_facts(lib.parse_schema(text)) for lib in LIBS)
    assert ours == theirs


@pytest.mark.parametrize("text", ["aten::f(Tensor x", "aten::f(Foo? x) -> Tensor",
                                  "aten::f(int x=abc) -> int", "f(int x) ->",
                                  "aten::f(int a=1, int b) -> int"])
def test_bad_schemas_raise_runtime_error(text):
    for lib in LIBS:
        with pytest.raises(RuntimeError):
            lib.parse_schema(text)


def _types(lib):
    i, f, s, n = lib.IntType.get(), lib.FloatType.get(), lib.StringType.get(), lib.NoneType.get()
    num, ten, a = lib.NumberType.get(), lib.TensorType.get(), lib.AnyType.get()
    return [i, f, lib.BoolType.get(), s, n, lib.ComplexType.get(), num, lib.DeviceObjType.get(),
            a, ten, lib.StreamObjType.get(), lib.ListType(i), lib.OptionalType(f),
            lib.TupleType([i, s]), lib.DictType(s, ten), lib.UnionType([i, s]), lib.FutureType(i),
            lib.AwaitType(i), lib.RRefType(i), lib.ListType.ofTensors(), lib.OptionalType.ofTensor(),
            lib.ListType.ofInts()]


def _type_facts(lib):
    return [(str(t), t.annotation_str, t.kind(), [str(c) for c in t.containedTypes()])
            for t in _types(lib)]


def _subtypes(lib):
    i, f, b, n = lib.IntType.get(), lib.FloatType.get(), lib.BoolType.get(), lib.NoneType.get()
    c, num, a, s = lib.ComplexType.get(), lib.NumberType.get(), lib.AnyType.get(), \
        lib.StringType.get()
    opt = lib.OptionalType
    pairs = [(i, num), (f, num), (c, num), (b, num), (n, opt(i)), (i, opt(i)), (opt(i), opt(num)),
             (lib.ListType(i), lib.ListType(num)), (lib.TupleType([i]), lib.TupleType([num])),
             (i, a), (i, lib.UnionType([i, s])), (lib.UnionType([i, s]), a),
             (lib.UnionType([i, f]), num), (lib.TensorType.get(), a), (n, a), (opt(i), i)]
    return [x.isSubtypeOf(y) for x, y in pairs]


def _unify(lib):
    i, n, num = lib.IntType.get(), lib.NoneType.get(), lib.NumberType.get()
    out = []
    for types in ([i, n], [n, i], [i, num], [lib.OptionalType(i), i], [lib.ListType(i)] * 2,
                  [i, lib.FloatType.get()], []):
        try:
            out.append(str(lib.unify_type_list(types)))
        except RuntimeError as exc:
            out.append(str(exc).split("\n")[0])
    return out


def _accessors(lib):
    i, s = lib.IntType.get(), lib.StringType.get()
    return (lib.ListType(i) == lib.ListType(i), lib.ListType(i) == lib.ListType(lib.FloatType.get()),
            i == lib.IntType.get(), str(lib.ListType(i).getElementType()),
            str(lib.DictType(s, i).getKeyType()), str(lib.DictType(s, i).getValueType()),
            [str(e) for e in lib.TupleType([i, s]).elements()], i.str())


@pytest.mark.parametrize("probe", [_type_facts, _subtypes, _unify, _accessors])
def test_types_match_torch(probe):
    theirs, ours = (probe(lib) for lib in LIBS)
    assert ours == theirs


def test_schema_argument_types_are_type_objects():
    s = glassgrad.parse_schema("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, "
                               "*, ScalarType? dtype=None) -> Tensor")
    assert s.arguments[1].type == glassgrad.OptionalType(glassgrad.ListType.ofInts())
    assert isinstance(s.arguments[0].type, glassgrad.TensorType)
    assert s.arguments[1].N == 1 and s.arguments[3].kwarg_only
