# The README's two commands: `make demo` (main job) and `make test` (every test).
# Both install the pinned tools first (tools/setup.sh, idempotent).
CARGO ?= cargo

.PHONY: demo test tools lint

tools:
	@tools/setup.sh

demo: tools profiles
	$(CARGO) run --release --locked -q -- demo

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --release --locked -- -D warnings

test: tools profiles lint
	$(CARGO) test --workspace --release --locked
	$(CARGO) run --release --locked -q -- regress --quick
	@$(MAKE) --no-print-directory cocotb

# The golden model's Python package (python/, built by tools/setup.sh) and the cocotb bench of
# examples/cocotb: dysharp_top (top_p4) under the pinned Verilator, checked on the fly against
# the golden model (docs/cocotb.md).
.PHONY: cocotb
cocotb: tools
	.tools/venv/bin/python python/tests/test_api.py
	.tools/venv/bin/python examples/cocotb/run.py

# Line, toggle and functional (cover point) coverage of the RTL (coverage models, built once, ~minutes):
# target/coverage/{coverage.info,summary.json,html/index.html}.
.PHONY: coverage
coverage: tools
	$(CARGO) run --release --locked --features coverage -- coverage --quick --out target/coverage

# Profile feedback of the simulation models (tools/pgo.sh; docs/perf.md, "Profile feedback"): the
# models of rtl/models.toml with the use `pgo` (top_p8, top_p16) built instrumented, trained on
# their quick regression, and compiled with the profiles by every later build while the RTL is the
# one they were trained on: same RTL and checks, 1.1-1.7x the speed depending on the machine. `profiles`
# (before `demo` and `test`) trains only a model whose profile is missing or stale; `pgo` re-trains.
.PHONY: profiles pgo
profiles: tools
	tools/pgo.sh --if-stale
pgo: tools
	tools/pgo.sh
