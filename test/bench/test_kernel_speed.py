"""bench/kernel_speed.py's rule for which zmlir runs count: every module of
the program from the NVPTX cache; in llm.c's programs NVIDIA's cuBLAS images
may run as NVIDIA's machine code."""

from __future__ import annotations

from bench import kernel_speed

_OURS = "zmlir: cuda backend: module 5c6db947888b16cc precompiled for nvptx:sm_90\n"
_CUBLAS_IMAGE = (
    "zmlir: cuda backend: module 9f289ec33770bc42 not in the NVPTX cache\n"
    "zmlir: unsupported: export table f8cff951 (returning CUDA_ERROR_INVALID_VALUE)\n"
    "zmlir: image@0x7fd198f30938.sm_90: NVIDIA's machine code, loaded as it is "
    "(CUDA_ERROR_JIT_COMPILER_NOT_FOUND: compiler unavailable)\n")
_PROGRAM_FATBIN = (
    "zmlir: cuda backend: module 1234 not in the NVPTX cache\n"
    "zmlir: fatbin@0x55ed762ca978.sm_90: NVIDIA's machine code, loaded as it is "
    "(CUDA_ERROR_JIT_COMPILER_NOT_FOUND: compiler unavailable)\n")


def _run(suite: str) -> kernel_speed.Run:
    return kernel_speed.Run(suite, "trimat_forward", [])


def test_nvidias_library_images_may_run_as_machine_code_in_llmc() -> None:
    assert kernel_speed.zmlir_trouble(_run("llmc"), _OURS + _CUBLAS_IMAGE) == ""
    assert kernel_speed.zmlir_trouble(_run("events"), _OURS + _CUBLAS_IMAGE) != ""


def test_a_program_module_missing_from_the_cache_does_not_count() -> None:
    assert kernel_speed.zmlir_trouble(_run("llmc"), _OURS + _PROGRAM_FATBIN) != ""
    assert kernel_speed.zmlir_trouble(_run("llmc"), _OURS + _CUBLAS_IMAGE
                                      + _PROGRAM_FATBIN) != ""
    assert kernel_speed.zmlir_trouble(_run("llmc"), _CUBLAS_IMAGE) != ""  # none of ours


def test_remaining_lists_the_runs_a_log_did_not_reach(tmp_path, capsys) -> None:
    plan = tmp_path / "plan.txt"
    plan.write_text("llmc\tllmc\tgelu_forward\nllmc\tllmc\tgelu_forward\t2\n"
                    "events\tsamples/matrixMul\tmatrixMul\n")
    log = tmp_path / "kernel_speed_h200.log"
    log.write_text("=== native llmc\tgelu_forward rc=0 seconds=1.0\n"
                   "not run (time limit): llmc gelu_forward 2\n"
                   "not run (time limit): events matrixMul \n")
    assert kernel_speed.remaining(plan, [log]) == 0
    assert capsys.readouterr().out.splitlines() == ["llmc\tllmc\tgelu_forward\t2",
                                                    "events\tsamples/matrixMul\tmatrixMul"]


def test_a_program_run_several_times_in_one_log_counts_each_times_median() -> None:
    def side(name: str, ms: float, rc: int = 0) -> str:
        return (f"=== {name} events\tmatrixMul rc={rc} seconds=1.0\n"
                + (_OURS if name == "zmlir" else "")
                + f"Performance= 1.00 GFlop/s, Time= {ms} msec, Size= 1 Ops\n\n")

    def row(text: str) -> dict:
        rows = kernel_speed.analyse(kernel_speed.read_log(text))
        return next(r for r in rows if r["kernel"] == "matrixMul")

    rounds = "".join(side("native", n) + side("zmlir", z)
                     for n, z in ((0.020, 0.030), (0.029, 0.021), (0.022, 0.022)))
    r = row(rounds)
    assert (r["native_ms"], r["zmlir_ms"], r["runs"]) == (0.022, 0.022, 3)
    assert r["ratio"] == 1.0 and r["why"] == ""
    once = row(side("native", 0.020) + side("zmlir", 0.030))
    assert once["ratio"] == kernel_speed._sig(0.020 / 0.030) and "runs" not in once
    # One failed round of either side: the kernel does not count.
    failed = row(rounds + side("zmlir", 0.021, rc=1))
    assert failed["ratio"] is None and failed["why"] == "zmlir failed (exit 1)"
