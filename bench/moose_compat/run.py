#!/usr/bin/python3
"""Run real MOOSE scripts, unchanged, under MOOSE 4.1 and under antler, and compare their numbers.

Questions: how many of the scripts in scripts.txt run under antler (serially, and under
mpirun -n N), and how many give MOOSE's numbers?

Each script is extracted from a bare git mirror (git show HEAD:path) into WORK/scripts and runs in
a subprocess, in a fresh folder (a copy of the script under its own name), with stdin closed, MPLBACKEND=Agg and a timeout:
  MOOSE:  PYTHONPATH=hook:MOOSE_LIB /usr/bin/python3 script
  antler: PYTHONPATH=hook:shim:ANTLER /usr/bin/python3 script   (-n N > 1: under mpirun -n N)
hook/sitecustomize.py writes every Table's vector and /clock's currentTime at exit; shim/ makes
`import moose` give antler. Numbers match when both runs succeed and have the same Tables, each of
the same length with max |antler - MOOSE| <= rtol * max |MOOSE value|, and the same currentTime.

Results go to WORK/results: <side>/<script>.{out,err,json,rc} per run (side: moose, antler,
antler-nN) and summary[-nN][-partial].{md,json}. --side antler compares with the MOOSE results
saved there by an earlier run (and --side moose with saved antler results).
"""

import argparse
import glob
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "scripts.txt")
HOOK = os.path.join(HERE, "hook")
SHIM = os.path.join(HERE, "shim")
PYTHON = "/usr/bin/python3"
MIRRORS = "/work/.mirror/BhallaLab+%s/repo"
MOOSE_LIBS = ["/work/moose/build/lib-patched", "/work/moose/build/lib"]


# ---------------------------------------------------------------------------------------------
# The scripts

def read_list(path):
    """(entries, commits): entries [(repo, path in repo)], commits {repo: commit the list used}."""
    entries, commits = [], {}
    with open(path) as f:
        for line in f:
            words = line.split()
            if line.startswith("# commit ") and len(words) >= 4:
                commits[words[2]] = words[3]
            elif words and not line.startswith("#"):
                entries.append((words[0], words[1]))
    return entries, commits


def script_name(repo, path):
    """moose-examples, snippets/lif.py -> moose-examples__snippets_lif (file and result names)."""
    return "%s__%s" % (repo, path[:-3].replace("/", "_"))


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir=" + gitdir] + list(args), check=True,
                          stdout=subprocess.PIPE).stdout


def extract(entries, commits, gitdirs, dest):
    """Writes each listed script from its mirror's HEAD into dest; returns
    [(name, file, blob id)]. The blob id ties saved results to the script's text."""
    os.makedirs(dest, exist_ok=True)
    for repo in sorted({r for r, _ in entries}):
        head = git(gitdirs[repo], "rev-parse", "HEAD").decode().strip()
        if commits.get(repo) and head != commits[repo]:
            print("note: %s HEAD is %s; scripts.txt was made from %s" % (repo, head, commits[repo]))
    out = []
    for repo, path in entries:
        name = script_name(repo, path)
        blob = git(gitdirs[repo], "rev-parse", "HEAD:" + path).decode().strip()
        # Under its own name (in a folder of its own): a script may name itself (NSDFWriter's
        # modelFileNames = "nsdf.py") or files beside it.
        os.makedirs(os.path.join(dest, name), exist_ok=True)
        file = os.path.join(dest, name, os.path.basename(path))
        with open(file, "wb") as f:
            f.write(git(gitdirs[repo], "show", "HEAD:" + path))
        out.append((name, file, blob))
    return out


# ---------------------------------------------------------------------------------------------
# One run

