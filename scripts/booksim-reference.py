#!/usr/bin/env python3
"""BookSim2's own numbers for the configs reef compares itself with (docs/booksim.md).

Runs a BookSim2 binary (booksim/booksim2 at commit 28f43299, built with `make` in its src/
with flex, bison and g++ from Debian's packages) on BookSim2's examples and the reference
workloads of `reef bench`, and writes what it printed:

  tests/data/booksim/reference.csv   one row per run: config, load (flits/node/cycle),
                                     seed, stable, packet and network latency, accepted
                                     flits, hops, cycles simulated, wall time, peak memory
  tests/data/booksim/saturation.csv  per config and seed: the highest stable load found by
                                     bisection, to 0.0025 flits/node/cycle

"Stable" is BookSim2's own verdict: the run converged and its average latency stayed under
latency_thres (500 cycles). Loads below saturation are 10, 30, 50, 70 and 90 % of the mean
saturation over the seeds. Every BookSim2 command line is written beside its row, so any
number can be reproduced by hand.

A config with a fifth field needs BookSim2 with that patch applied (scripts/, `patch -p1`
in BookSim2's tree), given as --patched BINARY; its rows' commands say so.

Usage: scripts/booksim-reference.py BOOKSIM_BINARY [--only NAME,...] [--seeds N] [--resume]
                                   [--patched PATCHED_BINARY]
"""

import argparse
import csv
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "booksim")
COMMIT = "28f43299f1706a3160ffac721ca461d74eb6e618"

