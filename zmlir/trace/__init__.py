"""Tools around driver API traces and compiled-module dumps: `zmlir report`
(report.py, perfetto.py), `zmlir trace` (interposer.py, an libcuda.so.1 that
logs and forwards to NVIDIA's driver) and ZMLIR_DUMP_DIR (dump.py).

Nothing here imports the compiler at module level: the interposer and the
report run on machines without our toolchain."""
