"""Facts about the driver we present, shared by the driver, the attribute
tables and the integrity check (a leaf: it imports nothing of the runtime)."""

from __future__ import annotations

# The CUDA version cuDriverGetVersion reports (13.0).
DRIVER_VERSION = 13000
# The device we present: an sm_80-class GPU (the PTX we JIT).
COMPUTE_CAPABILITY = (8, 0)
