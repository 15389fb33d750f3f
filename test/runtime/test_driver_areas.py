"""The driver is one class made of a mixin per CUDA area (zmlir/runtime/cuda/
driver.py's Driver). A public entry point may override another area's and
chain to it with super() (a texture copy before the plain copy); a private
helper defined by two areas is one silently replacing the other, whichever
comes first in the MRO: texture.py's `_vendor` once hid virtual_memory.py's,
and every virtual-memory call under the passthrough became ours."""

from __future__ import annotations

from zmlir.runtime.cuda.driver import Driver


def test_no_two_areas_define_the_same_helper() -> None:
    owners: dict[str, list[str]] = {}
    for area in Driver.__mro__[1:]:
        for name in vars(area):
            if name.startswith("_") and not name.startswith("__"):
                owners.setdefault(name, []).append(area.__qualname__)
    shared = {name: areas for name, areas in owners.items() if len(areas) > 1}
    assert not shared, f"private helpers defined by more than one driver area: {shared}"
