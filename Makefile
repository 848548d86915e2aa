# mha-wasm: build the C layer to WebAssembly (web/mha.wasm) and natively (tests under ASan + UBSan).
#   make            build web/mha.wasm and the native library
#   make lib        the native static library build/libmha.a (link with -lm; header c/mha.h)
#   make demo       build and run the terminal demo (c/demo.c): lessons 3 and 4 from the native library
#   make test       everything CI runs: lint, native C tests, a short fuzz run, npm test (the Node
#                   tests), npm run test:browser, the NumPy tests under each OpenBLAS kernel, the
#                   mutation smoke run, the notebook check on a sample of 40 mutants; installs
#                   what is missing first (.ci/setup)
#   make fuzz       libFuzzer over the C API for FUZZ_SECONDS (tests/fuzz/README.md)
#   make serve      (npm start) build, then serve web/ on http://127.0.0.1:$(PORT)/ (PORT=9000 for
#                   another port); installs emscripten and the npm packages first if missing
#   make setup      install everything a fresh Debian 12 machine lacks (.ci/setup); serve and test
#                   run it themselves, so it is never needed as a step of its own
#   make bench      benchmark, not a test: mha-wasm vs native C, NumPy (1 thread), tfjs-wasm; prints a table

EMCC ?= emcc
CC ?= gcc
export NODE_PATH ?= /usr/share/nodejs
PYTHON ?= /usr/bin/python3
PORT ?= 8000

# What a command needs, installed first when missing: .ci/setup prints one line when it installs
# something, nothing otherwise (and then costs a few milliseconds). Its NEEDs: see .ci/setup.
SETUP = @EMCC='$(EMCC)' CC='$(CC)' PYTHON='$(PYTHON)' FUZZ_CC='$(FUZZ_CC)' CLANG_FORMAT='$(CLANG_FORMAT)' bash .ci/setup

