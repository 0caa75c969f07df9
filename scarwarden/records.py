"""Record classes: what Scarwarden uses of :mod:`dataclasses`, without its start-up cost.

``@dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__hash__``, ``__setattr__``, ``__delattr__``) as source and compiles it with ``exec``:
five or six compilations per class, and ``import dataclasses`` imports :mod:`inspect`
(and ``ast``, ``dis``, ``tokenize``). A cold ``scarwarden recall`` made 35 such classes:
~31 ms of a ~115 ms process (issue 30; docs/architecture.md, "Start-up"). ``@record``
gives the same methods as closures over the field names, built without compiling.

Supported, with dataclasses' semantics: ``@record`` and ``@record(frozen=True)``;
fields from the class's own annotations in order (``ClassVar`` skipped), after those of
a record it subclasses; defaults as class attributes or :func:`field` (``default``,
``default_factory``, ``repr``, ``compare``); ``__post_init__``; :func:`fields` and
:func:`replace`; ``__match_args__``. Not supported (unused): ``init=False`` fields,
``kw_only``, ``InitVar``, ``order``, ``slots``, a ``repr`` guarded against recursion.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar, overload

    from typing_extensions import dataclass_transform

    _T = TypeVar("_T")
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda function: function


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Any = _Missing()


_set = object.__setattr__  # past a frozen record's own __setattr__, as dataclasses do


class FrozenInstanceError(AttributeError):
    """Assigning to (or deleting) a field of a frozen record, as dataclasses' error."""


class Field:
    """One field of a record: its name, its default or default factory, and whether
    it shows in ``repr`` and counts in ``==`` (and ``hash``)."""

    __slots__ = ("name", "default", "default_factory", "repr", "compare")

    def __init__(self, default: Any, default_factory: Any, repr: bool, compare: bool) -> None:
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare

    def __repr__(self) -> str:
        return (
            f"Field(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r})"
        )


def field(
    *, default: Any = _MISSING, default_factory: Any = _MISSING, repr: bool = True, compare: bool = True
) -> Any:
    """A field with options, as :func:`dataclasses.field` (what records use of it)."""
    return Field(default, default_factory, repr, compare)


if TYPE_CHECKING:

    @overload
    def record(cls: type[_T], /) -> type[_T]: ...
    @overload
    def record(*, frozen: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(field,))
def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    """Make ``cls`` a record: ``@record`` or ``@record(frozen=True)`` (module doc)."""
    if cls is None:
        return lambda c: _build(c, frozen)
    return _build(cls, frozen)


def fields(obj_or_cls: Any) -> tuple[Field, ...]:
    """The record's fields, in order (as :func:`dataclasses.fields`)."""
    try:
        found: tuple[Field, ...] = obj_or_cls.__record_fields__
    except AttributeError:
        raise TypeError("must be called with a record type or instance") from None
    return found


def replace(obj: _T, /, **changes: Any) -> _T:
    """A new record like ``obj`` with ``changes`` (``__init__`` and ``__post_init__`` run)."""
    for f in fields(obj):
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return obj.__class__(**changes)


def _fields_of(cls: type) -> tuple[Field, ...]:
    found: dict[str, Field] = {}
    for base in cls.__mro__[-1:0:-1]:
        for f in base.__dict__.get("__record_fields__", ()):
            found[f.name] = f
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if "ClassVar" in str(annotation).split("[", 1)[0]:
            continue
        value = cls.__dict__.get(name, _MISSING)
        if isinstance(value, Field):
            f = value
            if f.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        else:
            f = Field(value, _MISSING, True, True)
        if f.default is not _MISSING and type(f.default).__hash__ is None:
            raise ValueError(
                f"mutable default {type(f.default)} for field {name} is not allowed: use default_factory"
            )
        f.name = name
        found[name] = f
    return tuple(found.values())


def _build(cls: Any, frozen: bool) -> Any:
    all_fields = _fields_of(cls)
    # dataclasses' rule: a __hash__ the class body wrote is kept (a body that writes
    # __eq__ alone gets __hash__ = None from Python, which does not count).
    body_hash = cls.__dict__.get("__hash__", _MISSING)
    keep_hash = body_hash is not _MISSING and not (body_hash is None and "__eq__" in cls.__dict__)
    cls.__record_fields__ = all_fields
    cls.__match_args__ = tuple(f.name for f in all_fields)  # type: ignore[misc]
    methods = {"__init__": _init(cls, all_fields, frozen), "__repr__": _repr(all_fields)}
    methods["__eq__"] = _eq(all_fields)
    if frozen:
        methods.update(_frozen(cls, all_fields))
    for name, method in methods.items():
        if name not in cls.__dict__:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, method)
    if not keep_hash:
        cls.__hash__ = _hash(all_fields) if frozen else None
    return cls


