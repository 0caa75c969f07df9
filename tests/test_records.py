"""``@record`` behaves as ``@dataclass`` for what Scarwarden uses (scarwarden/records.py):
each test declares the same class both ways and compares what they do."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scarwarden import records
from scarwarden.records import record


def declare(frozen: bool, *, as_record: bool) -> Any:
    """One class, declared with the one decorator or the other."""
    decorate = record(frozen=frozen) if as_record else dataclasses.dataclass(frozen=frozen)
    field: Any = records.field if as_record else dataclasses.field

    class Match:
        """A docstring (dataclasses would write a signature where there is none)."""

        LIMIT: ClassVar[int] = 3
        stem: str
        weight: float
        count: int = 0
        tags: list[str] = field(default_factory=list)
        note: str | None = field(default=None, compare=False, repr=False)

    return decorate(Match)


def post_init_pair() -> tuple[Any, Any]:
    def body(cls: Any) -> Any:
        def __post_init__(self: Any) -> None:
            if self.value < 0:
                raise ValueError(f"{self.value} is negative")

        cls.__post_init__ = __post_init__
        return cls

    class Checked:
        value: int
        label: str = "x"

    class Checked2:
        value: int
        label: str = "x"

    return dataclasses.dataclass(frozen=True)(body(Checked)), record(frozen=True)(body(Checked2))


def subclass_pair() -> tuple[Any, Any]:
    """A record that subclasses a record (gate.policy.GateProblem subclasses errors.Problem)."""
    made = []
    for decorate in (dataclasses.dataclass(frozen=True), record(frozen=True)):

        class Base:
            message: str
            file: str | None = None

            def where(self) -> str:
                return self.file or "-"

        class Child(decorate(Base)):  # type: ignore[misc]
            code: str = ""

        made.append(decorate(Child))
    return made[0], made[1]


ARGS = ("refund", 1.5, 2, ["a", "b"], "n")


@pytest.mark.parametrize("frozen", [True, False])
def test_the_same_fields_repr_and_equality(frozen: bool) -> None:
    data, rec = declare(frozen, as_record=False), declare(frozen, as_record=True)
    assert [f.name for f in records.fields(rec)] == [f.name for f in dataclasses.fields(data)]
    assert [f.name for f in records.fields(rec(*ARGS))] == ["stem", "weight", "count", "tags", "note"]
    a, b = data(*ARGS), rec(*ARGS)
    assert repr(b) == repr(a) == "declare.<locals>.Match(stem='refund', weight=1.5, count=2, tags=['a', 'b'])"
    assert vars(b) == vars(a) and list(vars(b)) == list(vars(a))
    assert rec(*ARGS) == b and rec(*ARGS[:4], "other note") == b  # note: compare=False
    assert rec("refund", 1.5) != b and b != a  # another class: NotImplemented, then identity
    assert rec.LIMIT == 3 and rec.__match_args__ == data.__match_args__
    assert rec.__doc__ == data.__doc__


def test_frozen_hashes_as_a_dataclass_and_refuses_changes() -> None:
    data, rec = declare(True, as_record=False), declare(True, as_record=True)
    a, b = data("refund", 1.5, 2, (), "n"), rec("refund", 1.5, 2, (), "n")  # a tuple: hashable
    assert hash(b) == hash(a) == hash(("refund", 1.5, 2, ()))
    for obj in (a, b):
        with pytest.raises(AttributeError) as caught:
            obj.stem = "other"
        assert type(caught.value).__name__ == "FrozenInstanceError"
        assert str(caught.value) == "cannot assign to field 'stem'"
        with pytest.raises(AttributeError, match="cannot delete field 'weight'"):
            del obj.weight
    assert issubclass(records.FrozenInstanceError, AttributeError)


def test_a_mutable_one_is_unhashable_and_assignable() -> None:
    for cls in (declare(False, as_record=False), declare(False, as_record=True)):
        obj = cls("refund", 1.5)
        obj.count = 7
        assert obj.count == 7 and cls.__hash__ is None
        with pytest.raises(TypeError, match="unhashable type"):
            hash(obj)


def test_each_default_factory_call_is_a_new_list() -> None:
    rec = declare(False, as_record=True)
    one, two = rec("a", 1.0), rec("b", 2.0)
    one.tags.append("x")
    assert two.tags == [] and one.tags is not two.tags
    assert rec.count == 0 and "tags" not in rec.__dict__  # defaults stay class attributes


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((), {}),
        (("a",), {}),
        (("a", 1.0), {"stem": "b"}),
        (("a", 1.0), {"colour": "red"}),
        (("a", 1.0, 2, [], "n", "extra"), {}),
        ((), {"weight": 1.0, "tags": []}),
        ((), {"stem": "a", "weight": 1.0, "count": 3, "colour": 1}),
    ],
)
def test_the_same_type_errors(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Missing, unexpected, duplicate or too many arguments: the same message."""
    messages = []
    for cls in (declare(True, as_record=False), declare(True, as_record=True)):
        with pytest.raises(TypeError) as caught:
            cls(*args, **kwargs)
        messages.append(str(caught.value))
    assert messages[1] == messages[0]


