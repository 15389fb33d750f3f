"""The OpenCL backend: SPIR-V kernels on any OpenCL 3.0 device with SPIR-V
and Intel USM (here: Intel's OpenCL CPU runtime).

    api.py      the OpenCL C API subset we use, declared once for cffi; errors
    icd.py      makes Intel's OpenCL CPU runtime from PyPI visible to the ICD loader
    device.py   Device: USM memory, SPIR-V programs, CUDA-style launches
    backend.py  OpenCLBackend: the driver's Backend over a Device
"""