# (name, config file under tests/data/booksim, overrides, sweep?) — loads are in flits per
# node per cycle: every sweep sets injection_rate_uses_flits=1. In place of True, a tuple of
# loads runs those (in flits) without the bisection, for configs too slow to sweep.
CONFIGS = [
    ("torus88", "examples/torus88", [], True),
    ("mesh88_lat", "examples/mesh88_lat", [], True),
    # Its 90 % point again with 10,000-cycle sample periods: with its own 1,000-cycle ones
    # BookSim2 stops at its first convergence, far from steady state.
    ("mesh88_lat-90%-long", "examples/mesh88_lat",
     ["injection_rate_uses_flits=1", "injection_rate=0.1418", "sample_period=10000"], False),
    ("mesh8x8-uniform-1vc", "workloads/mesh8x8-uniform", [], True),
    ("mesh8x8-uniform-8vc", "workloads/mesh8x8-uniform", ["num_vcs=8"], True),
    ("mesh32x32-uniform", "workloads/mesh32x32-uniform", [], False),
    ("torus16x16-uniform", "workloads/torus16x16-uniform", [], False),
    # A 10-ary 1-fly (one 10x10 router, dest_tag routing), configured at injection_rate =
    # 1.0, far past saturation: swept like the others.
    ("singleconfig", "examples/singleconfig", [], True),
    # anynet: three routers in a triangle from examples/anynet/anynet_file (read by
    # BookSim2 relative to its working directory, which run() sets to the config's).
    ("anynet", "examples/anynet/anynet_config", [], True),
    # The other switch allocators and the throughput simulation, at single points: the 8-VC
    # mesh at 90 % of its separable saturation with wavefront, rr_wavefront, loa and
    # max_size allocation, at 70 % as a throughput simulation, and singleconfig backlogged
    # (a flit a cycle a node) with max_size, where only the accepted throughput means
    # anything.
    ("mesh8x8-uniform-8vc-wavefront", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "sw_allocator=wavefront", "injection_rate_uses_flits=1", "injection_rate=0.3814"], False),
    ("mesh8x8-uniform-8vc-rr_wavefront", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "sw_allocator=rr_wavefront", "injection_rate_uses_flits=1", "injection_rate=0.3814"], False),
    ("mesh8x8-uniform-8vc-loa", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "sw_allocator=loa", "injection_rate_uses_flits=1", "injection_rate=0.3814"], False),
    ("mesh8x8-uniform-8vc-max_size", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "sw_allocator=max_size", "injection_rate_uses_flits=1", "injection_rate=0.3814"], False),
    ("mesh8x8-uniform-8vc-throughput", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "sim_type=throughput", "injection_rate_uses_flits=1", "injection_rate=0.2967"], False),
    ("singleconfig-max_size-backlogged", "examples/singleconfig",
     ["sw_allocator=max_size", "sim_type=throughput", "sample_period=10000"], False),
    # cmesh: 4x4 routers of 2x2 nodes, dor_no_express, bitcomp; flatfly: a 4-ary 2-flatfly
    # of 4 nodes a router, ran_min, uniform. Both swept like the others.
    ("cmeshconfig", "examples/cmeshconfig", [], True),
    # A 4-ary 3-tree (fattree.cpp, nca routing), configured at injection_rate = 0.6: swept.
    ("fattree_config", "examples/fattree_config", [], True),
    # The same with anca: two up ports drawn at random, the one with fewer credits used.
    ("fattree_config-anca", "examples/fattree_config", ["routing_function=anca"], True),
    ("flatflyconfig", "examples/flatflyconfig", [], True),
    # BookSim2's dragonfly example (dragonflynew, min routing, 10-cycle local and 100-cycle
    # global channels) with k = 2 (72 nodes, 36 routers in 9 groups), swept: with its
    # internal_speedup = 1.0, which reef runs, and as configured (2.0), which it refuses;
    # and with ugal (3 VCs, as ugal_dragonflynew asserts).
    ("dragonfly-k2", "examples/dragonflyconfig", ["k=2", "internal_speedup=1.0"], True),
    ("dragonfly-k2-speedup2", "examples/dragonflyconfig", ["k=2"], True),
    ("dragonfly-k2-ugal", "examples/dragonflyconfig",
     ["k=2", "internal_speedup=1.0", "num_vcs=3", "routing_function=ugal"], True),
    # BookSim2's dragonfly (dragonflynew, min routing, 10-cycle local and 100-cycle global
    # channels) as configured: 1,056 nodes at 0.8 flits a cycle, 36 minutes for seed 1 here
    # (--seeds 1).
    ("dragonflyconfig", "examples/dragonflyconfig", [], False),
    # The same with internal_speedup = 1.0, which reef runs, at two loads (reef saturates
    # near 0.5): about 15 minutes a run at 0.3 here, so seed 1 only (--seeds 1).
    ("dragonflyconfig-speedup1", "examples/dragonflyconfig", ["internal_speedup=1.0"], (0.1, 0.3)),
    # The 8-VC mesh with the randomized routing functions: valiant (dimension order to a
    # random intermediate router in VCs 0-3, then to the destination in 4-7) and xy_yx (x
    # or y first by a coin, VCs 0-3 or 4-7). Swept like the others.
    ("mesh8x8-uniform-8vc-valiant", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "routing_function=valiant"], True),
    ("mesh8x8-uniform-8vc-xy_yx", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "routing_function=xy_yx"], True),
    # output_speedup = 2: each output takes up to two flits a cycle from the crossbar, one
    # from the even and one from the odd input ports, into a queue that sends one a cycle.
    ("mesh8x8-uniform-8vc-output_speedup2", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "output_speedup=2"], True),
    # adaptive_xy_yx: x or y first chosen at the first router by the credits used on the
    # two outputs (a coin on a tie), VCs 0-3 or 4-7.
    ("mesh8x8-uniform-8vc-adaptive_xy_yx", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "routing_function=adaptive_xy_yx"], True),
    # min_adapt: VC 0 an escape channel by dimension order (priority 0), VCs 1-7 on the
    # productive directions (priority 1). As BookSim2 runs it, only the first of those is
    # kept (its OutputSet orders by priority alone) and its default iSLIP VC allocator
    # ignores the priorities: dimension order's path on any VC, kept on VC 0 once there.
    ("mesh8x8-uniform-8vc-min_adapt", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "routing_function=min_adapt"], True),
    # The same with the separable input-first VC allocator, whose arbiters weigh the
    # priorities: VC 0 only when VCs 1-7 of the output are all taken.
    ("mesh8x8-uniform-8vc-min_adapt-sif", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "routing_function=min_adapt", "vc_allocator=separable_input_first"], True),
    # mesh88_lat at 90 % of its saturation (0.1418 flits a cycle a node), where one seed's
    # average swings from 108 to 238 cycles on either side: 12 seeds (--seeds 12).
    ("mesh88_lat-90-12seeds", "examples/mesh88_lat", [], (0.1418,)),
    # valiant on BookSim2's torus example with 8 VCs (two dateline classes of two phases).
    # BookSim2's valiant_torus reads an uninitialized ring class on a hop that goes on in
    # the same dimension and its assertion fails at once: these rows come from BookSim2
    # with the one-line patch that keeps the class along the dimension, as dim_order_torus
    # does (scripts/booksim2-valiant-torus.patch).
    ("torus88-valiant", "examples/torus88", ["num_vcs=8", "routing_function=valiant"], True,
     "booksim2-valiant-torus.patch"),
    # min_adapt on BookSim2's torus example with 4 VCs (min_adapt_torus: VCs 0 and 1 the
    # dateline escape by dimension order, VC 3 the one adaptive VC; BookSim2 asserts with 1
    # or 3). As it runs, its OutputSet keeps the lowest dimension's minimal direction alone.
    # With its default iSLIP VC allocator, blind to the priorities, and with the separable
    # input-first one, which takes the escape VC only when VC 3 is taken.
    ("torus88-min_adapt", "examples/torus88", ["num_vcs=4", "routing_function=min_adapt"], True),
    ("torus88-min_adapt-sif", "examples/torus88",
     ["num_vcs=4", "routing_function=min_adapt", "vc_allocator=separable_input_first"], True),
    # BookSim2's flatfly example (4-ary 2-flatfly, 4 nodes a router, 8 VCs, 1-flit packets,
    # routing a router ahead) with valiant_flatfly (lowest dimension first to a random
    # intermediate router in VCs 0-3, then to the destination in 4-7) and ugal_flatfly
    # (ugal_flatfly_onchip: at the source router minimal or through a random intermediate
    # router of the minimal quadrant, by the credits used on the two outputs).
    ("flatflyconfig-valiant", "examples/flatflyconfig", ["routing_function=valiant"], True),
    ("flatflyconfig-ugal", "examples/flatflyconfig", ["routing_function=ugal"], True),
    # The same with xyyx_flatfly (x or y first by a coin at the first router, VCs 0-3 or
    # 4-7), adaptive_xyyx_flatfly (the order by the credits used on its two next outputs,
    # the coin on a tie) and ugal_xyyx_flatfly_onchip (ugal in the coin's order, the VCs in
    # quarters: order, then phase).
    ("flatflyconfig-xyyx", "examples/flatflyconfig", ["routing_function=xyyx"], True),
    ("flatflyconfig-adaptive_xyyx", "examples/flatflyconfig", ["routing_function=adaptive_xyyx"], True),
    ("flatflyconfig-ugal_xyyx", "examples/flatflyconfig", ["routing_function=ugal_xyyx"], True),
    # ugal_pni_flatfly_onchip: ugal with each phase's VCs (and the injection VCs) split
    # further by a digit of the destination, k ways; it asserts k = c, which the example
    # has (k = c = 4, so 8 VCs give one VC a phase and digit).
    ("flatflyconfig-ugal_pni", "examples/flatflyconfig", ["routing_function=ugal_pni"], True),
]


