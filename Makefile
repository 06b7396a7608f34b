# Ringlet — build, test and measure. `make run` and `make test` install what they need.
#
#   make deps       install liburing-dev (apt-get, sudo only when not root) if pkg-config lacks it
#   make build      debug build of every target
#   make run        build and run the main job: `ringlet demo`
#   make test       unit + integration tests, the import styles, the ThreadSanitizer and
#                   AddressSanitizer passes, a short soak, the documentation (no broken link),
#                   Embedded Swift build and checks, and the checks on the emulated
#                   raspberry-pi-zero-2w (make sim)
#   make import-styles  build and run one GCD client program per way of importing Ringlet
#                   (alone; with FoundationEssentials; with Foundation and RingletFoundationCompat)
#   make tsan       the test suites under ThreadSanitizer (all but TSAN_SKIP, each with its reason)
#   make asan       the test suites under AddressSanitizer with leak checking
#   make soak       the reliability run: 10^7 items, every one exactly once, memory and threads
#                   bounded; then the same on a 64-node pool (release build)
#   make embedded   compile Ringlet in Embedded Swift mode, link the checks program, run it
#   make bench      release build, Ringlet vs the toolchain's Dispatch (prints a table)
#   make docs       the documentation (Sources/Ringlet/Ringlet.docc and the API) into .build/docs
#   make deps-cross the aarch64 toolchain, arm64 liburing, qemu-system-aarch64, cpio
#   make cross      cross-compile the checks and the demo for BOARD (Embedded Swift; and the
#                   full-Swift build when an SDK for the board's target is installed)
#   make sim        boot BOARD's qemu shape with Debian's arm64 kernel, run checks and demo

SWIFT        ?= swift
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
EMBEDDED_DIR := .build-embedded
EMBEDDED_TARGET ?= x86_64-unknown-linux-gnu
EMBEDDED_FLAGS := -target $(EMBEDDED_TARGET) -enable-experimental-feature Embedded -wmo -Osize -swift-version 6
# Suites ThreadSanitizer skips, each for a reason (every other suite runs under it; a new
# suite runs under it unless it is named here):
# - ThreadCountTests: counts the process's threads exactly, and TSan's runtime adds a thread.
TSAN_SKIP    := ThreadCountTests
ASAN_OPTIONS_TEST := ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/lsan.supp

.PHONY: deps build run test unit import-styles tsan asan soak soak-short embedded bench docs clean deps-cross cross sim

deps:
	@command -v pkg-config >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq pkg-config; }
	@pkg-config --exists liburing || { echo "installing liburing-dev"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq liburing-dev; }
	@pkg-config --exists liburing && echo "deps: liburing $$(pkg-config --modversion liburing)"

