#!/bin/bash
# Profile-guided build of the simulation models (docs/perf.md, "Profile feedback"): builds them
# instrumented (GCC -fprofile-generate), trains them on the quick regression (not on the
# `bench-sim` stimulus that measures them; speed and thread variants: below), and keeps each
# profile under target/pgo/<model> with the key of the model it was trained on
# (target/pgo/<model>.key). Every later `cargo build` compiles a model with its profile while the
# model is that one (verif/build.rs; a changed RTL or build goes back to no profile, with a
# warning, until the next training). The result: the same RTL, checks and all, compiled with its
# hot code laid out together.
#
#   tools/pgo.sh                  the models of rtl/models.toml with the use `pgo` (`make pgo`)
#   tools/pgo.sh --if-stale       the same, training only a model whose profile is missing or was
#                                 trained on another build of it (`make demo`, `make test`)
#   tools/pgo.sh top_p8 top_p4    these models
#   tools/pgo.sh top_p8_fast      a speed variant (built with --features speed; `_mt`: threads)
#
# The regression runs only the checked models; a speed (`_fast`) or two-thread (`_mt`) variant is
# trained on `dysharp bench-sim` instead, with seed 7 (its measurements use seed 1 by default:
# the same generator of legal traffic, other packets).
#
# `DYSHARP_PGO=off cargo build --release` builds every model without profiles (to measure them
# against each other; both stay cached).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
# Where cargo builds (verif/build.rs looks for the profiles in <target>/pgo).
target="${CARGO_TARGET_DIR:-$here/target}"
dir="$target/pgo"
gen="$target/pgo-gen"
if_stale=0
if [ "${1-}" = --if-stale ]; then
  if_stale=1
  shift
fi
if [ $# -gt 0 ]; then
  models=("$@")
else
  names=$(cargo run --release --locked -q -p dysharp-registry --bin dysharp-models -- pgo)
  mapfile -t models <<< "$names"
  [ -n "$names" ] || { echo "pgo: rtl/models.toml gives no model the use pgo" >&2; exit 1; }
fi
# The cargo features the named variants need.
features=()
for m in "${models[@]}"; do
  case "$m" in
    *_fast) features+=(speed) ;;
    *_mt) features+=(threads) ;;
  esac
done
cargo_features=()
if [ ${#features[@]} -gt 0 ]; then
  cargo_features=(--features "$(printf '%s\n' "${features[@]}" | sort -u | paste -sd, -)")
fi
start=$(date +%s)
# A checked model is trained on the quick regression's cases whose name contains it, which takes
# every simulation model whose name contains it (top_p4: also top_p4_static) into the training build.
build=("${models[@]}")
sims=$(cargo run --release --locked -q -p dysharp-registry --bin dysharp-models -- sim)
for m in "${models[@]}"; do
  case "$m" in *_fast | *_mt) continue ;; esac
  while read -r s; do
    case "$s" in *"$m"*) build+=("$s") ;; esac
  done <<< "$sims"
done
list=$(printf '%s\n' "${build[@]}" | sort -u | paste -sd, -)
echo "pgo: building the instrumented models ($list)"
mkdir -p "$dir" "$gen"
DYSHARP_MODELS="$list" DYSHARP_PGO="generate:$gen" \
  cargo build --release --locked -q ${cargo_features[@]+"${cargo_features[@]}"}
trained=0
for m in "${models[@]}"; do
  if [ ! -f "$gen/$m.key" ]; then
    echo "pgo: no model $m was built (a name of rtl/models.toml, or its _fast or _mt variant)" >&2
    exit 1
  fi
  if [ $if_stale = 1 ] && cmp -s "$gen/$m.key" "$dir/$m.key" \
      && [ -n "$(ls -A "$dir/$m" 2>/dev/null)" ]; then
    echo "pgo: $m: its profile was trained on this build of it"
    continue
  fi
  case "$m" in
    *_fast | *_mt) train=(bench-sim --model "$m" --seed 7 --cycles 20000) ;;
    *) train=(regress --quick --jobs 1 --only "$m") ;;
  esac
  echo "pgo: training $m (dysharp ${train[*]}; one job: the profiles are per process)"
  rm -rf "${gen:?}/$m"
  log="$gen/training-$m.log"
  failed=""
  if ! "$target/release/dysharp" "${train[@]}" > "$log" 2>&1; then
    failed="the training run of $m failed (log: $log)"
  elif [ -z "$(find "$gen/$m" -name '*.gcda' 2>/dev/null | head -n 1)" ]; then
    failed="the training of $m wrote no profile"
  fi
  if [ -n "$failed" ]; then
    # Asked for profiles: an error. Before the tests (--if-stale): the model is built without
    # one, and the tests report the failure (a regression case that fails here fails there).
    echo "pgo: $failed" >&2
    [ $if_stale = 1 ] || exit 1
    echo "pgo: $m is built without profile feedback" >&2
    continue
  fi
  tail -n 1 "$log"
  rm -rf "${dir:?}/$m"
  mv "$gen/$m" "$dir/$m"
  cp "$gen/$m.key" "$dir/$m.key"
  trained=$((trained + 1))
done
echo "pgo: building the models with their profiles ($target/release/dysharp, every model)"
cargo build --release --locked -q ${cargo_features[@]+"${cargo_features[@]}"}
echo "pgo: $trained trained, done in $(( $(date +%s) - start )) s"
