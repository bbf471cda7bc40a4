#!/usr/bin/env python3
"""BookSim2 on a line of routers, saturated (tests/data/booksim/line.cfg): each case's
accepted throughput and network latency, written to tests/data/booksim/lines.csv for
tests/booksim.rs (`credit_loops_and_flit_stays_are_booksims`). The cases vary the buffer,
the packet size, the VCs, credit_delay, wait_for_tail_credit and routing_delay (with one
VC) and the line's length: 3,000-cycle sample periods,
as BookSim2's throughput simulation takes them. BookSim2 exits with 255 past saturation,
which these are.

With --speedup2 it writes tests/data/booksim/lines-speedup2.csv instead: the same line with
BookSim2's internal_speedup = 2.0 (two allocations a cycle into output queues, as
`dragonflyconfig` runs), over buffers 1, 2, 4 and 8, packets of 1 and 4 flits, 1 and 2 VCs,
credit_delay 0 and 2 and routing_delay 0 and 1 (`internal_speedup_is_booksims`).

Usage: scripts/booksim-lines.py BOOKSIM_BINARY [--speedup2]
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "booksim")


def run(binary, over):
    out = subprocess.run([binary, "line.cfg", *over.split()], cwd=DATA,
                         capture_output=True, text=True).stdout
    acc = re.findall(r"Accepted flit rate average = ([\d.e-]+)", out)[-1]
    lat = re.findall(r"Network latency average = ([\d.e-]+)", out)[-1]
    return acc, lat


def speedup2(binary):
    rows = []
    for k in (2, 4):
        for buf in (1, 2, 4, 8):
            for ps in (1, 4):
                for vcs in (1, 2):
                    for cd in (0, 2):
                        for rd in (0, 1):
                            over = (f"k={k} vc_buf_size={buf} packet_size={ps} num_vcs={vcs} "
                                    f"credit_delay={cd} routing_delay={rd} internal_speedup=2.0")
                            acc, lat = run(binary, over)
                            rows.append(f"{k},{buf},{ps},{vcs},{cd},{rd},{acc},{lat},"
                                        f"booksim line.cfg {over}")
    with open(os.path.join(DATA, "lines-speedup2.csv"), "w") as f:
        f.write("# BookSim2 (booksim/booksim2 at 28f43299) on line.cfg: "
                "scripts/booksim-lines.py --speedup2\n")
        f.write("k,vc_buf_size,packet_size,num_vcs,credit_delay,routing_delay,"
                "accepted_flits,network_latency,command\n")
        f.write("\n".join(rows) + "\n")


def main():
    binary = sys.argv[1]
    if sys.argv[2:] == ["--speedup2"]:
        return speedup2(binary)
    rows = []
    for k in (2, 4):
        for buf in (1, 2, 3, 4, 6):
            for ps in (1, 4):
                for vcs in (1, 2):
                    for cd in (0, 2):
                        # With one VC, also waiting for the tail's credit and routing a
                        # router ahead (routing_delay = 0).
                        for tail, rd in ((0, 1), (1, 1), (0, 0), (1, 0)) if vcs == 1 else ((0, 1),):
                            over = (f"k={k} vc_buf_size={buf} packet_size={ps} num_vcs={vcs} "
                                    f"credit_delay={cd} wait_for_tail_credit={tail} routing_delay={rd}")
                            out = subprocess.run([binary, "line.cfg", *over.split()], cwd=DATA,
                                                 capture_output=True, text=True).stdout
                            acc = re.findall(r"Accepted flit rate average = ([\d.e-]+)", out)[-1]
                            lat = re.findall(r"Network latency average = ([\d.e-]+)", out)[-1]
                            rows.append(f"{k},{buf},{ps},{vcs},{cd},{tail},{rd},{acc},{lat},"
                                        f"booksim line.cfg {over}")
    with open(os.path.join(DATA, "lines.csv"), "w") as f:
        f.write("# BookSim2 (booksim/booksim2 at 28f43299) on line.cfg: scripts/booksim-lines.py\n")
        f.write("k,vc_buf_size,packet_size,num_vcs,credit_delay,wait_for_tail_credit,"
                "routing_delay,accepted_flits,network_latency,command\n")
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
