# libuintr: plain Makefile.  make | make check | make bench | make install
VERSION   = 1.0.0
SOVERSION = 1

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
BINDIR     ?= $(PREFIX)/bin
DESTDIR    ?=

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
XCFLAGS  = -std=gnu11 -Iinclude -Isrc $(WARN) -pthread
LDLIBS   = -pthread
RUNNER  ?=
B       ?= build

LIB_SRC  = src/receiver.c src/vector_fd.c src/sender.c src/delivery.c src/wait.c src/loop.c src/sys.c \
	   src/timer.c src/env.c src/later.c src/safepoint.c
LIB_HDR  = include/uintr.h src/uintr-int.h $(wildcard src/arch/*.h src/arch/*/arch.h)
PIC_OBJ  = $(LIB_SRC:src/%.c=$(B)/pic/%.o)
STA_OBJ  = $(LIB_SRC:src/%.c=$(B)/static/%.o)

STATIC   = $(B)/libuintr.a
SHARED   = $(B)/libuintr.so.$(VERSION)

TEST_SRC = $(sort $(wildcard test/*.c))
TEST_BIN = $(TEST_SRC:test/%.c=$(B)/test/%)
TEST_HDR = $(wildcard test/helpers*.h)

TOOLS    = $(B)/uintrstat
BENCH_SRC = bench/uintr-bench.c bench/latency.c bench/sendcost.c bench/util.c
BENCH    = $(B)/bench/uintr-bench
SCALE    = $(B)/bench/uintr-scale
PREEMPT  = $(B)/bench/uintr-preempt

.PHONY: all bench bench-smoke bench-scale bench-scale-smoke bench-preempt bench-preempt-smoke check check-repeat check-sanitize check-cross check-install clean install uninstall
all: $(STATIC) $(SHARED) $(TOOLS) $(BENCH) $(SCALE) $(PREEMPT) $(TEST_BIN)

# uintr-bench: one-way notification latency against every baseline, in
# one run (table on stdout, $(B)/bench/results.json, $(B)/bench/latency.svg).
$(BENCH): $(BENCH_SRC) bench/bench.h $(STATIC) include/uintr.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) $(BENCH_SRC) -o $@ $(STATIC) $(LDLIBS) -lm

bench: $(BENCH)
	$(BENCH) -o $(B)/bench $(BENCH_ARGS)

bench-smoke: $(BENCH)
	$(BENCH) -q -o $(B)/bench-smoke

# uintr-scale: senders 1..64, receivers 1..1000 (threads, processes; memory
# and fds per receiver), vectors 1..64, cross-process; beside eventfd and
# futex ($(B)/bench/scaling.json, $(B)/bench/scaling.svg).  A few minutes.
$(SCALE): bench/scale.c bench/util.c bench/bench.h $(STATIC) include/uintr.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) bench/scale.c bench/util.c -o $@ $(STATIC) $(LDLIBS) -lm

bench-scale: $(SCALE)
	$(SCALE) -o $(B)/bench $(SCALE_ARGS)

bench-scale-smoke: $(SCALE)
	$(SCALE) -q -o $(B)/bench-smoke

# uintr-preempt: an open-loop server of 1 us / 100 us requests on a
# preemptive user-level thread runtime: run to completion, libuintr timer
# vectors (asynchronous and polling), POSIX timer signals, at quanta 5-50 us
# and loads 0.3-0.7 ($(B)/bench/preempt.json, $(B)/bench/preempt.svg).
$(PREEMPT): bench/preempt.c bench/util.c bench/bench.h $(STATIC) include/uintr.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) bench/preempt.c bench/util.c -o $@ $(STATIC) $(LDLIBS) -lm

bench-preempt: $(PREEMPT)
	$(PREEMPT) -o $(B)/bench $(PREEMPT_ARGS)

bench-preempt-smoke: $(PREEMPT)
	$(PREEMPT) -q -o $(B)/bench-smoke


# uintrstat uses the library's internal layout and validators (hidden
# symbols of the static archive).
$(B)/uintrstat: tools/uintrstat.c $(LIB_HDR) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) $< -o $@ $(STATIC) $(LDLIBS)

$(B)/pic/%.o: src/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(B)/static/%.o: src/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) -fvisibility=hidden -c $< -o $@

$(STATIC): $(STA_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(PIC_OBJ) src/libuintr.map
	$(CC) $(CFLAGS) -shared -Wl,-soname,libuintr.so.$(SOVERSION) \
		-Wl,--version-script=src/libuintr.map -Wl,-z,defs -o $@ $(PIC_OBJ) $(LDLIBS)
	ln -sf libuintr.so.$(VERSION) $(B)/libuintr.so.$(SOVERSION)
	ln -sf libuintr.so.$(SOVERSION) $(B)/libuintr.so

$(B)/test/%: test/%.c $(TEST_HDR) $(STATIC) include/uintr.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) -Itest $< -o $@ $(STATIC) $(LDLIBS)

# The instruction-length test compiles the compat layer's decoder in.
$(B)/test/compat-insn-length: src/compat/x86_64/length.c src/compat/x86_64/compat.h

# Resource faults are injected at every call of the library that allocates,
# maps or opens an fd (test/fault-injection.c wraps them).
FAULT_WRAPS = calloc malloc free memfd_create socketpair mmap munmap open fcntl \
	pthread_key_create pthread_setspecific recvmsg sendmsg syscall
# glibc's static pthread_atfork (libc_nonshared.a) cannot be wrapped on
# every architecture: wrap it where it can (x86-64).
FAULT_WRAPS += $(if $(filter x86_64-%,$(shell $(CC) -dumpmachine)),pthread_atfork)
$(B)/test/fault-injection: override LDLIBS += $(addprefix -Wl$(comma)--wrap=,$(FAULT_WRAPS))
comma := ,

include test/compat/Makefile.inc
all: $(COMPAT_LIBS) $(COMPAT_TESTS)

include plugin/Makefile.inc
all: $(PLUGIN_SO) $(PLUGIN_TESTS)

# The examples (README "Examples"): built by make, run by make check (the
# -muintr one through tools/uintr-run, where the emulation is built).
EXAMPLES = $(patsubst examples/%.c,%,$(wildcard examples/*.c))
EXAMPLE_BIN = $(EXAMPLES:%=$(B)/examples/%)
$(B)/examples/%: examples/%.c $(STATIC) include/uintr.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) $< -o $@ $(STATIC) $(LDLIBS)
# The event-loop library examples (name:pkg-config module:header:library:
# Debian package).  Each is built with its library when a program including
# the header and linking the library builds with $(CC) (pkg-config's flags,
# or the library's plain -l when pkg-config does not know it); otherwise it
# is replaced by a program that says why and exits 77, which make check
# reports as skipped.  The probe runs with the target compiler, so a cross
# build without the library's target package skips too.
EXT_EXAMPLES = libuv-loop:libuv:uv.h:-luv:libuv1-dev \
	libevent-loop:libevent:event2/event.h:-levent:libevent-dev \
	uring-loop:liburing:liburing.h:-luring:liburing-dev
ext_field = $(word $(2),$(subst :, ,$(1)))
ext_flags = $(or $(shell pkg-config --cflags --libs $(1) 2>/dev/null),$(2))
ext_found = $(shell printf '\043include <%s>\nint main(void) { return 0; }\n' '$(2)' | \
	$(CC) -x c - -o /dev/null $(3) >/dev/null 2>&1 && echo yes)
define ext_example
EXT_FLAGS_$(1) := $$(call ext_flags,$(2),$(4))
EXT_OK_$(1) := $$(call ext_found,$(2),$(3),$$(EXT_FLAGS_$(1)))
ifeq ($$(EXT_OK_$(1)),yes)
$(B)/examples/$(1): examples/$(1).c $$(STATIC) include/uintr.h
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $$(XCFLAGS) $$< -o $$@ $$(STATIC) $$(EXT_FLAGS_$(1)) $$(LDLIBS)
else
$(B)/examples/$(1): Makefile
	@mkdir -p $$(dir $$@)
	@echo "examples/$(1).c: $(2) not found, building a stub that exits 77"
	printf '\043include <stdio.h>\nint main(void) { puts("skipped: $(2) not installed (apt-get install $(5))"); return 77; }\n' > $$@.c
	$$(CC) $$(CFLAGS) $$@.c -o $$@ $$(LDLIBS)
endif
endef
$(foreach x,$(EXT_EXAMPLES),$(eval $(call ext_example,$(call ext_field,$(x),1),$(call ext_field,$(x),2),$(call ext_field,$(x),3),$(call ext_field,$(x),4),$(call ext_field,$(x),5))))
EXT_NAMES = $(foreach x,$(EXT_EXAMPLES),$(call ext_field,$(x),1))
rparen := )
EXT_BUILT = $(foreach e,$(EXT_NAMES),$(if $(EXT_OK_$(e)),$(e)))

ifneq ($(COMPAT_SO),)
EXAMPLE_BIN += $(patsubst %.c,$(B)/%,$(wildcard examples/muintr/*.c))
$(B)/examples/muintr/%: examples/muintr/%.c
	@mkdir -p $(dir $@)
	$(COMPAT_TEST_CC) $(CFLAGS) -Wall -Wextra -muintr -mgeneral-regs-only $< -pthread -o $@
endif
all: $(EXAMPLE_BIN)

check: $(STATIC) $(TOOLS) $(BENCH) $(TEST_BIN) $(COMPAT_LIBS) $(COMPAT_TESTS) $(EXAMPLE_BIN) \
		$(PLUGIN_SO) $(PLUGIN_TESTS)
	@RUNNER="$(RUNNER)" TEST_LOGDIR=$(B)/test-logs \
		UINTR_COMPAT_LIB=$(abspath $(COMPAT_SO)) test/run-tests.sh $(TEST_BIN) $(COMPAT_TESTS) \
		$(PLUGIN_TESTS) $(EXAMPLE_BIN)

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer, then
# ThreadSanitizer (clang), each in its own build directory.
SAN_FLAGS = -O1 -g -fno-omit-frame-pointer
# The suite raises SIGSEGV and SIGILL on purpose (faulting SENDUIPI): the
# sanitizers must leave those signals to the program.
# TSan's die_after_fork=0: a fork child that creates a vector fd starts the
# library's release watcher thread (src/vector_fd.c), which TSan refuses by
# default after a multi-threaded fork.  ASan's use_sigaltstack=0: ASan gives
# every thread an alternate signal stack without SS_AUTODISARM, on which
# uintr_frame_call cannot be made (EOPNOTSUPP, uintr_frame_call(3)).
SAN_ENV = ASAN_OPTIONS=use_sigaltstack=0:handle_segv=0:handle_sigill=0:allow_user_segv_handler=1:detect_leaks=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	TSAN_OPTIONS=halt_on_error=1:report_signal_unsafe=0:die_after_fork=0
check-sanitize:
	$(SAN_ENV) $(MAKE) B=build-asan CC=clang CFLAGS="$(SAN_FLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all" \
		LDLIBS="-pthread -fsanitize=address,undefined" check
	$(SAN_ENV) $(MAKE) B=build-tsan CC=clang CFLAGS="$(SAN_FLAGS) -fsanitize=thread" \
		LDLIBS="-pthread -fsanitize=thread" check

# Cross-build the library and the suite for arm64 and riscv64 and run the
# suite under qemu-user (Debian: gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu
# qemu-user).
CROSS_ARCHS = aarch64 riscv64
# The -proc rows are left out under qemu-user: Debian 12's qemu-user 7.2
# aborts ("cpu == current_cpu") whenever a fork child of a multi-threaded
# process creates a thread, and every process with a vector fd has the
# library's watcher thread.  They run natively in make bench-smoke.
CROSS_BENCH_ROWS = cacheline,uintr-poll,futex-spin,uintr-wait,signal-running,uintr-async,futex,eventfd,uintr-wait-block,pipe,socketpair,mq,signal-sigwaitinfo,sender-cost,throughput

check-cross:
	@for a in $(CROSS_ARCHS); do \
		echo "== $$a"; \
		$(MAKE) --no-print-directory B=build-$$a CC=$$a-linux-gnu-gcc \
			RUNNER="qemu-$$a -L /usr/$$a-linux-gnu" check build-$$a/bench/uintr-bench || exit 1; \
		echo "uintr-bench under qemu-$$a (figures meaningless, it must run):"; \
		timeout 300 qemu-$$a -L /usr/$$a-linux-gnu build-$$a/bench/uintr-bench -q -n 200 \
			-m $(CROSS_BENCH_ROWS) -o build-$$a/bench >/dev/null && echo "  ran" || exit 1; \
	done

$(B)/uintr.pc: uintr.pc.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@SAFEPOINT_CFLAGS@|$(if $(PLUGIN_SO),-fplugin=$(PLUGIN_INSTALL_DIR)/uintr_safepoint.so)|' $< > $@

MAN7 = $(wildcard man/*.7)
MAN3 = $(wildcard man/*.3)
MAN1 = $(wildcard man/*.1)
INSTALLED_MAN = $(MAN7:man/%=$(MANDIR)/man7/%) $(MAN3:man/%=$(MANDIR)/man3/%) \
	$(MAN1:man/%=$(MANDIR)/man1/%)

# The safepoint plugin, for the gcc that built it (uintr-safepoint(7)).
PLUGIN_INSTALL_DIR = $(LIBDIR)/uintr/plugin

install: $(STATIC) $(SHARED) $(TOOLS) $(COMPAT_LIBS) $(PLUGIN_SO) $(B)/uintr.pc
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	install -m 644 include/uintr.h $(DESTDIR)$(INCLUDEDIR)/uintr.h
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/libuintr.a
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/libuintr.so.$(VERSION)
	ln -sf libuintr.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libuintr.so.$(SOVERSION)
	ln -sf libuintr.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libuintr.so
	install -m 644 $(B)/uintr.pc $(DESTDIR)$(LIBDIR)/pkgconfig/uintr.pc
	install -m 755 $(TOOLS) $(DESTDIR)$(BINDIR)/
	$(if $(COMPAT_SO),install -m 755 $(COMPAT_SO) $(COMPAT_A) $(DESTDIR)$(LIBDIR)/)
	$(if $(COMPAT_SO),sed 's|^installed_libdir=$$|installed_libdir=$(LIBDIR)|' tools/uintr-run \
		> $(DESTDIR)$(BINDIR)/uintr-run && chmod 755 $(DESTDIR)$(BINDIR)/uintr-run)
	$(if $(PLUGIN_SO),install -d $(DESTDIR)$(PLUGIN_INSTALL_DIR))
	$(if $(PLUGIN_SO),install -m 755 $(PLUGIN_SO) $(DESTDIR)$(PLUGIN_INSTALL_DIR)/uintr_safepoint.so)
	$(if $(PLUGIN_SO),ln -sf uintr_safepoint.so $(DESTDIR)$(PLUGIN_INSTALL_DIR)/uintr-safepoint.so)
	$(if $(MAN7),install -m 644 $(MAN7) $(DESTDIR)$(MANDIR)/man7/)
	$(if $(MAN3),install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/)
	$(if $(MAN1),install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/)

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/uintr.h $(DESTDIR)$(LIBDIR)/libuintr.a \
		$(DESTDIR)$(LIBDIR)/libuintr.so.$(VERSION) \
		$(DESTDIR)$(LIBDIR)/libuintr.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libuintr.so \
		$(DESTDIR)$(LIBDIR)/pkgconfig/uintr.pc $(TOOLS:$(B)/%=$(DESTDIR)$(BINDIR)/%) \
		$(DESTDIR)$(LIBDIR)/libuintr-compat.so $(DESTDIR)$(LIBDIR)/libuintr-compat.a \
		$(DESTDIR)$(BINDIR)/uintr-run \
		$(DESTDIR)$(PLUGIN_INSTALL_DIR)/uintr_safepoint.so $(DESTDIR)$(PLUGIN_INSTALL_DIR)/uintr-safepoint.so \
		$(addprefix $(DESTDIR),$(INSTALLED_MAN))
	-rmdir $(DESTDIR)$(PLUGIN_INSTALL_DIR) $(DESTDIR)$(LIBDIR)/uintr 2>/dev/null

# Flake hunt (issue 16 section 0): run one suite REPEAT times in a row and
# count green and red runs, e.g. make check-repeat SUITE=check-cross.
REPEAT ?= 20
SUITE  ?= check
check-repeat:
	test/repeat.sh $(REPEAT) $(SUITE)

# Build and run every example against an installed copy, found through
# pkg-config, as a user would (make install DESTDIR=... first).
check-install:
	rm -rf $(B)/stage
	$(MAKE) --no-print-directory install DESTDIR=$(CURDIR)/$(B)/stage PREFIX=/usr/local
	@set -e; pc="$(CURDIR)/$(B)/stage/usr/local/lib/pkgconfig"; \
	root="$(CURDIR)/$(B)/stage"; mkdir -p $(B)/examples-installed; \
	for e in $(EXAMPLES); do \
		case " $(EXT_NAMES) " in *" $$e "*) case " $(EXT_BUILT) " in *" $$e "*) ;; \
			*) echo "  $$e: skipped (its library is not installed)"; continue;; esac;; esac; \
		case $$e in $(foreach e,$(EXT_BUILT),$(e)$(rparen) extra='$(EXT_FLAGS_$(e))';;) *) extra=;; esac; \
		flags="$$(PKG_CONFIG_PATH=$$pc PKG_CONFIG_SYSROOT_DIR=$$root pkg-config --cflags --libs uintr) $$extra"; \
		echo "cc examples/$$e.c $$flags"; \
		$(CC) -O2 -Wall -Wextra -Werror examples/$$e.c -o $(B)/examples-installed/$$e $$flags \
			-Wl,-rpath,$$root/usr/local/lib; \
		rc=0; timeout 60 $(B)/examples-installed/$$e >$(B)/examples-installed/$$e.out || rc=$$?; \
		if [ $$rc -eq 77 ]; then echo "  $$e: $$(tail -n 1 $(B)/examples-installed/$$e.out)"; \
		elif [ $$rc -ne 0 ]; then echo "  $$e: exit $$rc"; exit 1; else echo "  $$e: ok"; fi; \
	done
	@set -e; cd $(B)/stage/usr/local/share/man; for m in man7/*.7 man3/*.3 man1/*.1; do \
		out=$$(MANWIDTH=80 man --warnings -l $$m 2>&1 >/dev/null); \
		if [ -n "$$out" ]; then echo "$$m: $$out"; exit 1; fi; \
	done; echo "man pages: $(words $(MAN7) $(MAN3) $(MAN1)) render without warnings"
	@set -e; inc=$(B)/stage/usr/local/include; \
	printf '#include <uintr.h>\nint main(void) { return uintr_testui(); }\n' > $(B)/hdr.c; \
	for c in "gcc -std=c11" "gcc -std=gnu11" "clang -std=c11" "clang -std=gnu11" \
		 "g++ -std=c++11 -x c++" "clang++ -std=c++17 -x c++"; do \
		$$c -Wall -Wextra -pedantic -Werror -fsyntax-only -I$$inc $(B)/hdr.c; \
	done; echo "uintr.h: compiles as C11, gnu11, C++11, C++17 with gcc and clang"
	@set -e; pc="$(CURDIR)/$(B)/stage/usr/local/lib/pkgconfig"; root="$(CURDIR)/$(B)/stage"; \
	sp=$$(PKG_CONFIG_PATH=$$pc pkg-config --variable=safepoint_cflags uintr); \
	if [ -z "$$sp" ]; then echo "safepoint_cflags: empty (libuintr built without the plugin)"; else \
		sp=$$(echo "$$sp" | sed "s|-fplugin=|-fplugin=$$root|"); \
		printf 'int f(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * i; return s; }\n' > $(B)/sp.c; \
		gcc -O2 -Wall -Werror $$sp -c $(B)/sp.c -o $(B)/sp.o; \
		nm $(B)/sp.o | grep -q 'U uintr_safepoint_word' && \
		echo "safepoint_cflags: $$(PKG_CONFIG_PATH=$$pc pkg-config --variable=safepoint_cflags uintr) instruments code"; fi
	$(MAKE) --no-print-directory uninstall DESTDIR=$(CURDIR)/$(B)/stage PREFIX=/usr/local
	@left=$$(find $(B)/stage -type f -o -type l | wc -l); echo "after uninstall: $$left files left"; [ $$left -eq 0 ]

clean:
	rm -rf $(B)

include test/fuzz/Makefile.inc
include test/soak/Makefile.inc

# The spin model of the notification protocol (model/README.md).
# MODEL_ARGS: configurations or a group (default: the CI group).
.PHONY: model
model:
	model/check.sh $(MODEL_ARGS)
