# accelopt - one non-recursive Makefile.  `make V=1` shows the commands.

CC       ?= cc
SANITIZER ?=
WERROR   ?= -Werror
PKGS     := rdkafka hiredis libcjson libseccomp libcurl libcrypto

WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
            -Wwrite-strings -Wmissing-prototypes -Wno-unused-parameter \
            -Wno-format-truncation
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_GNU_SOURCE $(WARN) $(WERROR) -Ilib \
            $(shell pkg-config --cflags $(PKGS))
LDLIBS   += $(shell pkg-config --libs $(PKGS)) -lm
ifneq ($(SANITIZER),)
CFLAGS   += -fsanitize=$(SANITIZER) -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=$(SANITIZER)
endif

Q := @
ifeq ($(V),1)
Q :=
endif

LIB_SRC  := $(wildcard lib/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=build/%.o)
STAGES   := profiler planner executor summarizer selector
BINS     := bin/accelopt $(STAGES:%=bin/accelopt-%)
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=build/tests/%)

all: $(BINS) $(UNIT_BIN)

# a change of compiler or flags (e.g. SANITIZER=address) rebuilds everything
FLAGS_ID := $(shell echo '$(CC) $(CFLAGS) $(LDFLAGS)' | md5sum | cut -c1-12)
FLAGS_STAMP := build/.flags-$(FLAGS_ID)
$(FLAGS_STAMP):
	@mkdir -p build
	@rm -f build/.flags-*
	@touch $@

build/%.o: %.c $(wildcard lib/*.h tools/*/*.h) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC  $<"
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# test tables of argv strings are plain string literals
build/tests/unit/%.o: CFLAGS += -Wno-discarded-qualifiers

build/libaccelopt.a: $(LIB_OBJ)
	@echo "  AR  $@"
	$(Q)$(AR) rcs $@ $^

FRONT_OBJ := $(patsubst %.c,build/%.o,$(wildcard tools/accelopt/*.c))
bin/accelopt: $(FRONT_OBJ) build/libaccelopt.a
	@mkdir -p bin
	@echo "  LD  $@"
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

define STAGE_RULE
bin/accelopt-$(1): build/tools/$(1)/$(1).o build/libaccelopt.a
	@mkdir -p bin
	@echo "  LD  $$@"
	$$(Q)$$(CC) $$(LDFLAGS) $$^ $$(LDLIBS) -o $$@
endef
$(foreach t,$(STAGES),$(eval $(call STAGE_RULE,$(t))))

build/tests/%: build/tests/unit/%.o build/libaccelopt.a
	@echo "  LD  $@"
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Debian packages for the build, the tests and the main job.
DEB_PKGS := build-essential pkg-config librdkafka-dev libhiredis-dev \
            libcjson-dev libseccomp-dev libcurl4-openssl-dev libssl-dev \
            redis-server python3 python3-jsonschema python3-numpy libopenblas-dev procps \
            systemd
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
	    | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  echo "installing:" $$missing; \
	  $$sudo apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends $$missing; \
	else echo "deps: all installed"; fi

test: all
	$(Q)tests/run.sh

# The main job: optimize a few tasks end to end with the builtin model (or
# the LLM agents when ACCELOPT_LLM_URL is set).
TASKS ?= matmul bmm lora
SIZE  ?= tiny
ITERS ?= 4
run: all
	$(Q)bin/accelopt run $(TASKS) --size $(SIZE) --iters $(ITERS)

# fuzz the message parser and decoders for FUZZ_S seconds (clang's libFuzzer)
FUZZ_S ?= 60
fuzz-msg:
	@mkdir -p build/fuzz/corpus
	@cp schemas/examples/*.jsonl build/fuzz/corpus/
	clang -g -O1 -fsanitize=fuzzer,address -Ilib $(shell pkg-config --cflags libcjson) \
	    tests/fuzz/msg_fuzz.c lib/msg.c $(shell pkg-config --libs libcjson) -lm -o build/fuzz/msg_fuzz
	build/fuzz/msg_fuzz -max_total_time=$(FUZZ_S) -max_len=4096 build/fuzz/corpus

clean:
	rm -rf build bin

.PHONY: all deps test run clean fuzz-msg
.SECONDARY:
