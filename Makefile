# kvbound — build, tests, benchmarks, install. See README.md.
#   make            library, kvbound command, test and prop binaries
#   make run        install nothing; build and write out/report.md (the default verification)
#   make run-full   the same with the checks and specs make run defers
#   make check      unit tests + fast property checks with their mutants ("N passed, N failed")
#   make check-full the long statistical battery
#   make bench      benchmarks (ratios against baselines measured in the same run)
#   make install PREFIX=/usr/local DESTDIR=
CC      ?= cc
PREFIX  ?= /usr/local
DESTDIR ?=
OPT     ?= -O2
# -Wno-missing-field-initializers: kvb_method_type grows by appending (plugin.h, the ABI); the
# built-ins' positional initializers stop before the appended members, which are then zero.
CFLAGS_ALL = -std=c11 $(OPT) -g -Wall -Wextra -Werror -Wno-missing-field-initializers \
             -D_POSIX_C_SOURCE=200809L -fPIC $(shell pkg-config --cflags gsl lua5.4) $(CFLAGS)
# GSL's linear algebra runs on OpenBLAS, not the reference libgslcblas.
LIBS    = -lgsl -lopenblas $(shell pkg-config --libs lua5.4) -lm -lpthread -ldl $(LDLIBS)

# The layers (src/README.md, Layout), lowest first. Each layer sees only its own headers and those
# below it, so an include of a higher layer does not compile (scripts/check-layers also reads
# every include and fails `make check` on one).
L0 := src/core
L1 := src/subgen src/balancekv src/baselines src/model
L2 := adversarial lowerbound src/measures
L3 := src/app src props
INC0 := $(addprefix -I,$(L0))
INC1 := $(INC0) $(addprefix -I,$(L1))
INC2 := $(INC1) $(addprefix -I,$(L2))
INC3 := $(INC2) $(addprefix -I,$(L3))
layer_inc = $(if $(filter src/core/%,$1),$(INC0),$(if $(filter $(addsuffix /%,$(L1)),$1),$(INC1),$(if $(filter $(addsuffix /%,$(L2)),$1),$(INC2),$(INC3))))