def test_keywords_and_positions_mix_as_in_a_dataclass() -> None:
    data, rec = declare(False, as_record=False), declare(False, as_record=True)
    for args, kwargs in ((("a",), {"weight": 2.0}), ((), {"tags": ["t"], "weight": 1.0, "stem": "s"})):
        a, b = data(*args, **kwargs), rec(*args, **kwargs)
        assert repr(b) == repr(a) and list(vars(b).items()) == list(vars(a).items())


def test_post_init_runs_after_init_and_after_replace() -> None:
    for cls in post_init_pair():
        assert cls(1).label == "x"
        with pytest.raises(ValueError, match="-1 is negative"):
            cls(-1)
        fn = dataclasses.replace if dataclasses.is_dataclass(cls) else records.replace
        assert fn(cls(1), label="y") == cls(1, "y")
        with pytest.raises(ValueError, match="-2 is negative"):
            fn(cls(1), value=-2)


def test_replace_keeps_what_is_not_changed() -> None:
    data, rec = declare(True, as_record=False), declare(True, as_record=True)
    a = dataclasses.replace(data(*ARGS), count=9, tags=())
    b = records.replace(rec(*ARGS), count=9, tags=())
    assert repr(b) == repr(a) and b.note == a.note == "n"
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        records.replace(b, colour="red")
    with pytest.raises(TypeError, match="record type or instance"):
        records.replace(object())


def test_a_subclass_has_its_bases_fields_first() -> None:
    data, rec = subclass_pair()
    assert [f.name for f in records.fields(rec)] == [f.name for f in dataclasses.fields(data)]
    a, b = data("m", "f.md", "code-1"), rec("m", "f.md", "code-1")
    assert repr(b).split("(", 1)[1] == repr(a).split("(", 1)[1]
    assert b.where() == "f.md" and hash(b) == hash(a)
    assert records.replace(b, code="code-2").code == "code-2"
    with pytest.raises(records.FrozenInstanceError, match="cannot assign to field 'code'"):
        b.code = "x"


def test_what_a_dataclass_refuses_a_record_refuses() -> None:
    with pytest.raises(ValueError, match="mutable default <class 'list'> for field tags"):

        @record
        class Listed:
            tags: list[str] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @record
        class Ordered:
            a: int = 0
            b: int

    with pytest.raises(ValueError, match="cannot specify both default and default_factory"):
        records.field(default=1, default_factory=list)


@record(frozen=True)
class Pickled:
    stem: str
    tags: tuple[str, ...] = ()


def test_a_record_pickles() -> None:
    obj = Pickled("refund", ("card",))
    again = pickle.loads(pickle.dumps(obj))
    assert again == obj and again is not obj and hash(again) == hash(obj)


@given(
    st.text(max_size=5),
    st.floats(allow_nan=True),
    st.integers(),
    st.lists(st.text(max_size=3), max_size=3).map(tuple),
)
def test_any_values_compare_and_hash_alike(stem: str, weight: float, count: int, tags: Any) -> None:
    data, rec = DATA_FROZEN, RECORD_FROZEN
    a, b = data(stem, weight, count, tags), rec(stem, weight, count, tags)
    assert repr(b) == repr(a) and hash(b) == hash(a)
    assert (b == rec(stem, weight, count, tags)) == (a == data(stem, weight, count, tags))
    assert (b == rec(stem, weight, count + 1, tags)) is False


DATA_FROZEN, RECORD_FROZEN = declare(True, as_record=False), declare(True, as_record=True)


def test_importing_records_imports_neither_dataclasses_nor_inspect() -> None:
    probe = "import sys, scarwarden.records; print(sorted({'dataclasses', 'inspect'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
