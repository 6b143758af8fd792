"""Operator schemas (``torch.parse_schema``, ``torch.FunctionSchema``, ``torch.Argument``): the
text form ``ns::name.overload(Tensor(a!) self, int[2] k=1, *, Scalar alpha=1) -> Tensor(a!)``
parsed into arguments and returns with JIT types (glassgrad/_jit_types.py), defaults as Python
values and alias annotations, and printed back as torch prints it.
"""

from __future__ import annotations

import re

from . import _jit_types as T

__all__ = ["Argument", "FunctionSchema", "parse_schema"]

# declared base type -> (type, real type): torch types a SymInt argument int, really SymInt
_BASE = {
    "Tensor": T.TensorType, "int": T.IntType, "float": T.FloatType, "bool": T.BoolType,
    "str": T.StringType, "complex": T.ComplexType, "Scalar": T.NumberType,
    "ScalarType": T.IntType, "Layout": T.IntType, "MemoryFormat": T.IntType,
    "SymFloat": T.FloatType, "SymBool": T.BoolType, "Device": T.DeviceObjType,
    "DeviceIndex": T.IntType, "Generator": T.GeneratorType, "Storage": T.StorageType,
    "Stream": T.StreamObjType, "Any": T.AnyType, "NoneType": T.NoneType, "Dimname": T.StringType,
    "AnyEnumType": T.AnyEnumType, "AnyClassType": T.AnyClassType, "QScheme": T.QSchemeType,
}
_TOKEN = re.compile(r"\s*(->|\.\.\.|::|[A-Za-z_][\w.]*|-?[\d.]+(?:[eE][-+]?\d+)?|\"(?:\\.|[^\"\\])*\""
                    r"|'(?:\\.|[^'\\])*'|\S)")
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\f": "\\f", "\v": "\\v", '"': '\\"', "'": "\\'",
            "\\": "\\\\"}
_REDUCTIONS = {"Mean": 1, "Sum": 2}


class AliasInfo:
    """An alias annotation (``Tensor(a!)``): ``before_set``/``after_set`` of alias names and
    ``is_write``."""

    def __init__(self, before, after, is_write):
        self.before_set, self.after_set, self.is_write = set(before), set(after), is_write

    def __str__(self) -> str:
        before = "|".join(sorted(self.before_set))
        after = "|".join(sorted(self.after_set))
        arrow = "" if self.before_set == self.after_set else f" -> {after}"
        return f"({before}{'!' if self.is_write else ''}{arrow})"


class Argument:
    """One argument or return of a schema (``torch.Argument``): ``name``, ``type``, ``real_type``,
    ``N`` (a fixed list length), ``default_value``, ``kwarg_only``, ``alias_info``."""

    def __init__(self, name, type, real_type, text, N=None, default=None, has_default=False,
                 default_text=None, kwarg_only=False, alias_info=None, is_out=False):
        self.name, self.type, self.real_type, self.N = name, type, real_type, N
        self.default_value, self._has_default, self._default_text = default, has_default, \
            default_text
        self.kwarg_only, self.alias_info, self.is_out, self._text = kwarg_only, alias_info, \
            is_out, text

    def has_default_value(self) -> bool:
        return self._has_default

    @property
    def is_write(self) -> bool:
        return self.alias_info is not None and self.alias_info.is_write

    def __str__(self) -> str:
        out = self._text
        if self.name:
            out += f" {self.name}"
        if self._has_default:
            out += f"={self._default_text}"
        return out


class FunctionSchema:
    """A parsed operator signature (``torch.FunctionSchema``): ``name``, ``overload_name``,
    ``arguments``, ``returns``, ``is_mutable``; ``str()`` prints it as torch does."""

    def __init__(self, name, overload_name, arguments, returns, is_vararg=False,
                 is_varret=False):
        self.name, self.overload_name = name, overload_name
        self.arguments, self.returns = arguments, returns
        self.is_vararg, self.is_varret = is_vararg, is_varret

    @property
    def is_mutable(self) -> bool:
        return any(a.is_write for a in self.arguments)

    def __str__(self) -> str:
        parts, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        if self.is_vararg:
            parts.append("...")
        rets = [str(r) for r in self.returns] + (["..."] if self.is_varret else [])
        # NOTE: a lone tuple-typed return is parenthesised, or it would read as a return list
        single = len(rets) == 1 and not rets[0].startswith("(")
        ret = rets[0] if single else f"({', '.join(rets)})"
        name = self.name + (f".{self.overload_name}" if self.overload_name else "")
        return f"{name}({', '.join(parts)}) -> {ret}"

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, FunctionSchema) and str(other) == str(self)

    __hash__ = object.__hash__


