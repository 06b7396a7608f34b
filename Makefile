# Ringlet — build, test and measure. `make run` and `make test` install what they need.
#
#   make deps       install liburing-dev (apt-get, sudo only when not root) if pkg-config lacks it
#   make build      debug build of every target
#   make run        release build, then run the main job: `ringlet demo`
#   make test       unit + integration tests, the import styles, the ThreadSanitizer and
#                   AddressSanitizer passes, a short soak, the documentation (no broken link,
#                   no path or name that does not exist), the package check, the
#                   Embedded Swift build and checks, and the checks on the emulated
#                   raspberry-pi-zero-2w (make sim)
#   make import-styles  build and run one GCD client program per way of importing Ringlet
#                   (alone; with FoundationEssentials; with Foundation and RingletFoundationCompat)
#   make tsan       the test suites under ThreadSanitizer (all but TSAN_SKIP, each with its reason)
#   make asan       the test suites under AddressSanitizer with leak checking
#   make soak       the reliability run: 10^7 items, every one exactly once, memory and threads
#                   bounded; then the same on a 64-node pool; then 10^5 rounds of sync chains
#                   on both backends (release build)
#   make embedded   compile Ringlet in Embedded Swift mode, link the checks program, run it
#   make bench      release build, Ringlet vs the toolchain's Dispatch (prints a table)
#   make bench-service  a background-clamped service and a user-interactive client (two processes)
#                   under one CPU hog per core: boosted, unboosted, and over a plain socket with
#                   the toolchain's Dispatch; without CAP_SYS_NICE (SERVICE_REQUESTS, SERVICE_SECONDS)
#   make bench-energy  the sensor logger for ENERGY_SECONDS (60) on four sides: Ringlet, Dispatch,
#                   a thread per sensor, Ringlet with leeway 0 (CHART=file.svg draws them)
#   make serve      the hello example: a Hummingbird router on Ringlet at 127.0.0.1:8080 (PORT=N),
#                   after serve-check
#   make serve-check build the hello example, start it on a free port, fetch / and /json over
#                   loopback and check the answers
#   make bench-http the same Hummingbird routes on NIO's own group (default loops, then loops =
#                   Ringlet's pool) and on Ringlet, loaded by wrk at 16, 64 and 256 connections
#                   for HTTP_SECONDS (10) each; then a TCP echo row (64 B and 64 KiB messages)
#   make docs       the documentation (Sources/Ringlet/Ringlet.docc and the API) into .build/docs,
#                   after Tests/Docs/check-names.sh (every path and name it quotes exists)
#   make package-check  a package depending only on the Ringlet product resolves no other package
#   make boundary   only Sources/Ringlet/System imports or calls the C target
#   make deps-cross the toolchain, liburing and qemu-system for BOARD's target, cpio
#   make cross      cross-compile the checks and the demo for BOARD (Embedded Swift; and the
#                   full-Swift build when an SDK for the board's target is installed)
#   make sizes      where the demo's bytes go, by symbol group (after make cross)
#   make sim        boot BOARD's qemu shape with its Debian kernel, run checks and demo there
#   make sim-all    make sim for every profile in Boards/ and once on PREEMPT_RT; one table

SWIFT        ?= swift
# The package's traits every build here turns on: NIO, for the RingletNIO product and its
# suites (Package.swift). One set for every build of .build, so that none rebuilds another's.
TRAITS       := --traits NIO
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
EMBEDDED_DIR := .build-embedded
EMBEDDED_TARGET ?= x86_64-unknown-linux-gnu
EMBEDDED_FLAGS := -target $(EMBEDDED_TARGET) -enable-experimental-feature Embedded -wmo -Osize -swift-version 6
# Suites ThreadSanitizer skips, each for a reason (every other suite runs under it; a new
# suite runs under it unless it is named here):
# - ThreadCountTests: counts the process's threads exactly, and TSan's runtime adds a thread.
TSAN_SKIP    := ThreadCountTests
ASAN_OPTIONS_TEST := ASAN_OPTIONS="detect_leaks=1 log_path=$(CURDIR)/.build-asan/reports/report" LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/lsan.supp

.PHONY: serve serve-check bench-http boundary package-check deps build run test unit unit-epoll import-styles tsan asan soak soak-short embedded bench bench-service bench-energy bench-scale docs clean deps-cross cross sizes sim sim-all

deps:
	@command -v pkg-config >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq pkg-config; }
	@pkg-config --exists liburing || { echo "installing liburing-dev"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq liburing-dev; }
	@pkg-config --exists liburing && echo "deps: liburing $$(pkg-config --modversion liburing)"

build: deps
	$(SWIFT) build $(TRAITS)

# Release, as a board runs it: the demo's figures are the runtime's, not a debug build's.
run: deps
	$(SWIFT) build $(TRAITS) -c release --product ringlet
	$$($(SWIFT) build $(TRAITS) -c release --show-bin-path)/ringlet demo

test: boundary unit unit-epoll import-styles tsan asan soak-short docs package-check embedded sim

# One OS boundary (the Architecture article's principles): only Sources/Ringlet/System
# imports or calls the C target; a runtime file elsewhere that does fails here, named.
boundary:
	@bad=$$(grep -rlE '^import CRinglet|\brl_[a-z_0-9]+\(' Sources/Ringlet --include='*.swift' | grep -v '^Sources/Ringlet/System/'); \
	  test -z "$$bad" || { echo "boundary: these runtime files import or call the C target outside Sources/Ringlet/System," \
	    "the one OS boundary: $$bad; wrap the call in a type of System/"; exit 1; }
	@echo "boundary: only Sources/Ringlet/System calls the C target"

# A package that depends only on the `Ringlet` product resolves no other package: the
# tools' packages (argument parser, histogram, DocC plugin) stay this package's own, and
# swift-nio stays behind the NIO trait. Writes such a package in .build/package-check,
# resolves it, and fails naming any package it fetched; then one that uses RingletNIO with
# the trait, which must resolve swift-nio and nothing of the tools.
PACKAGE_CHECK := .build/package-check
package-check:
	@rm -rf $(PACKAGE_CHECK) && mkdir -p $(PACKAGE_CHECK)/Sources/Client $(PACKAGE_CHECK)-nio/Sources/Client
	@printf '%s\n' '// swift-tools-version: 6.1' 'import PackageDescription' 'let package = Package(name: "Client",' \
	  '  dependencies: [.package(path: "$(CURDIR)")],' \
	  '  targets: [.executableTarget(name: "Client", dependencies: [.product(name: "Ringlet", package: "$(notdir $(CURDIR))")])])' \
	  > $(PACKAGE_CHECK)/Package.swift
	@echo 'import Ringlet' > $(PACKAGE_CHECK)/Sources/Client/main.swift
	@cd $(PACKAGE_CHECK) && $(SWIFT) package resolve >/dev/null || exit 1; \
	  others=$$(ls .build/checkouts 2>/dev/null); \
	  [ -z "$$others" ] || { echo "package-check: a package that depends only on the Ringlet product resolved" $$others \
	    "as well: a product of Package.swift reaches them (the tools are targets, not products; NIO is a trait)"; exit 1; }
	@echo "package-check: a package that depends only on the Ringlet product resolves no other package"
	@printf '%s\n' '// swift-tools-version: 6.1' 'import PackageDescription' 'let package = Package(name: "Client",' \
	  '  dependencies: [.package(path: "$(CURDIR)", traits: ["NIO"])],' \
	  '  targets: [.executableTarget(name: "Client", dependencies: [.product(name: "RingletNIO", package: "$(notdir $(CURDIR))")])])' \
	  > $(PACKAGE_CHECK)-nio/Package.swift
	@echo 'import RingletNIO' > $(PACKAGE_CHECK)-nio/Sources/Client/main.swift
	@cd $(PACKAGE_CHECK)-nio && $(SWIFT) package resolve >/dev/null || exit 1; \
	  fetched=$$(ls .build/checkouts 2>/dev/null | tr '\n' ' '); \
	  case " $$fetched" in *" swift-nio "*) ;; *) echo "package-check: a package using RingletNIO with the NIO trait did not resolve swift-nio (it fetched: $$fetched)"; exit 1;; esac; \
	  case " $$fetched" in *argument-parser*|*hdrhistogram*|*docc*) echo "package-check: RingletNIO's user resolved the tools' packages too: $$fetched"; exit 1;; esac
	@echo "package-check: one that uses RingletNIO (trait NIO) resolves swift-nio and its own dependencies only"

