#!/usr/bin/env bash
# The GPU machine's software stack, rehearsed on a CPU before a GPU slot is spent.
#
#   bash benchmarks/device_stack_rehearsal.sh [--venv DIR] [--out DIR]
#
# A lent GPU machine (H100/H200) runs its own Python and torch, not ours: Python 3.12,
# torch 2.11.0+cu130, numpy 2.5.2 (/work/.library/device/KINDS.md lists them; FACTS.md).
# torch.compile's graph capture, flex_attention's API and autocast's operator lists change
# between torch versions, so code that passes here on the CPU pin (constraints.txt) can
# still fail there. This script builds that stack in a virtual environment (the CUDA build
# of torch runs on a CPU; about 4 GB of wheels from the package index, once) and runs, with
# it, what gpu_check.sh runs on the device at CPU sizes plus the neural tests:
#
# 1. `benchmarks/gpu_check.sh --cpu-smoke` with that Python (it also installs the wheels
#    the device lacks from benchmarks/wheels/, as on the device: run
#    `bash benchmarks/gpu_check.sh --fetch-wheels` first);
# 2. `pytest -m "not slow" tests/neural tests/neural_experiments` (compile tests included:
#    0 graph breaks with that torch's dynamo);
# 3. the collection of the gpu tests, as gpu_check.sh collects them on the device.
#
# Writes OUT/rehearsal.txt (default benchmarks/results/device-stack-<date>/). Exit status:
# the first failing step's.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${TMPDIR:-/tmp}/lds-device-stack"
OUT=""
# the device's versions (KINDS.md's package list, 2026-11)
PY_VERSION=3.12
TORCH=2.11.0
NUMPY=2.5.2
while [ $# -gt 0 ]; do
    case "$1" in
        --venv) VENV="$2"; shift ;;
        --out) OUT="$2"; shift ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "device_stack_rehearsal.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
OUT="${OUT:-$ROOT/benchmarks/results/device-stack-$(date -u +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT"
exec > >(tee "$OUT/rehearsal.txt") 2>&1

PYBIN=$(command -v "python$PY_VERSION" || true)
if [ -z "$PYBIN" ]; then
    echo "device_stack_rehearsal.sh: python$PY_VERSION is not on PATH (the device runs Python $PY_VERSION)" >&2
    exit 2
fi
if [ ! -x "$VENV/bin/python" ]; then
    echo "== creating $VENV (Python $PY_VERSION, torch $TORCH, numpy $NUMPY)"
    "$PYBIN" -m venv "$VENV" || exit 2
fi
"$VENV/bin/python" -m pip install -q "torch==$TORCH" "numpy==$NUMPY" scipy numba matplotlib \
    pytest pytest-xdist pytest-timeout hypothesis pyyaml || exit 2
"$VENV/bin/python" - <<'EOF'
import sys, numpy, torch
print(f"== stack: Python {sys.version.split()[0]}, torch {torch.__version__} "
      f"(CUDA {torch.version.cuda}, available: {torch.cuda.is_available()}), numpy {numpy.__version__}")
EOF
echo "== load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"

status=0
step() {
    local name="$1"; shift
    local t0=$(date +%s)
    echo "== $name: $*"
    "$@"
    local rc=$?
    echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s"
    [ $rc -ne 0 ] && [ $status -eq 0 ] && status=$rc
}

step smoke env PYTHON="$VENV/bin/python" bash benchmarks/gpu_check.sh --cpu-smoke \
    --out "$OUT/smoke"
step neural-tests env PYTHONPATH="$ROOT" "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
    -n 2 -m "not slow" tests/neural tests/neural_experiments
step gpu-collection env PYTHONPATH="$ROOT" "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
    -m gpu --collect-only tests/neural tests/neural_experiments
echo "== rehearsal: exit $status; $OUT/rehearsal.txt"
exit $status
