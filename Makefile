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

LIB_SRC  = src/receiver.c src/vector_fd.c src/sender.c src/delivery.c src/wait.c src/sys.c
LIB_HDR  = include/uintr.h src/uintr-int.h $(wildcard src/arch/*.h src/arch/*/arch.h)
PIC_OBJ  = $(LIB_SRC:src/%.c=build/pic/%.o)
STA_OBJ  = $(LIB_SRC:src/%.c=build/static/%.o)

STATIC   = build/libuintr.a
SHARED   = build/libuintr.so.$(VERSION)

TEST_SRC = $(sort $(wildcard test/*.c))
TEST_BIN = $(TEST_SRC:test/%.c=build/test/%)
TEST_HDR = test/helpers.h

.PHONY: all check clean install uninstall
all: $(STATIC) $(SHARED) $(TEST_BIN)

build/pic/%.o: src/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

build/static/%.o: src/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) -fvisibility=hidden -c $< -o $@

$(STATIC): $(STA_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(PIC_OBJ) src/libuintr.map
	$(CC) $(CFLAGS) -shared -Wl,-soname,libuintr.so.$(SOVERSION) \
		-Wl,--version-script=src/libuintr.map -Wl,-z,defs -o $@ $(PIC_OBJ) $(LDLIBS)
	ln -sf libuintr.so.$(VERSION) build/libuintr.so.$(SOVERSION)
	ln -sf libuintr.so.$(SOVERSION) build/libuintr.so

build/test/%: test/%.c $(TEST_HDR) $(STATIC) include/uintr.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) -Itest $< -o $@ $(STATIC) $(LDLIBS)

check: all
	@RUNNER="$(RUNNER)" test/run-tests.sh $(TEST_BIN)

install: $(STATIC) $(SHARED)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)
	install -m 644 include/uintr.h $(DESTDIR)$(INCLUDEDIR)/uintr.h
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/libuintr.a
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/libuintr.so.$(VERSION)
	ln -sf libuintr.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libuintr.so.$(SOVERSION)
	ln -sf libuintr.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libuintr.so

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/uintr.h $(DESTDIR)$(LIBDIR)/libuintr.a \
		$(DESTDIR)$(LIBDIR)/libuintr.so.$(VERSION) \
		$(DESTDIR)$(LIBDIR)/libuintr.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libuintr.so

clean:
	rm -rf build