# Runs the test command that follows with its output also kept in the named log; when
# it fails, prints the run's failures again at its end, each with the runtime report a
# timed-out wait attaches (CI shows only the end of a long log), and fails.
KEEP_FAILURES = keep() { log=$$1; shift; { "$$@"; echo $$? > $$log.status; } 2>&1 | tee $$log; \
  [ "$$(cat $$log.status)" = 0 ] && return 0; echo "The failures of this run, again:"; \
  awk '/recorded an issue|failed after/ { on = 1; print; next } on && /↳/ { print; next } { on = 0 }' $$log \
  | tail -n 200; return 1; }; keep

# Then the timer suites and the service suites again without CAP_SYS_NICE, as on a board
# (these machines run as root): neither the band's wake-up rule nor importance boosting
# may lean on a privilege a board lacks.
NO_SYS_NICE_SUITES := BandTimersTests|BandDescriptorsTests|TimerSourceTests|WakeBatchTests|ServiceBoostTests|ServiceTests
# Suites run in a test process of their own, after the others: the NIO suites move enough
# data (10,000 connections, an 8 MiB slow reader) to starve the timing of the older
# suites that would run beside them (a fresh-clone run failed three such, by turns).
APART := RingletNIOTests
unit: deps
	$(SWIFT) build $(TRAITS) --build-tests
	@$(KEEP_FAILURES) .build/unit.log $(SWIFT) test $(TRAITS) --skip-build --skip '$(APART)'
	@$(KEEP_FAILURES) .build/unit-apart.log $(SWIFT) test $(TRAITS) --skip-build --filter '$(APART)'
	@if [ "$$(id -u)" = 0 ] && command -v setpriv >/dev/null; then \
	  echo "unit: $(NO_SYS_NICE_SUITES) again without CAP_SYS_NICE (setpriv --bounding-set=-sys_nice)"; \
	  $(KEEP_FAILURES) .build/unit-no-sys-nice.log setpriv --bounding-set=-sys_nice \
	    $(SWIFT) test $(TRAITS) --skip-build --filter '$(NO_SYS_NICE_SUITES)'; \
	else echo "unit: not root or no setpriv: the timer suites already ran without CAP_SYS_NICE"; fi

# The same suites and the checks program on the epoll backend (the Architecture article,
# "The epoll backend"): asked for by name, then with io_uring refused by a seccomp filter
# as in a container (Tests/NoIoUring), where the runtime falls back by itself and only
# the tests of io_uring itself skip, saying why.
NO_IO_URING := .build/no-io-uring
unit-epoll: deps
	$(SWIFT) build $(TRAITS) --build-tests
	@$(KEEP_FAILURES) .build/unit-epoll.log env RINGLET_BACKEND=epoll $(SWIFT) test $(TRAITS) --skip-build --skip '$(APART)'
	@$(KEEP_FAILURES) .build/unit-epoll-apart.log env RINGLET_BACKEND=epoll $(SWIFT) test $(TRAITS) --skip-build --filter '$(APART)'
	RINGLET_BACKEND=epoll $$($(SWIFT) build $(TRAITS) --show-bin-path)/RingletChecks
	$(CC) -O1 -Wall -Wextra -Werror -o $(NO_IO_URING) Tests/NoIoUring/no-io-uring.c
	@$(KEEP_FAILURES) .build/unit-no-io-uring.log $(NO_IO_URING) $(SWIFT) test $(TRAITS) --skip-build --skip '$(APART)'
	@$(KEEP_FAILURES) .build/unit-no-io-uring-apart.log $(NO_IO_URING) $(SWIFT) test $(TRAITS) --skip-build --filter '$(APART)'
	$(NO_IO_URING) $$($(SWIFT) build $(TRAITS) --show-bin-path)/RingletChecks

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
	for style in $(IMPORT_STYLES); do $(SWIFT) build $(TRAITS) --product ImportStyle$$style || exit 1; done
	@bin=$$($(SWIFT) build $(TRAITS) --show-bin-path); for style in $(IMPORT_STYLES); do \
	  out=$$(timeout 60 $$bin/ImportStyle$$style); status=$$?; echo "$$out"; \
	  [ $$status = 0 ] && echo "$$out" | tail -n 1 | grep -Eq "^import-styles: $$style: ok \([0-9]+ checks\)$$" \
	    || { echo "import-styles: FAILED: ImportStyle$$style (exit status $$status)"; exit 1; }; done

# A sanitizer's report goes to a file per process (log_path), printed at the end: a child
# process of an exit test fails with the sanitizer's exit status (66 for ThreadSanitizer)
# and its stderr, where the report would go, never reaches the log.
SANITIZER_REPORTS = for f in $(1)/report.*; do [ -f "$$f" ] || continue; \
  echo "$(2): report of process $${f\#\#*.}:"; cat "$$f"; done
tsan: deps
	$(SWIFT) build $(TRAITS) --build-tests --sanitize=thread --scratch-path .build-tsan
	@rm -rf .build-tsan/reports && mkdir -p .build-tsan/reports
	@$(KEEP_FAILURES) .build-tsan/test.log env TSAN_OPTIONS="halt_on_error=1 log_path=$(CURDIR)/.build-tsan/reports/report" \
	  $(SWIFT) test $(TRAITS) --skip-build --sanitize=thread --scratch-path .build-tsan $(if $(TSAN_SKIP),--skip '$(TSAN_SKIP)') \
	  --skip '$(APART)' || { $(call SANITIZER_REPORTS,.build-tsan/reports,tsan); exit 1; }
	@$(KEEP_FAILURES) .build-tsan/test-apart.log env TSAN_OPTIONS="halt_on_error=1 log_path=$(CURDIR)/.build-tsan/reports/report" \
	  $(SWIFT) test $(TRAITS) --skip-build --sanitize=thread --scratch-path .build-tsan --filter '$(APART)' \
	  || { $(call SANITIZER_REPORTS,.build-tsan/reports,tsan); exit 1; }
	@$(call SANITIZER_REPORTS,.build-tsan/reports,tsan)

