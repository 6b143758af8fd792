"""Run public PyTorch programs unchanged, once on real torch and once on glassgrad, and compare.

Each program of programs/table.py is extracted from a pytorch/examples repository (a checkout or a
bare git directory, given as the first argument) into a fresh temporary folder per library, run
there with its own flags at small settings, and its stdout read for the losses it prints. The torch
run is ``python script.py args``; the glassgrad run is ``python -m glassgrad.alias script.py
args`` (``torch`` is glassgrad). Both get ``PYTHONPATH`` = programs/shims (a torchvision stand-in
and a ``requests`` stand-in that serve bundled data instead of downloads) + this checkout, the same
thread count, and Python's ``random`` seeded (PROGRAMS_PYTHON_SEED). The table shows, per program:
the flags, whether each run reached its end (exit status 0), the first five values on both, the
largest relative difference, whether they match (1e-4 relative, or one unit in the last printed
digit where the program prints fewer digits), the wall time on both, and for a run that stopped
the last line of its error output.

    python programs/run.py /path/to/pytorch-examples                   # every program
    python programs/run.py /path/to/pytorch-examples --only mnist,gcn  # some (see --list)
    python programs/run.py REPO --backend glassgrad --keep             # one side; keep folders

Logs go to ``--out`` (default runs/programs/): ``<program>-<library>.log`` with the command, stdout
and stderr, and ``summary.json`` with every value parsed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from table import PROGRAMS, SHIMS, Program, parse_values, relative_difference, values_match  # noqa: E402

sys.path.insert(0, SHIMS)
from _bundled_data import write_wikitext  # noqa: E402

LIBRARIES = ("torch", "glassgrad")
COMPARED = 5


def extract(repo: str, folder: str, dest: str) -> list[str]:
    """Copy ``folder`` of ``repo`` (a checkout, or a bare git directory: HEAD) into ``dest``.
    Returns the paths it could not read (a mirror may lack large data files)."""
    source = os.path.join(repo, folder)
    if os.path.isdir(source):
        shutil.copytree(source, dest)
        return []
    listing = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD", folder],
                             capture_output=True, text=True, check=True).stdout.split()
    if not listing:
        raise FileNotFoundError(f"{folder} is not in {repo}")
    missing = []
    for path in listing:
        blob = subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"], capture_output=True)
        if blob.returncode != 0:
            missing.append(path)
            continue
        target = os.path.join(dest, os.path.relpath(path, folder))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(blob.stdout)
    return missing


def _environment(threads: int) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SHIMS, ROOT])
    env["PROGRAMS_PYTHON_SEED"] = "0"
    env["MPLBACKEND"] = "Agg"
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    return env


def _command(python: str, library: str, script: str, args) -> list[str]:
    alias = ["-m", "glassgrad.alias"] if library == "glassgrad" else []
    return [python, *alias, script, *args]


def _last_error_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def run_one(program: Program, library: str, repo: str, args: argparse.Namespace) -> dict:
    """Run ``program`` on ``library`` in a fresh folder; returns what the table shows."""
    work = tempfile.mkdtemp(prefix=f"{program.name}-{library}-", dir=args.workdir)
    folder = os.path.join(work, program.folder)
    missing = extract(repo, program.folder, folder)
    if program.make == "wikitext":
        write_wikitext(os.path.join(folder, "data", "wikitext-2"))
    env = {**_environment(args.threads), **dict(program.env), "PROGRAMS_LIBRARY": library}
    log = [f"# {program.name} on {library}, in {folder}"]
    if missing:
        log.append(f"# not in the repository copy (replaced by bundled data): {missing}")
    result = {"program": program.name, "library": library, "flags": " ".join(program.args)}
    start = time.perf_counter()
    stdout = stderr = ""
    returncode = None
    steps = [*program.prepare, (program.script, program.args)]
    for script, script_args in steps:
        command = _command(args.python, library, script, script_args)
        log.append("$ " + " ".join(command))
        try:
            done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=args.timeout)
            returncode, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as e:
            returncode = "timeout"
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = (e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or ""))
            err += f"\nstopped after the {args.timeout} s timeout"
        stdout, stderr = stdout + out, stderr + err
        log += ["## stdout", out, "## stderr", err]
        if returncode != 0:
            break
    result["wall_s"] = round(time.perf_counter() - start, 2)
    result["returncode"] = returncode
    result["ran_to_end"] = returncode == 0
    result["values"] = parse_values(program, stdout)
    result["stopped_at"] = "" if returncode == 0 else _last_error_line(stderr)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"{program.name}-{library}.log"), "w") as f:
        f.write("\n".join(log))
    if args.keep:
        result["folder"] = folder
    else:
        shutil.rmtree(work, ignore_errors=True)
    return result


def compare(runs: dict, rtol: float, seeded: bool = True) -> dict:
    """First values of both runs side by side: the largest relative difference and a verdict
    (None for a program whose printed values cannot be compared: ``Program.seeded``)."""
    torch_values = runs.get("torch", {}).get("values", [])[:COMPARED]
    glassgrad_values = runs.get("glassgrad", {}).get("values", [])[:COMPARED]
    pairs = list(zip(torch_values, glassgrad_values))
    if not pairs:
        return {"max_rel_diff": None, "match": False}
    complete = len(pairs) == min(COMPARED, max(len(torch_values), len(glassgrad_values)))
    return {
        "max_rel_diff": max(relative_difference(a, b) for a, b in pairs),
        "match": None if not seeded
        else complete and all(values_match(a, b, rtol) for a, b in pairs),
    }


def _cell(run: dict | None, key: str) -> str:
    if run is None:
        return "-"
    if key == "ran":
        return "y" if run["ran_to_end"] else f"n ({run['returncode']})"
    if key == "values":
        return " ".join(run["values"][:COMPARED]) or "(none)"
    return f"{run['wall_s']:.1f}"


def table(rows: list[dict]) -> str:
    """The markdown table of every program run."""
    head = ["program", "flags", "ran to end (torch / glassgrad)", "first five on torch",
            "first five on glassgrad", "max rel diff", "match", "wall s (torch / glassgrad)",
            "glassgrad stopped at"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        t, g = row["runs"].get("torch"), row["runs"].get("glassgrad")
        diff = row["max_rel_diff"]
        lines.append("| " + " | ".join([
            row["program"], f"`{row['flags']}`", f"{_cell(t, 'ran')} / {_cell(g, 'ran')}",
            _cell(t, "values"), _cell(g, "values"),
            "-" if diff is None else f"{diff:.2e}",
            "n/a (see table.py)" if row["match"] is None else "y" if row["match"] else "n",
            f"{_cell(t, 'wall')} / {_cell(g, 'wall')}",
            (g or {}).get("stopped_at", "").replace("|", "\\|") or "-",
        ]) + " |")
    return "\n".join(lines)


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", nargs="?", help="pytorch/examples checkout or bare git directory")
    parser.add_argument("--only", default="", help="comma-separated program names (see --list)")
    parser.add_argument("--list", action="store_true", help="list the programs and exit")
    parser.add_argument("--backend", choices=("both", *LIBRARIES), default="both")
    parser.add_argument("--python", default=sys.executable,
                        help="the Python with torch installed (default: this one)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads per run")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--out", default=os.path.join(ROOT, "runs", "programs"))
    parser.add_argument("--keep", action="store_true", help="keep the run folders")
    parser.add_argument("--workdir", default=None,
                        help="where the run folders are made (default: the system temp folder)")
    args = parser.parse_args(argv)
    if args.list:
        for p in PROGRAMS.values():
            print(f"{p.name:34s} {p.folder}/{p.script} {' '.join(p.args)}   [{p.label}]")
        return []
    if not args.repo:
        parser.error("the pytorch/examples repository path is required (see programs/README.md)")
    names = [n for n in args.only.split(",") if n] or list(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        parser.error(f"unknown program(s) {unknown}; --list shows them")
    libraries = LIBRARIES if args.backend == "both" else (args.backend,)
    rows = []
    for name in names:
        runs = {}
        for library in libraries:
            runs[library] = run_one(PROGRAMS[name], library, args.repo, args)
            r = runs[library]
            print(f"{name} on {library}: {'ran to the end' if r['ran_to_end'] else 'stopped'} "
                  f"in {r['wall_s']:.1f} s; {' '.join(r['values'][:COMPARED])} "
                  f"{r['stopped_at']}", flush=True)
        rows.append({"program": name, "flags": " ".join(PROGRAMS[name].args), "runs": runs,
                     **compare(runs, args.rtol, PROGRAMS[name].seeded)})
    print()
    print(table(rows))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
