# mha-wasm: build the C layer to WebAssembly (web/mha.wasm) and natively (tests under ASan + UBSan).
#   make            build web/mha.wasm and the native library
#   make test       everything CI runs: native C tests, then npm test (Node + NumPy reference)
#   make serve      build, then serve web/ on http://127.0.0.1:8000/
#   make setup      install what a fresh Debian machine lacks (apt: emscripten, python3-numpy)

EMCC ?= emcc
CC ?= gcc
export NODE_PATH ?= /usr/share/nodejs
PYTHON ?= /usr/bin/python3

SRC := c/mha.c c/train.c c/kernels.c c/rng.c c/npmath.c
HDR := $(wildcard c/*.h)

# The API exported to JS: every public function of c/mha.h, plus malloc/free for buffers.
EXPORTS := mha_strerror mha_version \
	mha_rng_create mha_rng_free mha_rng_standard_normal mha_rng_random mha_rng_normal \
	mha_create mha_free mha_layer_C mha_layer_heads mha_init_weights mha_params mha_grads \
	mha_num_params mha_forward mha_backward mha_zero_grad mha_forward_from mha_tensor \
	mha_tensor_shape mha_tensor_name mha_check_name mha_mse_loss mha_sgd_step mha_train mha_gradcheck mha_gradcheck_prepare \
	mha_gradcheck_slice mha_split_heads mha_merge_heads mha_single_head malloc free
comma := ,
empty :=
space := $(empty) $(empty)
EXPORTED_FUNCTIONS := $(subst $(space),$(comma),$(addprefix _,$(EXPORTS)))

# No -ffast-math anywhere: results must be identical run to run and equal NumPy's streams.
COMMON_CFLAGS := -std=c11 -Wall -Wextra -Werror -ffp-contract=off
WASM_CFLAGS := $(COMMON_CFLAGS) -O3 -DNDEBUG
# Standalone module, no JS glue (web/mha.js is the loader). Memory grows on demand up to 1 GiB;
# a larger request makes malloc return NULL, which the library reports as MHA_ENOMEM.
WASM_LDFLAGS := --no-entry -sSTANDALONE_WASM -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=1GB \
	-sTOTAL_STACK=1MB -sEXPORTED_FUNCTIONS=$(EXPORTED_FUNCTIONS)

NATIVE_CFLAGS := $(COMMON_CFLAGS) -O2 -g
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
BUILD := build

.PHONY: all wasm native lib test test-c test-node reference serve setup clean
all: wasm native

wasm: web/mha.wasm
web/mha.wasm: $(SRC) $(HDR)
	$(EMCC) $(WASM_CFLAGS) $(SRC) -o $@ $(WASM_LDFLAGS)

native: $(BUILD)/libmha.a
lib: $(BUILD)/libmha.a
$(BUILD)/libmha.a: $(SRC) $(HDR)
	@mkdir -p $(BUILD)/obj
	for f in $(SRC); do $(CC) $(NATIVE_CFLAGS) -Ic -c $$f -o $(BUILD)/obj/$$(basename $$f .c).o || exit 1; done
	ar rcs $@ $(patsubst c/%.c,$(BUILD)/obj/%.o,$(SRC))

# Native unit tests: the library and each test built together under ASan + UBSan.
C_TESTS := test_mha test_rng test_npmath
$(BUILD)/san/%: tests/c/%.c $(SRC) $(HDR)
	@mkdir -p $(BUILD)/san
	$(CC) $(NATIVE_CFLAGS) $(SAN_FLAGS) -Ic $(SRC) $< -lm -o $@

reference: $(BUILD)/reference/.done
$(BUILD)/reference/.done: tests/reference/mha_reference.py tests/reference/rng_streams.py
	@mkdir -p $(BUILD)/reference
	$(PYTHON) tests/reference/mha_reference.py $(BUILD)/reference
	$(PYTHON) tests/reference/rng_streams.py $(BUILD)/reference
	@touch $@

test-c: export ASAN_OPTIONS = allocator_may_return_null=1:detect_leaks=1
test-c: $(addprefix $(BUILD)/san/,$(C_TESTS)) reference
	$(BUILD)/san/test_npmath
	$(BUILD)/san/test_rng $(BUILD)/reference
	$(BUILD)/san/test_mha

test-node: wasm reference
	npm test

test: test-c test-node

serve: wasm
	node tests/serve.mjs web 8000

setup:
	bash .ci/setup

clean:
	rm -rf $(BUILD) web/mha.wasm