def _init(cls: Any, all_fields: tuple[Field, ...], frozen: bool) -> Callable[..., None]:
    names = tuple(f.name for f in all_fields)
    count = len(names)
    required = _required(all_fields)
    # Bound with dict operations (in C): the template's keys are every field in order.
    template = {f.name: f.default for f in all_fields}
    factories = [
        (i, f.name, f.default_factory) for i, f in enumerate(all_fields) if f.default_factory is not _MISSING
    ]
    post_init = getattr(cls, "__post_init__", None) is not None
    # Attribute by attribute, as a dataclass's __init__: reads stay fast (CPython 3.11+
    # keeps attributes inline until __dict__ is asked for). One __dict__.update is ~2 us
    # less for 27 fields, but reads from the dict made a warm recall at 10k ~8% slower.
    put = _set if frozen else setattr  # the builtin is the faster where it is allowed
    signature = (f"{cls.__qualname__}.__init__()", names, required)
    tails: dict[int, tuple[frozenset[str], dict[str, Any], dict[str, Any] | None]] = {}

    def tail(given: int) -> tuple[frozenset[str], dict[str, Any], dict[str, Any] | None]:
        """After ``given`` positional arguments: the required fields left, those with a
        factory, and (none of either) the defaults left; made on a call's first use."""
        made = {n: make for i, n, make in factories if i >= given}
        rest = None if made or given < required else {n: template[n] for n in names[given:]}
        found = (frozenset(names[given:required]), made, rest)
        tails[given] = found
        return found

    def bind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Every field's value, in order, from a call that is not all positional."""
        given = len(args)
        if given > count:
            raise _refusal(signature, args, kwargs)
        need, made, rest = tails.get(given) or tail(given)
        if rest is not None and not kwargs:
            values = dict(zip(names, args, strict=False))
            values.update(rest)
            return values
        if not need <= kwargs.keys():
            raise _refusal(signature, args, kwargs)
        values = template.copy()
        if given:
            values.update(zip(names, args, strict=False))
            if not kwargs.keys().isdisjoint(names[:given]):
                raise _refusal(signature, args, kwargs)
        values.update(kwargs)
        if len(values) != count:
            raise _refusal(signature, args, kwargs)
        for name in made.keys() - kwargs.keys():  # in C: the factories a call needs
            values[name] = made[name]()
        return values

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs or len(args) != count:
            values = bind(args, kwargs)
            any(map(put, repeat(self), values, values.values()))
        else:  # put returns None: any() runs map to its end, in C
            any(map(put, repeat(self), names, args))
        if post_init:
            self.__post_init__()

    return __init__


def _required(all_fields: tuple[Field, ...]) -> int:
    """How many fields have no default: the first ones (else the class is refused)."""
    required = 0
    for position, f in enumerate(all_fields):
        if f.default is _MISSING and f.default_factory is _MISSING:
            if required < position:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
            required += 1
    return required


def _refusal(signature: tuple[str, tuple[str, ...], int], args: tuple[Any, ...], kwargs: Any) -> TypeError:
    """The error Python gives for a bad call, as a dataclass's ``__init__`` does."""
    where, names, required = signature
    if len(args) > len(names):
        takes = f"{len(names) + 1}" if required == len(names) else f"from {required + 1} to {len(names) + 1}"
        return TypeError(f"{where} takes {takes} positional arguments but {len(args) + 1} were given")
    for name in kwargs:
        if name not in names:
            return TypeError(f"{where} got an unexpected keyword argument {name!r}")
        if name in names[: len(args)]:
            return TypeError(f"{where} got multiple values for argument {name!r}")
    missing = [name for name in names[len(args) : required] if name not in kwargs]
    return TypeError(f"{where} missing {len(missing)} required positional {_plural(missing)}")


def _plural(missing: list[str]) -> str:
    """CPython's words: "argument: 'a'", "arguments: 'a' and 'b'", "'a', 'b', and 'c'"."""
    quoted = [repr(name) for name in missing]
    if len(quoted) == 1:
        return f"argument: {quoted[0]}"
    head = ", ".join(quoted[:-1]) + ("," if len(quoted) > 2 else "")
    return f"arguments: {head} and {quoted[-1]}"


def _key(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of those attributes (dataclasses compare and hash tuples)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _repr(all_fields: tuple[Field, ...]) -> Callable[[Any], str]:
    shown = [f.name for f in all_fields if f.repr]

    def __repr__(self: Any) -> str:
        inner = ", ".join([f"{name}={getattr(self, name)!r}" for name in shown])
        return f"{self.__class__.__qualname__}({inner})"

    return __repr__


def _eq(all_fields: tuple[Field, ...]) -> Callable[[Any, Any], Any]:
    key = _key([f.name for f in all_fields if f.compare])

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(all_fields: tuple[Field, ...]) -> Callable[[Any], int]:
    key = _key([f.name for f in all_fields if f.compare])
    return lambda self: hash(key(self))


def _frozen(cls: Any, all_fields: tuple[Field, ...]) -> dict[str, Callable[..., None]]:
    names = frozenset(f.name for f in all_fields)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return {"__setattr__": __setattr__, "__delattr__": __delattr__}
