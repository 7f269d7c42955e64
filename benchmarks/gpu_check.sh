#!/usr/bin/env bash
# One prepared run on a lent GPU (H100/H200): the GPU tests, the CUDA layer table, the
# training table, a 200-step bf16-vs-fp32 loss comparison and a slice of the gpu scale, each
# part time-boxed, everything written as it goes to a results directory named after the
# device, with a markdown summary (summary.md) that docs/benchmarks.md can include.
#
#   bash benchmarks/gpu_check.sh                 # on the GPU machine: <= 8 minutes
#   bash benchmarks/gpu_check.sh --cpu-smoke     # every part at tiny sizes on a CPU
#   bash benchmarks/gpu_check.sh --fetch-wheels  # before: pure-Python wheels the GPU
#                                                # machine lacks (python-control, ...)
#
# Through the device tool (it returns files from $OUT only, at most 8): carry
# benchmarks/wheels and run `bash benchmarks/gpu_check.sh --bundle $OUT/gpu-check.tar.gz`;
# unpack the archive into docs/results/gpu-check/ here.
#
# Options: --out DIR (default benchmarks/results/<device>-<date>), --bundle FILE (a .tar.gz of
# that directory at the end), PYTHON=... (default: the
# worktree's .venv/bin/python when present, else python3). Each part's box in seconds can be
# changed with BOX_TESTS, BOX_LAYERS, BOX_TRAINING, BOX_BF16, BOX_SLICE (defaults sum to
# 445 s; with start-up and the summary the run stays under 8 minutes).
#
# Exit status: 0 when every part, the summary and the bundle succeeded; 1 when any failed
# (one line at the end names which: a part's exit status, a --cpu-smoke part cut by its box,
# the summary, the bundle; on a GPU a part cut by its box keeps what it measured and is named
# in a line of its own, failing the run only when no part finished), or when the run cannot
# start (PYTHON does not run, torch is missing, --out cannot
# be written); 2 for a bad argument or BOX_* value, or no CUDA device outside --cpu-smoke.
#
# The GPU machines have torch, numpy, scipy, numba, matplotlib, pytest and hypothesis but not
# python-control and no package index (FACTS.md): --fetch-wheels downloads the pure-Python
# wheels of what lds_toolkit and its tests need beyond those into benchmarks/wheels/ (git
# ignores it: give it to the run as carried files), and a run installs the missing ones from
# there with pip --no-index into benchmarks/.device-site/ (on PYTHONPATH, like this checkout).
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MODE=gpu
OUT=""
OUT_GIVEN=0
BUNDLE=""
WHEELS="$ROOT/benchmarks/wheels"
# import name -> distribution of the wheels a GPU machine may lack
PURE=(control:control joblib:joblib threadpoolctl:threadpoolctl tqdm:tqdm
      pytest_timeout:pytest-timeout filelock:filelock psutil:psutil)
die() { local code="$1"; shift; echo "gpu_check.sh: $*" >&2; exit "$code"; }
# value OPTION "$@": the option's value, refused when missing, empty or another option
value() {
    local opt="$1"
    [ $# -ge 2 ] || die 2 "$opt needs a value (see --help)"
    [ -n "$2" ] || die 2 "$opt needs a non-empty value, got ''"
    case "$2" in -*) die 2 "$opt needs a value, got the option $2" ;; esac
    printf '%s' "$2"
}
while [ $# -gt 0 ]; do
    case "$1" in
        --cpu-smoke) MODE=smoke ;;
        --out) OUT=$(value "$@") || exit 2; OUT_GIVEN=1; shift ;;
        --fetch-wheels) MODE=fetch ;;
        --bundle) BUNDLE=$(value "$@") || exit 2; shift ;;
        -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
        *) die 2 "unknown argument $1 (see --help)" ;;
    esac
    shift
done
for var in BOX_TESTS BOX_LAYERS BOX_TRAINING BOX_BF16 BOX_SLICE; do
    val="${!var-}"
    if [ -n "${!var+set}" ] && ! [[ "$val" =~ ^[1-9][0-9]*$ ]]; then
        die 2 "$var must be a whole number of seconds > 0, got '$val'"
    fi
done
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    die 1 "PYTHON=$PYTHON: no such command (set PYTHON to a Python 3 interpreter)"
fi
if ! "$PYTHON" -c "import sys; sys.exit(sys.version_info < (3, 10))" 2>/dev/null; then
    die 1 "PYTHON=$PYTHON does not run as a Python >= 3.10 (set PYTHON to one)"
fi
if [ "$MODE" = fetch ]; then
    mkdir -p "$WHEELS" || die 1 "cannot create $WHEELS"
    dists=()
    for pair in "${PURE[@]}"; do dists+=("${pair#*:}"); done
    "$PYTHON" -m pip download --no-deps --only-binary=:all: -d "$WHEELS" "${dists[@]}"
    rc=$?
    [ $rc -eq 0 ] || die 1 "--fetch-wheels: '$PYTHON -m pip download' failed (exit $rc): \
no pip, or no package index reachable; nothing complete in $WHEELS"
    exit 0
