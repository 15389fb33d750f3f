"""Facts about the driver we present, shared by the driver, the attribute
tables and the integrity check (a leaf: it imports nothing of the runtime)."""

from __future__ import annotations

# The CUDA version cuDriverGetVersion reports (13.0).
DRIVER_VERSION = 13000
# The device we present: an sm_89-class GPU. A deliberate choice: programs
# plan for what the capability promises. We lower what sm_89 adds to sm_80
# for single values, the FP8 conversions (cvt to and from e4m3x2/e5m2x2,
# bit-exact with an H200), which numba's and cuda_fp8.h's FP8 types take
# only from 8.9 on (below it they are emulated or refused); not its FP8
# matrix instructions, nor sm_90's clusters, TMA, wgmma or setmaxnreg. Where
# a program uses one, its kernel fails to load with the instruction named.
# The capability does not limit which PTX we take: fatbin.ptx_candidates
# compiles PTX of any architecture whose instructions we lower. The limits
# (attributes.py) stay an A100's, the largest of the 8.x parts. The CUDA
# passthrough presents its GPU as it is instead (attributes.HARDWARE).
COMPUTE_CAPABILITY = (8, 9)
