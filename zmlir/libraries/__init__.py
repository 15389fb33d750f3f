"""NVIDIA's math libraries, ours: C libraries with NVIDIA's ABI, installed
next to our libcuda.so.1 so that `zmlir run` puts them first on the library
path (cublas/: libcublas.so.13, libcublasLt.so.13; build.py builds them)."""
