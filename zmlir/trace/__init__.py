"""Driver API call tracing and the tools around its traces: the Tracer
(tracer.py) our runtime installs for ZMLIR_TRACE, `zmlir trace` (interposer.py,
an libcuda.so.1 that logs and forwards to NVIDIA's driver with the same
Tracer) and `zmlir report` (report.py, perfetto.py, both reading traces
through records.py). The compiler's module dumps (ZMLIR_DUMP_DIR) are its
own: zmlir/dump.py.

Nothing here imports the compiler, nor the runtime but its API declarations
and export-table data: the interposer and the report run on machines without
our toolchain."""