fi
if ! "$PYTHON" -c "import torch" 2>/dev/null; then
    die 1 "PYTHON=$PYTHON cannot import torch, which every part needs (pip install torch)"
fi
if [ -n "$BUNDLE" ]; then  # fail now, not after eight minutes
    bdir=$(dirname -- "$BUNDLE")
    [ -d "$bdir" ] && [ -w "$bdir" ] || die 1 "--bundle $BUNDLE: cannot write in '$bdir'"
fi
# what the machine lacks, from the wheels brought along (nothing is downloaded here), into a
# folder of this checkout on PYTHONPATH rather than into the machine's own environment
SITE="$ROOT/benchmarks/.device-site"
export PYTHONPATH="$ROOT:$SITE${PYTHONPATH:+:$PYTHONPATH}"
for pair in "${PURE[@]}"; do
    mod="${pair%%:*}"; dist="${pair#*:}"
    if ! "$PYTHON" -c "import $mod" 2>/dev/null; then
        wheel=$(ls "$WHEELS"/"${dist//-/_}"-*.whl 2>/dev/null | head -1)
        if [ -n "$wheel" ]; then
            "$PYTHON" -m pip install --quiet --no-index --no-deps --no-compile --upgrade \
                --target "$SITE" "$wheel" || echo "gpu_check.sh: could not install $wheel" >&2
        else
            echo "gpu_check.sh: $mod is missing and no wheel of $dist is in $WHEELS" >&2
        fi
    fi
done

if [ "$MODE" = smoke ]; then
    DEVICE=cpu
    NAME=cpu-smoke
else
    DEVICE=cuda
    NAME=$("$PYTHON" -c "import torch; print(torch.cuda.get_device_name() if torch.cuda.is_available() else '')" 2>/dev/null)
    if [ -z "$NAME" ]; then
        echo "gpu_check.sh: no CUDA device here (torch.cuda.is_available() is False); on a CPU run --cpu-smoke" >&2
        exit 2
    fi
fi
SLUG=$(printf '%s' "$NAME" | tr -cs 'A-Za-z0-9' '-' | sed 's/^-//; s/-$//' | tr 'A-Z' 'a-z')
[ "$OUT_GIVEN" = 1 ] || OUT="$ROOT/benchmarks/results/$SLUG-$(date -u +%Y%m%d-%H%M%S)"
mkdir -p -- "$OUT" 2>/dev/null || die 1 "--out $OUT: cannot create the directory"
OUT="$(cd -- "$OUT" && pwd)"
STATUS="$OUT/parts.tsv"
printf 'part\tstatus\tseconds\tbox\n' 2>/dev/null > "$STATUS" \
    || die 1 "--out $OUT: cannot write there ($STATUS)"
FAILED=()  # what makes the run exit 1
CUT=()     # GPU parts cut by their box (they keep what they measured)
N_OK=0
exec > >(tee -a "$OUT/log.txt") 2>&1
START=$(date +%s)
echo "== gpu_check ($MODE) on $NAME; results in $OUT; $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
"$PYTHON" - > "$OUT/environment.json" <<'EOF'
import json, os, platform, sys
import torch
info = {"python": sys.version.split()[0], "torch": torch.__version__,
        "cuda": torch.version.cuda, "platform": platform.platform(),
        "load": os.getloadavg(), "cpus": os.cpu_count()}
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    info.update(device=p.name, memory_gib=round(p.total_memory / 2**30, 1),
                capability=f"{p.major}.{p.minor}", devices=torch.cuda.device_count())
else:
    info.update(device="CPU")
print(json.dumps(info, indent=1))
EOF
cat "$OUT/environment.json"

# part NAME BOX CMD...: run CMD with a time box (SIGTERM, then SIGKILL 10 s later), its output
# in NAME.txt as it comes; the status line goes to parts.tsv
part() {
    local name="$1" box="$2"; shift 2
    local t0=$(date +%s)
    echo "== $name (box ${box} s): $*"
    timeout --kill-after=10 "$box" "$@" > "$OUT/$name.txt" 2>&1
    local rc=$?
    local dt=$(( $(date +%s) - t0 ))
    local st="exit $rc"
    [ $rc -eq 0 ] && st=ok
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && st="time box reached"
    [ "$name" = gpu-scale-slice ] && [ $rc -eq 75 ] && st="ok (stopped at its --time-budget)"
    printf '%s\t%s\t%s\t%s\n' "$name" "$st" "$dt" "$box" >> "$STATUS"
    case "$st" in
        ok*) N_OK=$((N_OK + 1)) ;;
        # on a GPU a part cut by its box keeps what it measured (said, not a failure); a
        # smoke part is tiny and must finish
        "time box reached") if [ "$MODE" = smoke ]; then FAILED+=("$name ($st)");
                            else CUT+=("$name"); fi ;;
        *) FAILED+=("$name ($st)") ;;
    esac
    echo "   $name: $st after ${dt} s"
    tail -n 3 "$OUT/$name.txt" | sed 's/^/   | /'
}