# Leaks count as failures; Tests/lsan.supp names the test runner's own allocations.
asan: deps
	$(SWIFT) build $(TRAITS) --build-tests --sanitize=address --scratch-path .build-asan
	@rm -rf .build-asan/reports && mkdir -p .build-asan/reports
	@$(KEEP_FAILURES) .build-asan/test.log env $(ASAN_OPTIONS_TEST) $(SWIFT) test $(TRAITS) --skip-build --sanitize=address \
	  --scratch-path .build-asan --skip '$(APART)' || { $(call SANITIZER_REPORTS,.build-asan/reports,asan); exit 1; }
	@$(KEEP_FAILURES) .build-asan/test-apart.log env $(ASAN_OPTIONS_TEST) $(SWIFT) test $(TRAITS) --skip-build --sanitize=address \
	  --scratch-path .build-asan --filter '$(APART)' || { $(call SANITIZER_REPORTS,.build-asan/reports,asan); exit 1; }
	@$(call SANITIZER_REPORTS,.build-asan/reports,asan)

# The reliability run (Sources/ringlet/Soak.swift): release build, 10^7 items through every kind
# of submission, then the same with a 64-node work-node pool (producers wait for nodes); then
# 10^5 rounds of sync chains begun with the whole high band blocked in sync, on io_uring and on
# epoll (Sources/ringlet/SoakSyncChains.swift).
SOAK_ITEMS ?= 10000000
SOAK_SYNC_ROUNDS ?= 100000
soak: deps
	$(SWIFT) build $(TRAITS) -c release --product ringlet
	$$($(SWIFT) build $(TRAITS) -c release --show-bin-path)/ringlet soak --items $(SOAK_ITEMS)
	$$($(SWIFT) build $(TRAITS) -c release --show-bin-path)/ringlet soak --items $(SOAK_ITEMS) --work-nodes 64
	$$($(SWIFT) build $(TRAITS) -c release --show-bin-path)/ringlet soak --sync-chains $(SOAK_SYNC_ROUNDS)
	RINGLET_BACKEND=epoll $$($(SWIFT) build $(TRAITS) -c release --show-bin-path)/ringlet soak --sync-chains $(SOAK_SYNC_ROUNDS)

# The short soak `make test` runs, on the debug build `make unit` made.
soak-short: deps
	$(SWIFT) build $(TRAITS) --product ringlet
	$$($(SWIFT) build $(TRAITS) --show-bin-path)/ringlet soak --items 200000
	$$($(SWIFT) build $(TRAITS) --show-bin-path)/ringlet soak --items 50000 --work-nodes 64 --cores 1
	$$($(SWIFT) build $(TRAITS) --show-bin-path)/ringlet soak --sync-chains 20000 --cores 2

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
# Embedded Swift compiles no unspecialized generic: where one would be, Ringlet.o holds
# an alias of `_swift_dead_method_stub`, a trap. A caller that reaches such a symbol (a
# protocol extension member called on an existential: the program's own copy is weak
# and loses the link) ends in an illegal instruction. The scan fails on any, naming
# them; the fix is to emit the member into its caller (@_alwaysEmitIntoClient) or make
# it a protocol requirement. Allowed, each for its reason:
# - _SpecificBox.value.getter: a stored property of an internal generic class that
#   only setSpecific/getSpecific, emitted into the caller with a concrete type, read
#   (through their own specialised copy).
EMBEDDED_TRAPS_ALLOWED := _SpecificBox.value.getter
EMBEDDED_TRAP_SCAN = test -s $(EMBEDDED_DIR)/obj/Ringlet.o || exit 1; stub=$$(nm $(EMBEDDED_DIR)/obj/Ringlet.o | awk '$$3 == "_swift_dead_method_stub" { print $$1 }'); \
  traps=$$([ -z "$$stub" ] || nm $(EMBEDDED_DIR)/obj/Ringlet.o \
    | awk -v a="$$stub" '$$1 == a && $$3 != "_swift_dead_method_stub" { print $$3 }' \
    | $(SWIFT) demangle --simplified | grep -v -x -F '$(EMBEDDED_TRAPS_ALLOWED)'); \
  if [ -n "$$traps" ]; then echo "embedded: these entry points of Ringlet.o are Embedded Swift's trap for an \
  unspecialized generic, and a caller that reaches one traps; emit them into the caller (@_alwaysEmitIntoClient) \
  or make them protocol requirements:"; echo "$$traps"; exit 1; fi; \
  echo "embedded: no entry point of Ringlet.o is a trap for an unspecialized generic"

embedded: deps
	@mkdir -p $(EMBEDDED_DIR)/include $(EMBEDDED_DIR)/obj
	cp Sources/CRinglet/include/ringlet.h Sources/CRingletTestSupport/include/ringlet_test_support.h $(EMBEDDED_DIR)/include/
	printf '$(C_MODULES)' > $(EMBEDDED_DIR)/include/module.modulemap
	swiftc $(EMBEDDED_FLAGS) -parse-as-library -I $(EMBEDDED_DIR)/include -module-name Ringlet \
	  -emit-module -emit-module-path $(EMBEDDED_DIR)/obj/Ringlet.swiftmodule \
	  -c $$(find Sources/Ringlet -name '*.swift' | sort) -o $(EMBEDDED_DIR)/obj/Ringlet.o
	@$(EMBEDDED_TRAP_SCAN)
	swiftc $(EMBEDDED_FLAGS) -I $(EMBEDDED_DIR)/include -I $(EMBEDDED_DIR)/obj -module-name RingletChecks \
	  -c $$(find Sources/RingletChecks -name '*.swift' | sort) -o $(EMBEDDED_DIR)/obj/RingletChecks.o
	for c in Sources/CRinglet/*.c Sources/CRingletTestSupport/*.c; do \
	  clang -O2 -D_GNU_SOURCE $$(pkg-config --cflags liburing) -I Sources/CRinglet/include \
	    -I Sources/CRingletTestSupport/include -c $$c -o $(EMBEDDED_DIR)/obj/$$(basename $$c .c).o || exit 1; done
	clang $(EMBEDDED_DIR)/obj/*.o $$(pkg-config --libs liburing) $(EMBEDDED_CONCURRENCY) -lm -lpthread \
	  -Wl,--gc-sections -o $(EMBEDDED_DIR)/ringlet-checks
	@echo "embedded: ringlet-checks is $$(stat -c %s $(EMBEDDED_DIR)/ringlet-checks) bytes"
	$(EMBEDDED_DIR)/ringlet-checks

# MARK: Boards: cross-compiling and the emulated boards
#
# A board's values come from Boards/$(BOARD).profile, read by the runtime's rule
# (`key = value`, `#` starts a comment, a key set twice is an error naming both lines). A
# value `derived` (the generic profile) or a key left out takes the default given here:
# the build machine's architecture, its CPU count, 1 GiB of memory, and Debian's kernel
# for the architecture.
BOARD         ?= raspberry-pi-zero-2w
BOARD_PROFILE := Boards/$(BOARD).profile
HASH          := \#
profile_line  = $(shell awk -v key='$(1)' '{ sub(/$(HASH).*/, ""); n = index($$0, "="); if (!n) next; \
  k = substr($$0, 1, n - 1); v = substr($$0, n + 1); gsub(/^[ \t\r]+|[ \t\r]+$$/, "", k); \
  gsub(/^[ \t\r]+|[ \t\r]+$$/, "", v); if (k != key) next; if (line) twice = line " and " NR; line = NR; found = v } \
  END { if (twice) print "!twice", twice; else print found }' $(BOARD_PROFILE) 2>/dev/null)
