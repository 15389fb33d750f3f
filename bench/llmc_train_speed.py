"""llm.c's bf16 GPT-2 trainer on an NVIDIA GPU: NVIDIA's driver against zmlir's passthrough.

train_gpt2.cu from its own random initialisation (`-e d6`: L6, C384, V50257)
trains on our token files (bench/llmc_train.py writes them) natively and
under `zmlir run` with ZMLIR_BACKEND=cuda, alternating; llm.c prints each
step's time. The figure is native/zmlir of the median step time (steps
after the first two: cuBLAS's and the JIT's first uses), per batch shape: a
small one (B=4, T=64: a step is ~3 ms of launches of small kernels, so the
host's costs per launch show) and a large one (B=32, T=1024: ~28 ms of GPU
work per step).

  here:   python bench/llmc_train_speed.py prepare CHECKOUT DIR
          (train_gpt2.cu built -arch=sm_90 as llm.c's Makefile builds it,
          against the nvidia-cublas wheel's headers; its PTX compiled to
          NVPTX for sm_90 into DIR/nvptx; the inputs)
  there:  sh bench/h200_llmc_train_speed.sh DIR   (carry DIR and .whl)
  here:   python bench/llmc_train_speed.py parse LOG [--json J] [--md M]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
STEP = re.compile(r"^step\s+(\d+)/(\d+) \| loss ([-+0-9.eEnaif]+).*\| ([0-9.]+) ms \|")
RUN = re.compile(r"^=== (\S+) ?(.*)$")
SKIPPED_STEPS = 2


def prepare(checkout: Path, directory: Path) -> int:
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(REPO))
    import llmc_train

    import zmlir
    from tools.run_programs_passthrough import driver_ptx_texts
    from zmlir.runtime.backends import nvptx_cache
    from zmlir.runtime.cuda.module import keyed_ptx

    directory.mkdir(parents=True, exist_ok=True)
    src = llmc_train.copy_sources(checkout.resolve(), directory)
    include, link = llmc_train.nvidia_headers(False, Path("/usr/local/cuda"))
    error = llmc_train.build(src, directory, "train_gpt2_bf16", "sm_90", include, link)
    if error is not None:
        raise SystemExit(f"train_gpt2.cu: {error}")
    inputs = directory / "inputs"
    inputs.mkdir(exist_ok=True)
    for name, count, seed in (("train.bin", 1 << 21, 1), ("val.bin", 1 << 16, 2)):
        tokens = llmc_train.token_stream(count, llmc_train.ALPHABET, seed)
        (inputs / name).write_bytes(llmc_train.data_file(tokens))
    exe = directory / "train_gpt2_bf16"
    for index, text in enumerate(driver_ptx_texts(exe, relocatable=True, gpu_sm=90)):
        text, key = keyed_ptx(text)
        for target in nvptx_cache.targets(text, "sm_90"):
            compiled = zmlir.compile_module(text, target, filename=f"{exe.name}.{index}.ptx")
            nvptx_cache.store(directory / "nvptx", key, compiled, source=f"{exe.name}.{index}")
    print(f"prepared {directory}: {exe.name}, inputs/, nvptx/")
    return 0


def runs(log: str) -> list[dict[str, object]]:
    """Each run of the log: its side, batch shape, step times and losses."""
    found: list[dict[str, object]] = []
    for line in log.splitlines():
        if m := RUN.match(line):
            found.append({"side": m.group(1), "shape": m.group(2).strip(), "ms": [],
                          "loss": []})
        elif (m := STEP.match(line)) and found:
            found[-1]["ms"].append(float(m.group(4)))  # type: ignore[union-attr]
            found[-1]["loss"].append(float(m.group(3)))  # type: ignore[union-attr]
    return [r for r in found if r["ms"] and r["side"] in ("native", "zmlir")]


def summary(found: list[dict[str, object]]) -> list[dict[str, object]]:
    rows = []
    for shape in dict.fromkeys(str(r["shape"]) for r in found):
        sides = {}
        for side in ("native", "zmlir"):
            mine = [r for r in found if r["shape"] == shape and r["side"] == side]
            medians = [statistics.median(r["ms"][SKIPPED_STEPS:]) for r in mine]  # type: ignore[index]
            last = [r["loss"][-1] for r in mine]  # type: ignore[index]
            sides[side] = {"runs": len(mine), "step_ms": medians, "last_loss": last}
        native, ours = (sides[s]["step_ms"] for s in ("native", "zmlir"))
        ratio = statistics.median(native) / statistics.median(ours) if native and ours else None
        rows.append({"shape": shape, **sides, "native_over_zmlir": ratio})
    return rows


def markdown(rows: list[dict[str, object]], device: str) -> str:
    lines = ["# llm.c train_gpt2.cu (bf16, -e d6) on the GPU: NVIDIA's driver against "
             "zmlir's passthrough", "",
             f"Written by `bench/llmc_train_speed.py parse` from a run of "
             f"`bench/h200_llmc_train_speed.sh` on {device}. Median step time of each run "
             f"(steps after the first {SKIPPED_STEPS}), runs alternating native and zmlir.",
             "", "| batch | native ms/step | zmlir ms/step | native/zmlir | last loss, "
             "native / zmlir |", "|---|---|---|---|---|"]
    for row in rows:
        native, ours = row["native"], row["zmlir"]
        ratio = row["native_over_zmlir"]
        lines.append(
            f"| `{row['shape']}` | {', '.join(f'{v:.2f}' for v in native['step_ms'])} | "
            f"{', '.join(f'{v:.2f}' for v in ours['step_ms'])} | "
            f"{'-' if ratio is None else f'{ratio:.3f}'} | "
            f"{', '.join(f'{v:.4f}' for v in native['last_loss'])} / "
            f"{', '.join(f'{v:.4f}' for v in ours['last_loss'])} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("checkout", type=Path)
    p.add_argument("directory", type=Path)
    q = sub.add_parser("parse")
    q.add_argument("log", type=Path)
    q.add_argument("--json", type=Path)
    q.add_argument("--md", type=Path)
    args = parser.parse_args()
    if args.command == "prepare":
        return prepare(args.checkout, args.directory)
    text = args.log.read_text()
    device = text.splitlines()[0].strip() if text else "?"
    rows = summary(runs(text))
    for row in rows:
        ratio = row["native_over_zmlir"]
        print(f"{row['shape']}: native/zmlir {'-' if ratio is None else f'{ratio:.3f}'}")
    if args.json:
        args.json.write_text(json.dumps({"device": device, "rows": rows}, indent=1) + "\n")
    if args.md:
        args.md.write_text(markdown(rows, device))
    return 0


if __name__ == "__main__":
    sys.exit(main())