# The aarch64 toolchain, arm64 liburing (multiarch), qemu-system-aarch64 and cpio, for
# `make cross` and `make sim`. Installs only what is missing; silent when all is there.
CROSS_PACKAGES := gcc-aarch64-linux-gnu libc6-dev-arm64-cross liburing-dev:arm64 qemu-system-arm cpio
deps-cross:
	@dpkg --print-foreign-architectures | grep -qx arm64 || { echo "deps-cross: enabling the arm64 architecture"; \
	  $(SUDO) dpkg --add-architecture arm64 && $(SUDO) apt-get update -qq; }
	@missing=$$(for p in $(CROSS_PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then echo "deps-cross: installing" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; fi

build: deps
	$(SWIFT) build

run: deps
	$(SWIFT) build --product ringlet
	$$($(SWIFT) build --show-bin-path)/ringlet demo

test: unit import-styles tsan asan soak-short docs embedded sim

unit: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# The client programs of Tests/ImportStyles: one GCD program (Client.swift) built once per
# way of importing Ringlet, run, and held to its last line. First, every public Dispatch*
# and dispatch* name of the runtime must be re-exported, scoped, by RingletFoundationCompat:
# a name missing there would be ambiguous beside Foundation.
IMPORT_STYLES := Ringlet FoundationEssentials Foundation
COMPAT_SOURCE := Sources/RingletFoundationCompat/RingletFoundationCompat.swift
import-styles: deps
	@missing=$$(grep -rhoE '^public (final )?(class|struct|enum|protocol|func|typealias|var|let) (Dispatch|dispatch)[A-Za-z0-9_]*' \
	  Sources/Ringlet | awk '{ print $$NF }' | sort -u | while read name; do \
	    grep -qE "^@_exported import [a-z]+ Ringlet\.$$name$$" $(COMPAT_SOURCE) || echo $$name; done); \
	test -z "$$missing" || { echo "import-styles: $(COMPAT_SOURCE) does not re-export" $$missing; exit 1; }
	for style in $(IMPORT_STYLES); do $(SWIFT) build --product ImportStyle$$style || exit 1; done
	@bin=$$($(SWIFT) build --show-bin-path); for style in $(IMPORT_STYLES); do \
	  out=$$(timeout 60 $$bin/ImportStyle$$style); status=$$?; echo "$$out"; \
	  [ $$status = 0 ] && echo "$$out" | tail -n 1 | grep -Eq "^import-styles: $$style: ok \([0-9]+ checks\)$$" \
	    || { echo "import-styles: FAILED: ImportStyle$$style (exit status $$status)"; exit 1; }; done

tsan: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan \
	  $(if $(TSAN_SKIP),--skip '$(TSAN_SKIP)')

# Leaks count as failures; Tests/lsan.supp names the test runner's own allocations.
asan: deps
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	$(ASAN_OPTIONS_TEST) $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan

# The reliability run (Sources/ringlet/Soak.swift): release build, 10^7 items through every kind
# of submission, then the same with a 64-node work-node pool (producers wait for nodes).
SOAK_ITEMS ?= 10000000
soak: deps
	$(SWIFT) build -c release --product ringlet
	$$($(SWIFT) build -c release --show-bin-path)/ringlet soak --items $(SOAK_ITEMS)
	$$($(SWIFT) build -c release --show-bin-path)/ringlet soak --items $(SOAK_ITEMS) --work-nodes 64

# The short soak `make test` runs, on the debug build `make unit` made.
soak-short: deps
	$(SWIFT) build --product ringlet
	$$($(SWIFT) build --show-bin-path)/ringlet soak --items 200000
	$$($(SWIFT) build --show-bin-path)/ringlet soak --items 50000 --work-nodes 64 --cores 1

# The C modules the Embedded and cross builds import: the runtime's boundary, and the
# test support the checks program uses (never linked into the runtime or the demo).
C_MODULES := module CRinglet {\n  header "ringlet.h"\n  export *\n}\nmodule CRingletTestSupport {\n  header "ringlet_test_support.h"\n  export *\n}\n

# Embedded Swift's Concurrency library, where the toolchain has one for the target (6.3.1:
# x86_64-unknown-linux-gnu only): the async checks' tasks run on Ringlet's pool through the
# executor entry points it leaves to the program (Sources/Ringlet/Concurrency/EmbeddedExecutorHooks.swift).
EMBEDDED_CONCURRENCY_LIB := $(wildcard $(dir $(shell command -v swiftc))../lib/swift/embedded/$(EMBEDDED_TARGET)/libswift_Concurrency.a)
EMBEDDED_CONCURRENCY := $(if $(EMBEDDED_CONCURRENCY_LIB),$(EMBEDDED_CONCURRENCY_LIB) -lstdc++)

# Embedded Swift: the whole Ringlet target as one module, then the checks program
# (Sources/RingletChecks) against it, linked with the C target by clang.
embedded: deps
	@mkdir -p $(EMBEDDED_DIR)/include $(EMBEDDED_DIR)/obj
	cp Sources/CRinglet/include/ringlet.h Sources/CRingletTestSupport/include/ringlet_test_support.h $(EMBEDDED_DIR)/include/
	printf '$(C_MODULES)' > $(EMBEDDED_DIR)/include/module.modulemap
	swiftc $(EMBEDDED_FLAGS) -parse-as-library -I $(EMBEDDED_DIR)/include -module-name Ringlet \
	  -emit-module -emit-module-path $(EMBEDDED_DIR)/obj/Ringlet.swiftmodule \
	  -c $$(find Sources/Ringlet -name '*.swift' | sort) -o $(EMBEDDED_DIR)/obj/Ringlet.o
	swiftc $(EMBEDDED_FLAGS) -I $(EMBEDDED_DIR)/include -I $(EMBEDDED_DIR)/obj -module-name RingletChecks \
	  -c $$(find Sources/RingletChecks -name '*.swift' | sort) -o $(EMBEDDED_DIR)/obj/RingletChecks.o
	for c in Sources/CRinglet/*.c Sources/CRingletTestSupport/*.c; do \
	  clang -O2 -D_GNU_SOURCE $$(pkg-config --cflags liburing) -I Sources/CRinglet/include \
	    -I Sources/CRingletTestSupport/include -c $$c -o $(EMBEDDED_DIR)/obj/$$(basename $$c .c).o || exit 1; done
	clang $(EMBEDDED_DIR)/obj/*.o $$(pkg-config --libs liburing) $(EMBEDDED_CONCURRENCY) -lm -lpthread \
	  -Wl,--gc-sections -o $(EMBEDDED_DIR)/ringlet-checks
	@echo "embedded: ringlet-checks is $$(stat -c %s $(EMBEDDED_DIR)/ringlet-checks) bytes"
	$(EMBEDDED_DIR)/ringlet-checks

# MARK: Boards: cross-compiling and the emulated board
#
# A board's values come from Boards/$(BOARD).profile (`key = value`, `#` comments, the
# last of a repeated key wins, surrounding double quotes dropped).
BOARD         ?= raspberry-pi-zero-2w
BOARD_PROFILE := Boards/$(BOARD).profile
HASH          := \#
profile_value = $(shell awk -v key='$(1)' '{ sub(/$(HASH).*/, ""); n = index($$0, "="); if (!n) next; \
  k = substr($$0, 1, n - 1); v = substr($$0, n + 1); gsub(/^[ \t]+|[ \t]+$$/, "", k); \
  gsub(/^[ \t]+|[ \t]+$$/, "", v); gsub(/^"|"$$/, "", v); if (k == key) found = v } END { print found }' \
  $(BOARD_PROFILE) 2>/dev/null)
