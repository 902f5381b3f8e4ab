#!/usr/bin/env python3
"""Layer check: every #include "..." in lib/, apps/ and kernels/ goes to its own room or a lower one.

A file's room is lib/<room>/ (every folder under lib/model/ counts as model), apps/ or kernels/. A
file may include its own room or any lower-ranked room; rooms of one rank include each other only
where PEER_INCLUDES lists the pair; kernels/ includes nothing of lib/ or apps/; tests/ may not
include apps/; an include cycle between rooms is an error. Rooms that do not exist yet are empty.
A model family (lib/model/<family>/, <family> in MODEL_FAMILIES) is included only by its own files
and FAMILY_REGISTRY (and tests); every folder of lib/model/ the registry includes must be listed. Any
other folder under lib/model/ (e.g. lib/model/text/) is shared model code: it includes no family and
any file may include it under the rank rules.

  scripts/check_layers.py              check the tree (exit 1 on a violation)
  scripts/check_layers.py --self-test  plant violations in a temporary copy and check they are found
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Highest first; the rooms of one entry share a rank.
RANK_TABLE = [
    ("apps",),
    ("tools",),     # golden and compare tools
    ("batch",),     # batch runtime
    ("plan",),      # planning and cost model
    ("pipeline",),
    ("model",),
    ("parallel",),
    ("ops", "sched", "dist"),
    ("io",),
    ("config",),    # plain configuration structs, no parsing
    ("core",),
    ("kernels",),   # device kernels and their CPU references: includes nothing of lib/
]

# Same-rank includes that are allowed: (from room, to room) -> reason. None today.
PEER_INCLUDES = {}

# Single includes allowed against the table: (file, included file), both from the root -> one-line
# reason. None today.
EXCEPTIONS = {}

# The model families: lib/model/<family>/ for each. A folder of lib/model/ not listed is shared model
# code (e.g. text/: the T5 tokenizer and prompt cleaning), which any model file may include.
MODEL_FAMILIES = ("wan", "cosmos3")

# The one file outside a family that may include it: the registry picks the family.
FAMILY_REGISTRY = "lib/model/registry.cpp"

SOURCE_DIRS = ("lib", "apps", "kernels")
TEST_DIR = "tests"
SOURCE_EXTS = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".inc", ".inl")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def rank_of(table):
    ranks = {}
    for i, rooms in enumerate(table):
        for room in rooms:
            ranks[room] = len(table) - 1 - i
    return ranks


def room_of(path):
    """Room of a path relative to the root (lib/<room>/..., apps/..., kernels/..., tests/...)."""
    parts = path.split("/")
    if parts[0] == "lib":
        return parts[1] if len(parts) > 2 else None
    return parts[0] if parts[0] in ("apps", "kernels", TEST_DIR) else None


def resolve(root, src, inc, ranks):
    """Path (relative to root) of what `src` includes as "inc", or None for a header outside the project."""
    local = os.path.normpath(os.path.join(os.path.dirname(src), inc))
    if not local.startswith("..") and os.path.isfile(os.path.join(root, local)):
        return local
    first = inc.split("/")[0]
    if first in ("apps", "kernels"):
        return os.path.normpath(inc)
    if "/" in inc and (first in ranks or os.path.isdir(os.path.join(root, "lib", first))):
        return os.path.normpath(os.path.join("lib", inc))  # a room that does not exist yet is empty
    return None


def scan(root, ranks):
    """Yields (file, line, included path) for every project include under the scanned folders."""
    for top in SOURCE_DIRS + (TEST_DIR,):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if not name.endswith(SOURCE_EXTS):
                    continue
                src = os.path.relpath(os.path.join(d, name), root)
                with open(os.path.join(root, src), encoding="utf-8", errors="replace") as f:
                    for line_no, line in enumerate(f, 1):
                        m = INCLUDE_RE.match(line)
                        if m:
                            target = resolve(root, src, m.group(1), ranks)
                            if target:
                                yield src, line_no, target


def model_folder_of(path):
    """The folder lib/model/<name>/ a path lies in (a family's or shared model code), or None."""
    parts = path.split("/")
    return "/".join(parts[:3]) if len(parts) > 3 and parts[:2] == ["lib", "model"] else None


def family_of(path):
    """The family folder lib/model/<family>/ a path lies in, or None (also for shared model code)."""
    folder = model_folder_of(path)
    return folder if folder and folder.split("/")[2] in MODEL_FAMILIES else None


def family_error(src, target):
    """Why the include of `target` from `src` breaks the family rule, or None."""
    if src == FAMILY_REGISTRY:  # the registry includes families only: a folder it includes must be one
        folder = model_folder_of(target)
        if folder and family_of(target) is None:
            return f"includes {folder}/, which is not in MODEL_FAMILIES (list the family there)"
        return None
    fam = family_of(target)
    if fam is None or family_of(src) == fam or room_of(src) == TEST_DIR:
        return None
    return f"includes the family {fam}/ from outside it (only the family and {FAMILY_REGISTRY} may)"


def edge_error(src, dst, ranks, peers):
    """Why an include from room `src` of room `dst` breaks the layers, or None."""
    if src == dst:
        return None
    if src == TEST_DIR:
        return "tests may not include apps" if dst == "apps" else None
    if src == "kernels":
        return "kernels include nothing of lib/ or apps/"
    for room in (src, dst):
        if room not in ranks:
            return f"room {room} is not in the rank table"
    if ranks[src] > ranks[dst]:
        return None
    if ranks[src] == ranks[dst] and (src, dst) in peers:
        return None
    return "upward" if ranks[src] < ranks[dst] else "same rank"


def room_cycles(graph):
    """One shortest cycle of rooms per strongly connected component of more than one room."""
    index, low, stack, on_stack, comps = {}, {}, [], set(), []

    def visit(v):  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [shortest_cycle(graph, comp) for comp in comps]


def shortest_cycle(graph, comp):
    """Rooms [a, b, ..., a] of a shortest cycle inside the component (breadth-first from each room)."""
    best = None
    for start in sorted(comp):
        parent, queue = {start: None}, [start]
        while queue:
            v = queue.pop(0)
            if start in graph.get(v, ()):
                path = [v]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                cycle = path[::-1] + [start]
                if best is None or len(cycle) < len(best):
                    best = cycle
                break
            for w in sorted(graph.get(v, ())):
                if w in comp and w not in parent:
                    parent[w] = v
                    queue.append(w)
    return best


def check(root, table=RANK_TABLE, peers=PEER_INCLUDES, exceptions=EXCEPTIONS):
    """Returns (number of includes checked, violation lines)."""
    ranks = rank_of(table)

    def label(room):
        return f"{room} ({ranks[room]})" if room in ranks else f"{room} (unranked)"

    checked, errors, graph, first_edge = 0, [], {}, {}
    for src, line, target in scan(root, ranks):
        a, b = room_of(src), room_of(target)
        if a is None or b is None:
            continue
        if a == TEST_DIR and b != "apps":
            continue  # tests are checked only for apps includes (and may include a family)
        checked += 1
        if a != b and a != TEST_DIR:
            graph.setdefault(a, set()).add(b)
            first_edge.setdefault((a, b), f"{src}:{line}")
        if (src, target) in exceptions:
            continue
        fam = family_error(src, target)
        if fam:
            errors.append(f"{src}:{line}: {fam}")
        why = edge_error(a, b, ranks, peers)
        if why:
            errors.append(f"{src}:{line}: includes room {label(b)} from room {label(a)}")
    for cycle in room_cycles(graph):
        text = " -> ".join(cycle)
        for a, b in zip(cycle, cycle[1:]):
            errors.append(f"{first_edge[(a, b)]}: includes room {label(b)} from room {label(a)}"
                          f" (include cycle {text})")
    return checked, errors


def copy_sources(root, dest):
    """Copies the scanned folders' source files (no data) to dest."""
    for top in SOURCE_DIRS + (TEST_DIR,):
        for d, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith(SOURCE_EXTS):
                    rel = os.path.relpath(os.path.join(d, name), root)
                    os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
                    shutil.copyfile(os.path.join(root, rel), os.path.join(dest, rel))


def plant(dest, files):
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        with open(os.path.join(dest, rel), "w", encoding="utf-8") as f:
            f.write(text)


def self_test(root):
    """Plants includes in temporary copies of the tree; each violation must be reported and each allowed
    include must not be, the tree is not touched."""
    _, baseline = check(root)
    ghost_table = [("ghost",)] + RANK_TABLE  # a ranked room with no folder
    cases = [  # name, planted files, rank table, peer includes, expected violations (none: stays clean)
        ("upward include", {"lib/core/x.h": '#pragma once\n#include "pipeline/video_pipeline.h"\n'}, RANK_TABLE, {},
         ["lib/core/x.h:2: includes room pipeline"]),
        ("include cycle", {"lib/ops/x.h": '#include "sched/y.h"\n', "lib/sched/y.h": '#include "ops/x.h"\n'},
         RANK_TABLE, {("ops", "sched"): "test", ("sched", "ops"): "test"}, ["include cycle ops -> sched -> ops"]),
        ("include cycle, default table", {"lib/ops/x.h": '#include "sched/y.h"\n',
                                          "lib/sched/y.h": '#include "ops/x.h"\n'},
         RANK_TABLE, {}, ["lib/ops/x.h:1: includes room sched", "include cycle ops -> sched -> ops"]),
        ("same-rank include", {"lib/dist/x.h": '#include "ops/x.h"\n', "lib/ops/x.h": "#pragma once\n"},
         RANK_TABLE, {}, ["lib/dist/x.h:1: includes room ops"]),
        ("kernels into lib", {"kernels/x/x.cuh": '#include "core/tensor.h"\n'}, RANK_TABLE, {},
         ["kernels/x/x.cuh:1: includes room core"]),
        ("tests into apps", {"tests/unit/x.cpp": '#include "apps/vgen/cli.h"\n'}, RANK_TABLE, {},
         ["tests/unit/x.cpp:1: includes room apps"]),
        ("family from outside it", {"lib/pipeline/x.h": '#include "model/wan/dit/transformer.h"\n'}, RANK_TABLE, {},
         ["lib/pipeline/x.h:1: includes the family lib/model/wan/"]),
        ("shared model code from a family and above",
         {"lib/model/wan/dit/x.h": '#include "model/text/tokenizer.h"\n',
          "lib/pipeline/x.h": '#include "model/text/prompt_clean.h"\n'}, RANK_TABLE, {}, []),
        ("family from shared model code", {"lib/model/text/x.h": '#include "model/wan/family.h"\n'}, RANK_TABLE, {},
         ["lib/model/text/x.h:1: includes the family lib/model/wan/"]),
        ("shared model code upward", {"lib/model/text/x.h": '#include "pipeline/video_pipeline.h"\n'}, RANK_TABLE, {},
         ["lib/model/text/x.h:1: includes room pipeline"]),
        ("family not in MODEL_FAMILIES", {"lib/model/newfam/family.h": "#pragma once\n",
                                          FAMILY_REGISTRY: '#include "model/registry.h"\n'
                                                           '#include "model/newfam/family.h"\n'},
         RANK_TABLE, {}, [f"{FAMILY_REGISTRY}:2: includes lib/model/newfam/, which is not in MODEL_FAMILIES"]),
        ("room without a folder", {"lib/core/x.h": '#include "ghost/y.h"\n'}, ghost_table, {},
         ["lib/core/x.h:1: includes room ghost"]),
    ]
    failed = 0
    for name, files, table, peers, expected in cases:
        with tempfile.TemporaryDirectory(prefix="check_layers_") as tmp:
            copy_sources(root, tmp)
            plant(tmp, files)
            _, errors = check(tmp, table, peers)
            cli_ok = True
            if table is RANK_TABLE and not peers:  # the command line too: exit 1 and the lines printed
                run = subprocess.run([sys.executable, os.path.abspath(__file__), "--root", tmp],
                                     capture_output=True, text=True)
                if expected:
                    cli_ok = run.returncode == 1 and all(x in run.stdout for x in expected)
                else:
                    cli_ok = run.returncode == (1 if baseline else 0)
        new = [e for e in errors if e not in baseline]
        if expected:
            missing = [x for x in expected if not any(x in e for e in new)] or ([] if cli_ok else ["the command line"])
            verdict = "found" if not missing else "MISSED " + "; ".join(missing)
        else:
            missing = new or ([] if cli_ok else ["the command line"])
            verdict = "clean" if not missing else "NOT CLEAN"
        print(f"self-test: {name}: {verdict}")
        for e in new:
            print(f"  {e}")
        failed += bool(missing)
    # A clean copy reports what the tree reports.
    with tempfile.TemporaryDirectory(prefix="check_layers_") as tmp:
        copy_sources(root, tmp)
        same = check(tmp)[1] == baseline
    print(f"self-test: clean copy: {'same as the tree' if same else 'DIFFERS from the tree'}")
    failed += not same
    print("self-test: OK" if not failed else f"self-test: {failed} case(s) FAILED")
    return 0 if not failed else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="project root (default: this script's parent folder)")
    parser.add_argument("--self-test", action="store_true", help="check that planted violations are found")
    args = parser.parse_args()
    if args.self_test:
        return self_test(args.root)
    checked, errors = check(args.root)
    for e in errors:
        print(e)
    if errors:
        print(f"layers: {len(errors)} violation(s) in {checked} includes checked", file=sys.stderr)
        return 1
    print(f"layers: {checked} includes checked, OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
