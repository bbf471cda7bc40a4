#!/usr/bin/env python3
"""BookSim2's own numbers for its batch simulations and for `include_queuing = 0`
(docs/booksim.md, "Batch simulations"), as test data for tests/booksim.rs.

Runs a BookSim2 binary (booksim/booksim2 at commit 28f43299, built with `make` in its src/)
on BookSim2's examples and the reference workloads with `sim_type=batch` (and a few with
`include_queuing=0`), seeds 1 to 4, and writes tests/data/booksim/batch.csv: one row per
run with the packet and network latency averages and, for a batch, the average batch
duration BookSim2 printed, beside the exact command line (run in the config's directory,
as BookSim2 reads an anynet's network file relative to it).

Usage: scripts/booksim-batch.py BOOKSIM_BINARY [--seeds N]
"""

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "booksim")
COMMIT = "28f43299f1706a3160ffac721ca461d74eb6e618"

# (name, config under tests/data/booksim, overrides)
CONFIGS = [
    ("torus88", "examples/torus88", ["sim_type=batch", "batch_size=200"]),
    ("mesh88_lat", "examples/mesh88_lat", ["sim_type=batch", "batch_size=200"]),
    ("singleconfig", "examples/singleconfig", ["sim_type=batch", "batch_size=200"]),
    ("anynet", "examples/anynet/anynet_config", ["sim_type=batch", "batch_size=200"]),
    ("cmeshconfig", "examples/cmeshconfig", ["sim_type=batch", "batch_size=200"]),
    ("flatflyconfig", "examples/flatflyconfig", ["sim_type=batch", "batch_size=100"]),
    ("fattree_config", "examples/fattree_config", ["sim_type=batch", "batch_size=100"]),
    ("dragonflyconfig", "examples/dragonflyconfig", ["sim_type=batch", "batch_size=100"]),
    # (A batch ends with its slowest source: the 1-VC mesh's durations need long batches to
    # settle, −4.9 % over 200-packet ones, −1.7 % over 500.)
    ("mesh8x8-uniform-1vc", "workloads/mesh8x8-uniform", ["sim_type=batch", "batch_size=500"]),
    ("mesh8x8-uniform-8vc", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "sim_type=batch", "batch_size=200"]),
    ("torus16x16-uniform", "workloads/torus16x16-uniform", ["sim_type=batch", "batch_size=50"]),
    # Sources that wait while max_outstanding_requests of their packets are in flight.
    ("mesh8x8-uniform-1vc-window4", "workloads/mesh8x8-uniform",
     ["sim_type=batch", "batch_size=200", "max_outstanding_requests=4"]),
    ("torus88-window2", "examples/torus88",
     ["sim_type=batch", "batch_size=200", "max_outstanding_requests=2"]),
    ("flatflyconfig-window8", "examples/flatflyconfig",
     ["sim_type=batch", "batch_size=100", "max_outstanding_requests=8"]),
    # Latency from the front of the source queue, in a batch and in a latency simulation.
    ("torus88-noqueuing", "examples/torus88",
     ["sim_type=batch", "batch_size=500", "include_queuing=0"]),
    ("mesh8x8-uniform-1vc-noqueuing", "workloads/mesh8x8-uniform",
     ["sim_type=batch", "batch_size=500", "include_queuing=0"]),
    ("mesh8x8-uniform-8vc-0.35-noqueuing", "workloads/mesh8x8-uniform",
     ["num_vcs=8", "injection_rate_uses_flits=1", "injection_rate=0.35", "include_queuing=0"]),
]


def last(pattern, text):
    found = re.findall(pattern, text)
    return found[-1] if found else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("booksim")
    ap.add_argument("--seeds", type=int, default=4)
    a = ap.parse_args()
    rows = []
    for name, cfg, over in CONFIGS:
        for seed in range(1, a.seeds + 1):
            args = over + [f"seed={seed}"]
            path = os.path.join(DATA, cfg)
            out = subprocess.run([os.path.abspath(a.booksim), path] + args, capture_output=True,
                                 text=True, cwd=os.path.dirname(path)).stdout
            plat = last(r"Packet latency average = ([\d.e+-]+) \(", out)
            nlat = last(r"Network latency average = ([\d.e+-]+) \(", out)
            batch = last(r"Average batch duration = ([\d.e+-]+)", out)
            if not plat:
                sys.exit(f"{name} seed {seed}: no packet latency in BookSim2's output")
            command = " ".join(["booksim", cfg] + args)
            rows.append(f"{name},{seed},{plat},{nlat},{batch},{command}")
            print(rows[-1], flush=True)
    with open(os.path.join(DATA, "batch.csv"), "w") as f:
        f.write(f"# BookSim2 {COMMIT}, scripts/booksim-batch.py\n")
        f.write("config,seed,packet_latency,network_latency,batch_duration,command\n")
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
