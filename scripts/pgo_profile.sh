#!/usr/bin/env bash
# Profile-guided optimisation: write an LLVM profile of the extension to $1.
#
#   scripts/pgo_profile.sh PROFDATA [VENV]
#
# Builds the extension with instrumentation into VENV (default .venv), runs
# the training set below through it, and merges the counts with the
# llvm-profdata that matches rustc's LLVM (rustup's llvm-tools component,
# added if missing). The caller then builds the extension again with
# -Cprofile-use. The profile is taken from the extension itself because
# symbol names, which profiles are matched by, differ between the
# extension's build of the engine and any other.
#
# Training set: every shipped study scenario except study A's
# `baseline/no_cm` (the scenario the engine's speed target is measured on),
# plus bench/pgo/leaf_spine.toml (generated topology, ECMP, TCP), and study
# F's fabric with 200 us of arrivals (its full runs take minutes). A profile
# changes speed only: results are the same bits with or without one.
#
# Exits 3, writing nothing, when no llvm-profdata is available; the caller
# then builds without a profile.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=$1
venv=$(realpath "${2:-.venv}")

host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup >/dev/null 2>&1; then
    echo "pgo: adding rustup's llvm-tools component (llvm-profdata)"
    timeout 300 rustup component add llvm-tools >/dev/null 2>&1 || true
fi
if [ ! -x "$profdata" ]; then
    echo "pgo: no llvm-profdata for this rustc; building without a profile" >&2
    exit 3
fi

work=$(pwd)/target/pgo
rm -rf "$work/raw"
mkdir -p "$work/raw"
echo "pgo: instrumented build of the extension"
VIRTUAL_ENV=$venv PATH=$venv/bin:$PATH CARGO_TARGET_DIR="$work/build" \
    RUSTFLAGS="-Cprofile-generate=$work/raw" PIP_QUIET=1 "$venv/bin/maturin" develop --release --quiet
echo "pgo: training runs"
# Every shipped scenario but study F's fabric (minutes per run, instrumented longer still).
training=$(ls scenarios/*/*.toml bench/pgo/*.toml | grep -v -e '^scenarios/baseline/no_cm.toml$' -e '^scenarios/fct_fabric/')
LLVM_PROFILE_FILE="$work/raw/%p.profraw" "$venv/bin/python" - $training <<'PY'
import sys
from cnsim import _core
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        _core.run(f.read(), path)
# Study F's fabric with 200 us of arrivals: its completions start the event
# loop that places them by delay, which no other run of the set does.
import cnsim
cnsim.run("scenarios/fct_fabric/fabric.toml",
          set={"workloads[web].stop": "200us", "workloads[incast].stop": "200us"})
PY
"$profdata" merge -o "$out.tmp" "$work"/raw/*.profraw
mv "$out.tmp" "$out"
echo "pgo: profile written to $out"
