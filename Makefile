# translate — build, test, install.
#
#   make            build ./translate (and the other programs in app/)
#   make run        translate "I love china" with the default config
#   make test       build and run every test; ends with "N passed, N failed"
#   make deps       install the Debian packages the build needs (or print how)
#   make install PREFIX=/usr/local
#
# Objects go to build/.  Every app/*.c that defines main() is listed in
# PROGRAMS; everything else in common/, tokenizer/, model/ and app/ is
# library code linked into the programs and the tests.

CC      ?= cc
PKGS     = yaml-0.1 libutf8proc libcjson
# -fvect-cost-model=dynamic lets -O2 vectorise loops whose trip count is
# only known at run time (GCC 12's -O2 default, "very-cheap", does not);
# it changes no arithmetic, only which loops use vector instructions.
OPT     ?= -O2 -g -fvect-cost-model=dynamic
CFLAGS  += -std=c11 -D_DEFAULT_SOURCE $(OPT) -Wall -Wextra -Werror -MMD -MP \
           $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm -pthread
PREFIX  ?= /usr/local

PROGRAMS  = translate train
MAIN_SRCS = $(PROGRAMS:%=app/%.c)
LIB_SRCS  = $(filter-out $(MAIN_SRCS), $(wildcard common/*.c tokenizer/*.c model/*.c app/*.c))
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

.PHONY: all run test deps install uninstall clean
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

test: deps
	@$(MAKE) --no-print-directory $(PROGRAMS) $(TEST_BINS)
	@sh tests/run_tests.sh $(TEST_BINS)

deps:
	@sh tools/deps.sh --quiet

install: $(PROGRAMS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/translate/configs \
	           $(DESTDIR)$(PREFIX)/share/translate/weights
	install -m 755 $(PROGRAMS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 configs/en-zh.yaml configs/zh-en.yaml $(DESTDIR)$(PREFIX)/share/translate/configs/
	install -m 644 weights/*.safetensors weights/*.vocab $(DESTDIR)$(PREFIX)/share/translate/weights/

uninstall:
	rm -f $(PROGRAMS:%=$(DESTDIR)$(PREFIX)/bin/%)
	rm -rf $(DESTDIR)$(PREFIX)/share/translate

clean:
	rm -rf build $(PROGRAMS)

# ---- the HTML viewer, compiled in (VIEWER_FILES, VIEWER_OBJ: see above) ----
build/viewer_assets.c: $(VIEWER_FILES) tools/embed.sh
	@mkdir -p $(@D)
	sh tools/embed.sh $(VIEWER_FILES) > $@.tmp && mv $@.tmp $@

$(VIEWER_OBJ): build/viewer_assets.c
	$(CC) $(CFLAGS) -c -o $@ $<

-include $(shell find build -name '*.d' 2>/dev/null)