CROSS_TARGET  := $(call profile_value,crossTarget)
CROSS_ARCH    := $(firstword $(subst -, ,$(CROSS_TARGET)))
# aarch64-unknown-linux-gnu -> Debian's aarch64-linux-gnu-gcc, binutils and multiarch dir.
CROSS_GNU     := $(subst -unknown-,-,$(CROSS_TARGET))
CROSS_CC      := $(CROSS_GNU)-gcc
CROSS_STRIP   := $(CROSS_GNU)-strip
CROSS_DIR     := .build-cross/$(BOARD)
# Embedded Swift has no *-linux-gnu target; the bare-metal triple for the same
# architecture produces code that links against glibc (the BoardProfiles article, "Reaching a board").
# swiftc emits LLVM IR, which clang compiles with one section per function: swiftc's own
# -function-sections is ignored here and -emit-bc crashes (Swift 6.3.1), and without
# per-function sections --gc-sections cannot drop unused runtime code.
CROSS_SWIFT_FLAGS := -target $(CROSS_ARCH)-none-none-elf -enable-experimental-feature Embedded -wmo -Osize -swift-version 6
CROSS_CLANG   := $(dir $(shell command -v $(SWIFT) 2>/dev/null))clang
CROSS_SECTIONS := -Os -ffunction-sections -fdata-sections
# LLVM's GlobalMerge (on for AArch64) puts globals of different types into one section, so
# one live class's metadata keeps unused classes' metadata, and their code, from --gc-sections.
CROSS_NO_MERGE := -mno-global-merge
CROSS_LIBS    := /usr/lib/$(CROSS_GNU)/liburing.a -lpthread
# 16 KiB pages at most (the Pi 5's kernel; 4 KiB kernels load it too) instead of the
# aarch64 default of 64 KiB, and no padding between code and data: 16 KiB less file.
# The dynamic build links with the toolchain's lld, which packs its ~400 relative
# relocations as RELR (9 KiB less; loading it needs glibc 2.36 or later: Debian 12,
# Raspberry Pi OS bookworm; lld then records the GLIBC_ABI_DT_RELR dependency that
# glibc checks). binutils 2.40 ignores -z pack-relative-relocs on aarch64.
CROSS_DYNAMIC_LINK := -fuse-ld=lld -B$(dir $(shell command -v $(SWIFT) 2>/dev/null)) -Wl,-z,pack-relative-relocs
CROSS_LINK    := -Wl,--gc-sections -Wl,--build-id=none -Wl,-z,max-page-size=16384 -Wl,-z,noseparate-code
# The full-Swift route: an installed Swift SDK whose name mentions the board's architecture.
CROSS_SWIFT_SDK ?= $(shell $(SWIFT) sdk list 2>/dev/null | grep -m1 -i '$(CROSS_ARCH)')