if [ "$MODE" = smoke ]; then
    part gpu-tests "${BOX_TESTS:-60}" "$PYTHON" -m pytest -q -m gpu -p no:cacheprovider \
        tests/neural tests/neural_experiments
    part layers "${BOX_LAYERS:-60}" "$PYTHON" benchmarks/neural_layers.py --device cpu \
        --lengths 128 --layers sdpa focus focus-rc --batch 2 --d-model 16 --min-repeats 1 \
        --min-time 0 --threads 1 --fractions --json "$OUT/layers.json" \
        --markdown "$OUT/layers.md"
    part training "${BOX_TRAINING:-60}" "$PYTHON" benchmarks/training_steps.py --cpu-smoke \
        --rows las focus-1k-xN --precisions fp32 bf16 --compile off --stack 2 --steps 2 \
        --warmup-steps 2 --read-every 1 --threads 1 --row-timeout 50 \
        --json "$OUT/training.json" --markdown "$OUT/training.md"
    part bf16-loss "${BOX_BF16:-60}" "$PYTHON" benchmarks/bf16_training.py --cpu-smoke \
        --threads 1 --json "$OUT/bf16.json"
    part gpu-scale-slice "${BOX_SLICE:-60}" "$PYTHON" -m lds_toolkit.cli reproduce \
        assoc-recall --scale gpu --seeds 2 --set 'lengths=[64]' \
        --set 'models_at={"64": ["focus"]}' \
        --set 'train={"64": {"max_steps": 4, "batch_size": 4, "eval_every": 2}}' \
        --set n_train=16 --set n_valid=8 --set n_test=8 --set warmup=1 \
        --time-budget 40 --out "$OUT/gpu-scale" --no-progress
else
    # the baseline first, then what the acceptance reads (S4++'s time, the recomputing
    # paths' memory), then the rest: a part cut by its box keeps what it measured
    # the directories that hold gpu tests: collecting the whole suite would import modules
    # whose optional dependencies (river, jupytext, ...) the GPU machine lacks; four
    # workers compile the compiled-route tests side by side
    XDIST=()
    "$PYTHON" -c "import xdist" 2>/dev/null && XDIST=(-n 4)
    part gpu-tests "${BOX_TESTS:-90}" "$PYTHON" -m pytest -q -m gpu -p no:cacheprovider \
        "${XDIST[@]}" tests/neural tests/neural_experiments
    part layers "${BOX_LAYERS:-130}" "$PYTHON" benchmarks/neural_layers.py --device cuda \
        --lengths 4096 16384 65536 --layers sdpa s4plusplus s4-dplr-rc stu-exact-rc focus-rc \
        s4 s4-dplr focus las-chunk stu-exact --batch 8 --d-model 256 --min-repeats 2 \
        --min-time 0.3 --timeout 30 --fractions --json "$OUT/layers.json" \
        --markdown "$OUT/layers.md"
    # 5 rows x 25 s: eager fp32, tf32, bf16 first, then compiled bf16, fp32, tf32
    part training "${BOX_TRAINING:-125}" "$PYTHON" benchmarks/training_steps.py --device cuda \
        --stack 8 --steps 20 --warmup-steps 10 --read-every 5 --row-timeout 25 \
        --json "$OUT/training.json" --markdown "$OUT/training.md"
    part bf16-loss "${BOX_BF16:-60}" "$PYTHON" benchmarks/bf16_training.py --device cuda \
        --steps 200 --n-train 1000 --json "$OUT/bf16.json"
    part gpu-scale-slice "${BOX_SLICE:-40}" "$PYTHON" -m lds_toolkit.cli reproduce \
        assoc-recall --scale gpu --time-budget 25 --out "$OUT/gpu-scale" --no-progress
fi

"$PYTHON" benchmarks/gpu_check_summary.py "$OUT" > "$OUT/summary.md" \
    || { echo "gpu_check.sh: the summary failed (the parts' outputs are in $OUT)" >&2
         FAILED+=("summary"); }
echo "== done in $(( $(date +%s) - START )) s: $OUT/summary.md"
cat "$OUT/summary.md"
if [ -n "$BUNDLE" ]; then
    # the device tool brings back at most 8 files, two folders deep: one archive of them all
    if tar czf "$BUNDLE" -C "$(dirname "$OUT")" "$(basename "$OUT")"; then
        echo "== bundle: $BUNDLE ($(du -k "$BUNDLE" | cut -f1) KiB)"
    else
        echo "gpu_check.sh: could not write the bundle $BUNDLE" >&2
        FAILED+=("bundle")
    fi
fi
if [ ${#CUT[@]} -gt 0 ]; then
    echo "gpu_check.sh: cut by their time box (what they measured is kept): ${CUT[*]}" >&2
    [ "$N_OK" -gt 0 ] || FAILED+=("every part cut by its box")
fi
if [ ${#FAILED[@]} -gt 0 ]; then
    echo "gpu_check.sh: ${#FAILED[@]} failed: $(IFS=';'; echo "${FAILED[*]}" | sed 's/;/; /g') (outputs in $OUT)" >&2
    exit 1
fi
exit 0