SRC := c/mha.c c/train.c c/kernels.c c/rng.c c/npmath.c
HDR := $(wildcard c/*.h)

# The API exported to JS: every public function of c/mha.h, read from its declarations (each
# starts at column 0 with a lowercase type: `int mha_forward(`, `double *mha_params(`), plus
# malloc/free for buffers. tests/abi.test.mjs checks the module exports exactly these.
open_paren := (
EXPORTS := $(shell sed -nE 's/^[a-z].*[^A-Za-z0-9_](mha_[A-Za-z0-9_]+)[$(open_paren)].*/\1/p' c/mha.h) \
	malloc free
comma := ,
empty :=
space := $(empty) $(empty)
EXPORTED_FUNCTIONS := $(subst $(space),$(comma),$(addprefix _,$(EXPORTS)))

# No -ffast-math anywhere: results must be identical run to run and equal NumPy's streams.
COMMON_CFLAGS := -std=c11 -Wall -Wextra -Werror -ffp-contract=off
# -msimd128: the f64x2 kernels of c/kernels.c (same roundings as the scalar loops; no relaxed SIMD,
# no threads: this LLVM emits pre-standard relaxed opcodes and threads need emcc's JS glue).
WASM_CFLAGS := $(COMMON_CFLAGS) -O3 -DNDEBUG -msimd128
# Standalone module, no JS glue (web/mha.js is the loader). Memory grows on demand up to 1 GiB;
# a larger request makes malloc return NULL, which the library reports as MHA_ENOMEM.
WASM_LDFLAGS := --no-entry -sSTANDALONE_WASM -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=1GB \
	-sTOTAL_STACK=1MB -sEXPORTED_FUNCTIONS=$(EXPORTED_FUNCTIONS)

NATIVE_CFLAGS := $(COMMON_CFLAGS) -O2 -g
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
BUILD := build

.PHONY: lint lint-c format-c all wasm exports bundle native lib demo test test-c test-node test-browser test-coretypes mutate-smoke check-sample reference serve setup bench fuzz fuzz-ci clean
all: wasm bundle native

# (`@:`, an empty recipe: when all is up to date, npm start prints no "Nothing to be done")
wasm: web/mha.wasm $(BUILD)/mha-scalar.wasm
	@:
# (one line a step: what is built and with what, never the compiler's command line)
web/mha.wasm: $(SRC) $(HDR)
	@echo "build: $@ (emcc)"
	@$(EMCC) $(WASM_CFLAGS) $(SRC) -o $@ $(WASM_LDFLAGS)

# The exported functions, one line (tests/abi.test.mjs compares them with c/mha.h)
exports:
	@echo $(EXPORTS)

# The same library without SIMD: tests/simd.test.mjs checks both builds give identical bits.
$(BUILD)/mha-scalar.wasm: $(SRC) $(HDR)
	@mkdir -p $(BUILD)
	@echo "build: $@ (emcc, no SIMD)"
	@$(EMCC) $(filter-out -msimd128,$(WASM_CFLAGS)) $(SRC) -o $@ $(WASM_LDFLAGS)

# The NumPy scripts' Python: web/model/scripts/*.py, the source; sources.js (built, not committed,
# like web/mha.wasm) holds their text as one JS module that the page's bundle and the Node tests
# both import (Node cannot import a .py). tests/model/scripts-py.test.mjs fails when it is stale.
PY_SOURCES := web/model/scripts/sources.js
$(PY_SOURCES): $(wildcard web/model/scripts/*.py) tests/tools/py-scripts.mjs
	@echo "build: $@ (the NumPy scripts' text)"
	@node tests/tools/py-scripts.mjs

# The page as one classic script (web/app.bundle.js): the ES modules of web/ bundled by esbuild,
# with the wasm embedded as base64, so it also runs from file:// (where Chromium blocks module
# scripts and fetch). The same file is used over http. It also carries the compute worker
# (web/jobs/worker-main.js bundled on its own) as a string, MHA_WORKER_SOURCE, which the page
# starts as a Blob-URL worker (the CSP's worker-src blob:), over http and from file:// alike.
PAGE_JS := $(shell find web -path web/chunks -prune -o -name '*.js' ! -name app.bundle.js -print)
ESBUILD ?= node_modules/.bin/esbuild
bundle: web/app.bundle.js
	@:
$(ESBUILD):
	$(SETUP) node_modules
web/app.bundle.js: web/mha.wasm $(filter-out web/app.bundle.js,$(PAGE_JS)) $(PY_SOURCES) \
		tests/tools/bundle.mjs | $(ESBUILD)
	@echo "build: $@ and web/chunks/ (esbuild: the page in chunks, its worker, the wasm embedded)"
	@node tests/tools/bundle.mjs

native: $(BUILD)/libmha.a
lib: $(BUILD)/libmha.a
$(BUILD)/libmha.a: $(SRC) $(HDR)
	@mkdir -p $(BUILD)/obj
	for f in $(SRC); do $(CC) $(NATIVE_CFLAGS) -Ic -c $$f -o $(BUILD)/obj/$$(basename $$f .c).o || exit 1; done
	ar rcs $@ $(patsubst c/%.c,$(BUILD)/obj/%.o,$(SRC))

# The terminal demo: lesson 3's shape table and lesson 4's gradient check from the native library.
demo: $(BUILD)/demo
	$(BUILD)/demo
$(BUILD)/demo: c/demo.c $(BUILD)/libmha.a $(HDR)
	$(CC) $(NATIVE_CFLAGS) -Ic c/demo.c $(BUILD)/libmha.a -lm -o $@

# Native unit tests: the library and each test built together under ASan + UBSan.
C_TESTS := test_mha test_rng test_npmath
$(BUILD)/san/%: tests/c/%.c $(SRC) $(HDR)
	@mkdir -p $(BUILD)/san
	$(CC) $(NATIVE_CFLAGS) $(SAN_FLAGS) -Ic $(SRC) $< -lm -o $@

reference: $(BUILD)/reference/.done
$(BUILD)/reference/.done: tests/reference/mha_reference.py tests/reference/rng_streams.py \
		tests/reference/page_reference.py tests/reference/notebook_formats.py \
		tests/reference/notebook_students.py tests/reference/notebook_layouts.py \
		tests/reference/notebook_training.py tests/reference/notebook_lessons12.py \
		tests/reference/notebook_lesson5.py
	@mkdir -p $(BUILD)/reference
	$(PYTHON) tests/reference/mha_reference.py $(BUILD)/reference
	$(PYTHON) tests/reference/rng_streams.py $(BUILD)/reference
	$(PYTHON) tests/reference/notebook_formats.py $(BUILD)/reference/notebook-formats
	$(PYTHON) tests/reference/notebook_students.py $(BUILD)/reference/notebook-students
	$(PYTHON) tests/reference/notebook_training.py $(BUILD)/reference/notebook-training
	$(PYTHON) tests/reference/notebook_layouts.py $(BUILD)/reference/notebook-layouts
	$(PYTHON) tests/reference/notebook_lessons12.py $(BUILD)/reference/notebook-lessons12
	$(PYTHON) tests/reference/notebook_lesson5.py $(BUILD)/reference/notebook-lesson5
	@touch $@

test-c: export ASAN_OPTIONS = allocator_may_return_null=1:detect_leaks=1
test-c: $(addprefix $(BUILD)/san/,$(C_TESTS)) reference
	$(BUILD)/san/test_npmath
	$(BUILD)/san/test_rng $(BUILD)/reference
	$(BUILD)/san/test_mha

# The test tiers (tests/tiers.mjs; docs/testing.md#tiers): the Node tests (npm test), the browser
# suites (npm run test:browser), and the NumPy-reading Node tests again under each OpenBLAS kernel
# this CPU runs, build/reference made afresh under each (npm run test:coretypes).
test-node: wasm bundle reference
	node tests/run.mjs node
test-browser: wasm bundle
	node tests/run.mjs browser
test-coretypes: wasm bundle
	node tests/run.mjs coretypes

# The README's test command, and CI's (.ci/run): setup first, then lint (ESLint, Prettier,
# clang-format: any finding fails), then every suite in this order.
TEST_STEPS := lint test-c fuzz-ci test-node test-browser test-coretypes mutate-smoke check-sample
# mutation testing's own smoke run: Stryker's dry run of every JS suite, then the mutants of one
# small module, each of which must be detected (tests/mutate/README.md; the full run: npm run mutate)
mutate-smoke: wasm bundle reference
	node tests/mutate/mutate.mjs --smoke
# the notebook check against a sample of 40 mistakes nobody tuned it to (npm run bench:check: 500)
# and the unmutated notebook at 5 sizes, causal and not: prints its figures (docs/notebook-check.md)
check-sample: wasm
	BENCH_CHECK_MUTANTS=40 BENCH_CHECK_CLEAN=5 node tests/bench/bench_check.mjs
lint:
	npm run --silent lint
test:
	$(SETUP) test
	@$(MAKE) --no-print-directory $(TEST_STEPS)

# ---------------------------------------------------------------------------------------------- #
# Fuzzing: libFuzzer + ASan + UBSan over the C API (tests/fuzz/README.md). Needs clang and
# its libFuzzer runtime (Debian: clang, libclang-rt-dev; make test installs them via .ci/setup).
#   make fuzz        FUZZ_SECONDS (600) of fuzzing; new inputs kept in build/fuzz/corpus
#   make fuzz-ci     a bounded run for CI (FUZZ_CI_SECONDS, 90); fails on any finding and writes
#                    nothing into the repository (working corpus in a temporary directory)
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_CI_SECONDS ?= 90
FUZZ_BIN := $(BUILD)/fuzz/fuzz_mha
FUZZ_SEEDS := tests/fuzz/corpus tests/fuzz/regressions
FUZZ_OPTS := -rss_limit_mb=4096 -malloc_limit_mb=4096 -timeout=10 -print_final_stats=1 \
	-artifact_prefix=$(BUILD)/fuzz/findings/
FUZZ_ENV := ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
FUZZ_NOISE := WARNING: AddressSanitizer failed to allocate

$(FUZZ_BIN): tests/fuzz/fuzz_mha.c $(SRC) $(HDR)
	@mkdir -p $(BUILD)/fuzz
	$(FUZZ_CC) $(COMMON_CFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-Ic $(SRC) tests/fuzz/fuzz_mha.c -lm -o $@

fuzz: $(FUZZ_BIN)
	@mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/findings; rm -f $(BUILD)/fuzz/.rc; \
	{ $(FUZZ_ENV) $(FUZZ_BIN) $(BUILD)/fuzz/corpus $(FUZZ_SEEDS) -max_total_time=$(FUZZ_SECONDS) \
		$(FUZZ_OPTS) 2>&1 || echo $$? > $(BUILD)/fuzz/.rc; } | grep -v '$(FUZZ_NOISE)'; \
	rc=$$(cat $(BUILD)/fuzz/.rc 2>/dev/null || echo 0); rm -f $(BUILD)/fuzz/.rc; \
	if [ $$rc -ne 0 ]; then echo "fuzz: FINDING (exit $$rc); the input is in $(BUILD)/fuzz/findings/"; fi; \
	exit $$rc

fuzz-ci: $(FUZZ_BIN)
	@mkdir -p $(BUILD)/fuzz/findings; work=$$(mktemp -d); rc=0; \
	echo "fuzz-ci: $(FUZZ_BIN) for $(FUZZ_CI_SECONDS) s (log: $(BUILD)/fuzz/ci.log)"; \
	$(FUZZ_ENV) $(FUZZ_BIN) "$$work" $(FUZZ_SEEDS) -max_total_time=$(FUZZ_CI_SECONDS) $(FUZZ_OPTS) \
		> $(BUILD)/fuzz/ci.log 2>&1 || rc=$$?; \
	rm -rf "$$work"; \
	if [ $$rc -ne 0 ]; then grep -v '$(FUZZ_NOISE)' $(BUILD)/fuzz/ci.log; \
		echo "fuzz-ci: FINDING (exit $$rc); the input is in $(BUILD)/fuzz/findings/"; \
	else grep -v '$(FUZZ_NOISE)' $(BUILD)/fuzz/ci.log | grep -E '^#[0-9]+[[:space:]]+DONE|^stat::'; fi; \
	exit $$rc

# C style: Debian's clang-format with the committed .clang-format (generated tables excluded).
C_STYLE_FILES := $(filter-out c/ziggurat_tables.h,$(wildcard c/*.c c/*.h tests/c/*.c tests/fuzz/*.c tests/bench/*.c))
CLANG_FORMAT ?= clang-format
lint-c:
	$(CLANG_FORMAT) --dry-run --Werror $(C_STYLE_FILES)
format-c:
	$(CLANG_FORMAT) -i $(C_STYLE_FILES)

# npm start: setup (emcc, node_modules) first, then build, then serve (it prints the URL).
serve:
	$(SETUP) build
	@$(MAKE) --no-print-directory wasm bundle
	@node tests/serve.mjs web $(PORT)

setup:
	$(SETUP) test

bench:
	node tests/bench/bench.mjs

clean:
	rm -rf $(BUILD) web/mha.wasm web/app.bundle.js web/chunks $(PY_SOURCES)
