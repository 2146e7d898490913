# accelopt - one non-recursive Makefile.  `make V=1` shows the commands.
#
#   make                      build bin/ (and the unit tests) in the tree
#   make test                 build, build again with clang, run every test
#   make test T=NAME          build, run the tests whose path holds NAME
#   make check                build, run the quick slice (about a minute)
#   make CFLAGS=-O0           the user's CFLAGS replace -O2 -g, nothing else
#   make install PREFIX=/usr/local DESTDIR=   binaries, data, units, man pages
#   make uninstall            removes exactly what install put there
#   make WERROR=              warnings never fail the build

# `make deps run` (or `deps test`, `deps all`) on a machine without the
# packages: the flags below come from pkg-config when this file is read,
# before `deps` has installed anything.  So deps runs first in a make of its
# own, then a fresh make (which reads pkg-config again) builds the rest.
AFTER_DEPS := $(filter-out deps,$(MAKECMDGOALS))
ifneq ($(and $(filter deps,$(MAKECMDGOALS)),$(AFTER_DEPS)),)
deps:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory $(AFTER_DEPS)
$(AFTER_DEPS): deps
	@:
.PHONY: deps $(AFTER_DEPS)
else

CC       ?= cc
SANITIZER ?=
PKGS     := rdkafka hiredis libcjson libseccomp libcurl libcrypto
BUILD    ?= build
BINDIR   ?= bin

# Warnings are errors with the compilers CI builds with (Debian 12's gcc 12
# and clang 14); with any other compiler they are only shown, so a user's
# build does not fail on a newer compiler's new warning.  WERROR= or
# WERROR=-Werror decides it either way.
CC_ID    := $(shell $(CC) --version 2>/dev/null | head -n1 | grep -q clang && echo clang || echo gcc)
CC_MAJOR := $(shell $(CC) -dumpversion 2>/dev/null | cut -d. -f1)
ifeq ($(CC_ID)-$(CC_MAJOR),$(filter $(CC_ID)-$(CC_MAJOR),gcc-12 clang-14))
WERROR   ?= -Werror
else
WERROR   ?=
endif

WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
            -Wwrite-strings -Wmissing-prototypes -Wno-unused-parameter
ifeq ($(CC_ID),gcc)
TEST_WARN := -Wno-discarded-qualifiers
else
TEST_WARN := -Wno-incompatible-pointer-types-discards-qualifiers
endif
# CFLAGS, LDFLAGS and LDLIBS are the user's (`make CFLAGS=-O0` keeps every
# flag the project needs); the project's own are AO_*.  -MMD -MP: each
# object's header dependencies, written by the compiler beside it.
CFLAGS   ?= -O2 -g
# Without the libraries' packages, say so once rather than as a compiler's
# "cJSON.h: No such file" (goals that build nothing go on).
PKG_MISSING := $(if $(shell pkg-config --exists $(PKGS) 2>/dev/null && echo y),,\
                 $(foreach p,$(PKGS),$(if $(shell pkg-config --exists $(p) 2>/dev/null && echo y),,$(p))))
ifneq ($(PKG_MISSING),)
ifneq ($(filter-out deps report-libs kafka clean uninstall,$(or $(MAKECMDGOALS),all)),)
$(error pkg-config knows no $(strip $(PKG_MISSING)): run `make deps` first, or `make deps $(or $(MAKECMDGOALS),all)`)
endif
endif
AO_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread $(WARN) $(WERROR) -Ilib -MMD -MP \
             $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
AO_LDFLAGS := -pthread
AO_LDLIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
ifneq ($(SANITIZER),)
AO_CFLAGS += -fsanitize=$(SANITIZER) -fno-omit-frame-pointer
AO_LDFLAGS += -fsanitize=$(SANITIZER)
endif
LINK     = $(CC) $(AO_LDFLAGS) $(LDFLAGS) $^ $(AO_LDLIBS) $(LDLIBS) -o $@

Q := @
ifeq ($(V),1)
Q :=
endif