profile_value = $(call profile_checked,$(1),$(call profile_line,$(1)))
profile_checked = $(if $(filter !twice,$(firstword $(2))),$(error $(BOARD_PROFILE): key '$(1)' is set twice, \
  on lines $(wordlist 2,4,$(2)); keep one),$(2))
# $(1) unless it is empty or `derived`, else $(2).
or_default    = $(if $(filter-out derived,$(1)),$(1),$(2))
HOST_ARCH     := $(shell uname -m)
CROSS_TARGET  := $(call or_default,$(call profile_value,crossTarget),$(HOST_ARCH)-unknown-linux-gnu)
CROSS_ARCH    := $(firstword $(subst -, ,$(CROSS_TARGET)))
# aarch64-unknown-linux-gnu -> Debian's aarch64-linux-gnu-gcc, binutils and multiarch dir.
CROSS_GNU     := $(subst -unknown-,-,$(CROSS_TARGET))
CROSS_CC      := $(CROSS_GNU)-gcc
CROSS_STRIP   := $(CROSS_GNU)-strip
DEB_ARCH      := $(if $(filter aarch64,$(CROSS_ARCH)),arm64,$(if $(filter x86_64,$(CROSS_ARCH)),amd64,$(CROSS_ARCH)))
# One build per target triple serves every board of that triple: the programs read their
# board's profile at run time (RINGLET_BOARD or detection), so nothing in them is per board.
CROSS_DIR     := .build-cross/$(CROSS_TARGET)

# The cross toolchain (when the target is not the build machine's), the target's liburing
# (multiarch), qemu-system for the target, qemu-user (the static programs' layout, below)
# and cpio; device-tree-compiler for the big.LITTLE boards' device tree. Installs only
# what is missing; silent when all is there.
CROSS_PACKAGES := cpio liburing-dev:$(DEB_ARCH) qemu-system-$(if $(filter x86_64,$(CROSS_ARCH)),x86,arm) qemu-user \
  $(if $(filter-out $(HOST_ARCH),$(CROSS_ARCH)),gcc-$(subst _,-,$(CROSS_GNU)) libc6-dev-$(DEB_ARCH)-cross)
