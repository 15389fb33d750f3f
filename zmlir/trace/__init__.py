"""Tools around driver API traces: `zmlir report` (report.py, perfetto.py)
and `zmlir trace` (interposer.py, an libcuda.so.1 that logs and forwards to
NVIDIA's driver). The compiler's module dumps (ZMLIR_DUMP_DIR) are its own:
zmlir/dump.py.

Nothing here imports the compiler: the interposer and the report run on
machines without our toolchain."""