B := build
LIB_SRC  := $(foreach d,$(L0) $(L1) $(L2),$(wildcard $(d)/*.c)) src/app/registry.c \
            src/app/registry_methods.c src/app/registry_streams.c src/app/registry_probes.c
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/obj/%.o)
CLI_SRC  := $(filter-out $(LIB_SRC),$(wildcard src/app/*.c))
CLI_OBJ  := $(CLI_SRC:%.c=$(B)/obj/%.o)
PROP_SRC := $(wildcard props/*.c)
PROP_OBJ := $(PROP_SRC:%.c=$(B)/obj/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(B)/tests/%)
# tests/bench_main.c is the kvb-bench command (tests/README.md, Benchmarks); the other bench_*.c are
# single-purpose benches run after it by `make bench`.
BENCH_SRC := $(filter-out tests/bench_main.c,$(wildcard tests/bench_*.c))
BENCH_BIN := $(BENCH_SRC:tests/%.c=$(B)/bench/%)
# Public headers: everything a caller of libkvbound can use (installed flat in include/kvbound/);
# internal glue stays private.
PUBLIC_HDRS := $(filter-out src/core/gsl_quiet.h src/balancekv/balancekv_block_core.h, \
                 $(foreach d,$(L0) $(L1),$(wildcard $(d)/*.h))) src/app/registry.h src/kvbound.h \
               adversarial/orders.h lowerbound/index_reduction.h
HDRS := $(wildcard $(foreach d,$(L0) $(L1) $(L2) $(L3) tests,$(d)/*.h))

.PHONY: all run run-full check check-full check-slurm bench install uninstall clean
# Keep object files of tests and benches (they are intermediates of pattern rules).
.SECONDARY:
all: $(B)/libkvbound.a $(B)/libkvbound.so $(B)/libkvbound-props.so $(B)/libkvbound-cli.so $(B)/kvbound $(B)/kvb-props $(TEST_BIN) $(BENCH_BIN) \
     $(B)/kvb-dump-kv $(B)/kvb-bench

$(B)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(call layer_inc,$<) -c $< -o $@

# The build's identity (src/core/build_id.h): kvbound's version and a SHA-256 over the sources the
# cached model streams' bytes depend on (src/core and src/model, .c and .h: names and contents)
# and the compiler flags (another -O or -march may round otherwise), defined for build_id.o
# alone, which depends on those files: a changed one recompiles it (and relinks the library),
# and the on-disk caches keyed on it (src/model/stream_model.c) are written afresh rather than
# read from another build. (Not the whole library: an edit elsewhere cannot change those bytes,
# and every cache rebuild costs minutes and up to 0.9 GB per text.)
BUILD_ID_SRC := $(sort $(wildcard src/core/*.c src/core/*.h src/model/*.c src/model/*.h))
$(B)/obj/src/core/build_id.o: $(BUILD_ID_SRC) Makefile
$(B)/obj/src/core/build_id.o: CFLAGS_ALL += \
  -DKVB_BUILD_VERSION='"$(shell sed -n 's/.*KVBOUND_VERSION "\(.*\)"/\1/p' src/kvbound.h)"' \
  -DKVB_BUILD_SOURCE_HASH='"$(shell { sha256sum $(BUILD_ID_SRC); echo '$(CC) $(OPT) $(CFLAGS)'; } | sha256sum | cut -c1-64)"'

$(B)/libkvbound.a: $(LIB_OBJ)
	@mkdir -p $(B)
	rm -f $@ && ar rcs $@ $^

# The soname makes every user of the library in one process (a program, libkvbound-props.so, a
# plugin, Python's ctypes) share one copy, hence one registry of methods (plugin.h).
$(B)/libkvbound.so: $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libkvbound.so -o $@ $^ $(LIBS)

# The command line is a library too (libkvbound-cli.so exports kvb_cli_main and links
# libkvbound.so, so a process that registered a method — a Python session — runs `kvbound run`
# on it: one registry); kvbound is a thin main over it. Its own library rather than a part of
# libkvbound-props.so: the battery and the command line have different dependencies (the CLI
# carries the OpenCL device library where OpenCL exists), and loading either one should not
# load the other. kvbound finds both libraries beside itself (the build tree) or in ../lib (an
# install). Plugins resolve their calls against the same libkvbound.so, so they see its registry.
$(B)/libkvbound-cli.so: $(CLI_OBJ) $(B)/libkvbound.so
	$(CC) -shared -Wl,-soname,libkvbound-cli.so -Wl,-rpath,'$$ORIGIN' -o $@ $(CLI_OBJ) $(KVBOUND_GPU_LIBS) -L$(B) -lkvbound $(LIBS)

$(B)/kvbound: $(B)/obj/src/app/tools/kvbound.o $(B)/libkvbound-cli.so $(B)/libkvbound.so
	$(CC) -o $@ $< -L$(B) -lkvbound-cli -lkvbound -Wl,-rpath,'$$ORIGIN:$$ORIGIN/../lib' $(LIBS)

# A claim table row names only the members it uses: prop_claim's trailing `question` is NULL
# unless a check asks kvbound's own question (props/prop.h), so rows may omit it.
$(PROP_OBJ): CFLAGS_ALL += -Wno-missing-field-initializers

# The battery is a library too (plugin.h, "The battery in-process"): libkvbound-props.so exports
# kvb_props_main and links libkvbound.so, so a process that registered a method (a Python
# session) runs the battery on it; kvb-props is a thin main over it, finding both libraries
# beside itself ($$ORIGIN).
$(B)/libkvbound-props.so: $(PROP_OBJ) $(B)/libkvbound.so
	$(CC) -shared -Wl,-soname,libkvbound-props.so -Wl,-rpath,'$$ORIGIN' -o $@ $(PROP_OBJ) -L$(B) -lkvbound $(LIBS)

$(B)/kvb-props: $(B)/obj/src/app/tools/kvb_props.o $(B)/libkvbound-props.so $(B)/libkvbound.so
	$(CC) -o $@ $< -L$(B) -lkvbound-props -lkvbound -Wl,-rpath,'$$ORIGIN' $(LIBS)

# The model's K/V dumper, an alias of `kvbound dump-kv` (src/app/tools/dump_kv.c around
# src/app/dump_kv_cli.c; src/model/README.md, The real model). Tool mains live in src/app/tools/, outside the
# library's folders and outside `kvbound` (CLI_SRC takes src/app/*.c only).
$(B)/kvb-dump-kv: $(B)/obj/src/app/tools/dump_kv.o $(B)/obj/src/app/dump_kv_cli.o $(B)/libkvbound.a
	$(CC) -o $@ $(filter %.o,$^) $(B)/libkvbound.a $(LIBS)

$(B)/tests/%: $(B)/obj/tests/%.o $(B)/libkvbound.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< $(B)/libkvbound.a $(LIBS)

# The verdict roll-up and the empirical rows' notes are the battery's (props/): this test links
# its library, found beside the test binary's folder.
$(B)/tests/test_verdict_rollup: $(B)/obj/tests/test_verdict_rollup.o $(B)/libkvbound-props.so $(B)/libkvbound.so
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< -L$(B) -lkvbound-props -lkvbound -Wl,-rpath,'$$ORIGIN/..' $(LIBS)

# The progress lines of kvb-props (props/progress.c) are tested on their own object.
$(B)/tests/test_progress: $(B)/obj/tests/test_progress.o $(B)/obj/props/progress.o $(B)/libkvbound.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(filter %.o,$^) $(B)/libkvbound.a $(LIBS)

# The verdict machinery (the comparison gate, the false-alarm count) on hand-worked cases.
$(B)/tests/test_verdict_machinery: $(B)/obj/tests/test_verdict_machinery.o $(B)/obj/props/prop.o \
                                   $(B)/obj/props/comparison_gate.o $(B)/obj/props/prop_shard.o \
                                   $(B)/libkvbound.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(filter %.o,$^) $(B)/libkvbound.a $(LIBS)

# The papers' empirical family (Holm, the members' records, the findings) on hand-worked cases.
$(B)/tests/test_family: $(B)/obj/tests/test_family.o $(B)/obj/props/family.o $(B)/obj/props/findings.o \
                        $(B)/obj/props/prop.o $(B)/obj/props/prop_shard.o $(B)/libkvbound.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(filter %.o,$^) $(B)/libkvbound.a $(LIBS)

# A real-model check run per model of the registry (props/per_model.c) on hand-worked cases.
$(B)/tests/test_per_model: $(B)/obj/tests/test_per_model.o $(B)/obj/props/per_model.o $(B)/libkvbound.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(filter %.o,$^) $(B)/libkvbound.a $(LIBS)

# Allocation-failure injection: the library's own allocations go through the test's wrappers.
$(B)/tests/test_alloc_fail: $(B)/obj/tests/test_alloc_fail.o $(B)/libkvbound.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< $(B)/libkvbound.a -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc $(LIBS)

# The plugins of the tests (tests/plugins/: the worked examples and the bad ones the loader must
# refuse), built here against the tree's headers for tests/test_plugin.c; scripts/check-plugins
# builds them again outside the tree against an installed kvbound (src/README.md, "Your own method").
TEST_PLUGINS := $(patsubst tests/plugins/%.c,$(B)/plugins/%.so,$(wildcard tests/plugins/*.c))
$(B)/plugins/%.so: tests/plugins/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(INC3) -shared -o $@ $<
# -rdynamic: the plugins resolve their calls into the library against the test's own copy.
$(B)/tests/test_plugin: $(B)/obj/tests/test_plugin.o $(B)/libkvbound.a $(TEST_PLUGINS)
	@mkdir -p $(dir $@)
	$(CC) -rdynamic -o $@ $< $(B)/libkvbound.a $(LIBS)

# The merge's trust test runs kvb-props on the test plugins (a planted marker plugin among them).
$(B)/tests/test_shard_trust: $(TEST_PLUGINS) $(B)/kvb-props

# The benches record the commit they were built from (KVB_BUILD_COMMIT, "-dirty" when the tree
# had changes, "unknown" outside a git checkout), so a figure names its code wherever the binary
# runs (tests/test_bench_cli.c, built with it too, checks that a run from / prints it).
# $(B)/build_commit is rewritten only when that changes, and the benches rebuild then.
BUILD_COMMIT := $(shell c=$$(git rev-parse --short HEAD 2>/dev/null) || c=unknown; \
                  [ "$$c" = unknown ] || git diff --quiet HEAD -- 2>/dev/null || c=$$c-dirty; echo $$c)
$(shell mkdir -p $(B) && (echo '$(BUILD_COMMIT)' | cmp -s - $(B)/build_commit || echo '$(BUILD_COMMIT)' > $(B)/build_commit))
BENCH_OBJ := $(B)/obj/tests/bench_main.o $(BENCH_SRC:tests/%.c=$(B)/obj/tests/%.o) \
             $(B)/obj/tests/test_bench_cli.o
$(BENCH_OBJ): CFLAGS_ALL += -DKVB_BUILD_COMMIT='"$(BUILD_COMMIT)"'
$(BENCH_OBJ): $(B)/build_commit

# The benchmark command (tests/README.md, Benchmarks): `build/kvb-bench --help`.
$(B)/kvb-bench: $(B)/obj/tests/bench_main.o $(B)/libkvbound.a
	$(CC) -o $@ $< $(B)/libkvbound.a $(LIBS)

$(B)/bench/%: $(B)/obj/tests/%.o $(B)/libkvbound.a
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< $(B)/libkvbound.a $(LIBS)

# ---- GPU kernels (src/gpu, README "GPU kernels"). One kernel text (k_prelude.cl + k_*.cl) is
# embedded as a C string for the OpenCL backend and concatenated into a .cu file for nvcc. The
# OpenCL part is built when the OpenCL headers are found, the CUDA part when nvcc is (both
# auto-detected; plain `make` works without either). The gpu code is its own library
# (libkvbound_gpu.a, linked with -lOpenCL) so libkvbound keeps no device dependency.
GPU_CL  := src/gpu/k_prelude.cl $(filter-out src/gpu/k_prelude.cl,$(sort $(wildcard src/gpu/k_*.cl)))
GPU_SRC := $(wildcard src/gpu/*.c)
GPU_OBJ := $(GPU_SRC:%.c=$(B)/obj/%.o) $(B)/obj/gpu/kvb_kernels_src.o
GPU_INC := $(INC1) -Isrc/gpu
HAVE_OPENCL := $(shell printf '\043include <CL/cl.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_ARCHS ?= 80 90
# WITH_CUDA (the one build switch; 1 by default where nvcc and the OpenCL headers are found,
# WITH_CUDA=0 turns it off): the CUDA backend (gpu_cuda.cu compiled by nvcc, gpu_ops.c with
# -DKVB_WITH_CUDA) goes into libkvbound_gpu.a, so the kvbound command, libkvbound-cli.so and
# kvb-gpucheck run a spec's backend = "cuda"; without it they say this build has no CUDA backend.
WITH_CUDA ?= $(if $(and $(NVCC),$(HAVE_OPENCL)),1,0)
ifeq ($(WITH_CUDA),1)
ifeq ($(and $(NVCC),$(HAVE_OPENCL)),)
$(error WITH_CUDA=1 needs nvcc and the OpenCL headers (the device library is built on the OpenCL one))
endif
endif
ifneq ($(NVCC),)
CUDA_HOME := $(patsubst %/,%,$(dir $(patsubst %/,%,$(dir $(NVCC)))))
endif
CUDA_OBJ  := $(B)/gpu/gpu_ops_cuda.o $(B)/gpu/gpu_cuda.o
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lstdc++
GPU_LIB_OBJ := $(if $(filter 1,$(WITH_CUDA)),$(filter-out $(B)/obj/src/gpu/gpu_ops.o,$(GPU_OBJ)) $(CUDA_OBJ),$(GPU_OBJ))
GPU_LIB_LIBS := -lOpenCL $(if $(filter 1,$(WITH_CUDA)),$(CUDA_LIBS))
# The switch's value in a file rewritten only when it changes, so flipping WITH_CUDA relinks what
# links the device library (make sees no other change).
GPU_CONFIG := $(B)/gpu/config
GPU_CONFIG_TEXT := WITH_CUDA=$(WITH_CUDA) CUDA_HOME=$(CUDA_HOME) CUDA_ARCHS=$(CUDA_ARCHS)
$(shell mkdir -p $(B)/gpu && { printf '%s\n' '$(GPU_CONFIG_TEXT)' | cmp -s - $(GPU_CONFIG) || printf '%s\n' '$(GPU_CONFIG_TEXT)' > $(GPU_CONFIG); })
GPU_ALL := $(if $(HAVE_OPENCL),$(B)/kvb-gpucheck)
# (a rule's prerequisites expand when it is read, so the device tool joins `all` here, after
# GPU_ALL is known)
all: $(GPU_ALL)

$(B)/gpu/kvb_kernels_src.c: $(GPU_CL)
	@mkdir -p $(dir $@)
	{ echo '/* generated by make from $(GPU_CL); do not edit */'; echo '#include "gpu.h"'; \
	  echo 'const char *kvb_gpu_kernel_source(void) {'; echo '  return'; \
	  cat $(GPU_CL) | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/'; \
	  echo '  ;'; echo '}'; } > $@
$(B)/gpu/kvb_kernels.cu: $(GPU_CL)
	@mkdir -p $(dir $@)
	cat $(GPU_CL) > $@
$(B)/obj/gpu/kvb_kernels_src.o: $(B)/gpu/kvb_kernels_src.c src/gpu/gpu.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(GPU_INC) -c $< -o $@
$(B)/obj/src/gpu/%.o: src/gpu/%.c $(HDRS) $(wildcard src/gpu/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(GPU_INC) -c $< -o $@
$(B)/libkvbound_gpu.a: $(GPU_LIB_OBJ) $(GPU_CONFIG)
	rm -f $@ && ar rcs $@ $(GPU_LIB_OBJ)
# The device kernels' check tool (src/app/tools/gpucheck/, one file per job: gpucheck.h lists
# them), which reaches into src/gpu/.
GPUCHECK_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(wildcard src/app/tools/gpucheck/*.c))
$(GPUCHECK_OBJ): CFLAGS_ALL += -Isrc/gpu
$(GPUCHECK_OBJ): $(wildcard src/gpu/*.h) src/app/tools/gpucheck/gpucheck.h
$(B)/kvb-gpucheck: $(GPUCHECK_OBJ) $(B)/libkvbound_gpu.a $(B)/libkvbound.a
	$(CC) -o $@ $^ $(GPU_LIB_LIBS) $(LIBS)

# The kernel text compiled as C (the prelude's KVB_HOST_EMU branch) at shapes whose offsets pass
# 2^31, under UBSan's signed-overflow check, and gpu_limits.c's guard (tests/test_gpu_index64.c).
# Needs no OpenCL, so it is built and run by `make check` everywhere.
SAN_INT := -fsanitize=signed-integer-overflow,pointer-overflow -fno-sanitize-recover=all
$(B)/obj/tests/test_gpu_index64.o: CFLAGS_ALL += -Isrc/gpu $(SAN_INT) -pthread
$(B)/obj/tests/test_gpu_index64.o: $(GPU_CL) src/gpu/gpu_limits.h
# (CFLAGS, LDFLAGS and LDLIBS as every other link: a sanitizer build, e.g.
#   make B=build-san CFLAGS=-fsanitize=address,undefined LDLIBS=-fsanitize=address,undefined
# compiles gpu_limits.o instrumented, so this link needs the sanitizer's runtime too)
$(B)/tests/test_gpu_index64: $(B)/obj/tests/test_gpu_index64.o $(B)/obj/src/gpu/gpu_limits.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) $(SAN_INT) -pthread -o $@ $^ -lm $(LDLIBS)

# The roofline model's in-flight estimate against its H100 targets, with the loads in flight per lane
# read from the kernel text, and the same with the text's KVB_COOP_MLP / KVB_GRAM_MLP set to 1
# (tests/test_gpu_roofline.c): the embedded text is compiled under another name so that the test
# supplies kvb_gpu_kernel_source() itself. Needs no OpenCL.
$(B)/obj/tests/test_gpu_roofline.o: CFLAGS_ALL += -Isrc/gpu
$(B)/obj/tests/test_gpu_roofline.o: src/gpu/roofline.h src/gpu/gpu.h
$(B)/obj/tests/kvb_kernels_text.o: $(B)/gpu/kvb_kernels_src.c src/gpu/gpu.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(GPU_INC) -Dkvb_gpu_kernel_source=kvb_test_kernel_text -c $< -o $@
$(B)/tests/test_gpu_roofline: $(B)/obj/tests/test_gpu_roofline.o $(B)/obj/src/gpu/roofline.o $(B)/obj/tests/kvb_kernels_text.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ -lm $(LDLIBS)

# kvbound itself: a spec's backend = "opencl" (runner.c) and `kvbound devices` reach the device
# library when OpenCL is there; without it they say so and everything else works.
KVBOUND_GPU_LIBS = $(if $(HAVE_OPENCL),$(B)/libkvbound_gpu.a $(GPU_LIB_LIBS))
$(B)/libkvbound-cli.so: $(if $(HAVE_OPENCL),$(B)/libkvbound_gpu.a)
$(B)/obj/src/app/runner.o: CFLAGS_ALL += -Isrc/gpu $(if $(HAVE_OPENCL),-DKVB_WITH_OPENCL)
$(B)/obj/src/app/runner.o: $(wildcard src/gpu/*.h)

# CUDA: every kernel compiled for each of CUDA_ARCHS with warnings as errors, register and shared
# memory usage printed (scripts/cuda-compile-check; part of `make check` when nvcc exists).
.PHONY: cuda-compile check-gpu check-gpu-standin check-gpu-bins
cuda-compile: $(if $(NVCC),$(B)/gpu/gpu_cuda.o $(B)/gpu/kvb_kernels.ptx $(B)/gpu/kvb_kernels_perfmut.ptx)
	@NVCC="$(NVCC)" CUDA_ARCHS="$(CUDA_ARCHS)" sh scripts/cuda-compile-check $(B)

# The binaries that run on CUDA (where nvcc is found): the backend compiled into a fatbin for every
# architecture of CUDA_ARCHS (SASS for each, plus PTX of the last for newer GPUs) with warnings as
# errors, and one fatbin per mutant define (every KVB_MUT_* of the kernel text, the same flags),
# which gpu_cuda.cu loads as a library for kvb-gpucheck's mutant runs; a mutant that does not
# compile fails the build. build/kvb-gpucheck-cuda links the real CUDA runtime;
# build/kvb-gpucheck-cuda-standin links tests/cuda_standin.c instead, a stand-in runtime that runs
# the same backend's launches on the OpenCL device (no NVIDIA GPU needed).
ifneq ($(NVCC),)
CUDA_GENCODE := $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
                -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS))
NVCC_FLAGS   := -std=c++17 -O3 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror
# Every KVB_MUT_* define of the kernel text but the barrier races (named *_BARRIER: kvb-gpucheck
# checks the convention), which run under Oclgrind only, never on a device.
CUDA_MUTANTS := $(filter-out %_BARRIER,$(sort $(shell sed -n 's/.*\(KVB_MUT_[A-Z0-9_]*\).*/\1/p' $(GPU_CL))))
CUDA_MUT_DIR := $(B)/gpu/cuda-mutants
CUDA_FATBINS := $(CUDA_MUTANTS:%=$(CUDA_MUT_DIR)/%.fatbin)
CUDA_CHECK_OBJ := $(GPUCHECK_OBJ) $(filter-out $(B)/obj/src/gpu/gpu_ops.o,$(GPU_OBJ)) \
                  $(CUDA_OBJ) $(B)/gpu/cuda_mutant_sha256.o
# ptxas's report of every kernel (registers, shared memory, stack frame, spill stores/loads) for
# each architecture goes to gpu_cuda.ptxas.log: scripts/cuda-compile-check prints it and fails a
# kernel that uses local memory. -fPIC: the object goes into libkvbound-cli.so too.
$(B)/gpu/gpu_cuda.o: src/gpu/gpu_cuda.cu $(B)/gpu/kvb_kernels.cu src/gpu/gpu.h src/core/sha256.h $(GPU_CONFIG)
	$(NVCC) $(NVCC_FLAGS) $(CUDA_GENCODE) -Xcompiler -fPIC -Xptxas -v -I$(B)/gpu -Isrc/gpu -Isrc/core \
	  -DKVB_CUDA_MUTANT_DIR='"$(abspath $(CUDA_MUT_DIR))"' -c $< -o $@ > $(B)/gpu/gpu_cuda.ptxas.tmp 2>&1 \
	  || { cat $(B)/gpu/gpu_cuda.ptxas.tmp; rm -f $@; exit 1; }
	mv $(B)/gpu/gpu_cuda.ptxas.tmp $(B)/gpu/gpu_cuda.ptxas.log
# One fatbin per mutant define and one of the kernels as they are (kvb_kernels.fatbin, which
# scripts/check-gpu renames as a mutant to see it refused); each rebuilt only when the kernel text
# changes. Their SHA-256s, recorded when they are built, are compiled into the binaries that load
# them (cuda_mutant_sha256.c; gpu_cuda.cu refuses a file whose digest differs).
$(CUDA_MUT_DIR)/%.fatbin: $(B)/gpu/kvb_kernels.cu $(GPU_CONFIG)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) $(CUDA_GENCODE) -D$* --fatbin -x cu $< -o $@
$(B)/gpu/kvb_kernels.fatbin: $(B)/gpu/kvb_kernels.cu $(GPU_CONFIG)
	$(NVCC) $(NVCC_FLAGS) $(CUDA_GENCODE) --fatbin -x cu $< -o $@
# The kernels' PTX for the last of CUDA_ARCHS, and the same built with one load in flight per lane
# (-DKVB_COOP_MLP=1 -DKVB_PERFMUT_GRAM_ONE_LOAD: same numbers), for scripts/ptx-mlp-check (run by
# scripts/cuda-compile-check, which asks make for both; rebuilt only when the kernel text changes).
CUDA_PTX_ARCH := compute_$(lastword $(CUDA_ARCHS))
$(B)/gpu/kvb_kernels.ptx: $(B)/gpu/kvb_kernels.cu $(GPU_CONFIG)
	$(NVCC) $(NVCC_FLAGS) -arch=$(CUDA_PTX_ARCH) -ptx -x cu $< -o $@
$(B)/gpu/kvb_kernels_perfmut.ptx: $(B)/gpu/kvb_kernels.cu $(GPU_CONFIG)
	$(NVCC) $(NVCC_FLAGS) -arch=$(CUDA_PTX_ARCH) -ptx -x cu -DKVB_COOP_MLP=1 -DKVB_PERFMUT_GRAM_ONE_LOAD $< -o $@
$(B)/gpu/cuda_mutant_sha256.c: $(CUDA_FATBINS)
	{ echo '/* generated by make from the SHA-256 of each fatbin in $(CUDA_MUT_DIR); do not edit */'; \
	  echo 'const char *const kvb_cuda_mutant_sha256[][2] = {'; \
	  for f in $(CUDA_FATBINS); do printf '  {"%s", "%s"},\n' "$${f##*/}" "$$(sha256sum < $$f | cut -c1-64)"; done; \
	  echo '  {0, 0}};'; } > $@
$(B)/gpu/cuda_mutant_sha256.o: $(B)/gpu/cuda_mutant_sha256.c
	$(CC) $(CFLAGS_ALL) -c $< -o $@
$(B)/gpu/gpu_ops_cuda.o: src/gpu/gpu_ops.c $(HDRS) $(wildcard src/gpu/*.h)
	$(CC) $(CFLAGS_ALL) $(GPU_INC) -DKVB_WITH_CUDA -c $< -o $@
$(B)/kvb-gpucheck-cuda: $(CUDA_CHECK_OBJ) $(B)/libkvbound.a $(CUDA_FATBINS)
	$(CC) -o $@ $(CUDA_CHECK_OBJ) $(B)/libkvbound.a $(CUDA_LIBS) -lOpenCL $(LIBS)
$(B)/obj/tests/cuda_standin.o: tests/cuda_standin.c src/gpu/gpu.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -I$(CUDA_HOME)/include $(GPU_INC) -c $< -o $@
$(B)/kvb-gpucheck-cuda-standin: $(CUDA_CHECK_OBJ) $(B)/obj/tests/cuda_standin.o $(B)/libkvbound.a $(CUDA_FATBINS)
	$(CC) -o $@ $(CUDA_CHECK_OBJ) $(B)/obj/tests/cuda_standin.o $(B)/libkvbound.a -lstdc++ -lOpenCL $(LIBS)
CUDA_CHECK_BINS := $(B)/kvb-gpucheck-cuda $(B)/kvb-gpucheck-cuda-standin $(B)/gpu/kvb_kernels.fatbin
endif

# The device check's entry point is scripts/check-gpu (README, GPU kernels): it builds what it needs
# (make check-gpu-bins) and exits 0 when the grid ran on a CUDA device and passed, 3 when
# everything that ran passed but no CUDA device (or no nvcc) was there, 1 on any failure.
# `make check-gpu` runs the same script; make itself exits 2 for both 3 and 1 ("Error 3" /
# "Error 1" names which), so a caller that needs the three codes runs the script.
# check-gpu-standin counts the stand-in run as the device run (this machine's way to check the
# CUDA backend end to end without a GPU).
check-gpu-bins: all $(if $(NVCC),$(B)/gpu/gpu_cuda.o $(B)/gpu/kvb_kernels.ptx $(B)/gpu/kvb_kernels_perfmut.ptx) $(CUDA_CHECK_BINS)
check-gpu: check-gpu-bins
	@KVB_CHECK_GPU_BUILT=1 NVCC="$(NVCC)" CUDA_ARCHS="$(CUDA_ARCHS)" sh scripts/check-gpu $(B)
check-gpu-standin: check-gpu-bins
	@KVB_CHECK_GPU_BUILT=1 NVCC="$(NVCC)" CUDA_ARCHS="$(CUDA_ARCHS)" sh scripts/check-gpu $(B) standin

# The default verification (3 minutes on 2 idle cores): every claim checked faithfully (the
# mutants are make check's), those that cannot decide at this size reported as deferred
# (props/tiers.tsv), the specs and figures; verdict table in out/report.md.
run: all
	@mkdir -p out
	$(if $(QUIET),KVB_QUIET=1) OPENBLAS_NUM_THREADS=1 sh scripts/run-report out

# make run with the claims it defers and every spec, the costly model runs marked
# "-- tier: full" too (scripts/README.md)
run-full: all
	@mkdir -p out
	$(if $(QUIET),KVB_QUIET=1) KVB_SPECS=all OPENBLAS_NUM_THREADS=1 sh scripts/run-report out

# QUIET=1: no progress lines (CI logs); the results and the closing count are the same.
check: all
	$(if $(QUIET),KVB_QUIET=1) OPENBLAS_NUM_THREADS=1 sh scripts/run-checks $(B) check

# The Slurm job array for real, on a single-node Slurm started here (scripts/check-slurm; needs
# root and slurm-wlm, munge). `make check` runs it too where it can, SKIPPED otherwise.
check-slurm: all
	sh scripts/check-slurm $(B)

check-full: all
	$(if $(QUIET),KVB_QUIET=1) OPENBLAS_NUM_THREADS=1 sh scripts/run-checks $(B) full

# The default shapes (kvb-bench without options: block BalanceKV, exact decode, SubGen, the
# scaling table; tests/README.md, Benchmarks), exact decode in float32 and float64 in one process
# (both judged against the same limit samples: in two processes each had its own best copy pass,
# 23.9 against 19.5 GB/s in one idle run, and the two dtypes' ratios differed by that), then the single-purpose
# benches (bench_model with Gemma 3's 16k and 32k prefills; KVB_BENCH_SHORT=1 leaves them out).
# The output, JSON lines included, is kept in $(B)/bench.log, and scripts/check-bench-ratios ends
# the run: every ratio against the run's best limit, none beyond its spread (a failure there is
# an accounting error, not a slow figure). scripts/bench-tables $(B)/bench.log writes
# tests/BENCHMARKS.md. BENCH_FLAGS adds options to kvb-bench, e.g. make bench BENCH_FLAGS="--threads 2".
BENCH_FLAGS ?=
bench: all
	@rm -f $(B)/bench.rc; { \
	  echo "== $(B)/kvb-bench --json $(BENCH_FLAGS)" && $(B)/kvb-bench --json $(BENCH_FLAGS) && \
	  echo "== $(B)/kvb-bench --method exact_decode --dtype f32,f64 --json $(BENCH_FLAGS)" && \
	  $(B)/kvb-bench --method exact_decode --dtype f32,f64 --json $(BENCH_FLAGS) && \
	  for b in $(BENCH_BIN); do echo "== $$b"; $$b || exit 1; done; echo $$? > $(B)/bench.rc; \
	} 2>&1 | tee $(B)/bench.log; \
	[ "$$(cat $(B)/bench.rc 2>/dev/null)" = 0 ] || { echo "make bench: a bench failed ($(B)/bench.log)"; exit 1; }; \
	sh scripts/check-bench-ratios $(B)/bench.log

install: $(B)/libkvbound.a $(B)/libkvbound.so $(B)/libkvbound-props.so $(B)/libkvbound-cli.so $(B)/kvbound
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/kvbound $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(B)/libkvbound.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/libkvbound.so $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/libkvbound-props.so $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/libkvbound-cli.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 $(PUBLIC_HDRS) $(DESTDIR)$(PREFIX)/include/kvbound/
	install -m 755 $(B)/kvbound $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(shell sed -n 's/.*KVBOUND_VERSION "\(.*\)"/\1/p' src/kvbound.h)|g' \
	    scripts/kvbound.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/kvbound.pc

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/include/kvbound $(DESTDIR)$(PREFIX)/lib/libkvbound.* \
	       $(DESTDIR)$(PREFIX)/lib/pkgconfig/kvbound.pc $(DESTDIR)$(PREFIX)/bin/kvbound

clean:
	rm -rf $(B) out

# libFuzzer harness for the .npy reader (clang with libclang-rt; Debian: clang-14,
# libclang-rt-14-dev). Not part of `all`. Runs FUZZ_TIME seconds from the committed seed corpus,
# writing new inputs to $(B)/fuzz/corpus; fold interesting ones back with
#   $(B)/fuzz/fuzz_npy -merge=1 tests/fuzz_corpus/npy $(B)/fuzz/corpus
.PHONY: fuzz
FUZZ_CC   ?= clang
FUZZ_TIME ?= 60
fuzz: $(B)/fuzz/fuzz_npy
	@mkdir -p $(B)/fuzz/corpus
	$(B)/fuzz/fuzz_npy -max_total_time=$(FUZZ_TIME) -max_len=4096 $(B)/fuzz/corpus tests/fuzz_corpus/npy

# (npy.c reads files through read_file.c: both are linked)
FUZZ_NPY_SRC := tests/fuzz_npy.c src/core/npy.c src/core/read_file.c src/core/kvb_error.c
$(B)/fuzz/fuzz_npy: $(FUZZ_NPY_SRC) src/core/npy.h src/core/read_file.h src/core/kvb_error.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -D_POSIX_C_SOURCE=200809L -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined -Isrc/core $(FUZZ_NPY_SRC) -lm -o $@

# libFuzzer harness for the spec reader (src/app/lua_spec.c, the Lua sandbox): lua_spec.c and the
# harness instrumented, the rest of the command's objects and libraries as built by `all`;
# seed corpus: the shipped specs (scripts/specs) and hostile fragments (tests/fuzz_corpus/spec).
.PHONY: fuzz-spec
fuzz-spec: $(B)/fuzz/fuzz_spec
	@mkdir -p $(B)/fuzz/corpus_spec
	$(B)/fuzz/fuzz_spec -max_total_time=$(FUZZ_TIME) -max_len=4096 -timeout=10 $(B)/fuzz/corpus_spec tests/fuzz_corpus/spec scripts/specs

$(B)/fuzz/fuzz_spec: tests/fuzz_spec.c src/app/lua_spec.c $(filter-out $(B)/obj/src/app/kvbound_main.o $(B)/obj/src/app/lua_spec.o,$(CLI_OBJ)) $(B)/libkvbound.a $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -D_POSIX_C_SOURCE=200809L -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined $(shell pkg-config --cflags lua5.4) $(INC3) tests/fuzz_spec.c \
	  src/app/lua_spec.c $(filter-out $(B)/obj/src/app/kvbound_main.o $(B)/obj/src/app/lua_spec.o,$(CLI_OBJ)) \
	  $(KVBOUND_GPU_LIBS) $(B)/libkvbound.a $(LIBS) -o $@

# libFuzzer harness for the C entry points the Python bindings call (tests/fuzz_pyapi.c: params,
# methods by name fed any dimensions and values, exact attention). The harness, src/core and the
# registry are compiled instrumented (the wrappers, params and attention the bindings reach
# first); the algorithms come from libkvbound.a as built by `all` (the linker takes from the
# archive only what the instrumented objects leave undefined). Starts from an empty corpus.
FUZZ_PYAPI_SRC := tests/fuzz_pyapi.c $(wildcard src/core/*.c) src/app/registry.c \
                  src/app/registry_methods.c src/app/registry_streams.c src/app/registry_probes.c
.PHONY: fuzz-pyapi
fuzz-pyapi: $(B)/fuzz/fuzz_pyapi
	@mkdir -p $(B)/fuzz/corpus_pyapi
	$(B)/fuzz/fuzz_pyapi -max_total_time=$(FUZZ_TIME) -max_len=1024 -rss_limit_mb=1024 -timeout=10 $(B)/fuzz/corpus_pyapi

$(B)/fuzz/fuzz_pyapi: $(FUZZ_PYAPI_SRC) $(B)/libkvbound.a $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -D_POSIX_C_SOURCE=200809L -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined $(shell pkg-config --cflags gsl) $(INC3) $(FUZZ_PYAPI_SRC) \
	  $(B)/libkvbound.a $(LIBS) -o $@

# libFuzzer harness for the GGUF reader (src/model/gguf.c), like `fuzz` for .npy; corpus in
# tests/fuzz_corpus/gguf (fold new inputs back with -merge=1 as above).
.PHONY: fuzz-gguf
fuzz-gguf: $(B)/fuzz/fuzz_gguf
	@mkdir -p $(B)/fuzz/corpus_gguf
	$(B)/fuzz/fuzz_gguf -max_total_time=$(FUZZ_TIME) -max_len=4096 $(B)/fuzz/corpus_gguf tests/fuzz_corpus/gguf

# (gguf.c opens files through read_file.c: both are linked)
FUZZ_GGUF_SRC := tests/fuzz_gguf.c src/model/gguf.c src/core/read_file.c src/core/kvb_error.c
$(B)/fuzz/fuzz_gguf: $(FUZZ_GGUF_SRC) src/model/gguf.h src/core/read_file.h src/core/kvb_error.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -D_POSIX_C_SOURCE=200809L -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined -Isrc/core -Isrc/model $(FUZZ_GGUF_SRC) -lm -o $@
