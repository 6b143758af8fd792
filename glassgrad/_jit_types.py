"""The JIT's type objects (``torch.Type`` and its kinds: ``IntType.get()``, ``ListType(T)``,
``OptionalType(T)``, ...), as operator schemas use them (glassgrad/_schema.py): printing
(``str``, ``annotation_str``), structural equality, ``isSubtypeOf``, ``containedTypes`` and
``unify_type_list``. glassgrad compiles nothing, so these describe signatures only.
"""

from __future__ import annotations

__all__ = [
    "AnyType", "AwaitType", "BoolType", "ClassType", "ComplexType", "DeviceObjType", "DictType",
    "FloatType", "FutureType", "IntType", "ListType", "NoneType", "NumberType", "OptionalType",
    "RRefType", "StreamObjType", "StringType", "TensorType", "TupleType", "Type", "UnionType",
    "unify_type_list",
]


class Type:
    """A JIT type (``torch.Type``): compare with ``==``, print with ``str``."""

    _name = ""

    def __init__(self, *contained):
        self._contained = tuple(contained)

    def kind(self) -> str:
        return type(self).__name__

    def str(self) -> str:
        return self.__str__()

    def __str__(self) -> str:
        return self._name

    __repr__ = __str__

    @property
    def annotation_str(self) -> str:
        return self.__str__()

    def containedTypes(self) -> list:
        return list(self._contained)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def _key(self):
        return self._contained

    def isSubtypeOf(self, other) -> bool:
        """True when a value of this type may stand where ``other`` is asked for."""
        if self == other or isinstance(other, AnyType):
            return True
        if isinstance(other, OptionalType):
            return isinstance(self, NoneType) or self.isSubtypeOf(other._contained[0])
        if isinstance(other, UnionType):
            return any(self.isSubtypeOf(t) for t in other._contained)
        return False

    @classmethod
    def get(cls):
        """The type's one instance (``torch.IntType.get()``)."""
        inst = cls.__dict__.get("_instance")
        if inst is None:
            inst = cls()
            cls._instance = inst
        return inst


def _leaf(name: str, printed: str, doc: str) -> type:
    return type(name, (Type,), {"_name": printed, "__doc__": doc, "__module__": __name__})


TensorType = _leaf("TensorType", "Tensor", "Tensors (``torch.TensorType``).")
IntType = _leaf("IntType", "int", "Python ints (``torch.IntType``).")
FloatType = _leaf("FloatType", "float", "Python floats (``torch.FloatType``).")
BoolType = _leaf("BoolType", "bool", "Python bools (``torch.BoolType``).")
StringType = _leaf("StringType", "str", "Python strs (``torch.StringType``).")
NoneType = _leaf("NoneType", "NoneType", "None (``torch.NoneType``).")
ComplexType = _leaf("ComplexType", "complex", "Python complexes (``torch.ComplexType``).")
NumberType = _leaf("NumberType", "number", "int, float or complex: a Scalar (``torch.NumberType``).")
DeviceObjType = _leaf("DeviceObjType", "Device", "Devices (``torch.DeviceObjType``).")
StreamObjType = _leaf("StreamObjType", "Stream", "Streams (``torch.StreamObjType``).")
AnyType = _leaf("AnyType", "Any", "Any value (``torch.AnyType``).")
GeneratorType = _leaf("GeneratorType", "Generator", "Random generators.")
StorageType = _leaf("StorageType", "Storage", "Storages.")
SymIntType = _leaf("SymIntType", "SymInt", "Symbolic ints (the real type of a SymInt argument).")
QSchemeType = _leaf("QSchemeType", "QScheme", "Quantization schemes.")
AnyEnumType = _leaf("AnyEnumType", "AnyEnumType", "Any enum.")
AnyClassType = _leaf("AnyClassType", "AnyClassType", "Any class.")

_NUMBERS = (IntType, FloatType, ComplexType)
for _cls in _NUMBERS:
    _cls.isSubtypeOf = lambda self, other: (isinstance(other, NumberType)
                                            or Type.isSubtypeOf(self, other))


