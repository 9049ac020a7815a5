# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# ttftrace: BPF objects -> skeletons -> one binary, in the style of
# libbpf-bootstrap. Quiet by default; V=1 shows the commands.

OUTPUT ?= build
PREFIX ?= /usr/local
DESTDIR ?=
CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/;s/ppc64le/powerpc/;s/mips.*/mips/;s/riscv64/riscv/;s/loongarch64/loongarch/')

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	  -std=gnu11 -D_GNU_SOURCE -I$(OUTPUT) $(USER_INC) -Ibpf
LDLIBS += -lbpf -lelf -lz -lpthread -lm
# record --metrics: Debian's libmicrohttpd-dev
BIN_LDLIBS := -lmicrohttpd
# the multiarch include directory: libbpf's usdt.bpf.h includes <linux/errno.h>
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf \
	      -I/usr/include/$(shell $(CC) -dumpmachine) -Wall -Wno-unused-function

ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
OUTPUT := build-san
endif

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_PROGS := ttftrace probe
# user/ in layers (docs/design.md §7); tests and tools include "x.h" bare
USER_LAYERS := core format analysis render record cmd
USER_DIRS := user $(addprefix user/,$(USER_LAYERS))
USER_INC := $(addprefix -I,$(USER_DIRS))
USER_SRCS := $(wildcard $(addsuffix /*.c,$(USER_DIRS)))
# user sources that need the BPF skeletons
USER_BPF_SRCS := $(filter user/cmd/% user/record/collector.c user/record/hooks.c,$(USER_SRCS))
# everything else is plain C over the event stream, linked into the tests too
USER_LIB_SRCS := $(filter-out $(USER_BPF_SRCS),$(USER_SRCS))
USER_LIB_OBJS := $(patsubst user/%.c,$(OUTPUT)/%.o,$(USER_LIB_SRCS))
USER_BPF_OBJS := $(patsubst user/%.c,$(OUTPUT)/%.o,$(USER_BPF_SRCS))
SKELS := $(patsubst %,$(OUTPUT)/%.skel.h,$(BPF_PROGS))
UNIT_TESTS := $(patsubst tests/%.c,$(OUTPUT)/tests/%,$(wildcard tests/test_*.c))
# demo-server is a folder of files, every other tool one tools/*.c
DEMO_SERVER_SRCS := $(wildcard tools/demo-server/*.c)
TOOLS := $(patsubst tools/%.c,$(OUTPUT)/tools/%,$(wildcard tools/*.c)) \
	 $(OUTPUT)/tools/demo-server
HDRS := $(wildcard $(addsuffix /*.h,$(USER_DIRS)) bpf/*.h)
# the benchmarks' synthetic recording (bench/analyzer.sh), checked by the
# tests, and a recording's launches made entry-only (bench/gpu_entry.sh)
BENCH_GEN := $(OUTPUT)/bench/gen_recording $(OUTPUT)/bench/entry_only
# the other benchmark programs (bench/ceiling.sh, bench/prog_cost.sh,
# bench/mark_cost.sh, bench/ipc_cost.sh; vcpu_gaps: tests/run.sh)
BENCH_PROGS := $(OUTPUT)/bench/storm $(OUTPUT)/bench/mark_loop $(OUTPUT)/bench/prog_floor \
	       $(OUTPUT)/bench/ipc_loop $(OUTPUT)/bench/vcpu_gaps \
	       $(OUTPUT)/bench/prog_floor.bpf.o
# programs the shell tests run (tests/test_rel_memory.sh)
TEST_HELPERS := $(patsubst tests/%.c,$(OUTPUT)/tests/%,$(wildcard tests/helper_*.c))
# the fuzz target's replay of its corpus (tests/test_fuzz_corpus.sh), with
# ASan and UBSan whatever SANITIZE says: checksums enforced, and not; the
# reader, the codec and the core they use
FUZZ_REPLAY := $(OUTPUT)/fuzz/fuzz_replay_checked $(OUTPUT)/fuzz/fuzz_replay_nocrc
FUZZ_SRCS := tests/fuzz/fuzz_reader.c tests/fuzz/replay_main.c \
	     $(filter %/event.c %/json.c %/ttfile.c %/ttfile_codec.c,$(USER_LIB_SRCS))
FUZZ_CFLAGS := $(filter-out -O%,$(CFLAGS)) -O1 -fsanitize=address,undefined \
	       -fno-sanitize-recover=undefined -fno-omit-frame-pointer

.PHONY: all clean test demo install tools unit-tests static FORCE
.DELETE_ON_ERROR:

all: $(OUTPUT)/ttftrace tools $(BENCH_GEN) $(BENCH_PROGS)

STUBCUDA := $(if $(wildcard tools/stubcuda/cuda.c),$(OUTPUT)/tools/libcuda.so.1)
# the stub NVML of the energy tests (tests/test_bpf_frame.sh)
STUBNVML := $(OUTPUT)/tools/libnvidia-ml.so.1

tools: $(TOOLS) $(STUBCUDA) $(STUBNVML)

unit-tests: $(UNIT_TESTS) $(TEST_HELPERS) $(FUZZ_REPLAY) $(STUBCUDA) $(STUBNVML) $(BENCH_GEN)

$(OUTPUT) $(OUTPUT)/tests $(OUTPUT)/tools $(OUTPUT)/bench $(OUTPUT)/fuzz:
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o | $(OUTPUT)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(USER_BPF_OBJS): $(SKELS)

# The version (ttftrace --version, the recording's header): VERSION, and
# the commit when built from git; version.h changes only with it.
TT_VERSION := $(shell cat VERSION)$(shell git rev-parse --short HEAD 2>/dev/null | sed 's/^/+g/')
$(OUTPUT)/version.h: FORCE | $(OUTPUT)
	$(Q)echo '#define TT_VERSION "$(TT_VERSION)"' > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(OUTPUT)/cmd/main.o $(OUTPUT)/cmd/cmd_record.o: $(OUTPUT)/version.h
FORCE:

$(OUTPUT)/%.o: user/%.c $(HDRS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUTPUT)/ttftrace: $(USER_BPF_OBJS) $(USER_LIB_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) $(BIN_LDLIBS) -o $@

$(OUTPUT)/tests/%: tests/%.c $(wildcard tests/*.h) $(USER_LIB_OBJS) $(HDRS) | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(USER_LIB_OBJS) $(LDLIBS) -o $@

$(TEST_HELPERS): $(OUTPUT)/tests/%: tests/%.c | $(OUTPUT)/tests
	$(call msg,HELPER,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -lpthread -o $@

$(BENCH_GEN): $(OUTPUT)/bench/%: bench/%.c $(USER_LIB_OBJS) $(HDRS) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(USER_LIB_OBJS) $(LDLIBS) -o $@

$(OUTPUT)/fuzz/fuzz_replay_%: $(FUZZ_SRCS) $(HDRS) | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CC) $(FUZZ_CFLAGS) $(if $(filter nocrc,$*),-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) \
		$(FUZZ_SRCS) -lz -o $@

$(OUTPUT)/bench/storm: bench/storm.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -lpthread -o $@

$(OUTPUT)/bench/ipc_loop: bench/ipc_loop.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -lpthread -o $@

$(OUTPUT)/bench/mark_loop $(OUTPUT)/bench/vcpu_gaps: $(OUTPUT)/bench/%: bench/%.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -o $@

$(OUTPUT)/bench/prog_floor: bench/prog_floor.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -lbpf -o $@

$(OUTPUT)/bench/prog_floor.bpf.o: bench/prog_floor.bpf.c vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/tools/libcuda.so.1: tools/stubcuda/cuda.c $(wildcard tools/stubcuda/*.h) | $(OUTPUT)/tools
	$(call msg,LIB,$@)
	$(Q)$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 $< -lpthread -o $@

$(STUBNVML): tools/stubnvml/nvml.c | $(OUTPUT)/tools
	$(call msg,LIB,$@)
	$(Q)$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 $< -o $@

$(OUTPUT)/tools/%: tools/%.c $(wildcard tools/*.h tools/stubcuda/*.h) | $(OUTPUT)/tools
	$(call msg,TOOL,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -lpthread -lm -ldl -o $@

# loadgen --tls, --h2: OpenSSL and nghttp2 on memory
$(OUTPUT)/tools/loadgen: tools/loadgen.c $(wildcard tools/*.h) | $(OUTPUT)/tools
	$(call msg,TOOL,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -lnghttp2 -lssl -lcrypto -lpthread -lm -o $@

$(OUTPUT)/tools/demo-server: $(DEMO_SERVER_SRCS) $(wildcard tools/demo-server/*.h \
		tools/*.h tools/stubcuda/*.h) | $(OUTPUT)/tools
	$(call msg,TOOL,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(DEMO_SERVER_SRCS) -lpthread -lm -ldl -o $@

# One self-contained binary to carry to machines without the build deps
# (tools/gpu-check.sh uses it).
static: $(OUTPUT)/ttftrace-static $(OUTPUT)/tools/loadgen-static

$(OUTPUT)/tools/loadgen-static: tools/loadgen.c $(wildcard tools/*.h) | $(OUTPUT)/tools
	$(call msg,STATIC,$@)
	$(Q)$(CC) $(CFLAGS) -static $< -lnghttp2 -lssl -lcrypto -lpthread -lm -o $@

# Debian has no static libraries of all that libmicrohttpd needs (p11-kit,
# libunistring): the static binary says that --metrics is not in it.
$(OUTPUT)/cmd/metrics-nomhd.o: user/cmd/metrics.c $(HDRS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -DTT_NO_MHD -c $< -o $@

$(OUTPUT)/ttftrace-static: $(filter-out %/metrics.o,$(USER_BPF_OBJS)) $(USER_LIB_OBJS) \
		$(OUTPUT)/cmd/metrics-nomhd.o
	$(call msg,STATIC,$@)
	$(Q)$(CC) $(CFLAGS) -static $(LDFLAGS) $^ -lbpf -lelf -lz -lpthread -lm -o $@

test: all unit-tests
	$(Q)OUTPUT=$(OUTPUT) tests/run.sh

demo: all
	$(Q)OUTPUT=$(OUTPUT) tools/demo.sh

install: $(OUTPUT)/ttftrace
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/bin/ttftrace)
	$(Q)install -d $(DESTDIR)$(PREFIX)/bin
	$(Q)install -m 0755 $(OUTPUT)/ttftrace $(DESTDIR)$(PREFIX)/bin/ttftrace
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/share/man/man1/ttftrace.1)
	$(Q)install -d $(DESTDIR)$(PREFIX)/share/man/man1
	$(Q)install -m 0644 docs/ttftrace.1 $(DESTDIR)$(PREFIX)/share/man/man1/ttftrace.1
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/share/bash-completion/completions/ttftrace)
	$(Q)install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	$(Q)install -m 0644 completions/ttftrace \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/ttftrace

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf build build-san
