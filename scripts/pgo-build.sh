#!/usr/bin/env bash
# Builds a profile-guided reef: target/pgo/release/reef, 0-2 % faster than
# `cargo build --release` on `reef bench` (docs/performance.md). Optional: `cargo build
# --release` stays the way to build reef; this is for long sweeps and reproductions.
#
# 1. builds an instrumented reef (target/pgo-gen) and runs it on the training set: the
#    reference workloads (`reef bench`) and every config in examples/ (shortened);
# 2. merges the profile with the toolchain's llvm-profdata (rustup component llvm-tools,
#    added if missing) and builds target/pgo/release/reef with it;
# 3. checks the new binary against a plain release build: every example's JSON (wall
#    times aside) must be the same, bit for bit. It exits non-zero if not.
#
# The profile is made afresh on every run, so it never goes stale; nothing is committed.
# `reef bench` on the resulting binary says "profile-guided" in its JSON (`build`).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    echo "pgo: adding the rustup component llvm-tools (for llvm-profdata)"
    rustup component add llvm-tools
fi

data="$root/target/pgo-data"
rm -rf "$data"
mkdir -p "$data"
short=(--set 'sim.warmup="2000 cycles"' --set 'sim.measure="10000 cycles"')

echo "pgo: 1/3 instrumented build and training runs"
# REEF_PGO in both builds: the code the profile describes is the code it is used on.
# RUSTFLAGS replaces .cargo/config.toml's flags: the processor's instruction set again.
REEF_PGO=1 RUSTFLAGS="-Ctarget-cpu=native -Cprofile-generate=$data/raw" cargo build --release --target-dir target/pgo-gen
gen=target/pgo-gen/release/reef
"$gen" bench --in-process >/dev/null
for cfg in examples/*.toml; do
    "$gen" run -q "$cfg" "${short[@]}" >/dev/null
done

echo "pgo: 2/3 profile-guided build"
"$profdata" merge -o "$data/reef.profdata" "$data/raw"
REEF_PGO=1 RUSTFLAGS="-Ctarget-cpu=native -Cprofile-use=$data/reef.profdata" \
    cargo build --release --target-dir target/pgo
pgo=target/pgo/release/reef

echo "pgo: 3/3 the same results as a plain release build"
cargo build --release
plain=target/release/reef
strip_timing() {
    python3 -c '
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("wall_s", "flit_hops_per_s", "events_per_s")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True))' "$1"
}
for cfg in examples/*.toml; do
    for b in plain pgo; do
        "${!b}" run -q "$cfg" "${short[@]}" --json "$data/$b.json" >/dev/null
    done
    if [ "$(strip_timing "$data/plain.json")" != "$(strip_timing "$data/pgo.json")" ]; then
        echo "pgo: $cfg gives other results with the profile-guided build" >&2
        exit 1
    fi
done
echo "pgo: built $pgo (same results as $plain on every example)"