def number(text, label):
    m = re.findall(re.escape(label) + r" = ([-0-9.e+]+)", text)
    return float(m[-1]) if m else None


def run(binary, cfg, overrides, patch=None):
    """Runs BookSim2 once; returns the figures of its overall statistics."""
    args = [binary, cfg] + overrides
    t0 = time.time()
    p = subprocess.run(["/usr/bin/time", "-f", "PEAK_KB %M"] + args, capture_output=True, text=True,
                       cwd=os.path.dirname(cfg))
    wall = time.time() - t0
    out = p.stdout
    overall = out.split("====== Overall Traffic Statistics ======")
    # BookSim2 exits with -1 when the simulation succeeded and 0 when it did not: its own
    # words are the verdict.
    stable = len(overall) > 1 and "Simulation unstable" not in out
    tail = overall[-1] if stable else ""
    peak = re.search(r"PEAK_KB (\d+)", p.stderr)
    cycles = re.findall(r"Time taken is (\d+) cycles", out)
    return {
        "stable": int(stable),
        "packet_latency": number(tail, "Packet latency average"),
        "network_latency": number(tail, "Network latency average"),
        "accepted_flits": number(tail, "Accepted flit rate average"),
        "hops": number(tail, "Hops average"),
        "cycles": int(cycles[-1]) if cycles else None,
        "wall_s": round(wall, 3),
        "peak_kb": int(peak.group(1)) if peak else None,
        "command": " ".join([f"booksim+{patch}" if patch else "booksim", os.path.relpath(cfg, DATA)] + overrides),
    }