LIB_SRC  := $(wildcard lib/*/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
STAGES   := profiler planner executor summarizer selector
BINS     := $(BINDIR)/accelopt $(STAGES:%=$(BINDIR)/accelopt-%)
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

all: $(BINS) $(UNIT_BIN)

# a change of compiler or flags (e.g. SANITIZER=address) rebuilds everything
FLAGS_ID := $(shell echo '$(CC) $(AO_CFLAGS) $(CFLAGS) $(AO_LDFLAGS) $(LDFLAGS)' | md5sum | cut -c1-12)
FLAGS_STAMP := $(BUILD)/.flags-$(FLAGS_ID)
$(FLAGS_STAMP):
	@mkdir -p $(BUILD)
	@rm -f $(BUILD)/.flags-*
	@touch $@

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC  $<"
	$(Q)$(CC) $(AO_CFLAGS) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# test tables of argv strings are plain string literals
$(BUILD)/tests/unit/%.o: AO_CFLAGS += $(TEST_WARN)

# the archive is made afresh when its list of sources changes: a deleted
# source leaves no member behind
LIB_STAMP := $(BUILD)/.lib-$(shell echo '$(LIB_SRC)' | md5sum | cut -c1-12)
$(LIB_STAMP):
	@mkdir -p $(BUILD)
	@rm -f $(BUILD)/.lib-*
	@touch $@

$(BUILD)/libaccelopt.a: $(LIB_OBJ) $(LIB_STAMP)
	@echo "  AR  $@"
	$(Q)rm -f $@ && $(AR) rcs $@ $(LIB_OBJ)

FRONT_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tools/accelopt/*.c))
$(BINDIR)/accelopt: $(FRONT_OBJ) $(BUILD)/libaccelopt.a
	@mkdir -p $(BINDIR)
	@echo "  LD  $@"
	$(Q)$(LINK)

# a stage is its directory's files; all but <stage>.c (main) are its parts,
# which a unit test may link (tests/unit/test_<stage>.c)
PARTS = $(patsubst %.c,$(BUILD)/%.o,$(filter-out tools/$(1)/$(1).c,$(wildcard tools/$(1)/*.c)))
define STAGE_RULE
$(BINDIR)/accelopt-$(1): $(BUILD)/tools/$(1)/$(1).o $(call PARTS,$(1)) $(BUILD)/libaccelopt.a
	@mkdir -p $(BINDIR)
	@echo "  LD  $$@"
	$$(Q)$$(LINK)
endef
$(foreach t,$(STAGES),$(eval $(call STAGE_RULE,$(t))))

$(BUILD)/tests/test_selector: $(BUILD)/tests/unit/test_selector.o $(call PARTS,selector) $(BUILD)/libaccelopt.a
	@echo "  LD  $@"
	$(Q)$(LINK)
$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(BUILD)/libaccelopt.a
	@echo "  LD  $@"
	$(Q)$(LINK)

# the header dependencies the compiler wrote (none before the first build)
-include $(LIB_OBJ:.o=.d) $(wildcard $(BUILD)/tools/*/*.d) $(UNIT_SRC:%.c=$(BUILD)/%.d)

# Debian packages for the build, the tests and the main job.
# chromium draws the report in the browser test; npm (any, Debian's if none)
# fetches the report's plotting libraries.
DEB_PKGS := build-essential pkg-config librdkafka-dev libhiredis-dev \
            libcjson-dev libseccomp-dev libcurl4-openssl-dev libssl-dev \
            redis-server python3 python3-jsonschema python3-numpy libopenblas-dev procps \
            systemd clang help2man chromium iproute2
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
	    | grep -q '^install ok installed' || echo $$p; done); \
	command -v npm >/dev/null || missing="$$missing npm"; \
	command -v java >/dev/null || missing="$$missing openjdk-17-jre-headless"; \
	command -v mvn >/dev/null || missing="$$missing maven"; \
	if [ -n "$$missing" ]; then \
	  sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  echo "installing:" $$missing; \
	  $$sudo apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends $$missing; \
	else echo "deps: all installed"; fi
	$(Q)$(MAKE) --no-print-directory report-libs kafka

# Apache Kafka (KRaft) from Maven Central, at the versions of its pom, for
# the tests that run against a real broker and for pipeline/kafka/broker.sh
KAFKA_LIB := $(BUILD)/kafka/lib
kafka: $(KAFKA_LIB)/.done
$(KAFKA_LIB)/.done: pipeline/kafka/pom.xml
	@echo "  MVN   $(KAFKA_LIB)"
	$(Q)rm -rf $(KAFKA_LIB)
	$(Q)mvn -q -B -f pipeline/kafka/pom.xml dependency:copy-dependencies \
	    -DoutputDirectory=$(abspath $(KAFKA_LIB)) -DincludeScope=runtime
	$(Q)touch $@

