# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# flowbloom: `make` builds into build/, `make deps` installs Debian packages,
# `make test` runs every test (several suites at once; TESTS_JOBS=1 one at a
# time, TESTS="NAME..." some: see tests/run.sh), `make demo` runs the demo,
# `make bench` the benchmarks, `make install` installs (PREFIX=/usr/local,
# DESTDIR) and `make uninstall` removes what it installed (configuration
# files stay). V=1 shows the commands.

BUILD := build
CLANG ?= clang
CC ?= gcc
BPFTOOL ?= bpftool
ARCH_INC := /usr/include/$(shell uname -m)-linux-gnu

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2);
endif

BPF_CFLAGS := -g -O2 --target=bpf -mcpu=v3 -Wall -Werror -Iinclude -Ibpf -I$(ARCH_INC) -MMD -MP
# The same bytes from any checkout: debug info and BTF name sources relative
# to the tree, not by where it was cloned.
REPRO := -ffile-prefix-map=$(CURDIR)=.
# gcc names the tree by $PWD when that is the same directory (a checkout
# reached through a symbolic link): that name too.
ifneq ($(PWD),$(CURDIR))
ifeq ($(realpath $(PWD)),$(CURDIR))
REPRO += -ffile-prefix-map=$(PWD)=.
endif
endif
BPF_CFLAGS += $(REPRO)
# Architectures whose kernels read unaligned memory at full speed
# (CONFIG_HAVE_EFFICIENT_UNALIGNED_ACCESS): the parser reads an IPv6
# address's key words with one load each (bpf/parsing.bpf.h).
ifneq ($(filter x86_64 aarch64 ppc64le s390x,$(shell uname -m)),)
BPF_CFLAGS += -DFB_UNALIGNED_LOADS
endif
CFLAGS ?= -g -O2
CFLAGS += -Wall -Wextra -Werror -std=gnu11 -Iinclude -Iuser/lib -Iuser/cli -I$(BUILD) -MMD -MP $(REPRO)
LDLIBS := -lbpf -lelf -lz -lzstd -lpcap -lm -lfixbuf -lglib-2.0 -ljson-c
# libfixbuf's headers include glib's (deferred: `make deps` may install them first).
CFLAGS += $(shell pkg-config --cflags libfixbuf 2>/dev/null)

# libclang-rt-14-dev: libFuzzer's runtime (make fuzz; the fuzz_cases suite builds the harnesses).
DEPS_PKGS := clang llvm libclang-rt-14-dev libbpf-dev bpftool libelf-dev zlib1g-dev libpcap-dev iproute2 \
	ethtool make gcc python3 xdp-tools prometheus groff-base man-db systemd tcpdump strace time \
	pkg-config libfixbuf-dev libjson-c-dev nfdump pmacct exabgp bird2 tshark libzstd-dev \
	nftables bindfs

# The library (user/lib/, libflowbloom.a: no argv, no printing, see
# user/lib/report.h) and the CLI (user/cli/). Tests and benchmarks link the
# library, and the CLI's verb code (everything but main.c) for the few that
# drive a verb; the CLI needs the library, never the reverse.
LIB_SRCS := $(wildcard user/lib/*.c user/lib/*/*.c)
LIB_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(LIB_SRCS))
CLI_SRCS := $(filter-out user/cli/main.c,$(wildcard user/cli/*.c))
CLI_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(CLI_SRCS))
LIBS := $(BUILD)/libflowbloom-cli.a $(BUILD)/libflowbloom.a
# C suites: tests/unit/test_*.c (host only) and tests/program/test_*.c
# (BPF_PROG_TEST_RUN), each built into build/tests/KIND/; the benchmark too.
# A binary's parts beside its main file are KIND/NAME_*.c (test_NAME.c or
# NAME.c is the main); tests/lib/*.c is the archive libfbtest.a every one
# links (a binary takes only the helpers it calls).
TEST_MAINS := $(wildcard tests/unit/test_*.c tests/program/test_*.c) tests/bench/bench.c
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_MAINS))
TEST_LIB_OBJS := $(patsubst tests/lib/%.c,$(BUILD)/tests/lib/%.o,$(wildcard tests/lib/*.c))
test_parts = $(filter-out %.bpf.c,$(wildcard tests/$(dir $(1))$(patsubst test_%,%,$(notdir $(1)))_*.c))
test_part_objs = $(patsubst %.c,$(BUILD)/%.o,$(call test_parts,$(1)))
# XDP programs: build/NAME.bpf.o from NAME.bpf.c in one of these folders
# (the filter; the benchmark's generator; a counting pass-through for the
# test beside flowbloom under xdp-loader; the cuckoo, d-left and scalable
# probes for tests/program/test_types.c; the parser alone for
# tests/program/test_parse.c).
vpath %.bpf.c bpf tests/bench tests/e2e tests/program
BPF_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(notdir $(wildcard bpf/*.bpf.c tests/*/*.bpf.c)))