class _Parser:
    def __init__(self, text):
        self.text = text
        self.tokens = _TOKEN.findall(text)
        self.i = 0

    def error(self, what):
        raise RuntimeError(f"{what} here:\n{self.text}\nglassgrad: parse_schema reads "
                           "'ns::name.overload(type name=default, ...) -> returns'.")

    def peek(self, k=0):
        return self.tokens[self.i + k] if self.i + k < len(self.tokens) else ""

    def take(self, want=None):
        tok = self.peek()
        if want is not None and tok != want:
            self.error(f"expected '{want}' but found '{tok or 'eof'}'")
        self.i += 1
        return tok

    def schema(self) -> FunctionSchema:
        name = self.take()
        if self.peek() == "::":
            name += self.take() + self.take()
        name, _, overload = name.partition(".")
        args, vararg = self.arg_list(kwarg=True)
        self.take("->")
        if self.peek() == "..." and self.i == len(self.tokens) - 1:
            self.take()
            rets, varret = [], True
        elif self.peek() == "(" and not self.tuple_type_ahead():
            rets, varret = self.arg_list(kwarg=False, returns=True)
        else:
            rets, varret = [self.argument(False, returns=True)], False
        if self.peek():
            self.error(f"unexpected '{self.peek()}'")
        out = FunctionSchema(name, overload, args, rets, vararg, varret)
        seen_default = False
        for a in args:
            if seen_default and not a.kwarg_only and not a.has_default_value():
                raise RuntimeError(f"Non-default positional argument follows default argument. "
                                   f"Parameter {a.name} in {out}")
            seen_default = seen_default or a.has_default_value()
        return out

    def tuple_type_ahead(self) -> bool:
        """True when the '(' here opens a tuple type with a suffix, ``(str, t)[]``, rather than
        a list of returns."""
        depth, j = 0, self.i
        while j < len(self.tokens):
            depth += {"(": 1, ")": -1}.get(self.tokens[j], 0)
            if depth == 0:
                break
            j += 1
        return j + 1 < len(self.tokens) and self.tokens[j + 1] in ("[", "?")

    def arg_list(self, kwarg, returns=False):
        self.take("(")
        out, kw, vararg = [], False, False
        while self.peek() != ")":
            if self.peek() == "*":
                self.take()
                kw = True
            elif self.peek() == "...":
                self.take()
                vararg = True
            else:
                out.append(self.argument(kw, returns))
            if self.peek() == ",":
                self.take()
        self.take(")")
        return out, vararg

    def argument(self, kwarg_only, returns=False) -> Argument:
        start = self.i
        jit, real, n = self.type_()
        alias = self.alias() if self.peek() == "(" else None
        while self.peek() in ("[", "?"):  # Tensor(a!)[]: the alias sits on the element
            jit, real, n = self.suffix(jit, real, n)
        text = "".join(_spaced(self.tokens[start:self.i]))
        name = ""
        if re.match(r"[A-Za-z_]", self.peek()):
            name = self.take()
        default, has, dtext = None, False, None
        if self.peek() == "=":
            self.take()
            default, dtext = self.default(jit, n)
            has = True
        return Argument(name, jit, real, text, n, default, has, dtext, kwarg_only, alias,
                        is_out=kwarg_only and alias is not None and alias.is_write)

    def suffix(self, jit, real, n):
        if self.take() == "?":
            return T.OptionalType(jit), T.OptionalType(real), n
        if self.peek() != "]":
            n = int(self.take())
        self.take("]")
        return T.ListType(jit), T.ListType(real), n

    def type_(self):
        tok = self.take()
        if tok == "(":  # a tuple type
            elems = []
            while self.peek() != ")":
                elems.append(self.type_()[0])
                if self.peek() == ",":
                    self.take()
            self.take(")")
            jit = real = T.TupleType(elems)
        elif tok in ("Dict", "Future", "RRef", "Await") and self.peek() == "(":
            self.take("(")
            inner = [self.type_()[0]]
            while self.peek() == ",":
                self.take()
                inner.append(self.type_()[0])
            self.take(")")
            cls = {"Dict": T.DictType, "Future": T.FutureType, "RRef": T.RRefType,
                   "Await": T.AwaitType}[tok]
            jit = real = cls(*inner)
        elif tok == "SymInt":
            jit, real = T.IntType.get(), T.SymIntType.get()
        elif tok in _BASE:
            jit = real = _BASE[tok].get()
        elif tok.startswith("__torch__"):
            jit = real = T.ClassType(tok)
        elif re.fullmatch(r"t\w*", tok):  # a type variable: t, t1, tVal
            jit = real = T.VarType(tok)
        else:
            self.error(f"expected a type but found '{tok}'")
        n = None
        while self.peek() in ("[", "?"):
            jit, real, n = self.suffix(jit, real, n)
        return jit, real, n

    def alias(self) -> AliasInfo:
        self.take("(")
        before, after, write = [self.take()], None, False
        while self.peek() == "|":
            self.take()
            before.append(self.take())
        if self.peek() == "!":
            self.take()
            write = True
        if self.peek() == "->":
            self.take()
            after = [self.take()]
            while self.peek() == "|":
                self.take()
                after.append(self.take())
        self.take(")")
        return AliasInfo(before, before if after is None else after, write)

    def default(self, jit, n):
        if self.peek() == "[":
            self.take()
            vals = []
            while self.peek() != "]":
                vals.append(self.literal(_element(jit))[0])
                if self.peek() == ",":
                    self.take()
            self.take("]")
            return vals, f"[{', '.join(_print(v) for v in vals)}]"
        value, text = self.literal(_element(jit) if isinstance(_strip(jit), T.ListType) else jit)
        if isinstance(_strip(jit), T.ListType) and value is not None:
            return [value] * (n or 1), text  # int[2] k=1: one value for every element
        return value, text

    def literal(self, jit):
        tok = self.take()
        if tok in ("True", "False"):
            value = tok == "True"
        elif tok == "None":
            value = None
        elif tok[0] in "\"'":
            value = _unescape(tok[1:-1])
        elif tok in _REDUCTIONS:
            value = _REDUCTIONS[tok]
        elif re.fullmatch(r"-?\d+", tok):
            # NOTE: torch makes an int literal a float for `float`, not for `float?`
            value = float(tok) if isinstance(jit, T.FloatType) else int(tok)
        elif re.fullmatch(r"-?[\d.]+(?:[eE][-+]?\d+)?", tok):
            value = float(tok)
        else:
            self.error(f"expected number but found '{tok}'")
        return value, _print(value)


def _spaced(tokens):
    for tok in tokens:
        yield {",": ", ", "->": " -> "}.get(tok, tok)


def _strip(jit):
    return jit._contained[0] if isinstance(jit, T.OptionalType) else jit


def _element(jit):
    base = _strip(jit)
    return base._contained[0] if isinstance(base, T.ListType) else base


def _unescape(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "f": "\f", "v": "\v"}.get(
        m.group(1), m.group(1)), body)


def _print(value) -> str:
    """A default as torch's schema printer writes it (c10's IValue printing)."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        if value == int(value) and abs(value) < 1e10:
            return f"{int(value)}."
        return "%.17g" % value
    if isinstance(value, str):
        return '"' + "".join(_ESCAPES.get(c, c) for c in value) + '"'
    if isinstance(value, list):
        return f"[{', '.join(_print(v) for v in value)}]"
    return str(value)


def parse_schema(schema: str) -> FunctionSchema:
    """Parse an operator schema string (``torch.parse_schema``); RuntimeError naming what was
    expected where the text does not fit."""
    return _Parser(schema).schema()