def saturation(binary, cfg, base, seed, hi=1.0, patch=None):
    """The highest load BookSim2 calls stable, by bisection to 0.0025."""
    lo = 0.0
    while hi - lo > 0.0025:
        mid = (lo + hi) / 2
        r = run(binary, cfg, base + [f"injection_rate={mid:.6f}", f"seed={seed}"], patch)
        print(f"  seed {seed} load {mid:.4f}: {'stable' if r['stable'] else 'unstable'}", file=sys.stderr)
        if r["stable"]:
            lo = mid
        else:
            hi = mid
    return lo


def load_csv(name):
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def store(name, config, new):
    """Writes `new` in place of the rows of `config` in DATA/name, keeping CONFIGS' order."""
    order = [c[0] for c in CONFIGS]
    kept = [r for r in load_csv(name) if r["config"] != config] + new
    kept.sort(key=lambda r: order.index(r["config"]) if r["config"] in order else len(order))
    path = os.path.join(DATA, name)
    with open(path + ".tmp", "w", newline="") as f:
        f.write(f"# BookSim2 {COMMIT}, scripts/booksim-reference.py, {time.strftime('%Y-%m-%d')}\n")
        w = csv.DictWriter(f, fieldnames=list(new[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(kept)
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("booksim")
    ap.add_argument("--only")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--resume", action="store_true", help="skip configs reference.csv has")
    ap.add_argument("--patched", help="BookSim2 built with the patch a config names")
    a = ap.parse_args()
    seeds = range(1, a.seeds + 1)
    for name, path, extra, sweep, *patch in CONFIGS:
        if a.only and name not in a.only.split(","):
            continue
        patch = patch[0] if patch else None
        if patch and not a.patched:
            sys.exit(f"{name} needs BookSim2 with scripts/{patch} applied: give it as --patched")
        binary = os.path.abspath(a.patched if patch else a.booksim)
        if a.resume and any(r["config"] == name for r in load_csv("reference.csv")):
            print(f"{name}: in reference.csv already", file=sys.stderr)
            continue
        rows, sats = [], []
        cfg = os.path.join(DATA, path)
        print(f"{name}", file=sys.stderr)
        if isinstance(sweep, tuple):
            base = extra + ["injection_rate_uses_flits=1"]
            runs = [(base + [f"injection_rate={x}"], x) for x in sweep]
        elif sweep:
            base = extra + ["injection_rate_uses_flits=1"]
            s = [saturation(binary, cfg, base, seed, patch=patch) for seed in seeds]
            for seed, v in zip(seeds, s):
                prog = f"booksim+{patch}" if patch else "booksim"
                sats.append({"config": name, "seed": seed, "saturation": f"{v:.4f}",
                             "command": " ".join([prog, path] + base + [f"seed={seed}"])})
            mean = sum(s) / len(s)
            loads = [round(mean * f, 4) for f in (0.1, 0.3, 0.5, 0.7, 0.9)]
            runs = [(base + [f"injection_rate={x}"], x) for x in loads]
        else:
            runs = [(extra, "as configured")]
        for over, load in runs:
            for seed in seeds:
                r = run(binary, cfg, over + [f"seed={seed}"], patch)
                rows.append({"config": name, "load": load, "seed": seed, **r})
                print(f"  {load} seed {seed}: {r['packet_latency']} cycles, {r['wall_s']} s", file=sys.stderr)
        # Each config's rows replace its old ones as soon as it is done, so an interrupted
        # reference run keeps what finished.
        store("reference.csv", name, rows)
        if sats:
            store("saturation.csv", name, sats)


if __name__ == "__main__":
    main()
