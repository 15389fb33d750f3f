"""Trains llm.c's GPT-2 (fp32 and bf16 trainers) on zmlir's CPU backend, or on NVIDIA's.

llm.c is not ours and is never committed: pass the path of a checkout
(https://github.com/karpathy/llm.c). Nothing is fetched; the inputs are ours.

  python bench/llmc_train.py CHECKOUT WORK [--steps 20] [--native] [--arch sm_80]
      [--compare H200_JSON] [--results bench/results/llmc_train.md]

1. Inputs, written by this file with the standard library only (so that an
   NVIDIA machine without numpy writes the same bytes; their sha256 go into
   the results): a token stream in llm.c's data format (header 20240520,
   version 1, count; uint16 tokens), a noisy affine bigram chain over 256 of
   the model's 8192 tokens, which it learns in a few steps, train and val;
   and one small random-initialised GPT-2 checkpoint in llm.c's format (header 20240326),
   version 3 (fp32) for `train_gpt2_fp32.cu` and version 5 (the same weights
   rounded to bf16) for `train_gpt2.cu`. Weights are uniform with GPT-2's
   standard deviations (0.02, residual projections 0.02/sqrt(2L)), drawn from
   an integer generator: no libm, so the bytes are the same everywhere.
2. Builds: the sources are copied to WORK/src, where the one CUDA 13 fix is
   applied (`cudaMemAdvise` takes a `cudaMemLocation`, not a device ordinal),
   and built as llm.c's Makefile builds them without cuDNN, NCCL or MPI
   (`-O3 --use_fast_math -std=c++17`, `-DENABLE_BF16` for train_gpt2.cu,
   `-lcublas -lcublasLt`), for --arch. Under zmlir: against NVIDIA's cuBLAS
   headers (the nvidia-cublas wheel zmlir's environment has) and linked to our
   libraries' folder; with --native: against CUDA_HOME (/usr/local/cuda).
3. Runs: each trainer for --steps steps (B=4, T=64) under `zmlir run` (our
   libcuda, libcublas, libcublasLt; the CPU backend by default), or natively
   with --native; and train_gpt2.cu once more from its own random
   initialisation, `-e d6` (GPT-2's smallest descriptor: L6, C384, V50257,
   30M parameters; ~9 s a step on two loaded cores), its learning rate
   warmed up over the first half of the steps (without, the loss spikes at
   steps 3, 7 and 14, in fp32 as in bf16). The per-step train loss and the val losses are parsed from
   its output and written to --results (.md and .json).
4. --compare H200_JSON (the .json of a --native run on an H200): per trainer,
   the largest relative difference of the train loss at any step, and whether
   the loss decreased (last step below the first), on both sides.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

DATA_MAGIC, DATA_VERSION = 20240520, 1
MODEL_MAGIC = 20240326
B, T = 4, 64
ALPHABET = 256  # the tokens the data uses, of the model's V


@dataclass(frozen=True)
class Config:
    """A GPT-2 as llm.c's checkpoint header gives it.

    V is at least 8 x 1024: train_gpt2.cu's fused classifier (1024 threads a
    row, 8 bf16 a load) starts each thread at ceil(V/8) + threadIdx - 1024
    and compares (i+1)*8, a size_t, with V; below that a thread's negative
    i runs ~2**32/1024 times round its loop (a hang on any device).
    """

    max_seq_len: int = T
    vocab_size: int = 8192
    num_layers: int = 2
    num_heads: int = 4
    channels: int = 128

    @property
    def padded_vocab_size(self) -> int:
        return (self.vocab_size + 127) // 128 * 128

    def parameter_shapes(self) -> list[tuple[str, int]]:
        """llm.c's parameter tensors, in its order (fill_in_parameter_sizes)."""
        c, layers = self.channels, self.num_layers
        return [("wte", self.padded_vocab_size * c), ("wpe", self.max_seq_len * c),
                ("ln1w", layers * c), ("ln1b", layers * c), ("qkvw", layers * 3 * c * c),
                ("qkvb", layers * 3 * c), ("attprojw", layers * c * c), ("attprojb", layers * c),
                ("ln2w", layers * c), ("ln2b", layers * c), ("fcw", layers * 4 * c * c),
                ("fcb", layers * 4 * c), ("fcprojw", layers * c * 4 * c), ("fcprojb", layers * c),
                ("lnfw", c), ("lnfb", c)]


