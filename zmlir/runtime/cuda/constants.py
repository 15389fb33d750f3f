"""Facts about the driver we present, shared by the driver, the attribute
tables and the integrity check (a leaf: it imports nothing of the runtime)."""

from __future__ import annotations

# The CUDA version cuDriverGetVersion reports (13.0).
DRIVER_VERSION = 13000
# The device we present: an sm_80-class GPU. A deliberate choice: programs
# plan for what the capability promises, and we lower what sm_80 has (no
# clusters, TMA, wgmma or setmaxnreg of sm_90; no FP8 MMA of sm_89). It does
# not limit which PTX we take: fatbin.ptx_candidates compiles PTX of any
# architecture whose instructions we lower. The CUDA passthrough presents its
# GPU as it is instead (attributes.HARDWARE).
COMPUTE_CAPABILITY = (8, 0)
