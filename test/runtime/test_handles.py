"""objects.Handles: the live objects of a kind, by class (a stream capture's
end walks the streams, not the thousands of graph nodes a program keeps)."""

from __future__ import annotations

import pytest

from zmlir.runtime.cuda.errors import CudaError
from zmlir.runtime.cuda.objects import Handles


class Base:
    pass


class Derived(Base):
    pass


class Other:
    pass


def test_all_gives_a_kind_and_its_subclasses() -> None:
    handles = Handles()
    base, derived, other = Base(), Derived(), Other()
    hb, hd, ho = handles.add(base), handles.add(derived), handles.add(other)
    assert {id(o) for o in handles.all(Base)} == {id(base), id(derived)}
    assert list(handles.all(Derived)) == [derived]
    assert dict(handles.items(Other)) == {ho: other}
    assert handles.remove(hd, Base) is derived
    assert list(handles.all(Base)) == [base] and handles.find(hd) is None
    with pytest.raises(CudaError):
        handles.remove(hb, Other)  # not that kind: it stays
    assert handles.find(hb) is base and list(handles.all(Base)) == [base]


def test_objects_can_go_while_a_kind_is_walked() -> None:
    handles = Handles()
    for _ in range(3):
        handles.add(Base())
    for handle, _ in handles.items(Base):
        handles.remove(handle, Base)
    assert list(handles.all(Base)) == []
    assert handles.add_at(0x5000, Other()) == 0x5000
    assert [type(o) for o in handles.all(object)] == [Other]