def first_error(stderr, stdout=""):
    """The exception line of the first traceback, else the first line that looks like an error,
    else the last line of stderr."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Traceback"):
            for later in lines[i + 1:]:
                if later and not later.startswith((" ", "Traceback")):
                    return later.strip()
    for line in lines + stdout.splitlines():
        if re.search(r"error|abort|segmentation|core dumped|not found", line, re.I):
            return line.strip()
    tail = [line for line in lines if line.strip()]
    return tail[-1].strip() if tail else ""


def side_dir(results, side, ranks):
    return os.path.join(results, side if side == "moose" or ranks <= 1 else "%s-n%d" % (side, ranks))


def run_one(script, side, ranks, args):
    """Runs one script on one side; writes its logs, dump and record; returns the record."""
    name, file, blob = script
    outdir = side_dir(args.results, side, ranks)
    os.makedirs(outdir, exist_ok=True)
    dump = os.path.join(outdir, name + ".json")
    if os.path.exists(dump):
        os.remove(dump)
    # PYTHONDONTWRITEBYTECODE: no __pycache__ in hook/ and shim/ (they are in the repository)
    env = dict(os.environ, MPLBACKEND="Agg", MOOSE_COMPAT_DUMP=dump, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONSTARTUP", None)
    cwd = tempfile.mkdtemp(prefix="moose_compat_%s_" % side)
    shutil.copy(file, cwd)  # run from a fresh folder, under the script's own name
    cmd = [PYTHON, os.path.basename(file)]
    if side == "moose":
        env["PYTHONPATH"] = os.pathsep.join([HOOK, args.moose_lib])
    else:
        env["PYTHONPATH"] = os.pathsep.join([HOOK, SHIM, args.antler])
        if ranks > 1:
            cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-n", str(ranks)] + cmd
    t0 = time.time()
    timed_out = False
    # Its own process group, so a timeout kills mpirun's ranks and any child the script starts.
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
                out, err = p.communicate(timeout=5)
                break
            except ProcessLookupError:
                out, err = p.communicate()
                break
            except subprocess.TimeoutExpired:
                continue
    wall = time.time() - t0
    shutil.rmtree(cwd, ignore_errors=True)
    out = out.decode("utf-8", "replace")
    err = err.decode("utf-8", "replace")
    with open(os.path.join(outdir, name + ".out"), "w") as f:
        f.write(out)
    with open(os.path.join(outdir, name + ".err"), "w") as f:
        f.write(err)
    ok = p.returncode == 0 and not timed_out
    rec = {"script": name, "blob": blob, "side": side, "ranks": ranks, "rc": p.returncode,
           "ok": ok, "wall_s": round(wall, 2), "cmd": " ".join(cmd),
           "pythonpath": env["PYTHONPATH"],
           "error": "" if ok else ("timeout after %d s" % args.timeout if timed_out
                                   else first_error(err, out)),
           # a script may catch an exception, print it and still exit 0: worth a note
           "stderr_error": first_error(err) if ok and "Traceback" in err else ""}
    with open(os.path.join(outdir, name + ".rc"), "w") as f:
        json.dump(rec, f, indent=1)
    rec["dump"] = read_json(dump)
    return rec


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def load_saved(script, side, ranks, results):
    """The record of an earlier run of this very script text, or None."""
    name, _, blob = script
    outdir = side_dir(results, side, ranks)
    rec = read_json(os.path.join(outdir, name + ".rc"))
    if rec is None or rec.get("blob") != blob:
        return None
    rec["dump"] = read_json(os.path.join(outdir, name + ".json"))
    return rec


# ---------------------------------------------------------------------------------------------
# Comparison

def compare_table(x, y, rtol):
    """None if antler's values y match MOOSE's x, else what differs."""
    if len(x) != len(y):
        return "len %d vs %d" % (len(x), len(y))
    scale = max([abs(v) for v in x if not math.isnan(v)] or [0.0])
    worst, at = 0.0, -1
    for i, (u, v) in enumerate(zip(x, y)):
        if math.isnan(u) and math.isnan(v):
            continue
        d = math.inf if math.isnan(u) or math.isnan(v) else abs(u - v)
        if d > worst:
            worst, at = d, i
    if worst > rtol * scale:
        return "max|diff| %.3g at [%d] (scale %.3g)" % (worst, at, scale)
    return None


def few(items, n=4):
    return ", ".join(items[:n]) + (" ..." if len(items) > n else "")


def compare(m, a, rtol):
    """(match, note): match True or False, or None when there is nothing to compare."""
    if m is None or a is None:
        return None, "no %s run" % ("MOOSE" if m is None else "antler")
    dm, da = m.get("dump"), a.get("dump")
    if dm is None or da is None:
        return None, "no dump (%s)" % ("MOOSE" if dm is None else "antler")
    tm, ta = dm["tables"], da["tables"]
    notes = []
    missing, extra = sorted(set(tm) - set(ta)), sorted(set(ta) - set(tm))
    if missing:
        notes.append("missing in antler: " + few(missing))
    if extra:
        notes.append("extra in antler: " + few(extra))
    common = sorted(set(tm) & set(ta))
    bad = []
    for key in common:
        diff = compare_table(tm[key], ta[key], rtol)
        if diff:
            bad.append("%s %s" % (key, diff))
    if bad:
        notes.append("%d/%d tables differ: %s" % (len(bad), len(common), "; ".join(bad[:3])
                                                   + (" ..." if len(bad) > 3 else "")))
    ctm, cta = dm.get("currentTime"), da.get("currentTime")
    time_differs = (ctm is not None and cta is not None
                    and abs(ctm - cta) > 1e-9 * max(1.0, abs(ctm)))
    if time_differs:
        notes.append("currentTime %g vs %g" % (ctm, cta))
    elif (ctm is None) != (cta is None):  # one side could not read it: noted, not counted
        notes.append("currentTime %s vs %s" % (ctm, cta))
    same = not (missing or extra or bad or time_differs)
    if da.get("errors"):
        notes.append("antler dump: " + da["errors"][0].strip().splitlines()[0])
    if not (m["ok"] and a["ok"]):
        return None, "; ".join(["(a run failed; partial dump)"] + notes)
    if not tm and not ta:  # nothing recorded: only a different currentTime counts against it
        return (None if same else False), "; ".join(["no tables"] + notes)
    if same:
        notes.insert(0, "%d tables equal" % len(tm))
    return same, "; ".join(notes)


def status(rec):
    if rec is None:
        return "-"
    if rec["ok"]:
        return "ok" + (" (stderr: %s)" % rec["stderr_error"][:80] if rec.get("stderr_error") else "")
    return "FAIL rc=%s: %s" % (rec["rc"], rec["error"][:160])


# ---------------------------------------------------------------------------------------------

def antler_stamp(antler):
    """Sizes and times of antler's files (Python package, libraries): a rebuild during the run
    shows up."""
    files = glob.glob(os.path.join(antler, "antler", "*.so")) + \
        glob.glob(os.path.join(antler, "antler", "*.py")) + \
        glob.glob(os.path.join(antler, "..", "libantler.so"))
    out = []
    for f in sorted(files):
        st = os.stat(f)
        out.append("%s %d B %s" % (os.path.basename(f), st.st_size,
                                   time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.st_mtime))))
    return "; ".join(out) or "no antler build found"


def default_moose_lib():
    for p in MOOSE_LIBS:
        if os.path.isdir(os.path.join(p, "moose")):
            return p
    return MOOSE_LIBS[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", choices=["both", "moose", "antler"], default="both",
                    help="which side to run; the other is read from saved results (default both)")
    ap.add_argument("-n", type=int, default=1, help="antler ranks: mpirun -n N when N > 1")
    ap.add_argument("-k", action="append", default=[], metavar="WORD",
                    help="only scripts whose name contains WORD (repeatable)")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per run (default 60)")
    ap.add_argument("--rtol", type=float, default=1e-6,
                    help="tolerance relative to a table's max |MOOSE value| (default 1e-6)")
    ap.add_argument("--moose-lib", default=None, metavar="DIR",
                    help="real MOOSE's python folder (default %s, else %s)" % tuple(MOOSE_LIBS))
    ap.add_argument("--antler", default=os.path.normpath(os.path.join(HERE, "../../build/python")),
                    metavar="DIR", help="antler's python folder (default: this repo's build/python)")
    ap.add_argument("--moose-core", default=MIRRORS % "moose-core", metavar="GITDIR",
                    help="bare git dir of BhallaLab/moose-core (default %(default)s)")
    ap.add_argument("--moose-examples", default=MIRRORS % "moose-examples", metavar="GITDIR",
                    help="bare git dir of BhallaLab/moose-examples (default %(default)s)")
    ap.add_argument("--work", default="/tmp/moose_compat", metavar="DIR",
                    help="scratch folder for the scripts and results (default %(default)s)")
    args = ap.parse_args()
    args.moose_lib = os.path.abspath(args.moose_lib or default_moose_lib())
    args.antler = os.path.abspath(args.antler)
    args.work = os.path.abspath(args.work)
    args.results = os.path.join(args.work, "results")

    entries, commits = read_list(LIST)
    if args.k:
        entries = [e for e in entries if any(k in script_name(*e) for k in args.k)]
    gitdirs = {"moose-core": args.moose_core, "moose-examples": args.moose_examples}
    scripts = extract(entries, commits, gitdirs, os.path.join(args.work, "scripts"))
    stamp0 = antler_stamp(args.antler)
    print("MOOSE: %s | antler: %s (%s) | antler ranks: %d | %d scripts | results: %s"
          % (args.moose_lib, args.antler, stamp0, args.n, len(scripts), args.results), flush=True)

    rows = []
    for script in scripts:
        m = (run_one(script, "moose", 1, args) if args.side in ("both", "moose")
             else load_saved(script, "moose", 1, args.results))
        a = (run_one(script, "antler", args.n, args) if args.side in ("both", "antler")
             else load_saved(script, "antler", args.n, args.results))
        match, note = compare(m, a, args.rtol)
        row = {"script": script[0], "moose": status(m), "antler": status(a),
               "match": {True: "yes", False: "NO", None: "-"}[match], "note": note,
               "moose_s": m and m["wall_s"], "antler_s": a and a["wall_s"]}
        rows.append(row)
        print("%-54s moose: %-12s antler: %-50s match: %-3s %s" % (
            row["script"], row["moose"][:12], row["antler"][:50], row["match"], note[:100]),
            flush=True)

    suffix = ("" if args.n <= 1 else "-n%d" % args.n) + ("-partial" if args.k else "")
    os.makedirs(args.results, exist_ok=True)
    with open(os.path.join(args.results, "summary%s.json" % suffix), "w") as f:
        json.dump(rows, f, indent=1)
    n_m = sum(r["moose"].startswith("ok") for r in rows)
    n_a = sum(r["antler"].startswith("ok") for r in rows)
    n_eq = sum(r["match"] == "yes" for r in rows)
    n_cmp = sum(r["match"] != "-" for r in rows)
    md = ["| script | MOOSE | antler%s | numbers match | note |"
          % ("" if args.n <= 1 else " (-n %d)" % args.n), "| --- | --- | --- | --- | --- |"]
    for r in rows:
        md.append("| %s |" % " | ".join(str(r[k]).replace("|", "\\|")
                                        for k in ("script", "moose", "antler", "match", "note")))
    stamp1 = antler_stamp(args.antler)
    md += ["", "MOOSE ok %d/%d, antler ok %d/%d, numbers match %d/%d (%d compared; '-': no Tables, "
           "or a run failed)" % (n_m, len(rows), n_a, len(rows), n_eq, len(rows), n_cmp),
           "", "MOOSE: %s; antler: %s (%s)%s" % (
               args.moose_lib, args.antler, stamp1,
               "" if stamp1 == stamp0 else "; REBUILT during the run, was %s" % stamp0)]
    text = "\n".join(md) + "\n"
    with open(os.path.join(args.results, "summary%s.md" % suffix), "w") as f:
        f.write(text)
    print()
    print(text, end="")


if __name__ == "__main__":
    sys.exit(main())