class Generator:
    """xorshift64*: integers only, the same stream on every machine."""

    def __init__(self, seed: int) -> None:
        self.state = seed & 0xFFFFFFFFFFFFFFFF or 1

    def next(self) -> int:
        x = self.state
        x ^= x >> 12
        x ^= (x << 25) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 27
        self.state = x
        return ((x * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF) >> 32

    def uniform(self) -> float:
        """In [-1, 1): a 24-bit integer over 2**23, less 1; exact in float32."""
        return (self.next() >> 8) / float(1 << 23) - 1.0


def token_stream(count: int, alphabet: int, seed: int) -> list[int]:
    """A learnable stream over the first `alphabet` tokens: each token an affine
    function of the last, one in eight random."""
    rng = Generator(seed)
    tokens = [rng.next() % alphabet]
    while len(tokens) < count:
        r = rng.next()
        tokens.append(r % alphabet if r % 8 == 0 else (5 * tokens[-1] + 3) % alphabet)
    return tokens


def data_file(tokens: list[int]) -> bytes:
    header = struct.pack("<256i", DATA_MAGIC, DATA_VERSION, len(tokens), *([0] * 253))
    return header + struct.pack(f"<{len(tokens)}H", *tokens)


def initial_weights(config: Config, seed: int) -> list[float]:
    """GPT-2's initialisation (llm.c's gpt_build_from_descriptor), uniform instead of normal.

    Weights have standard deviation 0.02 (0.02/sqrt(2L) for the projections
    back into the residual stream), layernorm scales 1, biases 0, wte's
    padding rows 0.
    """
    rng = Generator(seed)
    sqrt3 = 1.7320508075688772
    values: list[float] = []
    for name, size in config.parameter_shapes():
        if name in ("ln1w", "ln2w", "lnfw"):
            values += [1.0] * size
        elif name in ("wte", "wpe", "qkvw", "attprojw", "fcw", "fcprojw"):
            std = 0.02 / (2 * config.num_layers) ** 0.5 if name in ("attprojw", "fcprojw") else 0.02
            real = config.vocab_size * config.channels if name == "wte" else size
            values += [std * sqrt3 * rng.uniform() for _ in range(real)]
            values += [0.0] * (size - real)
        else:
            values += [0.0] * size
    return values


def bf16_bits(value: float) -> int:
    """float32 to bfloat16, rounding to nearest even (as llm.c's Python writer does)."""
    (bits,) = struct.unpack("<I", struct.pack("<f", value))
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def checkpoint(config: Config, weights: list[float], bf16: bool) -> bytes:
    header = [MODEL_MAGIC, 5 if bf16 else 3, config.max_seq_len, config.vocab_size,
              config.num_layers, config.num_heads, config.channels, config.padded_vocab_size]
    head = struct.pack("<256i", *header, *([0] * (256 - len(header))))
    if bf16:
        return head + struct.pack(f"<{len(weights)}H", *(bf16_bits(w) for w in weights))
    return head + struct.pack(f"<{len(weights)}f", *weights)


def write_inputs(work: Path, config: Config, steps: int) -> dict[str, str]:
    """The data and checkpoints under WORK/inputs; their sha256 by name."""
    inputs = work / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    weights = initial_weights(config, seed=1337)
    files = {
        "train.bin": data_file(token_stream(steps * B * T + 1, ALPHABET, seed=1)),
        "val.bin": data_file(token_stream(2 * B * T + 1, ALPHABET, seed=2)),
        "model_fp32.bin": checkpoint(config, weights, bf16=False),
        "model_bf16.bin": checkpoint(config, weights, bf16=True),
    }
    for name, data in files.items():
        (inputs / name).write_bytes(data)
    return {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}


# The CUDA 13 fix: cudaMemAdvise's location is a cudaMemLocation since CUDA 13.
MEM_ADVISE_OLD = "cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId)"
MEM_ADVISE_NEW = "cudaMemAdviseSetPreferredLocation, cudaMemLocation{cudaMemLocationTypeHost, 0})"
TRAINERS = {"train_gpt2_fp32": "train_gpt2_fp32.cu", "train_gpt2_bf16": "train_gpt2.cu"}
# Each run: the trainer it runs. train_gpt2_bf16_d6 is train_gpt2.cu from its own
# random initialisation (-e d6: L6, C384, V50257, 30M parameters), on the same data.
RUNS = {"train_gpt2_fp32": "train_gpt2_fp32", "train_gpt2_bf16": "train_gpt2_bf16",
        "train_gpt2_bf16_d6": "train_gpt2_bf16"}


def copy_sources(checkout: Path, work: Path) -> Path:
    """llm.c's trainers and llmc/ in WORK/src, with the CUDA 13 fix applied there."""
    src = work / "src"
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(checkout / "llmc", src / "llmc")
    for source in TRAINERS.values():
        shutil.copy(checkout / source, src / source)
    utils = src / "llmc" / "cuda_utils.cuh"
    text = utils.read_text()
    if MEM_ADVISE_OLD in text:
        utils.write_text(text.replace(MEM_ADVISE_OLD, MEM_ADVISE_NEW))
    return src


def build(src: Path, work: Path, trainer: str, arch: str, include: Path,
          link: list[str]) -> str | None:
    """nvcc as llm.c's Makefile (no cuDNN, NCCL, MPI); None, or the error."""
    flags = ["-DENABLE_BF16"] if trainer == "train_gpt2_bf16" else []
    command = ["nvcc", "-O3", "--use_fast_math", "-std=c++17", *flags, f"-arch={arch}",
               f"-I{include}", str(src / TRAINERS[trainer]), "-o", str(work / trainer),
               *link, "-lcublas", "-lcublasLt"]
    if (include / "nvml.h").exists():  # llmc/mfu.h then uses NVML (the Makefile's -lnvidia-ml)
        command.append("-lnvidia-ml")
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode == 0:
        return None
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    return (errors or done.stderr.strip().splitlines() or ["nvcc failed"])[0][:240]


def arguments(name: str, inputs: Path, steps: int, lr: str) -> list[str]:
    """Both trainers: B x T, val at 0, every 10 steps and the end (2 batches); no sampling."""
    common = ["-i", str(inputs / "train.bin"), "-j", str(inputs / "val.bin"), "-b", str(B),
              "-t", str(T), "-l", lr, "-v", "10", "-m", "2"]
    if name == "train_gpt2_fp32":  # one epoch of train.bin; loads ./gpt2_124M.bin
        return [*common, "-s", "1000000", "-g", "1"]
    if name == "train_gpt2_bf16_d6":  # warmup: from d6's init 1e-3 at once spikes the loss
        return ["-e", "d6", *common, "-x", str(steps), "-s", "0", "-u", str(steps // 2)]
    return ["-e", str(inputs / "model_bf16.bin"), *common, "-x", str(steps), "-s", "0"]


TRAIN_LOSS = re.compile(r"^step\s+(\d+)/\d+\s*(?::\s*train loss|\|\s*loss)\s+([-+0-9.eEnaif]+)")
VAL_LOSS = re.compile(r"^val loss\s+([-+0-9.eEnaif]+)")


def parse_losses(output: str) -> dict[str, list[float]]:
    """The per-step train losses and the val losses a trainer printed."""
    train: list[float] = []
    val: list[float] = []
    for line in output.splitlines():
        if m := TRAIN_LOSS.match(line):
            train.append(float(m.group(2)))
        elif m := VAL_LOSS.match(line):
            val.append(float(m.group(1)))
    return {"train": train, "val": val}


def run(work: Path, name: str, steps: int, lr: str, native: bool,
        timeout: int) -> dict[str, object]:
    rundir = work / f"run_{name}"
    rundir.mkdir(exist_ok=True)
    model = rundir / "gpt2_124M.bin"  # the fp32 trainer's fixed checkpoint name
    model.unlink(missing_ok=True)
    shutil.copy(work / "inputs" / "model_fp32.bin", model)
    exe = [str(work / RUNS[name]), *arguments(name, work / "inputs", steps, lr)]
    command = exe if native else [sys.executable, "-m", "zmlir.cli", "run", "--", *exe]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=rundir, capture_output=True, text=True,
                              timeout=timeout)
        output, status = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as e:
        output = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        status = -1
    seconds = round(time.perf_counter() - start, 1)
    (rundir / "output.txt").write_text(output)
    losses = parse_losses(output)
    result = "PASS" if status == 0 and len(losses["train"]) >= steps else "FAIL"
    cause = "" if result == "PASS" else _first_cause(output, status)
    return {"trainer": name, "result": result, "seconds": seconds, "cause": cause,
            "command": " ".join(command[-len(exe):]), **losses}


def _first_cause(output: str, status: int) -> str:
    if status == -1:
        return "timed out"
    lines = output.strip().splitlines()
    for i, line in enumerate(lines):
        if re.search(r"(?i)error|failed|unsupported|not supported|assert|zmlir:", line):
            # llm.c's checks name the place on one line and the error on the next
            text = " ".join(lines[i:i + 2]) if line.rstrip().endswith(":") else line
            return text.strip()[:240]
    return f"exit status {status}, last output: {lines[-1][:200] if lines else '(none)'}"


def compare(ours: dict[str, object], theirs: dict[str, object],
            tolerance: float) -> dict[str, object]:
    """Largest relative difference of the train loss over the steps both have."""
    a, b = ours["train"], theirs["train"]
    assert isinstance(a, list) and isinstance(b, list)
    steps = min(len(a), len(b))
    diffs = [abs(x - y) / abs(y) for x, y in zip(a[:steps], b[:steps], strict=True)]
    worst = max(diffs, default=float("nan"))
    return {"steps": steps, "max_rel_diff": worst, "tolerance": tolerance,
            "within": steps > 0 and worst <= tolerance,
            "theirs": b[:steps], "per_step_rel_diff": diffs,
            "decreased_ours": bool(a) and a[-1] < a[0], "decreased_theirs": bool(b) and b[-1] < b[0]}


def nvidia_headers(native: bool, cuda_home: Path) -> tuple[Path, list[str]]:
    """cuBLAS's headers and the link flags: NVIDIA's (--native) or our libraries' folder."""
    if native:
        return cuda_home / "include", [f"-L{cuda_home / 'lib64'}", f"-L{cuda_home / 'lib64' / 'stubs'}"]
    from zmlir.libraries.build import nvidia_wheel_dir

    wheel = nvidia_wheel_dir()
    if wheel is None:
        sys.exit("no nvidia-cublas wheel installed: cuBLAS's headers are missing")
    out = subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"], check=True,
                         capture_output=True, text=True)
    return wheel / "include", [f"-L{out.stdout.strip()}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="an llm.c checkout")
    parser.add_argument("work", type=Path, help="a folder for inputs, builds and runs")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", default="1e-3")
    parser.add_argument("--arch", default="sm_80")
    parser.add_argument("--native", action="store_true",
                        help="NVIDIA's driver and libraries (CUDA_HOME), not zmlir")
    parser.add_argument("--only", default="", help="comma-separated runs (" + ", ".join(RUNS)
                        + ")")
    parser.add_argument("--timeout", type=int, default=1200, help="seconds per trainer")
    parser.add_argument("--compare", type=Path, help="the .json of a --native run")
    parser.add_argument("--ours", type=Path,
                        help="compare this earlier run's .json instead of running again")
    parser.add_argument("--tolerance", type=float, default=0.01,
                        help="the largest relative train-loss difference at any step that "
                        "matches (H200: TF32 GEMMs in the fp32 trainer; ours compute in f32)")
    parser.add_argument("--results", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "llmc_train.md")
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    config = Config()
    digests = write_inputs(work, config, args.steps)
    include, link = nvidia_headers(args.native,
                                   Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")))
    src = copy_sources(args.checkout.resolve(), work)
    theirs = {}
    if args.compare is not None:
        theirs = {r["trainer"]: r for r in json.loads(args.compare.read_text())["runs"]}
    only = set(filter(None, args.only.split(",")))
    earlier = {}
    if args.ours is not None:
        earlier = {r["trainer"]: r for r in json.loads(args.ours.read_text())["runs"]}
    runs: list[dict[str, object]] = []
    errors: dict[str, str | None] = {}  # each trainer built once, for its first run
    for name, trainer in RUNS.items():
        if only and name not in only:
            continue
        row: dict[str, object]
        if name not in earlier and trainer not in errors:
            errors[trainer] = build(src, work, trainer, args.arch, include, link)
        if name in earlier:
            row = {k: v for k, v in earlier[name].items() if k != "compare"}
        elif (error := errors[trainer]) is not None:
            row = {"trainer": name, "result": "BUILD", "seconds": 0, "cause": error,
                   "train": [], "val": []}
        else:
            row = run(work, name, args.steps, args.lr, args.native, args.timeout)
        if name in theirs:
            row["compare"] = compare(row, theirs[name], args.tolerance)
        print(summary(row), flush=True)
        runs.append(row)
    record = {"side": "nvidia" if args.native else "zmlir", "config": vars(config) | {
        "B": B, "T": T, "steps": args.steps, "lr": args.lr, "arch": args.arch},
        "inputs_sha256": digests, "runs": runs}
    if args.compare is not None:
        record["compared_with"] = str(args.compare)
        if json.loads(args.compare.read_text())["inputs_sha256"] != digests:
            print("WARNING: the compared run had other inputs (sha256 differ)")
            record["inputs_differ"] = True
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    args.results.write_text(markdown(record, args))
    return 0 if all(r["result"] == "PASS" and _matches(r) for r in runs) else 1


def _matches(row: dict[str, object]) -> bool:
    c = row.get("compare")
    return not isinstance(c, dict) or bool(c["within"] and c["decreased_ours"])


def summary(row: dict[str, object]) -> str:
    train = row["train"]
    assert isinstance(train, list)
    text = (f"{row['trainer']:16s} {row['result']:5s} {row['seconds']:>7}s  steps {len(train)}"
            f"  loss {train[0] if train else '-'} -> {train[-1] if train else '-'}  {row['cause']}")
    if isinstance(c := row.get("compare"), dict):
        text += (f"\n  vs NVIDIA: max relative difference {c['max_rel_diff']:.3g} over "
                 f"{c['steps']} steps (within {c['tolerance']}: {c['within']}); "
                 f"decreased: ours {c['decreased_ours']}, "
                 f"NVIDIA's {c['decreased_theirs']}")
    return text


def markdown(record: dict[str, object], args: argparse.Namespace) -> str:
    runs = record["runs"]
    assert isinstance(runs, list)
    side = "NVIDIA's driver and libraries" if args.native else "zmlir run (CPU, OpenCL)"
    lines = [f"# llm.c's GPT-2 trainers on {side}", "",
             f"Written by `bench/llmc_train.py` ({time.strftime('%Y-%m-%d', time.gmtime())}), "
             f"built with `nvcc -arch={args.arch}`; model and run: `{record['config']}` "
             "(train_gpt2_bf16_d6: `-e d6`, train_gpt2.cu's own random initialisation of "
             "L6, C384, V50257). Inputs generated by the script (sha256 in the .json).", "",
             "| trainer | result | seconds | first cause |", "|---|---|---|---|"]
    lines += [f"| {r['trainer']} | {r['result']} | {r['seconds']} | {r['cause']} |" for r in runs]
    compared = any("compare" in r for r in runs)
    lines += ["", "Train loss per step" + (" (ours / NVIDIA's, relative difference)"
                                          if compared else "") + ":", ""]
    lines += ["| step | " + " | ".join(str(r["trainer"]) for r in runs) + " |",
              "|---|" + "---|" * len(runs)]
    steps = max((len(r["train"]) for r in runs), default=0)
    for i in range(steps):
        cells = []
        for r in runs:
            ours = r["train"][i] if i < len(r["train"]) else None
            cell = "-" if ours is None else f"{ours:.6f}"
            c = r.get("compare")
            if ours is not None and isinstance(c, dict) and i < c["steps"]:
                cell += f" / {c['theirs'][i]:.6f} ({c['per_step_rel_diff'][i]:.2e})"
            cells.append(cell)
        lines.append(f"| {i + 1} | " + " | ".join(cells) + " |")
    for r in runs:
        lines.append("")
        lines.append(f"{r['trainer']}: val loss {r['val']}.")
        if isinstance(c := r.get("compare"), dict):
            lines.append(f"Against NVIDIA's: max relative train-loss difference "
                         f"{c['max_rel_diff']:.3g} over {c['steps']} steps (within "
                         f"{c['tolerance']}: {c['within']}); loss decreased: "
                         f"ours {c['decreased_ours']}, NVIDIA's {c['decreased_theirs']}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
