#!/bin/sh
# bench-safepoint's real code bases (uintr-safepoint(7)): fetch Debian
# source packages, build each program twice from its sources, without and
# with the safepoint plugin, and write the list that uintr-safepoint -w
# reads: "name<TAB>baseline command<TAB>instrumented command" per line.
#
#   bench/safepoint-sources.sh OUTDIR PLUGIN.so LIBUINTR.a
#
# Needs deb-src in apt's sources (added beside the system's Debian source
# when it is missing: root only) and apt-get source --download-only.  What
# cannot be fetched or built is skipped with a message; the code is never
# kept in the tree (OUTDIR is under the build directory).
# CC: the compiler the plugin was built for (gcc).  The programs are built
# by their own file lists with -O2, the way their Makefiles build them
# (same -D options), so that both builds differ only in -fplugin.
set -u
out=$1 plugin=$2 lib=$3
CC=${CC:-gcc}
mkdir -p "$out/src" && cd "$out" || exit 1
out=$(pwd)
: > list.txt

have_src() { apt-cache showsrc "$1" 2>/dev/null | grep -q '^Package:'; }

if ! have_src zlib; then
	if [ "$(id -u)" = 0 ] && ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		echo "adding deb-src for bookworm (/etc/apt/sources.list.d/debian-src.sources)"
		printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
			> /etc/apt/sources.list.d/debian-src.sources
		apt-get update >/dev/null 2>&1 || echo "apt-get update failed"
	fi
fi

# fetch NAME: extract the source package into src/NAME; 0 if it is there.
fetch() {
	[ -d "src/$1" ] && return 0
	(cd src && apt-get source --download-only "$1" >/dev/null 2>&1) || {
		echo "skipped $1: apt-get source --download-only $1 failed (no deb-src? no network?)"
		return 1
	}
	dsc=$(ls src/"$1"_*.dsc 2>/dev/null | head -n 1)
	[ -n "$dsc" ] && dpkg-source --no-check -x "$dsc" "src/$1" >/dev/null 2>&1 || {
		echo "skipped $1: cannot unpack $dsc"
		return 1
	}
}

# build NAME OUT FILES...: OUT.base and OUT.sp from the files (in src/NAME).
build() {
	name=$1 exe=$2
	shift 2
	(cd "src/$name" && $CC -O2 -w $CFLAGS_X "$@" -o "$out/$exe.base" $LIBS_X &&
	 $CC -O2 -w $CFLAGS_X -fplugin="$plugin" "$@" -o "$out/$exe.sp" "$lib" -pthread $LIBS_X) \
		> "$out/build-$name.log" 2>&1 || {
		echo "skipped $name: build failed ($out/build-$name.log)"
		return 1
	}
}

# Input: the unpacked sources themselves, about 8 MiB of text (a tar).
mkinput() {
	[ -s input.tar ] && return 0
	tar cf input1.tar -C src --exclude='*.tar*' . 2>/dev/null
	: > input.tar
	while [ "$(stat -c %s input.tar)" -lt 8000000 ]; do cat input1.tar >> input.tar; done
	rm -f input1.tar
}

if fetch zlib; then
	CFLAGS_X="-D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN" LIBS_X=
	if build zlib minigzip adler32.c crc32.c deflate.c infback.c inffast.c inflate.c \
		inftrees.c trees.c zutil.c compress.c uncompr.c gzclose.c gzlib.c gzread.c \
		gzwrite.c test/minigzip.c; then
		mkinput
		"$out/minigzip.base" -6 -c < input.tar > input.tar.gz
		for v in base sp; do eval "z_$v=\"$out/minigzip.$v -6 -c < $out/input.tar > /dev/null\""; done
		printf 'zlib-deflate\t%s\t%s\n' "$z_base" "$z_sp" >> list.txt
		for v in base sp; do eval "z_$v=\"$out/minigzip.$v -d -c < $out/input.tar.gz > /dev/null\""; done
		printf 'zlib-inflate\t%s\t%s\n' "$z_base" "$z_sp" >> list.txt
	fi
fi
if fetch bzip2; then
	CFLAGS_X="-D_FILE_OFFSET_BITS=64" LIBS_X=
	if build bzip2 bzip2 blocksort.c huffman.c crctable.c randtable.c compress.c \
		decompress.c bzlib.c bzip2.c; then
		mkinput
		head -c 3000000 input.tar > input3.tar
		"$out/bzip2.base" -9 -c < input3.tar > input3.tar.bz2
		printf 'bzip2-compress\t%s\t%s\n' "$out/bzip2.base -9 -c < $out/input3.tar > /dev/null" \
			"$out/bzip2.sp -9 -c < $out/input3.tar > /dev/null" >> list.txt
		printf 'bzip2-decompress\t%s\t%s\n' "$out/bzip2.base -d -c < $out/input3.tar.bz2 > /dev/null" \
			"$out/bzip2.sp -d -c < $out/input3.tar.bz2 > /dev/null" >> list.txt
	fi
fi
if fetch lua5.4; then
	# Debian's patches make luaconf.h include a header its build generates.
	printf '#define DEB_HOST_MULTIARCH "%s"\n' "$($CC -dumpmachine)" \
		> src/lua5.4/src/lua5.4-deb-multiarch.h
	CFLAGS_X="-DLUA_COMPAT_5_3 -DLUA_USE_LINUX" LIBS_X="-lm -ldl"
	if build lua5.4 lua $(cd src/lua5.4 && ls src/*.c | grep -v 'luac\.c$'); then
		cat > lua-work.lua <<'LUA'
-- A mixed interpreter workload: calls, tables, strings, closures.
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t = {}
for i = 1, 200000 do t[i] = (i * 7919) % 100003 end
table.sort(t)
local parts = {}
for i = 1, 50000 do parts[#parts + 1] = string.format("%d:%x", i, t[i]) end
local s = table.concat(parts, ",")
local count = 0
for w in s:gmatch("%d+:") do count = count + 1 end
local acc = 0
for i = 1, 300000 do local f = function(x) return x + i end acc = acc + f(1) end
print(fib(27), #s, count, acc)
LUA
		printf 'lua-interpreter\t%s\t%s\n' "$out/lua.base $out/lua-work.lua > /dev/null" \
			"$out/lua.sp $out/lua-work.lua > /dev/null" >> list.txt
	fi
fi
echo "real code bases: $(wc -l < list.txt) workloads in $out/list.txt"