# The report's libraries (Vega, Vega-Lite, jsdiff), from the npm registry at
# the versions and hashes of package-lock.json; accelopt report inlines them.
REPORT := tools/accelopt/report
REPORT_LIBS := $(REPORT)/node_modules/vega/build/vega.min.js \
               $(REPORT)/node_modules/vega-lite/build/vega-lite.min.js \
               $(REPORT)/node_modules/diff/dist/diff.min.js
report-libs: $(REPORT)/node_modules/.package-lock.json
$(REPORT)/node_modules/.package-lock.json: $(REPORT)/package.json $(REPORT)/package-lock.json
	@echo "  NPM $(REPORT)"
	$(Q)cd $(REPORT) && npm ci --no-audit --no-fund --loglevel=error

# The same sources built by a second compiler (Debian's clang) with its
# warnings as errors: what one compiler misses, the other often sees.
# `make test` runs it beside the first tests and counts it as one.
clang-build:
	$(Q)$(MAKE) --no-print-directory CC=clang BUILD=build/clang BINDIR=build/clang/bin WERROR=-Werror all

# T=NAME: only the test scripts whose path holds NAME (T=90-loop, T=faults)
test: all man # (the man pages too: two scripts install side by side)
	$(Q)ACCELOPT_ONLY='$(or $(T),$(ACCELOPT_ONLY))' tests/run.sh

# The quick slice, for every edit: the unit tests, the golden prompts, the
# message schemas, the references, and the CLI scripts that start no
# long runs (about a minute on 2 cores once the calibration is kept).
CHECK := unit/ references schemas cli/10- cli/11- cli/12- cli/14- cli/45- cli/50- cli/60- cli/70- cli/75-
check: all
	$(Q)ACCELOPT_ONLY='$(CHECK)' tests/run.sh

# Exactly the tests that need a GPU (tests/cli/98-cuda-gpu.sh): run them on
# a GPU machine; without one they are counted as skipped, never as passed.
test-cuda: all
	$(Q)ACCELOPT_ONLY=98-cuda-gpu tests/run.sh

# The main job: optimize a few tasks end to end with the builtin model (or
# the LLM agents when ACCELOPT_LLM_URL is set).
# TARGET=cuda runs the tasks that have a baseline.cu, on this machine's GPU.
TARGET ?= cpu
ifeq ($(TARGET),cuda)
TASKS ?= matmul silu bmm_softmax
else
TASKS ?= matmul bmm lora
endif
SIZE  ?= tiny
ITERS ?= 4
run: all
	$(Q)bin/accelopt run $(TASKS) --size $(SIZE) --iters $(ITERS) --target $(TARGET) || [ $$? -eq 3 ] # 3: no gain found (said)

# ---- install ----------------------------------------------------------------
# PREFIX/bin: the executables; PREFIX/share/accelopt: what they read at run
# time (tasks, harness and runner sources, prompts, schemas), found relative
# to the executables (ACCELOPT_HOME overrides); the systemd units with their
# paths under PREFIX; man pages made from --help.  Every file installed is
# listed in share/accelopt/installed-files, which `make uninstall` removes.
PREFIX  ?= /usr/local
DESTDIR ?=
UNITDIR ?= $(PREFIX)/lib/systemd/system
DATADIR := $(PREFIX)/share/accelopt
DOCDIR  := $(PREFIX)/share/doc/accelopt
MANDIR  := $(PREFIX)/share/man/man1
DATA    := $(sort $(shell find nkibench prompts schemas -type f) lib/runner_proto.h \
             $(REPORT)/report.html $(REPORT)/report.js $(REPORT)/report.css $(wildcard $(REPORT_LIBS)))