class _Named(Type):
    """A type known by a name: a type variable (``t``) or a class (``__torch__.a.B``)."""

    def __init__(self, name: str):
        super().__init__()
        self._name = name

    def _key(self):
        return self._name


class VarType(_Named):
    """A type variable of a schema (``t``, ``tVal``)."""


class ClassType(_Named):
    """A TorchScript class, by qualified name (``torch.ClassType``)."""

    def qualified_name(self) -> str:
        return self._name


def _one(template: str):
    class _Of(Type):
        def __init__(self, t):
            super().__init__(t)

        def getElementType(self):
            return self._contained[0]

        def __str__(self) -> str:
            return template.format(self._contained[0])

    return _Of


class ListType(_one("List[{}]")):
    """Lists of one element type (``torch.ListType(IntType.get())``, ``ListType.ofInts()``)."""

    @classmethod
    def ofInts(cls):
        return cls(IntType.get())

    @classmethod
    def ofFloats(cls):
        return cls(FloatType.get())

    @classmethod
    def ofBools(cls):
        return cls(BoolType.get())

    @classmethod
    def ofStrings(cls):
        return cls(StringType.get())

    @classmethod
    def ofTensors(cls):
        return cls(TensorType.get())


class OptionalType(_one("Optional[{}]")):
    """``T`` or None (``torch.OptionalType(T)``)."""

    @classmethod
    def ofTensor(cls):
        return cls(TensorType.get())

    def isSubtypeOf(self, other) -> bool:
        if isinstance(other, OptionalType):
            return self._contained[0].isSubtypeOf(other._contained[0])
        return Type.isSubtypeOf(self, other)


class FutureType(_one("Future[{}]")):
    """A Future of ``T`` (``torch.FutureType``)."""


class RRefType(_one("RRef[{}]")):
    """A remote reference to ``T`` (``torch.RRefType``)."""


class AwaitType(_one("Await[{}]")):
    """An awaitable ``T`` (``torch.AwaitType``)."""


class TupleType(Type):
    """A tuple of given element types (``torch.TupleType([IntType.get(), FloatType.get()])``)."""

    def __init__(self, elements):
        super().__init__(*elements)

    def elements(self) -> list:
        return list(self._contained)

    def __str__(self) -> str:
        return f"Tuple[{', '.join(map(str, self._contained))}]"

    def isSubtypeOf(self, other) -> bool:
        if isinstance(other, TupleType) and len(other._contained) == len(self._contained):
            return all(a.isSubtypeOf(b) for a, b in zip(self._contained, other._contained))
        return Type.isSubtypeOf(self, other)


class DictType(Type):
    """A dict from one key type to one value type (``torch.DictType(key, value)``)."""

    def __init__(self, key, value):
        super().__init__(key, value)

    def getKeyType(self):
        return self._contained[0]

    def getValueType(self):
        return self._contained[1]

    def __str__(self) -> str:
        return f"Dict[{self._contained[0]}, {self._contained[1]}]"


class UnionType(Type):
    """One of several types (``torch.UnionType([IntType.get(), StringType.get()])``)."""

    def __init__(self, types):
        super().__init__(*types)

    def __str__(self) -> str:
        return f"Union[{', '.join(map(str, self._contained))}]"

    def isSubtypeOf(self, other) -> bool:
        if self == other or isinstance(other, AnyType):
            return True
        return all(t.isSubtypeOf(other) for t in self._contained)


def _unify(a, b):
    if a.isSubtypeOf(b):
        return b
    if b.isSubtypeOf(a):
        return a
    if isinstance(a, NoneType):
        return OptionalType(b)
    if isinstance(b, NoneType):
        return OptionalType(a)
    return None


def unify_type_list(types) -> Type:
    """The one type that every type in ``types`` fits (``torch.unify_type_list``): a common
    supertype, ``Optional[T]`` for T and None; RuntimeError when there is none."""
    types = list(types)
    if not types:
        raise RuntimeError("Cannot get unified type from empty list")
    out = types[0]
    for i, t in enumerate(types[1:], 1):
        joined = _unify(out, t)
        if joined is None:
            raise RuntimeError(f"Could not unify type list since element {i} of type {t} did "
                               f"not match the types before it ({out})")
        out = joined
    return out