deps-cross:
	@test -f $(BOARD_PROFILE) || { echo "deps-cross: no profile $(BOARD_PROFILE) (BOARD=$(BOARD))"; exit 1; }
	@[ "$(DEB_ARCH)" = "$$(dpkg --print-architecture)" ] || dpkg --print-foreign-architectures | grep -qx $(DEB_ARCH) \
	  || { echo "deps-cross: enabling the $(DEB_ARCH) architecture"; \
	  $(SUDO) dpkg --add-architecture $(DEB_ARCH) && $(SUDO) apt-get update -qq; }
	@missing=$$(for p in $(CROSS_PACKAGES) $(if $(SIM_BIG_LITTLE),device-tree-compiler); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then echo "deps-cross: installing" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; fi

# Embedded Swift has no aarch64-linux-gnu target; the bare-metal triple for the same
# architecture (aarch64-none-none-elf, x86_64-unknown-none-elf) produces code that links
# against glibc (the BoardProfiles article, "Reaching a board").
# swiftc emits LLVM IR (-emit-bc crashes, Swift 6.3.1), which the toolchain's clang turns
# into LLVM bitcode objects; the C target is compiled to bitcode by the same clang, and lld
# optimises the Swift modules and the C code as one program at link time (LTO): what the
# program never reaches is dropped before code is generated, and code is inlined and
# outlined across the modules and the C boundary (the demo: 366,416 -> 333,864 B for the
# Swift modules, then -6 KB for the C target). lld generates code with one section per
# function, so --gc-sections still drops what survives. -g only fills the unstripped
# copies, which `make sizes` reads to say which source file each function is from.
CROSS_EMBEDDED_TRIPLE := $(if $(filter x86_64,$(CROSS_ARCH)),x86_64-unknown-none-elf,$(CROSS_ARCH)-none-none-elf)
# Where the toolchain has Embedded Swift's Concurrency library for the board's own triple
# (6.3.1: x86_64-unknown-linux-gnu only, none for aarch64), the checks are built a second
# time for that triple (in obj/async) and linked with the library, so their async checks
# run on the emulated board too; its C++ parts take a static libstdc++, as the initramfs
# has no shared one. The demo, which has no async code, stays without the library.
CROSS_CONCURRENCY_LIB := $(wildcard $(dir $(shell command -v swiftc))../lib/swift/embedded/$(CROSS_TARGET)/libswift_Concurrency.a)
CROSS_ASYNC_LIBS := $(if $(CROSS_CONCURRENCY_LIB),$(CROSS_CONCURRENCY_LIB) $(shell $(CROSS_CC) -print-file-name=libstdc++.a 2>/dev/null))
CROSS_ASYNC_FLAGS := -target $(CROSS_TARGET) -enable-experimental-feature Embedded -wmo -Osize -swift-version 6 -g
CROSS_SWIFT_FLAGS := -target $(CROSS_EMBEDDED_TRIPLE) -enable-experimental-feature Embedded -wmo -Osize -swift-version 6 -g
CROSS_CLANG   := $(dir $(shell command -v $(SWIFT) 2>/dev/null))clang
CROSS_SECTIONS := -Os -ffunction-sections -fdata-sections
CROSS_LTO     := $(CROSS_SECTIONS) -flto
# The C target through the same clang, for the same LTO. No unwind tables: nothing in the
# programs unwinds (no C++ exceptions, no backtrace(3), no pthread_cancel or pthread_exit),
# and with LTO one C file's tables would give every Swift function tables too (45 KB).
# (LLVM's GlobalMerge, which once kept unused class metadata from --gc-sections, now runs
# after LTO has dropped everything unreachable, so it no longer needs turning off.)
# -Oz as the Swift modules' -Osize, which marks every function minsize.
CROSS_C       := $(CROSS_CLANG) --target=$(CROSS_GNU) $(CROSS_LTO) -Oz -fno-asynchronous-unwind-tables -fno-unwind-tables
CROSS_LIBS    := /usr/lib/$(CROSS_GNU)/liburing.a -lpthread
# Both builds link with the toolchain's lld: --icf=all folds the identical functions that
# generic specialisation leaves (about 6 KiB). Both pack their relative relocations as
# RELR: 9 KiB less in the dynamic build, whose loading needs glibc 2.36 or later (Debian
# 12, Raspberry Pi OS bookworm; lld then records the GLIBC_ABI_DT_RELR dependency that
# glibc checks), and 42 KiB less file, so about 40 kB less resident memory, in the
# static-pie build, which relocates itself with the glibc it carries (binutils 2.40
# ignores -z pack-relative-relocs on aarch64).
# 16 KiB pages at most (the Pi 5's kernel; 4 KiB kernels load it too) instead of the
# aarch64 default of 64 KiB, and no padding between code and data: 16 KiB less file.
CROSS_LLD     := -fuse-ld=lld -B$(dir $(shell command -v $(SWIFT) 2>/dev/null))
CROSS_LINK    := $(CROSS_LLD) -Wl,-z,pack-relative-relocs -Wl,--gc-sections -Wl,--icf=all -Wl,--build-id=none -Wl,-z,max-page-size=16384 \
  -Wl,-z,noseparate-code
cross_order = -Wl,--symbol-ordering-file=$(1) -Wl,--no-warn-symbol-ordering
CROSS_STATIC_ORDER := $(call cross_order,$(CROSS_DIR)/obj/static-order.txt)
# The static-pie programs without C++ leave the C library's unwind tables out.
CROSS_NO_UNWIND := -Wl,--no-eh-frame-hdr -Wl,-T,Boards/no-unwind-tables.ld
# The start-up code and the string functions' stubs in front of the code (Boards/start-code-first.ld).
CROSS_START_FIRST := -Wl,-T,Boards/start-code-first.ld
# The CPU qemu-user emulates for the traced run of Boards/traced-order.sh: the Pi boards'
# smallest core, so that glibc picks the string functions a board's core gets.
CROSS_TRACE_CPU := $(if $(filter aarch64,$(CROSS_ARCH)),cortex-a53,max)
CROSS_SIZE_TARGET := 131072
# The full-Swift route: an installed Swift SDK whose name mentions the board's architecture.
CROSS_SWIFT_SDK ?= $(shell $(SWIFT) sdk list 2>/dev/null | grep -m1 -i '$(CROSS_ARCH)')
CROSS_SOURCES := $(shell find Sources/Ringlet Sources/RingletChecks Sources/RingletDemo Sources/CRinglet \
  Sources/CRingletTestSupport -type f 2>/dev/null)
CROSS_PROGRAMS := $(CROSS_DIR)/RingletDemo-dynamic $(CROSS_DIR)/RingletDemo-static-pie \
  $(CROSS_DIR)/RingletChecks-dynamic $(CROSS_DIR)/RingletChecks-static-pie

cross: deps-cross $(CROSS_DIR)/built
	@echo "cross: $(CROSS_TARGET) (BOARD=$(BOARD)), stripped sizes in bytes:"
	@for f in $(CROSS_PROGRAMS); do printf '  %-58s %8s\n' $$f $$(stat -c %s $$f); done
	@size=$$(stat -c %s $(CROSS_DIR)/RingletDemo-dynamic); [ $$size -le $(CROSS_SIZE_TARGET) ] \
	  && echo "cross: dynamic demo $$size bytes <= $$(( $(CROSS_SIZE_TARGET) / 1024 )) KiB target" \
	  || echo "cross: dynamic demo $$size bytes MISSES the $$(( $(CROSS_SIZE_TARGET) / 1024 )) KiB target"
	@if [ -n "$(CROSS_SWIFT_SDK)" ]; then \
	  echo "cross: full Swift with SDK $(CROSS_SWIFT_SDK)"; \
	  $(SWIFT) build -c release --swift-sdk $(CROSS_SWIFT_SDK) --scratch-path $(CROSS_DIR)/swiftpm \
	    --product RingletDemo && \
	  $(SWIFT) build -c release --swift-sdk $(CROSS_SWIFT_SDK) --scratch-path $(CROSS_DIR)/swiftpm \
	    --product RingletChecks || exit 1; \
	else echo "cross: no Swift SDK for $(CROSS_ARCH) installed (swift sdk list): Embedded route only"; fi

# Rebuilt when a source file or this Makefile changes, so `make sim-all` builds each target once.
$(CROSS_DIR)/built: $(CROSS_SOURCES) Makefile Boards/static-order.sh Boards/traced-order.sh Boards/no-unwind-tables.ld \
  Boards/start-code-first.ld
	@test -n "$(CROSS_TARGET)" || { echo "cross: $(BOARD_PROFILE) has no crossTarget"; exit 1; }
	@command -v $(CROSS_CC) >/dev/null || { echo "cross: $(CROSS_CC) missing (make deps-cross)"; exit 1; }
	@rm -f $@ && mkdir -p $(CROSS_DIR)/include $(CROSS_DIR)/obj
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
	@# Swift gives closure contexts' destroy functions and a few thunks private linkage, so
	@# they have no symbol: the static layout (Boards/traced-order.sh) could not name them,
	@# and lld put the ones that run among the code that never does. Internal linkage is as
	@# local and keeps a name.
	sed -i 's/^define private /define internal /' $(CROSS_DIR)/obj/*.ll
	for m in Ringlet RingletChecks RingletDemo; do \
	  $(CROSS_CLANG) --target=$(CROSS_TARGET) $(CROSS_LTO) -Wno-override-module \
	    -c $(CROSS_DIR)/obj/$$m.ll -o $(CROSS_DIR)/obj/$$m.o || exit 1; done
	@if [ -n "$(CROSS_CONCURRENCY_LIB)" ]; then set -e; mkdir -p $(CROSS_DIR)/obj/async; \
	  echo "cross: the checks once more for $(CROSS_TARGET), with Embedded Swift's Concurrency"; \
	  swiftc $(CROSS_ASYNC_FLAGS) -parse-as-library -I $(CROSS_DIR)/include -module-name Ringlet \
	    -emit-module -emit-module-path $(CROSS_DIR)/obj/async/Ringlet.swiftmodule \
	    -emit-ir $$(find Sources/Ringlet -name '*.swift' | sort) -o $(CROSS_DIR)/obj/async/Ringlet.ll; \
	  swiftc $(CROSS_ASYNC_FLAGS) -I $(CROSS_DIR)/include -I $(CROSS_DIR)/obj/async -module-name RingletChecks \
	    -emit-ir $$(find Sources/RingletChecks -name '*.swift' | sort) -o $(CROSS_DIR)/obj/async/RingletChecks.ll; \
	  for m in Ringlet RingletChecks; do \
	    $(CROSS_CLANG) --target=$(CROSS_TARGET) $(CROSS_LTO) -Wno-override-module \
	      -c $(CROSS_DIR)/obj/async/$$m.ll -o $(CROSS_DIR)/obj/async/$$m.o; done; fi
	rm -f $(CROSS_DIR)/obj/c-*.o
	for c in Sources/CRinglet/*.c; do \
	  $(CROSS_C) -g -D_GNU_SOURCE -I $(CROSS_DIR)/include \
	    -c $$c -o $(CROSS_DIR)/obj/c-$$(basename $$c .c).o || exit 1; done
	$(CROSS_C) -D_GNU_SOURCE -I $(CROSS_DIR)/include \
	  -c Sources/CRingletTestSupport/ringlet_test_support.c -o $(CROSS_DIR)/obj/t-test-support.o
	@# The demo starts the runtime itself: linked with ringlet_first_use.c's explicit-start
	@# variant, it carries no board selection (the BoardProfiles article, "What a program carries").
	$(CROSS_C) -DRINGLET_EXPLICIT_START -I $(CROSS_DIR)/include \
	  -c Sources/CRinglet/ringlet_first_use.c -o $(CROSS_DIR)/obj/x-explicit-start.o
	@# The static-pie programs' layout, in two steps. First the C library's members that
	@# can run, the ones only its error paths reach in a block that is never read, so that
	@# it stays on disk (Boards/static-order.sh: about 160 kB less idle RSS for the static
	@# demo). Then, in front, the functions the demo linked so runs, traced under qemu-user
	@# (Boards/traced-order.sh), so that the code it runs lies in one block of its own.
	Boards/static-order.sh $(CROSS_GNU)- $$($(CROSS_CC) -print-file-name=libc.a) $$($(CROSS_CC) -print-file-name=libgcc.a) \
	  $$($(CROSS_CC) -print-file-name=libgcc_eh.a) /usr/lib/$(CROSS_GNU)/liburing.a > $(CROSS_DIR)/obj/library-order.txt
	$(CROSS_CC) -static-pie $(call cross_order,$(CROSS_DIR)/obj/library-order.txt) $(CROSS_LINK) \
	  -o $(CROSS_DIR)/obj/RingletDemo-untraced $(CROSS_DIR)/obj/Ringlet.o $(CROSS_DIR)/obj/RingletDemo.o \
	  $(CROSS_DIR)/obj/c-*.o $(CROSS_DIR)/obj/x-explicit-start.o $(CROSS_LIBS)
	Boards/traced-order.sh qemu-$(CROSS_ARCH) $(CROSS_TRACE_CPU) $(CROSS_GNU)-nm $(CROSS_DIR)/obj/RingletDemo-untraced \
	  > $(CROSS_DIR)/obj/traced-order.txt
	awk '!seen[$$0]++' $(CROSS_DIR)/obj/traced-order.txt $(CROSS_DIR)/obj/library-order.txt > $(CROSS_DIR)/obj/static-order.txt
	@# Dynamic (glibc shared, liburing static: boards need not have liburing2) and
	@# static-pie (for the emulated board's initramfs); each also kept unstripped.
	for m in RingletChecks RingletDemo; do \
	  for kind in dynamic static-pie; do \
	    out=$(CROSS_DIR)/$$m-$$kind; flag=; [ $$kind = static-pie ] && flag="-static-pie $(CROSS_STATIC_ORDER) $(CROSS_START_FIRST)"; \
	    swift=$(CROSS_DIR)/obj; extra=; \
	    [ $$m = RingletChecks ] && [ -n "$(CROSS_CONCURRENCY_LIB)" ] && swift=$(CROSS_DIR)/obj/async && extra="$(CROSS_ASYNC_LIBS)"; \
	    [ $$kind = static-pie ] && [ -z "$$extra" ] && flag="$$flag $(CROSS_NO_UNWIND)"; \
	    $(CROSS_CC) $$flag $(CROSS_LINK) -o $$out.unstripped \
	      $$swift/Ringlet.o $$swift/$$m.o $(CROSS_DIR)/obj/c-*.o \
	      $$([ $$m = RingletChecks ] && echo $(CROSS_DIR)/obj/t-test-support.o $$extra) \
	      $$([ $$m = RingletDemo ] && echo $(CROSS_DIR)/obj/x-explicit-start.o) $(CROSS_LIBS) || exit 1; \
	    $(CROSS_STRIP) -o $$out $$out.unstripped || exit 1; done; done
	@# The check that the explicit start did leave selection out, and that the demo, which
	@# names no trace file and no dump signal, carries neither (Runtime/OptionalParts.swift).
	@if $(CROSS_GNU)-nm $(CROSS_DIR)/RingletDemo-dynamic.unstripped | grep -q 'BoardSelection\|BoardProfileParser'; then \
	  echo "cross: FAILED: the demo still carries board selection (see Sources/CRinglet/ringlet_first_use.c)"; exit 1; fi
	@if $(CROSS_GNU)-nm $(CROSS_DIR)/RingletDemo-dynamic.unstripped | grep -q 'TraceJSON\|dumpSections\|watchDumpSignal'; then \
	  echo "cross: FAILED: the demo still carries the trace writer or the dump (see Sources/Ringlet/Runtime/OptionalParts.swift)"; exit 1; fi
	@touch $@

# Where the bytes of the cross-built demo go, by symbol group (Boards/size-table.sh).
sizes: cross
	@Boards/size-table.sh $(CROSS_DIR)/RingletDemo-dynamic.unstripped $(CROSS_DIR)/RingletDemo-dynamic \
	  $(CROSS_DIR)/RingletDemo-static-pie.unstripped $(CROSS_DIR)/RingletDemo-static-pie

# The emulated board: Debian's kernel for the board (the profile's qemuKernel, a Debian
# package; SIM_KERNEL=<package> overrides it) and an initramfs whose /init
# (Boards/sim-init.c) runs the static-pie checks, then the demo twice (static-pie and
# dynamic), then the checks and the static-pie demo again on the epoll backend
# (RINGLET_BACKEND=epoll, as where io_uring is refused), then powers off. A big.LITTLE
# profile (unequal coreCapacities) boots with a device tree dumped from qemu whose cpu
# nodes carry those capacities as capacity-dmips-mhz, so that the kernel reports them in
# cpu_capacity and the runtime detects the board itself; generic is detected too; every
# other board is named with RINGLET_BOARD. The checks are told which board to expect.
# Fails when the checks' summary line is missing or reports a failure, or a program exits
# non-zero.
# Downloads are cached in .cache/sim (ignored), one folder per kernel package.
SIM_DIR       := .cache/sim
SIM_TIMEOUT   ?= 900
SIM_MACHINE   := $(call or_default,$(call profile_value,qemuMachine),$(if $(filter x86_64,$(CROSS_ARCH)),q35,virt))
SIM_CPU       := $(call or_default,$(call profile_value,qemuCPU),max)
SIM_CORES     := $(call or_default,$(call profile_value,cores),$(shell nproc))
SIM_MEMORY    := $(call or_default,$(call profile_value,qemuMemory),1G)
SIM_KERNEL    ?= $(call or_default,$(call profile_value,qemuKernel),linux-image-$(DEB_ARCH))
SIM_CAPACITIES := $(call or_default,$(call profile_value,coreCapacities),)
comma         := ,
SIM_BIG_LITTLE := $(if $(word 2,$(sort $(subst $(comma), ,$(SIM_CAPACITIES)))),yes)
SIM_DETECTED  := $(or $(SIM_BIG_LITTLE),$(filter generic,$(BOARD)))
# SIM_FAULT_AROUND=4096: the kernel maps only the page that faulted instead of the 64 KiB
# around it, so the resident pages /init reports for the demo are the ones it touched (for
# the layout of Boards/static-order.sh; the RSS is then not the board's).
SIM_ENV       := $(if $(SIM_DETECTED),,RINGLET_BOARD=$(BOARD)) RINGLET_EXPECT_BOARD=$(BOARD) \
  $(if $(SIM_FAULT_AROUND),SIM_FAULT_AROUND=$(SIM_FAULT_AROUND))
SIM_QEMU      := qemu-system-$(CROSS_ARCH)
SIM_CONSOLE   := $(if $(filter x86_64,$(CROSS_ARCH)),ttyS0,ttyAMA0)
SIM_RUN       := .build-cross/sim/$(BOARD)/$(SIM_KERNEL)
SIM_LOG       := $(SIM_RUN)/sim.log
SIM_SHAPE     := -M $(SIM_MACHINE) -cpu $(SIM_CPU) -smp $(SIM_CORES) -m $(SIM_MEMORY)

sim: cross
	@test -n "$(SIM_MACHINE)" -a -n "$(SIM_CPU)" -a -n "$(SIM_CORES)" -a -n "$(SIM_MEMORY)" -a -n "$(SIM_KERNEL)" || { \
	  echo "sim: $(BOARD_PROFILE) needs qemuMachine, qemuCPU, cores, qemuMemory and qemuKernel"; exit 1; }
	@rm -rf $(SIM_RUN) && mkdir -p $(SIM_DIR) $(SIM_RUN)
	@# The profile names a package or a meta-package (linux-image-arm64), which names the one to fetch.
	@pkg=$$(apt-cache depends $(SIM_KERNEL):$(DEB_ARCH) 2>/dev/null \
	  | awk '/^ *Depends: linux-image-/ { sub(/:.*/, "", $$2); print $$2; exit }'); pkg=$${pkg:-$(SIM_KERNEL)}; \
	apt-cache show $$pkg:$(DEB_ARCH) >/dev/null 2>&1 || { \
	  echo "sim: apt-cache knows no $$pkg:$(DEB_ARCH) (qemuKernel of $(BOARD_PROFILE); make deps-cross, apt-get update)"; exit 1; }; \
	if [ ! -f $(SIM_DIR)/$$pkg/vmlinuz ]; then echo "sim: fetching $$pkg"; \
	  rm -rf $(SIM_DIR)/$$pkg.tmp && mkdir -p $(SIM_DIR)/$$pkg.tmp && \
	  (cd $(SIM_DIR)/$$pkg.tmp && apt-get download -q $$pkg:$(DEB_ARCH) 2>&1 | grep -v -e '^W: Download is performed unsandboxed' -e '^Get:' -e '^Fetched' ; \
	   dpkg-deb --fsys-tarfile *.deb | tar -x --wildcards './boot/vmlinuz-*' './boot/config-*' && \
	   mv boot/vmlinuz-* vmlinuz && mv boot/config-* config && rm -rf boot *.deb) && \
	  mv $(SIM_DIR)/$$pkg.tmp $(SIM_DIR)/$$pkg || exit 1; fi; \
	echo $$pkg > $(SIM_RUN)/kernel-package
	@if [ -n "$(SIM_BIG_LITTLE)" ]; then \
	  $(SIM_QEMU) $(SIM_SHAPE) -machine dumpdtb=$(SIM_RUN)/board.dtb -nographic -nic none >/dev/null 2>&1 </dev/null; \
	  test -s $(SIM_RUN)/board.dtb || { echo "sim: $(SIM_QEMU) did not dump its device tree"; exit 1; }; \
	  cpu=0; for capacity in $(subst $(comma), ,$(SIM_CAPACITIES)); do \
	    fdtput -t i $(SIM_RUN)/board.dtb /cpus/cpu@$$cpu capacity-dmips-mhz $$capacity || exit 1; cpu=$$((cpu + 1)); done; \
	  echo "sim: device tree with capacity-dmips-mhz $(SIM_CAPACITIES) on its cpu nodes: $(SIM_RUN)/board.dtb"; fi
	mkdir -p $(SIM_RUN)/initramfs/proc $(SIM_RUN)/initramfs/sys $(SIM_RUN)/initramfs/dev $(SIM_RUN)/initramfs/lib
	$(CROSS_CC) -static -Os -Wall -o $(SIM_RUN)/initramfs/init Boards/sim-init.c
	$(CROSS_STRIP) $(SIM_RUN)/initramfs/init
	cp $(CROSS_DIR)/RingletChecks-static-pie $(SIM_RUN)/initramfs/ringlet-checks
	cp $(CROSS_DIR)/RingletDemo-static-pie $(SIM_RUN)/initramfs/ringlet-demo
	@# The dynamic demo runs too, on the target's glibc (the board's, Debian 12's 2.36),
	@# its loader at the path the binary names.
	cp $(CROSS_DIR)/RingletDemo-dynamic $(SIM_RUN)/initramfs/ringlet-demo-dynamic
	@loader=$$($(CROSS_GNU)-readelf -l $(CROSS_DIR)/RingletDemo-dynamic | sed -n 's/.*interpreter: \(.*\)]/\1/p'); \
	mkdir -p $(SIM_RUN)/initramfs$$(dirname $$loader) && \
	cp -L $$($(CROSS_CC) -print-file-name=$$(basename $$loader)) $(SIM_RUN)/initramfs$$loader && \
	cp -L $$($(CROSS_CC) -print-file-name=libc.so.6) $(SIM_RUN)/initramfs$$(dirname $$loader)/ && \
	cp -L $$($(CROSS_CC) -print-file-name=libc.so.6) $(SIM_RUN)/initramfs/lib/
	cd $(SIM_RUN)/initramfs && find . | sort | cpio -o -H newc -R 0:0 --quiet | gzip -1 > ../initramfs.gz
	@echo "sim: booting $(BOARD): $(SIM_QEMU) $(SIM_SHAPE), kernel $$(cat $(SIM_RUN)/kernel-package)$(if $(SIM_BIG_LITTLE), with $(SIM_RUN)/board.dtb)"
	@start=$$(date +%s); \
	timeout $(SIM_TIMEOUT) $(SIM_QEMU) $(SIM_SHAPE) -kernel $(SIM_DIR)/$$(cat $(SIM_RUN)/kernel-package)/vmlinuz \
	  $(if $(SIM_BIG_LITTLE),-dtb $(SIM_RUN)/board.dtb) -initrd $(SIM_RUN)/initramfs.gz -nographic -nic none -no-reboot \
	  -append "console=$(SIM_CONSOLE) quiet panic=-1 $(SIM_ENV)" < /dev/null | tr -d '\r' | tee $(SIM_LOG); \
	echo $$(( $$(date +%s) - start )) > $(SIM_RUN)/seconds; \
	echo "sim: $(BOARD) booted, ran and powered off in $$(cat $(SIM_RUN)/seconds) s (log: $(SIM_LOG))"
	@Boards/sim-summary.sh $(BOARD) $(SIM_RUN) $(CROSS_DIR) "$(SIM_CPU) ×$(SIM_CORES), $(SIM_MEMORY)" > $(SIM_RUN)/summary
	@grep -Eq '^[0-9]+ passed, 0 failed$$' $(SIM_LOG) || { echo "sim: FAILED: no '<n> passed, 0 failed' line"; exit 1; }
	@grep -q '^sim: ringlet-checks exited with status 0$$' $(SIM_LOG) || { echo "sim: FAILED: ringlet-checks"; exit 1; }
	@grep -q '^sim: ringlet-demo exited with status 0$$' $(SIM_LOG) || { echo "sim: FAILED: ringlet-demo"; exit 1; }
	@grep -q '^sim: ringlet-demo-dynamic exited with status 0$$' $(SIM_LOG) || { echo "sim: FAILED: ringlet-demo-dynamic"; exit 1; }
	@grep -q '^sim: ringlet-checks on epoll exited with status 0$$' $(SIM_LOG) || { echo "sim: FAILED: ringlet-checks on epoll"; exit 1; }
	@grep -q '^sim: ringlet-demo on epoll exited with status 0$$' $(SIM_LOG) || { echo "sim: FAILED: ringlet-demo on epoll"; exit 1; }
	@echo "sim: $(BOARD) passed: $$(grep -m1 -E '^[0-9]+ passed' $(SIM_LOG)) (and on epoll); $$(grep '^sim: ringlet-demo peak' $(SIM_LOG) | cut -c6-)"