DOCS    := README.md $(wildcard docs/*.md)
EXAMPLES := docs/accelopt.conf.example $(wildcard systemd/*.example) systemd/accelopt.sysusers
UNITS   := $(wildcard systemd/*.service systemd/*.target)
MANS    := $(BINS:$(BINDIR)/%=$(BUILD)/man/%.1)
MANIFEST := $(DATADIR)/installed-files

MAN_NAME.accelopt            := optimize compute kernels with LLM agents, end to end
MAN_NAME.accelopt-profiler   := compile, check and time kernels in a sandbox
MAN_NAME.accelopt-planner    := turn a kernel and its profile into optimization plans
MAN_NAME.accelopt-executor   := turn a plan into rewritten kernels
MAN_NAME.accelopt-summarizer := distill slow-to-fast kernel pairs into the optimization memory
MAN_NAME.accelopt-selector   := own each run: fill iterations, keep the beam, end with done
$(BUILD)/man/%.1: $(BINDIR)/%
	@mkdir -p $(dir $@)
	@echo "  MAN $@"
	$(Q)help2man --no-info --name='$(MAN_NAME.$*)' \
	    $(if $(filter accelopt,$*),--include=$(BUILD)/man/commands.h2m) --output=$@ $<
$(BUILD)/man/accelopt.1: $(BUILD)/man/commands.h2m
# the front's man page carries every command's options
$(BUILD)/man/commands.h2m: $(BINDIR)/accelopt
	@mkdir -p $(dir $@)
	$(Q){ echo '[COMMANDS]'; for c in $$($< --help | awk '/^commands:/ {f = 1; next} f && /^  [a-z]/ {print $$1}'); do \
	    echo ".SS $$c"; echo '.nf'; ACCELOPT_LOG=error $< $$c --help | sed 's/\\/\\e/g; s/^[.'"'"']/\\\&&/'; echo '.fi'; done; } >$@

man: $(MANS)

install: all man
	$(Q)set -e; d='$(DESTDIR)'; list=$$(mktemp); \
	put() { install -D -m "$$1" "$$2" "$$d$$3"; echo "$$3" >>"$$list"; }; \
	for b in $(BINS); do put 755 $$b $(PREFIX)/bin/$${b##*/}; done; \
	for f in $(DATA); do put 644 $$f $(DATADIR)/$$f; done; \
	for f in $(DOCS); do put 644 $$f $(DOCDIR)/$${f##*/}; done; \
	for f in $(EXAMPLES); do put 644 $$f $(DOCDIR)/examples/$${f##*/}; done; \
	for f in $(MANS); do put 644 $$f $(MANDIR)/$${f##*/}; done; \
	unit=$$(mktemp); for f in $(UNITS); do sed 's|/usr/local|$(PREFIX)|g' $$f >"$$unit"; \
	    put 644 "$$unit" $(UNITDIR)/$${f##*/}; done; rm -f "$$unit"; \
	echo $(MANIFEST) >>"$$list"; install -D -m 644 "$$list" "$$d$(MANIFEST)"; rm -f "$$list"; \
	echo "installed $$(wc -l <"$$d$(MANIFEST)") files under $$d$(PREFIX) (list: $$d$(MANIFEST))"

uninstall:
	$(Q)set -e; d='$(DESTDIR)'; m="$$d$(MANIFEST)"; \
	[ -f "$$m" ] || { echo "nothing to uninstall: no $$m"; exit 1; }; \
	n=0; while read -r f; do case $$f in $(PREFIX)/*|$(UNITDIR)/*) ;; *) echo "not removing $$f: outside $(PREFIX)"; continue;; esac; \
	    rm -f "$$d$$f"; n=$$((n + 1)); done <"$$m"; \
	for dir in $(DATADIR) $(DOCDIR); do [ ! -d "$$d$$dir" ] || find "$$d$$dir" -depth -type d -empty -delete; done; \
	echo "removed $$n files"

# fuzz the message parser and decoders for FUZZ_S seconds (clang's libFuzzer)
FUZZ_S ?= 60
fuzz-msg:
	@mkdir -p build/fuzz/corpus
	@cp schemas/examples/*.jsonl build/fuzz/corpus/
	clang -g -O1 -fsanitize=fuzzer,address -Ilib $(shell pkg-config --cflags libcjson) \
	    tests/fuzz/msg_fuzz.c lib/wire/msg.c lib/wire/verdict.c $(shell pkg-config --libs libcjson) -lm -o build/fuzz/msg_fuzz
	build/fuzz/msg_fuzz -max_total_time=$(FUZZ_S) -max_len=4096 build/fuzz/corpus

clean:
	rm -rf build bin

.PHONY: all deps report-libs kafka test check test-cuda run clean fuzz-msg clang-build man install uninstall
# keep the unit tests' objects (made on the way to a test binary); nothing
# else is secondary, so a missing flags stamp rebuilds what it should
.SECONDARY: $(UNIT_SRC:%.c=$(BUILD)/%.o)

endif # the deps-first wrapper above
