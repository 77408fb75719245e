#!/usr/bin/env python3
"""The public single-knob groups (calibration/data/public): every manifest is well-formed by the
seed manifests' rules (check_seed_manifests.py), `vqsim check` accepts it (exit 0: it parses, every
run's set is a valid scenario, no figure is implausible), and scripts/accuracy fits it: each
manifest is named by exactly one PUBLIC_GROUPS entry, whose base scenario exists, and every
experiment's holdout leaves at least one run fitted and holds at least one out.

usage: check_public_manifests.py VQSIM SOURCE_DIR
"""
import importlib.machinery
import importlib.util
import pathlib
import re
import subprocess
import sys
import tomllib


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    vqsim, src = argv[1], pathlib.Path(argv[2])
    public = src / "calibration" / "data" / "public"
    problems = []

    p = subprocess.run([sys.executable, str(src / "tests" / "check_seed_manifests.py"), str(public)],
                       capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    if p.returncode != 0:
        problems.append("check_seed_manifests.py: " + p.stderr.strip())

    manifests = sorted(public.glob("*.toml"))
    if not manifests:
        problems.append(f"{public}: no manifests")
    for m in manifests:
        c = subprocess.run([vqsim, "check", str(m)], capture_output=True, text=True)
        if c.returncode != 0:
            problems.append(f"vqsim check {m.name}: exit {c.returncode}\n{c.stdout}{c.stderr}")
        else:
            print(f"vqsim check {m.name}: exit 0")

    loader = importlib.machinery.SourceFileLoader("accuracy", str(src / "scripts" / "accuracy"))
    spec = importlib.util.spec_from_loader("accuracy", loader)
    acc = importlib.util.module_from_spec(spec)
    loader.exec_module(acc)
    named = [pathlib.Path(grp["manifest"]).name for grp in acc.PUBLIC_GROUPS]
    for m in manifests:
        if named.count(m.name) != 1:
            problems.append(f"{m.name}: named by {named.count(m.name)} PUBLIC_GROUPS entries in scripts/accuracy (want 1)")
    for grp in acc.PUBLIC_GROUPS:
        base, manifest = src / grp["base"], src / grp["manifest"]
        if not base.is_file():
            problems.append(f"group {grp['group']}: base scenario {grp['base']} does not exist")
        if not manifest.is_file():
            problems.append(f"group {grp['group']}: manifest {grp['manifest']} does not exist")
            continue
        names = [r["name"] for r in tomllib.loads(manifest.read_text()).get("run", [])]
        for x in grp["experiments"]:
            held = [n for n in names if re.search(x["holdout"], n)]
            if not held or len(held) == len(names):
                problems.append(f"group {grp['group']}, '{x['label']}': holdout {x['holdout']} holds out {len(held)} of "
                                f"{len(names)} runs (want at least one fitted and one held out)")
    for pr in problems:
        print("problem: " + pr, file=sys.stderr)
    print(f"{len(manifests)} public manifests, {len(acc.PUBLIC_GROUPS)} groups, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
