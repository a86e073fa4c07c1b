#!/bin/bash
# Profile-guided build of the simulation models (docs/perf.md, "Profile feedback"): builds them
# instrumented (GCC -fprofile-generate), trains them on the quick regression (not on the
# `bench-sim` stimulus that measures them; speed and thread variants: below), and rebuilds them
# with the profiles. The result is target/release/dysharp, whose models are the same RTL, checks
# and all, compiled with their hot code laid out together.
#
#   tools/pgo.sh                  every model `cargo build --release` builds
#   tools/pgo.sh top_p8 top_p16   only these (DYSHARP_MODELS)
#   tools/pgo.sh top_p8_fast      a speed variant (built with --features speed; `_mt`: threads)
#
# The regression runs only the checked models; a speed (`_fast`) or two-thread (`_mt`) variant is
# trained on `dysharp bench-sim` instead, with seed 7 (its measurements use seed 1 by default:
# the same generator of legal traffic, other packets).
#
# Profiles are kept under target/pgo/<model>; `DYSHARP_PGO=use:$PWD/target/pgo cargo build
# --release` builds with them again (they are part of the models' cache key). A plain `cargo
# build` goes back to the models without profiles (both stay cached).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
dir="$here/target/pgo"
if [ $# -gt 0 ]; then
  DYSHARP_MODELS=$(IFS=,; echo "$*")
  export DYSHARP_MODELS
fi
# The cargo features the named variants need.
features=()
for m in "$@"; do
  case "$m" in
    *_fast) features+=(speed) ;;
    *_mt) features+=(threads) ;;
  esac
done
cargo_features=()
if [ ${#features[@]} -gt 0 ]; then
  cargo_features=(--features "$(printf '%s\n' "${features[@]}" | sort -u | paste -sd, -)")
fi
rm -rf "$dir"
mkdir -p "$dir"
start=$(date +%s)
echo "pgo: building the instrumented models${DYSHARP_MODELS:+ ($DYSHARP_MODELS)}"
DYSHARP_PGO="generate:$dir" cargo build --release --locked -q ${cargo_features[@]+"${cargo_features[@]}"}
echo "pgo: training them (the quick regression, one job: the profiles are per process; bench-sim for _fast and _mt)"
# With models named, only their cases (the others' models are not built).
only=()
for m in "$@"; do only+=("$m"); done
[ ${#only[@]} -gt 0 ] || only=("")
: > "$dir/training.log"
for m in "${only[@]}"; do
  case "$m" in
    *_fast | *_mt) train=(bench-sim --model "$m" --seed 7 --cycles 20000) ;;
    *) train=(regress --quick --jobs 1 ${m:+--only "$m"}) ;;
  esac
  if ! target/release/dysharp "${train[@]}" >> "$dir/training.log" 2>&1; then
    echo "pgo: the training run failed (log: $dir/training.log)" >&2
    exit 1
  fi
done
tail -n 1 "$dir/training.log"
profiled=$(cd "$dir" && find . -mindepth 2 -name '*.gcda' | cut -d/ -f2 | sort -u | tr '\n' ' ')
if [ -z "$profiled" ]; then
  echo "pgo: the training wrote no profile" >&2
  exit 1
fi
echo "pgo: profiles of: $profiled"
echo "pgo: building the models with their profiles"
DYSHARP_PGO="use:$dir" cargo build --release --locked -q ${cargo_features[@]+"${cargo_features[@]}"}
echo "pgo: done in $(( $(date +%s) - start )) s: target/release/dysharp"