.DELETE_ON_ERROR:
# Skeletons are made by a pattern rule: kept, or every make would rebuild
# every object that includes them. An object's own dependency file (-MMD)
# says whether it includes one; before the first build none exists, so
# each C object waits for the skeleton (order-only: a new skeleton rebuilds
# only the objects that include it).
.SECONDARY: $(BUILD)/flowbloom.skel.h $(BUILD)/bench.skel.h $(BUILD)/flowbloom_nocap.skel.h \
	$(BUILD)/flowbloom_stages.skel.h $(BPF_OBJS)
# Test objects too (made by a chain of pattern rules: make would delete
# them after each build, and the next would compile them again).
.SECONDARY: $(patsubst %.c,$(BUILD)/%.o,$(filter-out %.bpf.c,$(wildcard \
	tests/unit/*.c tests/program/*.c tests/bench/*.c)))
.PHONY: all deps bpffs test demo bench fuzz clean format install uninstall FORCE

# Installation layout (make install PREFIX=/usr DESTDIR=/tmp/root).
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib/flowbloom
MANDIR ?= $(PREFIX)/share/man
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
UNITDIR ?= $(PREFIX)/lib/systemd/system
DOCDIR ?= $(PREFIX)/share/doc/flowbloom
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
# Debian's ExaBGP, which flowbloom-bgp@.service runs.
EXABGP ?= /usr/sbin/exabgp
UNITS := flowbloom@.service flowbloom-metrics.service flowbloom-metrics.timer \
	flowbloom-ipfix@.service flowbloom-bgp@.service
EXAMPLES := example.conf example.ipfix example.exabgp
DIST := $(BUILD)/flowbloom.8 $(addprefix $(BUILD)/dist/,$(UNITS) $(EXAMPLES))

all: $(BUILD)/flowbloom $(BUILD)/flowbloom.bpf.o $(TEST_BINS) $(BUILD)/xdp_count.bpf.o $(DIST)

deps:
	@missing=""; for p in $(DEPS_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

# Objects depend on this Makefile too: changing flags rebuilds them.
$(BUILD)/%.bpf.o: %.bpf.c Makefile | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# The program without `capture`'s code: the benchmark's baseline for what
# an idle capture costs.
$(BUILD)/flowbloom_nocap.bpf.o: bpf/flowbloom.bpf.c Makefile | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DFB_NO_CAPTURE -c $< -o $@

# The program with the benchmark's cuts after each stage (config.bpf.h,
# FB_BENCH_CUT): the live `stages` part's receivers.
$(BUILD)/flowbloom_stages.bpf.o: bpf/flowbloom.bpf.c Makefile | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DFB_BENCH_STAGES -c $< -o $@

$(BUILD)/tests/program/test_types: $(BUILD)/types_check.bpf.o
# test_frags runs test_verdict's table (its parts) through the program
# loaded multi-buffer.
$(BUILD)/tests/program/test_frags: $(call test_part_objs,program/test_verdict)

# The parser as built for architectures that read unaligned memory slowly:
# tests/program/test_parse.c checks it agrees with the one built here.
$(BUILD)/parse_check_aligned.bpf.o: tests/program/parse_check.bpf.c Makefile | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -UFB_UNALIGNED_LOADS -c $< -o $@

$(BUILD)/tests/program/test_parse: $(BUILD)/parse_check.bpf.o $(BUILD)/parse_check_aligned.bpf.o
# Every object the build makes, loaded (tests/program/test_objects.c).
$(BUILD)/tests/program/test_objects: $(BPF_OBJS)

# libbpf (inside bpftool) notes the .xdp_run_config section it skips: that
# section is for libxdp, and expected.
$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@ 2> $@.err || { cat $@.err >&2; rm -f $@.err; exit 1; }
	$(Q)grep -v 'skipping unrecognized data section.*xdp_run_config' $@.err >&2; rm -f $@.err

$(BUILD)/tests/bench/bench: $(BUILD)/bench.skel.h $(BUILD)/flowbloom_nocap.skel.h \
	$(BUILD)/flowbloom_stages.skel.h

$(BUILD)/user/%.o: user/%.c Makefile | $(BUILD)/flowbloom.skel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libflowbloom.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@; $(AR) rcs $@ $^

$(BUILD)/libflowbloom-cli.a: $(CLI_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@; $(AR) rcs $@ $^

$(BUILD)/flowbloom: $(BUILD)/user/cli/main.o $(LIBS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIBS) $(LDLIBS) -o $@

# Test and benchmark objects (tests/lib/*.c too): their folder and
# tests/lib are on the include path.
$(BUILD)/tests/%.o: tests/%.c Makefile | $(BUILD)/flowbloom.skel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/lib -I$(<D) -c $< -o $@
$(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/bench/*.c)): | $(BUILD)/bench.skel.h $(BUILD)/flowbloom_nocap.skel.h \
	$(BUILD)/flowbloom_stages.skel.h

$(BUILD)/libfbtest.a: $(TEST_LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@; $(AR) rcs $@ $^

# Secondary expansion: a test binary's prerequisites name its own parts.
.SECONDEXPANSION:
$(BUILD)/tests/%: $(BUILD)/tests/%.o $$(call test_part_objs,$$*) \
		$(BUILD)/libfbtest.a $(LIBS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(filter-out %.bpf.o,$(filter %.o,$^)) -Wl,--start-group \
		$(BUILD)/libfbtest.a $(LIBS) -Wl,--end-group $(LDLIBS) -o $@

$(BUILD):
	$(Q)mkdir -p $@

# The man page comes from the verb table itself (flowbloom help --man).
$(BUILD)/flowbloom.8: $(BUILD)/flowbloom
	$(call msg,MAN,$@)
	$(Q)$< help --man > $@

# Units, the example configurations, the help texts and the man page name
# the installed paths; the stamp changes when they do (make, then make
# install PREFIX=/usr regenerates them).
PATHS := $(SBINDIR) $(SYSCONFDIR) $(LIBDIR) $(EXABGP)
$(BUILD)/dist/paths: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)echo '$(PATHS)' | cmp -s - $@ || echo '$(PATHS)' > $@

# From dist/NAME.in, or dist/NAME where there is no .in.
$(BUILD)/dist/%: $$(firstword $$(wildcard dist/$$*.in) dist/$$*) $(BUILD)/dist/paths
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		-e 's|@EXABGP@|$(EXABGP)|g' $< > $@

# The verb table's help and the man page say where the configuration and
# the object are.
PATH_DEFS := -DFB_SYSCONFDIR='"$(SYSCONFDIR)"' -DFB_LIBDIR='"$(LIBDIR)"'
$(BUILD)/user/cli/main.o $(BUILD)/user/cli/manpage.o: CFLAGS += $(PATH_DEFS)
$(BUILD)/user/cli/main.o $(BUILD)/user/cli/manpage.o: $(BUILD)/dist/paths

# `flowbloom --version` names the commit it was built from (git describe;
# "unknown" outside a git tree, or VERSION=... from the packager); main.o
# is compiled again when it changes. safe.directory: `sudo make install`
# in a tree another user owns, which git would refuse (the version then
# "unknown", and the binary rebuilt by root to say so).
VERSION ?= $(or $(shell git -c safe.directory=$(CURDIR) -C $(CURDIR) describe --tags --always --dirty \
	2>/dev/null),unknown)
$(BUILD)/version: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' > $@
$(BUILD)/user/cli/main.o: CFLAGS += -DFB_BUILD_VERSION='"$(VERSION)"'
$(BUILD)/user/cli/main.o: $(BUILD)/version

# The binary carries the XDP program inside (a skeleton); the object is
# installed too, for ip link and xdp-loader. Only missing directories are
# made: install -d would set an existing one's mode to 0755 (a
# configuration directory its owner closed, a setgid staff one).
install: $(BUILD)/flowbloom $(BUILD)/flowbloom.bpf.o $(DIST)
	for d in $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(COMPLETIONDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(SYSCONFDIR)/flowbloom; do [ -d "$$d" ] || install -d "$$d" || exit 1; done
	install -m 0755 $(BUILD)/flowbloom $(DESTDIR)$(SBINDIR)/flowbloom
	install -m 0644 $(BUILD)/flowbloom.bpf.o $(DESTDIR)$(LIBDIR)/flowbloom.bpf.o
	install -m 0644 $(BUILD)/flowbloom.8 $(DESTDIR)$(MANDIR)/man8/flowbloom.8
	install -m 0644 dist/flowbloom.bash $(DESTDIR)$(COMPLETIONDIR)/flowbloom
	install -m 0644 $(addprefix $(BUILD)/dist/,$(UNITS)) $(DESTDIR)$(UNITDIR)/
	install -m 0644 $(addprefix $(BUILD)/dist/,$(EXAMPLES)) $(DESTDIR)$(DOCDIR)/

# What install installed, and its directories if that leaves them empty;
# configuration in $(SYSCONFDIR)/flowbloom stays.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/flowbloom $(DESTDIR)$(LIBDIR)/flowbloom.bpf.o \
		$(DESTDIR)$(MANDIR)/man8/flowbloom.8 $(DESTDIR)$(COMPLETIONDIR)/flowbloom \
		$(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS)) \
		$(addprefix $(DESTDIR)$(DOCDIR)/,$(EXAMPLES))
	-rmdir $(DESTDIR)$(LIBDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/flowbloom 2>/dev/null

# bpffs must be mounted for pins (most systems mount it at boot).
bpffs:
	@mount | grep -q ' /sys/fs/bpf type bpf' || mount -t bpf bpf /sys/fs/bpf

test: deps all bpffs
	$(Q)bash tests/run.sh

demo: deps all bpffs
	$(Q)bash tests/demo.sh

bench: deps all bpffs
	$(Q)bash tests/bench/bench.sh

# Fuzzing (not part of all or test; docs/testing.md#fuzzing): each
# tests/fuzz/NAME_fuzz.c is a libFuzzer harness, build/fuzz/NAME_fuzz, linked
# with the library and the CLI's parts compiled again by clang with
# AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's coverage
# (libclang_rt.fuzzer comes with clang). tests/fuzz/run.sh runs them.
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer $(filter-out -g -O% -Werror,$(CFLAGS)) $(PATH_DEFS) $(FUZZ_SAN)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/*_fuzz.c))
FUZZ_OBJS := $(patsubst user/%.c,$(BUILD)/fuzz/user/%.o,$(LIB_SRCS) $(CLI_SRCS))

fuzz: $(FUZZ_BINS)

$(BUILD)/fuzz/user/%.o: user/%.c Makefile | $(BUILD)/flowbloom.skel.h
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(BUILD)/fuzz/libflowbloom.a: $(FUZZ_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@; $(AR) rcs $@ $^

$(BUILD)/fuzz/%_fuzz: tests/fuzz/%_fuzz.c $(BUILD)/fuzz/libflowbloom.a Makefile
	$(call msg,FUZZLD,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Itests/fuzz $< $(BUILD)/fuzz/libflowbloom.a \
		$(LDLIBS) -o $@

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
