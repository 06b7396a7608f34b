# Ringlet — build, test and measure. `make run` and `make test` install what they need.
#
#   make deps       install liburing-dev (apt-get, sudo only when not root) if pkg-config lacks it
#   make build      debug build of every target
#   make run        build and run the main job: `ringlet demo`
#   make test       unit + integration tests, ThreadSanitizer pass, Embedded Swift build and checks
#   make tsan       the scheduler, queue and work tests under ThreadSanitizer
#   make embedded   compile Ringlet in Embedded Swift mode, link the checks program, run it
#   make bench      release build, Ringlet vs the toolchain's Dispatch (prints a table)

SWIFT        ?= swift
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
EMBEDDED_DIR := .build-embedded
EMBEDDED_TARGET ?= x86_64-unknown-linux-gnu
EMBEDDED_FLAGS := -target $(EMBEDDED_TARGET) -enable-experimental-feature Embedded -wmo -Osize
TSAN_SUITES  := SerialQueueTests|ConcurrentQueueTests|TargetQueueTests|SuspendResumeTests|WorkItemTests|GroupTests|SemaphoreTests|ReserveTests|StressTests|QoSPropagationTests|AsyncAfterTests|RingTests|SmokeTests|TimerSourceTests|UserDataSourceTests|DescriptorSourceTests|KernelSourceTests|SourceFaultTests|SourceRegressionTests|RequestStackTests|DispatchIOTests|DispatchIOBehaviourTests|IOBoundsTests|IOFaultTests|DispatchDataTests|BoardPlacementTests|SourceCapacityTests

.PHONY: deps build run test unit tsan embedded bench clean

deps:
	@command -v pkg-config >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq pkg-config; }
	@pkg-config --exists liburing || { echo "installing liburing-dev"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq liburing-dev; }
	@pkg-config --exists liburing && echo "deps: liburing $$(pkg-config --modversion liburing)"

build: deps
	$(SWIFT) build

run: deps
	$(SWIFT) build --product ringlet
	$$($(SWIFT) build --show-bin-path)/ringlet demo

test: unit tsan embedded

unit: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

tsan: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan \
	  --filter '$(TSAN_SUITES)'

# Embedded Swift: the whole Ringlet target as one module, then the checks program
# (Sources/RingletChecks) against it, linked with the C target by clang.
embedded: deps
	@mkdir -p $(EMBEDDED_DIR)/include $(EMBEDDED_DIR)/obj
	cp Sources/CRinglet/include/ringlet.h $(EMBEDDED_DIR)/include/
	printf 'module CRinglet {\n  header "ringlet.h"\n  export *\n}\n' > $(EMBEDDED_DIR)/include/module.modulemap
	swiftc $(EMBEDDED_FLAGS) -parse-as-library -I $(EMBEDDED_DIR)/include -module-name Ringlet \
	  -emit-module -emit-module-path $(EMBEDDED_DIR)/obj/Ringlet.swiftmodule \
	  -c $$(find Sources/Ringlet -name '*.swift' | sort) -o $(EMBEDDED_DIR)/obj/Ringlet.o
	swiftc $(EMBEDDED_FLAGS) -I $(EMBEDDED_DIR)/include -I $(EMBEDDED_DIR)/obj -module-name RingletChecks \
	  -c $$(find Sources/RingletChecks -name '*.swift' | sort) -o $(EMBEDDED_DIR)/obj/RingletChecks.o
	for c in Sources/CRinglet/*.c; do \
	  clang -O2 -D_GNU_SOURCE $$(pkg-config --cflags liburing) -I Sources/CRinglet/include \
	    -c $$c -o $(EMBEDDED_DIR)/obj/$$(basename $$c .c).o || exit 1; done
	clang $(EMBEDDED_DIR)/obj/*.o $$(pkg-config --libs liburing) -lpthread -o $(EMBEDDED_DIR)/ringlet-checks
	@echo "embedded: ringlet-checks is $$(stat -c %s $(EMBEDDED_DIR)/ringlet-checks) bytes"
	$(EMBEDDED_DIR)/ringlet-checks

bench: deps
	$(SWIFT) build -c release --product ringlet
	$$($(SWIFT) build -c release --show-bin-path)/ringlet bench

clean:
	rm -rf .build .build-tsan $(EMBEDDED_DIR)
