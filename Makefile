# translate — build, test, install.
#
#   make            build ./translate (and the other programs in app/)
#   make run        translate "I love china" with the default config
#   make test       build and run every test; ends with "N passed, N failed, N skipped"
#   make deps       install the Debian packages the build needs (or print how)
#   make eval       score the shipped models on the dev sets, table into docs/models.md
#   make install PREFIX=/usr/local
#
# Objects go to build/.  The code is in layers, each using only the ones
# below it (README.md, Layout):
#   app/ (the programs) → eval/ → data/, training/ → model/ → tokenizer/ → common/
# Every app/*.c that defines main() is listed in PROGRAMS; the other app/*.c
# are the programs' own modules (APP_SRCS).  All of it but the mains is
# linked into the programs, the tests and the fuzz targets (LIB_SRCS).

CC      ?= cc
PKGS     = yaml-0.1 libutf8proc libcjson
# -fvect-cost-model=dynamic lets -O2 vectorise loops whose trip count is
# only known at run time (GCC 12's -O2 default, "very-cheap", does not);
# it changes no arithmetic, only which loops use vector instructions.
# -fno-math-errno: sqrtf never sets errno (we never read it after maths),
# so a loop with a square root (AdamW, LayerNorm) can be vectorised; the
# results are the same correctly rounded square roots.
# (clang has no such option, and vectorises those loops at -O2 anyway.)
VECT_COST := $(shell $(CC) -fvect-cost-model=dynamic -E -x c /dev/null >/dev/null 2>&1 && echo -fvect-cost-model=dynamic)
OPT     ?= -O2 -g -fno-math-errno $(VECT_COST)
# The flags the build needs, then yours: `make CFLAGS="-O0 -g"` adds to
# them (its -O0 coming last wins over OPT's -O2) rather than replacing
# them, so -MMD (header dependencies) and the libraries stay.
override CFLAGS := -std=c11 -D_DEFAULT_SOURCE $(OPT) -Wall -Wextra -Werror -MMD -MP \
           $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(CFLAGS)
override LDLIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm -pthread $(LDLIBS)
PREFIX  ?= /usr/local

# A library pkg-config cannot find would show only as a hundred undefined
# references at the link: say which, and how to install it, before
# building.  Only for goals that build without `make deps` first (make
# run and make test run it, and their own builds check again after it).
DEB_yaml-0.1 = libyaml-dev
DEB_libutf8proc = libutf8proc-dev
DEB_libcjson = libcjson-dev
ifeq ($(filter-out all install translate train build/%,$(or $(MAKECMDGOALS),all)),)
PKGS_MISSING := $(strip $(foreach p,$(PKGS),$(if $(shell pkg-config --exists $(p) 2>/dev/null && echo y),,$(p))))
ifneq ($(PKGS_MISSING),)
$(error pkg-config cannot find $(PKGS_MISSING): run `make deps` (or sudo apt-get install $(foreach p,$(PKGS_MISSING),$(DEB_$(p)))))
endif
endif

