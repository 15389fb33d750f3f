"""The results page of a bench that runs one program per row (bench/llmc.py,
bench/library_samples.py): a markdown file with a title, a paragraph that
ends with how many rows have each result, and a table; the rows themselves
as JSON beside it (the same name, .json)."""

from __future__ import annotations

import json
from pathlib import Path


def write_results(path: Path, title: str, intro: str, columns: list[tuple[str, str]],
                  rows: list[dict[str, object]]) -> None:
    """Writes `rows` to `path` (markdown) and its .json. `columns`: (heading,
    key) of each column; a '|' in a cell is written '/', so that it stays a
    cell. The intro is followed by the count of each `result`, e.g. "PASS 3,
    SKIP 1."."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[str(r["result"])] = counts.get(str(r["result"]), 0) + 1
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    lines = [f"# {title}", "", f"{intro} {summary}.", "",
             "| " + " | ".join(heading for heading, _ in columns) + " |",
             "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(r[key]).replace("|", "/") for _, key in columns) + " |"
              for r in rows]
    path.write_text("\n".join(lines) + "\n")
    path.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