# Every profile of Boards/ on its emulated machine, then the runs in SIM_ALL_EXTRA
# (board:kernel package: the PREEMPT_RT kernel), one table at the end. Each target is
# built once; a failing board is reported in the table and the run goes on to the next.
SIM_ALL_BOARDS ?= $(sort $(basename $(notdir $(wildcard Boards/*.profile))))
SIM_ALL_EXTRA  ?= raspberry-pi-4:linux-image-rt-arm64
sim-all:
	@rm -f .build-cross/sim/all.txt; mkdir -p .build-cross/sim; \
	for run in $(SIM_ALL_BOARDS) $(SIM_ALL_EXTRA); do \
	  board=$${run%%:*}; kernel=$${run#*:}; [ "$$kernel" = "$$run" ] && kernel=; \
	  $(MAKE) --no-print-directory sim BOARD=$$board $${kernel:+SIM_KERNEL=$$kernel} || failed="$$failed $$run"; \
	  dir=$$(ls -td .build-cross/sim/$$board/*/ 2>/dev/null | head -1); \
	  if [ -f "$$dir/summary" ]; then cat $$dir/summary >> .build-cross/sim/all.txt; \
	  else echo "| $$board | $${kernel:-the profile's kernel} | did not boot (see above) | | | | | |" >> .build-cross/sim/all.txt; fi; \
	done; \
	echo; echo "sim-all: every board on its emulated machine (qemu $$(qemu-system-aarch64 --version | awk 'NR == 1 { print $$4 }') TCG):"; \
	Boards/sim-summary.sh --header; cat .build-cross/sim/all.txt; \
	if [ -n "$$failed" ]; then echo "sim-all: FAILED:$$failed"; exit 1; fi

# Then the I/O, timer and idle rows again with Ringlet on its epoll backend (where
# io_uring is refused, a container).
EPOLL_BENCH_ROWS := idle-wakeups,timers,timers-window,timers-cpu,strict-lateness,io-seq-read,io-random-read,io-pipe,io-threads
bench: deps
	$(SWIFT) build $(TRAITS) -c release --product ringlet
	$(SWIFT) build $(TRAITS) -c release --product RingletAsyncMainBench
	$$($(SWIFT) build $(TRAITS) -c release --show-bin-path)/ringlet bench
	$$($(SWIFT) build $(TRAITS) -c release --show-bin-path)/ringlet bench --backend epoll --only $(EPOLL_BENCH_ROWS)

# The sensor logger over minutes on four sides (`ringlet bench-energy`, issue 35):
# ENERGY_SECONDS per side (default 60), CHART=file.svg to draw them.
bench-energy: deps
	$(SWIFT) build $(TRAITS) -c release --product ringlet
	$$($(SWIFT) build $(TRAITS) -c release --show-bin-path)/ringlet bench-energy $(if $(ENERGY_SECONDS),--seconds $(ENERGY_SECONDS)) \
	  $(if $(CHART),--chart $(CHART))

# The hello example and the HTTP benchmark: built with the package's Hummingbird trait in a
# build folder of their own (another set of traits would rebuild .build), release, as a
# board runs them. Not part of `make test` (Hummingbird's build would take most of its
# budget); serve-check is the test that fetches a page from the example.
SERVE_BUILD := $(SWIFT) build -c release --traits Hummingbird --scratch-path .build-serve
PORT ?= 8080
serve: serve-check
	$$($(SERVE_BUILD) --show-bin-path)/RingletHello --port $(PORT)

serve-check: deps
	$(SERVE_BUILD) --product RingletHello
	@bash -c 'bin=$$($(SERVE_BUILD) --show-bin-path); out=$$(mktemp); \
	  "$$bin/RingletHello" --port 0 > "$$out" & pid=$$!; trap "kill $$pid 2>/dev/null; rm -f $$out" EXIT; \
	  for i in $$(seq 300); do grep -q serving "$$out" && break; kill -0 $$pid 2>/dev/null || break; sleep 0.1; done; \
	  port=$$(grep -o "127.0.0.1:[0-9]*" "$$out" | head -1 | cut -d: -f2); \
	  [ -n "$$port" ] || { echo "serve-check: RingletHello did not say it was serving within 30 s:"; cat "$$out"; exit 1; }; \
	  fetch() { exec 3<>/dev/tcp/127.0.0.1/$$port && printf "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" "$$1" >&3 \
	    && timeout 10 cat <&3; exec 3<&-; }; \
	  page=$$(fetch /); json=$$(fetch /json); qos=$$(fetch /qos); \
	  case "$$page" in "HTTP/1.1 200 OK"*"Hello from the ring"*) ;; *) echo "serve-check: GET / answered: $$page"; exit 1;; esac; \
	  case "$$json" in "HTTP/1.1 200 OK"*"application/json"*"\"readings\""*) ;; *) echo "serve-check: GET /json answered: $$json"; exit 1;; esac; \
	  case "$$qos" in *"handler userInitiated, task TaskPriority.high, spawned userInitiated"*) ;; \
	    *) echo "serve-check: GET /qos answered (a request must run at the loops QoS): $$qos"; exit 1;; esac; \
	  echo "serve-check: RingletHello answered GET /, /json and /qos (user-initiated) on 127.0.0.1:$$port"'

HTTP_SECONDS ?= 10
bench-http: serve-check
	@command -v wrk >/dev/null || { echo "installing wrk"; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq wrk >/dev/null; }
	$(SERVE_BUILD) --product NIOHelloBench
	$(SERVE_BUILD) --product HTTPBenchDriver
	$$($(SERVE_BUILD) --show-bin-path)/HTTPBenchDriver --bin $$($(SERVE_BUILD) --show-bin-path) --seconds $(HTTP_SECONDS)

# A background service and an urgent client, two processes (the Services article): each
# run sends SERVICE_REQUESTS requests (1000); a loaded run stops after SERVICE_SECONDS (20).
# Without CAP_SYS_NICE (setpriv drops it when root), as on a board.
SERVICE_REQUESTS ?= 1000
SERVICE_SECONDS  ?= 20
WITHOUT_SYS_NICE := $(shell [ "$$(id -u)" = 0 ] && command -v setpriv >/dev/null && echo setpriv --bounding-set=-sys_nice)
bench-service: deps
	$(SWIFT) build $(TRAITS) -c release --product RingletServiceBench
	$(SWIFT) build $(TRAITS) -c release --product DispatchServiceBench
	$(WITHOUT_SYS_NICE) $$($(SWIFT) build $(TRAITS) -c release --show-bin-path)/DispatchServiceBench run $(SERVICE_REQUESTS) $(SERVICE_SECONDS)

# How cost grows with the load (`ringlet bench --scale`), both runtimes; redraws the
# chart the README shows.
SCALE_CHART := Sources/Ringlet/Ringlet.docc/Resources/bench-scale.svg
bench-scale: deps
	$(SWIFT) build $(TRAITS) -c release --product ringlet
	mkdir -p $(dir $(SCALE_CHART))
	$$($(SWIFT) build $(TRAITS) -c release --show-bin-path)/ringlet bench --scale --chart $(SCALE_CHART)

# The DocC catalog and the public API, built by swift-docc-plugin; warnings (a broken link,
# a symbol that does not exist) fail the build. Open .build/docs/index.html through a web
# server, or `swift package preview-documentation --target Ringlet`.
docs: deps
	sh Tests/Docs/check-names.sh
	$(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation --target Ringlet \
	  --output-path .build/docs --transform-for-static-hosting --warnings-as-errors
	@echo "docs: .build/docs"

clean:
	rm -rf .build .build-tsan .build-asan $(EMBEDDED_DIR) .build-cross