PROGRAMS  = translate train
MAIN_SRCS = $(PROGRAMS:%=app/%.c)
LAYERS    = common tokenizer model data training eval
LAYER_SRCS = $(foreach d,$(LAYERS),$(wildcard $(d)/*.c))
APP_SRCS  = $(filter-out $(MAIN_SRCS), $(wildcard app/*.c))
LIB_SRCS  = $(LAYER_SRCS) $(APP_SRCS)
# The HTML viewer (translate --html) is app/viewer/'s three files with the
# CSS and JS inlined (app/html_report.c).  tools/embed.sh (od + awk) turns
# them into byte arrays in a generated C file, build/viewer_assets.c, linked
# like library code: the program needs no files at run time.
VIEWER_FILES = app/viewer/viewer.html app/viewer/viewer.css app/viewer/viewer.js
VIEWER_OBJ   = build/viewer_assets.o
LIB_OBJS  = $(LIB_SRCS:%.c=build/%.o) $(VIEWER_OBJ)
TEST_SRCS = $(wildcard tests/test_*.c)
TEST_BINS = $(TEST_SRCS:tests/%.c=build/tests/%)
TEST_LIB  = build/tests/testutil.o
# Kept, not deleted as intermediate files: the next make test would
# otherwise compile and link every test program again.
.SECONDARY: $(TEST_SRCS:tests/%.c=build/tests/%.o)

.PHONY: all run test deps install uninstall clean distclean
all: $(PROGRAMS)

$(PROGRAMS): %: build/app/%.o $(LIB_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

build/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

build/tests/%: build/tests/%.o $(TEST_LIB) $(LIB_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) -lcmocka

run: deps
	@$(MAKE) --no-print-directory translate
	./translate "I love china"

# With emcc installed, the page of make web is built first, so that its
# tests (tests/test_web.c, tests/test_browser.c) run; if that build fails
# they skip with the tag "web" (a failure where TRANSLATE_REQUIRE has it).
test: deps
	@$(MAKE) --no-print-directory $(PROGRAMS) $(TEST_BINS)
	@if command -v $(EMCC) >/dev/null 2>&1; then \
	     $(MAKE) --no-print-directory web || echo "make test: make web failed: its tests will skip"; fi
	@sh tests/run_tests.sh $(TEST_BINS)

deps:
	@sh tools/deps.sh --quiet

# Installed: the two trained models, each config with exactly the files it
# names (translate finds PREFIX/share/translate/configs from the program's
# own folder, whatever the working directory; tests/test_cli_models.c runs
# an installed copy).  Not installed: configs/seed-example.yaml, whose
# 104 MB of random weights are written to its weights path (weights/) on
# first use (a share/ folder is often not writable: run it from the source
# tree), and tiny.yaml.
INSTALL_MODELS = en-zh zh-en
install: $(PROGRAMS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/translate/configs \
	           $(DESTDIR)$(PREFIX)/share/translate/weights
	install -m 755 $(PROGRAMS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(INSTALL_MODELS:%=configs/%.yaml) $(DESTDIR)$(PREFIX)/share/translate/configs/
	install -m 644 $(foreach m,$(INSTALL_MODELS),weights/$(m).safetensors weights/$(m).src.vocab \
	                 weights/$(m).tgt.vocab) weights/zh-simplify.tsv $(DESTDIR)$(PREFIX)/share/translate/weights/

uninstall:
	rm -f $(PROGRAMS:%=$(DESTDIR)$(PREFIX)/bin/%)
	rm -rf $(DESTDIR)$(PREFIX)/share/translate

# What make built goes; what took training stays: the models of
# configs/experiments/ (build/experiments/, an hour each), the quick-train
# demo's (build/quick-train/), docs/scale-out.md's export and PyTorch
# models (build/export/, build/torch/: hours on a GPU) and make
# back-translation's pairs (build/data/back-translated.tsv, minutes).
# make distclean removes those too.
KEPT_BY_CLEAN = build/experiments build/quick-train build/export build/torch build/data/back-translated.tsv
clean:
	@for f in build/* build/.[!.]* build/data/* build/data/.[!.]*; do \
	    [ -e "$$f" ] || continue; \
	    case " $(KEPT_BY_CLEAN) build/data " in *" $$f "*) ;; *) rm -rf "$$f" || exit 1 ;; esac; \
	done
	rm -f $(PROGRAMS)
	@for f in $(KEPT_BY_CLEAN); do [ ! -e "$$f" ] || echo "make clean: kept $$f (make distclean removes it)"; done

distclean: clean
	rm -rf build

# ---- the HTML viewer, compiled in (VIEWER_FILES, VIEWER_OBJ: see above) ----
build/viewer_assets.c: $(VIEWER_FILES) tools/embed.sh
	@mkdir -p $(@D)
	sh tools/embed.sh $(VIEWER_FILES) > $@.tmp && mv $@.tmp $@

$(VIEWER_OBJ): build/viewer_assets.c
	$(CC) $(CFLAGS) -c -o $@ $<

-include $(shell find build -name '*.d' 2>/dev/null)

# ---- hardening: fuzz targets, their replay in `make test`, sanitizers ----
#
#   make fuzz [FUZZ_SECONDS=60]  build tests/fuzz/fuzz_*.c with libFuzzer (clang,
#                                ASan + UBSan) in build-fuzz/ and run each for
#                                FUZZ_SECONDS (tests/fuzz/run.sh: seeds, stats)
#   make asan                    build everything with ASan + UBSan in build-asan/
#                                and run the whole test suite there
#
# `make test` also replays every committed fuzz case: build/tests/fuzz_replay_<t>
# is fuzz_<t>.c linked with the plain driver tests/fuzz/replay.c, no libFuzzer.
# (Static pattern rules, listing their targets: a plain pattern rule would
# also offer to "build" the .d files that the -include lines read.)
FUZZ_TARGETS  = $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_REPLAYS  = $(FUZZ_TARGETS:%=build/tests/fuzz_replay_%)
TEST_BINS    += $(FUZZ_REPLAYS)

$(FUZZ_TARGETS:%=build/tests/fuzz/replay_%.o): build/tests/fuzz/replay_%.o: tests/fuzz/replay.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DFUZZ_TARGET=$* -c -o $@ $<

$(FUZZ_REPLAYS): build/tests/fuzz_replay_%: build/tests/fuzz/fuzz_%.o build/tests/fuzz/replay_%.o \
                                            $(TEST_LIB) $(LIB_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) -lcmocka

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_COV      = -fsanitize=fuzzer-no-link
FUZZ_CFLAGS   = -std=c11 -D_DEFAULT_SOURCE -O1 -g -Wall -Wextra -Werror \
                $(FUZZ_COV) -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                -fno-omit-frame-pointer -MMD -MP $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
FUZZ_LIB_OBJS = $(LIB_SRCS:%.c=build-fuzz/%.o) build-fuzz/viewer_assets.o
# The numeric kernels keep ASan and UBSan but get no coverage feedback:
# their only comparisons are loop bounds, which tell the fuzzer nothing,
# and tracing them took about 45% of fuzz_cli's time (perf, in vec_dot).
FUZZ_NOCOV_OBJS = $(addprefix build-fuzz/model/,vector.o gemm.o elementwise.o layernorm.o linear.o)
$(FUZZ_NOCOV_OBJS): FUZZ_COV =
# Decoding keeps its edge coverage (which branches of the search ran) but
# not comparison tracing: its comparisons are of scores and positions,
# never of the input's bytes, so they cannot guide a mutation, and tracing
# them in top-k, the beam's ranking and the attention loops took about 45%
# of fuzz_cli's time once its inputs asked for wide beams (perf); the
# transformer's locators of rows and maps (cross_map_offset, src_len)
# another 2-3%.
FUZZ_NOCMP_OBJS = $(addprefix build-fuzz/model/,attention.o decode.o beam.o beam_many.o transformer.o)
$(FUZZ_NOCMP_OBJS): FUZZ_COV = -fsanitize=fuzzer-no-link -fno-sanitize-coverage=trace-cmp

build-fuzz/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

build-fuzz/viewer_assets.o: build/viewer_assets.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_TARGETS:%=build-fuzz/fuzz_%): build-fuzz/fuzz_%: build-fuzz/tests/fuzz/fuzz_%.o $(FUZZ_LIB_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDFLAGS) $(LDLIBS)

fuzz: fuzz-deps $(PROGRAMS) $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)
	@FUZZ_COMMAND='make fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)' sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-deps:
	@sh tools/deps.sh --quiet --with-fuzz

ASAN_FLAGS     = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ASAN_LIB_OBJS  = $(LIB_SRCS:%.c=build-asan/%.o) build-asan/viewer_assets.o
ASAN_TEST_BINS = $(TEST_BINS:build/%=build-asan/%)

build-asan/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -c -o $@ $<

build-asan/viewer_assets.o: build/viewer_assets.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -c -o $@ $<

$(PROGRAMS:%=build-asan/%): build-asan/%: build-asan/app/%.o $(ASAN_LIB_OBJS)
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(FUZZ_TARGETS:%=build-asan/tests/fuzz/replay_%.o): build-asan/tests/fuzz/replay_%.o: tests/fuzz/replay.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -DFUZZ_TARGET=$* -c -o $@ $<

$(FUZZ_REPLAYS:build/%=build-asan/%): build-asan/tests/fuzz_replay_%: build-asan/tests/fuzz/fuzz_%.o \
                     build-asan/tests/fuzz/replay_%.o build-asan/tests/testutil.o $(ASAN_LIB_OBJS)
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) -lcmocka

$(TEST_SRCS:tests/%.c=build-asan/tests/%): build-asan/tests/%: build-asan/tests/%.o \
                     build-asan/tests/testutil.o $(ASAN_LIB_OBJS)
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) -lcmocka

# The tests run ./translate and ./train; TEST_BIN_DIR makes them run the
# sanitized build-asan/ ones instead (tests/testutil.c), and TRANSLATE_HOME
# lets those find configs/.  Any ASan or UBSan report fails the run.
asan: deps
	@$(MAKE) --no-print-directory $(PROGRAMS) $(PROGRAMS:%=build-asan/%) $(ASAN_TEST_BINS)
	@TEST_BIN_DIR=build-asan TRANSLATE_HOME="$(CURDIR)" \
	 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	 sh tests/run_tests.sh $(ASAN_TEST_BINS)

clean: clean-hardening
clean-hardening:
	rm -rf build-asan build-fuzz

.PHONY: fuzz fuzz-deps asan clean-hardening
.PRECIOUS: build/tests/fuzz/%.o build-asan/tests/fuzz/%.o build-fuzz/tests/fuzz/%.o
-include $(shell find build-asan build-fuzz -name '*.d' 2>/dev/null)

# ---- benchmarks (issue 6): make bench, make bench-smoke ----
#
#   make bench         ours vs stock PyTorch, side by side, one table
#                      (bench/run.sh: training, translation, latency,
#                      memory, scaling); a few minutes; the table also
#                      goes to bench/RESULTS.md
#   make bench-smoke   the same harness on tiny inputs (configs/tiny.yaml),
#                      in seconds: checks it runs, not the speed
#
# `make test` runs the smoke mode too (tests/test_bench.c), so the harness
# cannot rot unnoticed.  The bench programs: build/bench/train_bench
# (training tokens/s), build/bench/gemm_bench (our GEMM vs OpenBLAS's,
# dlopen'ed at run time, on every training shape), build/bench/decode_bench
# (greedy steps vs the bandwidth bound).
BENCH_BINS = build/bench/train_bench build/bench/gemm_bench build/bench/decode_bench

$(BENCH_BINS): build/bench/%: build/bench/%.o $(LIB_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# Order-only: test_bench runs these programs, it does not link them.
build/tests/test_bench build-asan/tests/test_bench: | $(BENCH_BINS) translate

bench: deps bench-deps
	@$(MAKE) --no-print-directory translate $(BENCH_BINS)
	@out=$$(mktemp) && sh bench/run.sh > $$out; status=$$?; cat $$out; \
	 if [ $$status = 0 ]; then cp $$out bench/RESULTS.md && echo "(also in bench/RESULTS.md)" || status=1; \
	 else echo "make bench: failed (status $$status): bench/RESULTS.md left as it was" >&2; fi; \
	 rm -f $$out; exit $$status

bench-smoke: deps
	@$(MAKE) --no-print-directory translate $(BENCH_BINS)
	@sh bench/run.sh --quick

# The references (PyTorch with OpenBLAS, OpenBLAS itself) and the timers:
# installed for `make bench` only; bench-smoke and the tests run without
# them (their columns say "skipped").
bench-deps:
	@sh tools/deps.sh --quiet --with-bench

.PHONY: bench bench-smoke bench-deps

# ---- PyTorch fixtures (issue 17): make fixtures ----
#
# tests/data/reference/ holds what stock PyTorch computes for two tiny
# models (logits, attention maps, beam n-best lists, a training step's
# gradients and AdamW updates); tests/test_reference.c compares the C code
# with them on every machine, torch or not.  `make fixtures` rewrites them
# (needs python3-torch; seeded, so byte for byte the same with the same
# BLAS under torch: with OpenBLAS, which make bench installs, the last bits
# differ from the reference BLAS's, and so do AdamW's updates of the key
# biases, whose true gradient is 0 (noise over noise, up to a learning
# rate); the tests apply AdamW to the gradients of the same file, so a
# regenerated set passes as well);
# `make test` never does.
fixtures:
	/usr/bin/python3 tools/reference.py fixtures tests/data/reference

# The whole suite as on a machine without python3-torch, torch installed or
# not: tests/no-torch/torch/__init__.py, first on PYTHONPATH, makes
# `import torch` fail, so the live PyTorch comparisons skip.
test-no-torch:
	@PYTHONPATH="$(CURDIR)/tests/no-torch$${PYTHONPATH:+:$$PYTHONPATH}" $(MAKE) --no-print-directory test

.PHONY: fixtures test-no-torch

# ---- aarch64: cross-built, tested under qemu-user (issue 12) ----
#
#   make test-aarch64   build everything with aarch64-linux-gnu-gcc against
#                       Debian's arm64 -dev packages (multiarch) in
#                       build-aarch64/ and run the whole suite under qemu;
#                       tools/deps.sh --with-aarch64 installs what it needs
#
# The generic path: off x86-64 gemm.c's generic kernel and the scalar
# float16 widening run (model/gemm.c, model/safetensors.c).  An aarch64 program
# cannot be exec'ed here without binfmt_misc, so tests/run_emulated.sh
# writes scripts in build-aarch64/run/, one per test program and one each
# for ./translate and ./train (TEST_BIN_DIR, as for make asan), that exec
# $(AARCH64_RUN) on the real binary, and runs the suite with them.
# AARCH64_RUN= (empty) runs them directly: on an aarch64
# machine, or where binfmt is registered.  (Not with -L /usr/aarch64-linux-gnu:
# there qemu 7.2's forked children hang; the arm64 libc6 that the -dev
# packages bring is found at its multiarch place without it.)  Programs the
# tests start by an absolute path (python3, chromium, the bench's build/
# programs) stay x86.  TEST_EMULATED=1 lets a test skip what would take
# too long emulated (the whole dev set through the generic kernels).
AARCH64_CC      ?= aarch64-linux-gnu-gcc
AARCH64_RUN     ?= qemu-aarch64-static
AARCH64_PKG      = PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig pkg-config
AARCH64_CFLAGS   = -std=c11 -D_DEFAULT_SOURCE $(OPT) -Wall -Wextra -Werror -MMD -MP \
                   $(shell $(AARCH64_PKG) --cflags $(PKGS) 2>/dev/null)
AARCH64_LDLIBS   = $(shell $(AARCH64_PKG) --libs $(PKGS) 2>/dev/null) -lm -pthread
AARCH64_LIB_OBJS = $(LIB_SRCS:%.c=build-aarch64/%.o) build-aarch64/viewer_assets.o
AARCH64_PROGRAMS = $(PROGRAMS:%=build-aarch64/%)
AARCH64_TESTS    = $(TEST_BINS:build/%=build-aarch64/%)

build-aarch64/%.o: %.c
	@mkdir -p $(@D)
	$(AARCH64_CC) $(AARCH64_CFLAGS) -c -o $@ $<

build-aarch64/viewer_assets.o: build/viewer_assets.c
	@mkdir -p $(@D)
	$(AARCH64_CC) $(AARCH64_CFLAGS) -c -o $@ $<

$(AARCH64_PROGRAMS): build-aarch64/%: build-aarch64/app/%.o $(AARCH64_LIB_OBJS)
	$(AARCH64_CC) $(AARCH64_CFLAGS) -o $@ $^ $(AARCH64_LDLIBS)

$(FUZZ_TARGETS:%=build-aarch64/tests/fuzz/replay_%.o): build-aarch64/tests/fuzz/replay_%.o: tests/fuzz/replay.c
	@mkdir -p $(@D)
	$(AARCH64_CC) $(AARCH64_CFLAGS) -DFUZZ_TARGET=$* -c -o $@ $<

$(FUZZ_REPLAYS:build/%=build-aarch64/%): build-aarch64/tests/fuzz_replay_%: build-aarch64/tests/fuzz/fuzz_%.o \
                     build-aarch64/tests/fuzz/replay_%.o build-aarch64/tests/testutil.o $(AARCH64_LIB_OBJS)
	$(AARCH64_CC) $(AARCH64_CFLAGS) -o $@ $^ $(AARCH64_LDLIBS) -lcmocka

$(TEST_SRCS:tests/%.c=build-aarch64/tests/%): build-aarch64/tests/%: build-aarch64/tests/%.o \
                     build-aarch64/tests/testutil.o $(AARCH64_LIB_OBJS)
	$(AARCH64_CC) $(AARCH64_CFLAGS) -o $@ $^ $(AARCH64_LDLIBS) -lcmocka

build-aarch64/tests/test_bench: | $(BENCH_BINS) translate

test-aarch64:
	@sh tools/deps.sh --quiet --with-aarch64
	@$(MAKE) --no-print-directory $(AARCH64_PROGRAMS) $(AARCH64_TESTS)
	@sh tests/run_emulated.sh build-aarch64/run "$(AARCH64_RUN)" $(AARCH64_PROGRAMS) $(AARCH64_TESTS)

clean: clean-aarch64
clean-aarch64:
	rm -rf build-aarch64

.PHONY: test-aarch64 clean-aarch64
.PRECIOUS: build-aarch64/tests/fuzz/%.o
-include $(shell find build-aarch64 -name '*.d' 2>/dev/null)

# ---- an AVX2-only CPU, emulated (issue 12) ----
#
#   make test-avx2   the suite again with this build's programs (build/,
#                    ./translate, ./train) run by qemu-x86_64-static on its
#                    "max" CPU, which in Debian's qemu 7.2 has AVX2, FMA and
#                    F16C but no AVX-512: what an AVX2-only machine runs
#
# Every choice made by the CPU is then an AVX2-only CPU's: gemm's kernel
# (TEST_GEMM_KERNEL=avx2 makes test_gemm check it got that one, so a qemu
# that offers AVX-512 fails the run rather than testing the wrong path),
# the .avx2 clones of the vector loops (model/clones.h), the float16
# widening and the weights' finite check; an AVX-512 instruction reached
# by mistake stops the program (SIGILL).  On an AVX-512 machine this is the
# only way those paths run whole: TRANSLATE_GEMM=avx2 forces the kernel,
# nothing forces the clones.  Needs qemu-user-static (tools/deps.sh
# --with-qemu installs it); tests/run_emulated.sh as for aarch64.
AVX2_RUN ?= qemu-x86_64-static -cpu max
# First the tests of the kernels, the layers and the vectors' clones, so a
# run stopped at a time bound (.ci/run: a slow emulator) has run those.
AVX2_FIRST = build/tests/test_gemm build/tests/test_gemm_f16 build/tests/test_gemm_i8 \
             build/tests/test_f16 build/tests/test_layers build/tests/test_parallel build/tests/test_model

test-avx2:
	@sh tools/deps.sh --quiet --with-qemu
	@$(MAKE) --no-print-directory $(PROGRAMS) $(TEST_BINS)
	@TEST_GEMM_KERNEL=avx2 sh tests/run_emulated.sh build/avx2-run "$(AVX2_RUN)" $(PROGRAMS) \
	    $(AVX2_FIRST) $(filter-out $(AVX2_FIRST),$(TEST_BINS))

.PHONY: test-avx2

# ---- coverage (issue 17): make coverage ----
#
#   make coverage   build everything with gcc's --coverage in build-coverage/
#                   (-O0, so lines and branches are the source's, but for
#                   the products and vector loops: COV_FAST_OBJS), run the
#                   whole suite with those programs (TEST_BIN_DIR, as for
#                   asan), then print gcovr's line and branch coverage of the
#                   library (common/ tokenizer/ model/ data/ training/ eval/)
#                   and of app/ separately; the per-file tables go to
#                   build-coverage/coverage-{lib,app}.txt.  Needs gcovr
#                   (tools/deps.sh --with-coverage).  A test that fails does
#                   not stop the report: the suite's summary line says so.
COV_FLAGS      = --coverage -O0 -fprofile-update=atomic
# The products and vector loops (intrinsics, which -O0 keeps in memory
# between instructions) at -O2, their line counts then the optimised
# code's (a line may merge into its neighbours).  Even so the tests that
# translate dev sets take minutes each at -O0 (test_cli_batch's beam 4 on
# 200 lines each way, batched and one at a time: ~12 minutes on an Intel
# Xeon; all at -O0 it went past run_tests.sh's 900 s and was killed):
# hence TEST_TIMEOUT.
COV_FAST_OBJS  = build-coverage/model/gemm.o build-coverage/model/gemm_f16.o \
                 build-coverage/model/gemm_i8.o build-coverage/model/vector.o
$(COV_FAST_OBJS): COV_FLAGS = --coverage -O2 -fprofile-update=atomic
COV_LIB_OBJS   = $(LIB_SRCS:%.c=build-coverage/%.o) build-coverage/viewer_assets.o
COV_TEST_BINS  = $(TEST_BINS:build/%=build-coverage/%)
COV_GCOVR      = gcovr --root . --object-directory build-coverage --gcov-ignore-parse-errors \
                 --exclude-unreachable-branches -j 2
COV_LIB_FILTER = $(foreach d,$(LAYERS),--filter '$(d)/')

build-coverage/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(COV_FLAGS) -c -o $@ $<

build-coverage/viewer_assets.o: build/viewer_assets.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(COV_FLAGS) -c -o $@ $<

$(PROGRAMS:%=build-coverage/%): build-coverage/%: build-coverage/app/%.o $(COV_LIB_OBJS)
	$(CC) $(CFLAGS) $(COV_FLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(FUZZ_TARGETS:%=build-coverage/tests/fuzz/replay_%.o): build-coverage/tests/fuzz/replay_%.o: tests/fuzz/replay.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(COV_FLAGS) -DFUZZ_TARGET=$* -c -o $@ $<

$(FUZZ_REPLAYS:build/%=build-coverage/%): build-coverage/tests/fuzz_replay_%: build-coverage/tests/fuzz/fuzz_%.o \
                     build-coverage/tests/fuzz/replay_%.o build-coverage/tests/testutil.o $(COV_LIB_OBJS)
	$(CC) $(CFLAGS) $(COV_FLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) -lcmocka

$(TEST_SRCS:tests/%.c=build-coverage/tests/%): build-coverage/tests/%: build-coverage/tests/%.o \
                     build-coverage/tests/testutil.o $(COV_LIB_OBJS)
	$(CC) $(CFLAGS) $(COV_FLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) -lcmocka

build-coverage/tests/test_bench: | $(BENCH_BINS) translate

# Old counts are removed first, so the figures are those of this run.
coverage: deps
	@sh tools/deps.sh --quiet --with-coverage
	@$(MAKE) --no-print-directory $(PROGRAMS) $(PROGRAMS:%=build-coverage/%) $(COV_TEST_BINS)
	@find build-coverage -name '*.gcda' -delete
	-@TEST_BIN_DIR=build-coverage TRANSLATE_HOME="$(CURDIR)" TEST_TIMEOUT=2400 sh tests/run_tests.sh $(COV_TEST_BINS)
	@echo "== library: $(LAYERS) =="
	@$(COV_GCOVR) $(COV_LIB_FILTER) --txt build-coverage/coverage-lib.txt
	@$(COV_GCOVR) $(COV_LIB_FILTER) --branches --txt build-coverage/coverage-lib-branches.txt
	@$(COV_GCOVR) $(COV_LIB_FILTER) --print-summary | grep -E '^(lines|functions|branches):'
	@echo "== app/ =="
	@$(COV_GCOVR) --filter 'app/' --txt build-coverage/coverage-app.txt
	@$(COV_GCOVR) --filter 'app/' --print-summary | grep -E '^(lines|functions|branches):'
	@echo "(per file: build-coverage/coverage-{lib,lib-branches,app}.txt)"

clean: clean-coverage
clean-coverage:
	rm -rf build-coverage

.PHONY: coverage clean-coverage
.PRECIOUS: build-coverage/tests/fuzz/%.o
-include $(shell find build-coverage -name '*.d' 2>/dev/null)

# ---- mutation testing (issue 17): make mutation [MUTANTS=all|sample|ID...] ----
#
# tests/mutation/mutants.txt lists small deliberate bugs, one per entry;
# tests/mutation/run.sh applies each in turn to a scratch copy of the tree
# (build-mutation/src, built once, then only the mutated object and the
# covering tests relinked), runs the test programs that cover it (torch
# hidden; MUTATION_TORCH=1 shows it), and prints a table and the score.
# MUTANTS=sample is the short set CI runs.  Exit 1 if a mutant survived.
MUTANTS ?= all
mutation: deps
	@bash tests/mutation/run.sh $(MUTANTS)

clean: clean-mutation
clean-mutation:
	rm -rf build-mutation

.PHONY: mutation clean-mutation

# ---- evaluation (issue 13): make eval ----
#
#   make eval   score configs/en-zh.yaml and configs/zh-en.yaml on the Tatoeba
#               and JEC Basic dev sets (../shared/data), greedy and beam 4:
#               BLEU, chrF2, translations with a wrong mid-sentence capital,
#               sources with an <unk>; the table replaces the one between
#               the eval markers of docs/models.md (tools/eval.sh; about a
#               minute on 2 cores; a failed run leaves the doc unchanged)
eval: deps
	@$(MAKE) --no-print-directory translate
	@sh tools/eval.sh

.PHONY: eval

# ---- back-translation (issue 13): make back-translation ----
#
# build/data/back-translated.tsv, the en-zh model's fifth training source
# (configs/en-zh.yaml): tatoeba-cmn-mono's Chinese sentences with the
# English of the zh-en model committed at BACK_TRANSLATION_COMMIT, the one
# the shipped en-zh model was trained with (tools/back_translate.sh).
BACK_TRANSLATION_COMMIT = a3a1df0
back-translation: deps
	@$(MAKE) --no-print-directory translate
	@sh tools/back_translate.sh --model-commit $(BACK_TRANSLATION_COMMIT) build/data/back-translated.tsv

.PHONY: back-translation

# ---- the model in the page (issue 16): make web ----
#
#   make web   build/web/translate.html: one file, opened from file:// in
#              any browser, offline, that translates what the user types
#              and shows every head's attention in the viewer (docs/web.md)
#
# The engine is the project's own C code (WEB_SRCS: tokenizer, model,
# decoding, config, attention JSON, --explain) and web/wasm_main.c,
# compiled by Debian's emcc (tools/deps.sh --with-web) with the .wasm
# embedded in its JS glue (-sSINGLE_FILE=1: Emscripten 3.1.6's glue cannot
# fetch a .wasm from a file path, in node 20 or in a file:// page).  Its
# utf8proc, cJSON and libyaml are compiled too, from Debian's source
# packages of the very versions the native program links (apt-get source
# at build time into build/web/src; never in the repository), so the
# tokens are the native program's byte for byte.  No -pthread: the
# products run on one thread.  web/mkpage.c, a native tool, writes the
# page: the viewer, web/page.js, the worker (engine + web/worker.js) and
# both models' files, in base64.  NODE_PATH lets Debian's emcc find
# Debian's acorn under the machine's node.  -msimd128: WebAssembly's
# 128-bit vectors, which the generic kernel of model/gemm.c vectorises to
# (55 ms a dev sentence instead of 140 ms, en-zh, node 20; docs/web.md)
# and which its gemm_nt and safetensors' float16 widening use as
# intrinsics.  -O3 measured no faster than -O2 (docs/web.md);
# -mbulk-memory does not link (gemm.c's _Thread_local needs atomics).
EMCC        ?= emcc
WEB_ENV      = NODE_PATH=/usr/share/nodejs
WEB          = build/web
WEB_PAGE     = $(WEB)/translate.html
WEB_MODELS   = configs/en-zh.yaml configs/zh-en.yaml
WEB_SRCS     = $(wildcard common/*.c tokenizer/*.c model/*.c data/*.c) app/config.c app/translator.c \
               app/attention_json.c app/explain.c web/wasm_main.c
WEB_THIRD    = utf8proc/utf8proc.c cjson/cJSON.c $(foreach f,api dumper emitter loader parser reader scanner \
               writer,libyaml/src/$(f).c)
WEB_OBJS     = $(WEB_SRCS:%.c=$(WEB)/obj/%.o) $(WEB_THIRD:%.c=$(WEB)/obj/third/%.o)
WEB_OPT     ?= -O2 -msimd128
WEB_CFLAGS   = -std=c11 -D_DEFAULT_SOURCE $(WEB_OPT) -Wall -Wextra -Werror -MMD -MP -I$(WEB)/include
# Their code, their warnings: compiled as Debian builds it, not with ours.
WEB_THIRD_CFLAGS = $(WEB_OPT) -w -I$(WEB)/include -I$(WEB)/src/libyaml/include \
               -DYAML_VERSION_MAJOR=0 -DYAML_VERSION_MINOR=2 -DYAML_VERSION_PATCH=5 -DYAML_VERSION_STRING='"0.2.5"'
WEB_LDFLAGS  = $(WEB_OPT) -sSINGLE_FILE=1 -sALLOW_MEMORY_GROWTH=1 -sENVIRONMENT=web,worker,node \
               -sEXPORTED_RUNTIME_METHODS=FS,ccall -sEXPORTED_FUNCTIONS=_main,_web_open,_web_translate
# source package = the -dev package the native build links, same version
WEB_SOURCES  = utf8proc:libutf8proc-dev cjson:libcjson-dev libyaml:libyaml-dev

web: deps
	@sh tools/deps.sh --quiet --with-web
	@$(MAKE) --no-print-directory $(WEB_PAGE) $(WEB)/web_kernels.js
	@ls -l $(WEB_PAGE) | awk '{ printf "%s: %.1f MB\n", $$NF, $$5 / 1e6 }'

# apt-get source of each library at the installed version; the unpacked
# folder gets a stable name (build/web/src/utf8proc -> utf8proc-2.8.0/).
# The version is the native architecture's package: with the arm64 -dev
# packages installed too (make test-aarch64), dpkg-query of the bare name
# prints both versions run together ("2.8.0-12.8.0-1").
$(WEB)/src/.fetched: tools/deps.sh
	@rm -rf $(WEB)/src && mkdir -p $(WEB)/src $(WEB)/include/cjson
	cd $(WEB)/src && arch=$$(dpkg --print-architecture) && for s in $(WEB_SOURCES); do \
	    v=$$(dpkg-query -W -f='$${source:Version}' $${s#*:}:$$arch) && \
	    apt-get source -qq $${s%%:*}=$$v >/dev/null && \
	    ln -sfn $$(ls -d $${s%%:*}-*/ | head -1) $${s%%:*} || exit 1; \
	done
	cp $(WEB)/src/utf8proc/utf8proc.h $(WEB)/src/libyaml/include/yaml.h $(WEB)/include/
	cp $(WEB)/src/cjson/cJSON.h $(WEB)/include/cjson/
	@touch $@

$(WEB)/obj/third/%.o: $(WEB)/src/.fetched
	@mkdir -p $(@D)
	$(WEB_ENV) $(EMCC) $(WEB_THIRD_CFLAGS) -c -o $@ $(WEB)/src/$*.c

$(WEB)/obj/%.o: %.c $(WEB)/src/.fetched
	@mkdir -p $(@D)
	$(WEB_ENV) $(EMCC) $(WEB_CFLAGS) -c -o $@ $<

$(WEB)/engine.js: $(WEB_OBJS)
	$(WEB_ENV) $(EMCC) $(WEB_LDFLAGS) -o $@ $^

# The SIMD128 kernels against the plain code (tests/web_kernels.c), run
# under node by tests/test_web.c: no native test can reach them.
WEB_KERNEL_OBJS = $(WEB)/obj/tests/web_kernels.o $(WEB)/obj/model/gemm.o $(WEB)/obj/model/parallel.o \
               $(WEB)/obj/model/safetensors.o \
               $(patsubst %.c,$(WEB)/obj/%.o,$(wildcard common/*.c)) $(WEB)/obj/third/cjson/cJSON.o
$(WEB)/web_kernels.js: $(WEB_KERNEL_OBJS)
	$(WEB_ENV) $(EMCC) $(WEB_OPT) -sSINGLE_FILE=1 -sALLOW_MEMORY_GROWTH=1 -sENVIRONMENT=node -sEXIT_RUNTIME=1 \
	    -o $@ $^

$(WEB)/worker.js: $(WEB)/engine.js web/worker.js
	cat $^ > $@

$(WEB)/mkpage: build/web/mkpage.o $(LIB_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(WEB_PAGE): $(WEB)/mkpage $(WEB)/worker.js web/page.js web/page.css $(WEB_MODELS) weights/zh-simplify.tsv \
             $(foreach m,en-zh zh-en,weights/$(m).safetensors weights/$(m).src.vocab weights/$(m).tgt.vocab)
	$(WEB)/mkpage $@ $(WEB)/worker.js web/page.js web/page.css $(WEB_MODELS)

.PHONY: web