cross: deps-cross
	@test -f $(BOARD_PROFILE) || { echo "cross: no profile $(BOARD_PROFILE) (BOARD=$(BOARD))"; exit 1; }
	@test -n "$(CROSS_TARGET)" || { echo "cross: $(BOARD_PROFILE) has no crossTarget"; exit 1; }
	@command -v $(CROSS_CC) >/dev/null || { echo "cross: $(CROSS_CC) missing (make deps-cross)"; exit 1; }
	@mkdir -p $(CROSS_DIR)/include $(CROSS_DIR)/obj
	cp Sources/CRinglet/include/ringlet.h Sources/CRingletTestSupport/include/ringlet_test_support.h $(CROSS_DIR)/include/
	printf '$(C_MODULES)' > $(CROSS_DIR)/include/module.modulemap
	@# liburing's headers are architecture-independent, in /usr/include, which the cross
	@# compiler must not search (it holds the host's libc headers): copy just them.
	cp -r /usr/include/liburing.h /usr/include/liburing $(CROSS_DIR)/include/
	swiftc $(CROSS_SWIFT_FLAGS) -parse-as-library -I $(CROSS_DIR)/include -module-name Ringlet \
	  -emit-module -emit-module-path $(CROSS_DIR)/obj/Ringlet.swiftmodule \
	  -emit-ir $$(find Sources/Ringlet -name '*.swift' | sort) -o $(CROSS_DIR)/obj/Ringlet.ll
	for m in RingletChecks RingletDemo; do \
	  swiftc $(CROSS_SWIFT_FLAGS) -I $(CROSS_DIR)/include -I $(CROSS_DIR)/obj -module-name $$m \
	    -emit-ir $$(find Sources/$$m -name '*.swift' | sort) -o $(CROSS_DIR)/obj/$$m.ll || exit 1; done
	for m in Ringlet RingletChecks RingletDemo; do \
	  $(CROSS_CLANG) --target=$(CROSS_TARGET) $(CROSS_SECTIONS) $(CROSS_NO_MERGE) -Wno-override-module \
	    -c $(CROSS_DIR)/obj/$$m.ll -o $(CROSS_DIR)/obj/$$m.o || exit 1; done
	for c in Sources/CRinglet/*.c; do \
	  $(CROSS_CC) $(CROSS_SECTIONS) -D_GNU_SOURCE -I $(CROSS_DIR)/include \
	    -c $$c -o $(CROSS_DIR)/obj/c-$$(basename $$c .c).o || exit 1; done
	$(CROSS_CC) $(CROSS_SECTIONS) -D_GNU_SOURCE -I $(CROSS_DIR)/include \
	  -c Sources/CRingletTestSupport/ringlet_test_support.c -o $(CROSS_DIR)/obj/t-test-support.o
	@# Dynamic (glibc shared, liburing static: boards need not have liburing2) and
	@# static-pie (for the emulated board's initramfs); each also kept unstripped.
	for m in RingletChecks RingletDemo; do \
	  for kind in dynamic static-pie; do \
	    out=$(CROSS_DIR)/$$m-$$kind; flag='$(CROSS_DYNAMIC_LINK)'; [ $$kind = static-pie ] && flag=-static-pie; \
	    $(CROSS_CC) $$flag $(CROSS_LINK) -o $$out.unstripped \
	      $(CROSS_DIR)/obj/Ringlet.o $(CROSS_DIR)/obj/$$m.o $(CROSS_DIR)/obj/c-*.o \
	      $$([ $$m = RingletChecks ] && echo $(CROSS_DIR)/obj/t-test-support.o) $(CROSS_LIBS) || exit 1; \
	    $(CROSS_STRIP) -o $$out $$out.unstripped || exit 1; done; done
	@echo "cross: $(BOARD) ($(CROSS_TARGET)), stripped sizes in bytes:"
	@for f in $(CROSS_DIR)/RingletDemo-dynamic $(CROSS_DIR)/RingletDemo-static-pie \
	  $(CROSS_DIR)/RingletChecks-dynamic $(CROSS_DIR)/RingletChecks-static-pie; do \
	  printf '  %-48s %8s\n' $$f $$(stat -c %s $$f); done
	@size=$$(stat -c %s $(CROSS_DIR)/RingletDemo-dynamic); [ $$size -le 262144 ] \
	  && echo "cross: dynamic demo $$size bytes <= 256 KiB target" \
	  || echo "cross: dynamic demo $$size bytes MISSES the 256 KiB target"
	@if [ -n "$(CROSS_SWIFT_SDK)" ]; then \
	  echo "cross: full Swift with SDK $(CROSS_SWIFT_SDK)"; \
	  $(SWIFT) build -c release --swift-sdk $(CROSS_SWIFT_SDK) --scratch-path $(CROSS_DIR)/swiftpm \
	    --product RingletDemo && \
	  $(SWIFT) build -c release --swift-sdk $(CROSS_SWIFT_SDK) --scratch-path $(CROSS_DIR)/swiftpm \
	    --product RingletChecks || exit 1; \
	else echo "cross: no Swift SDK for $(CROSS_ARCH) installed (swift sdk list): Embedded route only"; fi

# The emulated board: Debian's arm64 kernel (io_uring built in) and an initramfs whose
# /init (Boards/sim-init.c) runs the static-pie checks, then the demo, then powers off.
# Fails when the checks' summary line is missing or reports a failure, or a program
# exits non-zero. Downloads are cached in .cache/sim (ignored).
SIM_DIR       := .cache/sim
SIM_TIMEOUT   ?= 600
SIM_MACHINE   := $(call profile_value,qemuMachine)
SIM_CPU       := $(call profile_value,qemuCPU)
SIM_CORES     := $(call profile_value,cores)
SIM_MEMORY    := $(call profile_value,qemuMemory)
SIM_DEB_ARCH  := $(if $(filter aarch64,$(CROSS_ARCH)),arm64,$(CROSS_ARCH))
SIM_QEMU      := qemu-system-$(CROSS_ARCH)
SIM_LOG       := $(CROSS_DIR)/sim.log

sim: cross
	@test -n "$(SIM_MACHINE)" -a -n "$(SIM_CPU)" -a -n "$(SIM_CORES)" -a -n "$(SIM_MEMORY)" || { \
	  echo "sim: $(BOARD_PROFILE) needs qemuMachine, qemuCPU, cores and qemuMemory"; exit 1; }
	@mkdir -p $(SIM_DIR)
	@pkg=$$(apt-cache depends linux-image-$(SIM_DEB_ARCH):$(SIM_DEB_ARCH) 2>/dev/null \
	  | awk '/Depends: linux-image-/ { sub(/:.*/, "", $$2); print $$2; exit }'); \
	test -n "$$pkg" || { echo "sim: apt-cache knows no linux-image-$(SIM_DEB_ARCH):$(SIM_DEB_ARCH) (make deps-cross)"; exit 1; }; \
	kernel=$(SIM_DIR)/vmlinuz-$${pkg#linux-image-}; \
	if [ ! -f $$kernel ]; then echo "sim: fetching $$pkg"; rm -rf $(SIM_DIR)/deb && mkdir -p $(SIM_DIR)/deb && \
	  (cd $(SIM_DIR)/deb && apt-get download -q $$pkg:$(SIM_DEB_ARCH) 2>&1 | grep -v -e '^W: Download is performed unsandboxed' -e '^Get:' -e '^Fetched' ; \
	   dpkg-deb -x *.deb root) && cp $(SIM_DIR)/deb/root/boot/vmlinuz-* $$kernel && rm -rf $(SIM_DIR)/deb || exit 1; fi; \
	ln -sf $$(basename $$kernel) $(SIM_DIR)/vmlinuz-$(SIM_DEB_ARCH)
	rm -rf $(CROSS_DIR)/initramfs && mkdir -p $(CROSS_DIR)/initramfs/proc $(CROSS_DIR)/initramfs/sys $(CROSS_DIR)/initramfs/dev
	$(CROSS_CC) -static -Os -Wall -o $(CROSS_DIR)/initramfs/init Boards/sim-init.c
	$(CROSS_STRIP) $(CROSS_DIR)/initramfs/init
	cp $(CROSS_DIR)/RingletChecks-static-pie $(CROSS_DIR)/initramfs/ringlet-checks
	cp $(CROSS_DIR)/RingletDemo-static-pie $(CROSS_DIR)/initramfs/ringlet-demo
	@# The dynamic demo runs too, on the cross glibc (the board's, Debian 12's 2.36).
	mkdir -p $(CROSS_DIR)/initramfs/lib
	cp $(CROSS_DIR)/RingletDemo-dynamic $(CROSS_DIR)/initramfs/ringlet-demo-dynamic
	cp -L /usr/$(CROSS_GNU)/lib/ld-linux-$(CROSS_ARCH).so.1 /usr/$(CROSS_GNU)/lib/libc.so.6 $(CROSS_DIR)/initramfs/lib/
	cd $(CROSS_DIR)/initramfs && find . | sort | cpio -o -H newc -R 0:0 --quiet | gzip -1 > ../initramfs.gz
	@echo "sim: booting $(BOARD): $(SIM_QEMU) -M $(SIM_MACHINE) -cpu $(SIM_CPU) -smp $(SIM_CORES) -m $(SIM_MEMORY)"
	@start=$$(date +%s); \
	timeout $(SIM_TIMEOUT) $(SIM_QEMU) -M $(SIM_MACHINE) -cpu $(SIM_CPU) -smp $(SIM_CORES) -m $(SIM_MEMORY) \
	  -kernel $(SIM_DIR)/vmlinuz-$(SIM_DEB_ARCH) -initrd $(CROSS_DIR)/initramfs.gz -nographic -nic none -no-reboot \
	  -append "console=ttyAMA0 quiet panic=-1 RINGLET_BOARD=$(BOARD)" < /dev/null | tr -d '\r' | tee $(SIM_LOG); \
	echo "sim: $(BOARD) booted, ran and powered off in $$(( $$(date +%s) - start )) s (log: $(SIM_LOG))"
	@grep -Eq '^[0-9]+ passed, 0 failed$$' $(SIM_LOG) || { echo "sim: FAILED: no '<n> passed, 0 failed' line"; exit 1; }
	@grep -q '^sim: ringlet-checks exited with status 0$$' $(SIM_LOG) || { echo "sim: FAILED: ringlet-checks"; exit 1; }
	@grep -q '^sim: ringlet-demo exited with status 0$$' $(SIM_LOG) || { echo "sim: FAILED: ringlet-demo"; exit 1; }
	@grep -q '^sim: ringlet-demo-dynamic exited with status 0$$' $(SIM_LOG) || { echo "sim: FAILED: ringlet-demo-dynamic"; exit 1; }
	@echo "sim: $(BOARD) passed: $$(grep -E '^[0-9]+ passed' $(SIM_LOG)); $$(grep '^sim: ringlet-demo peak' $(SIM_LOG) | cut -c6-)"

bench: deps
	$(SWIFT) build -c release --product ringlet
	$$($(SWIFT) build -c release --show-bin-path)/ringlet bench

# The DocC catalog and the public API, built by swift-docc-plugin; warnings (a broken link,
# a symbol that does not exist) fail the build. Open .build/docs/index.html through a web
# server, or `swift package preview-documentation --target Ringlet`.
docs: deps
	$(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation --target Ringlet \
	  --output-path .build/docs --transform-for-static-hosting --warnings-as-errors
	@echo "docs: .build/docs"

clean:
	rm -rf .build .build-tsan .build-asan $(EMBEDDED_DIR) .build-cross
