# SPDX-License-Identifier: BSD-3-Clause
# ctrack - thin driver around Meson/Ninja.  See README.md.
#
#   make            install missing Debian packages, build into build/
#   make run        build, then replay the bundled sample capture
#   make test       build, then run every test; prints "N passed, N failed"
#   make test SANITIZE=1   the same under AddressSanitizer + UBSan (build-asan/)
#   make test-tsan  the concurrency tests under ThreadSanitizer (build-tsan/)
#   make bench      the benchmark suite (not part of make test)
#   make fuzz       build the libFuzzer targets and run each briefly
#   make soak       10 minutes of churn at the table maximum (SOAK_MINUTES=N)
#   make install    install library, headers, pkg-config file, tool, man page

SANITIZE ?= 0
PREFIX ?= /usr/local
FUZZ_SECONDS ?= 30
SOAK_MINUTES ?= 10

ifeq ($(SANITIZE),1)
BUILD := build-asan
MESON_EXTRA := -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug -Doptimization=1
else
BUILD := build
MESON_EXTRA :=
endif

.PHONY: all deps build run test test-tsan test-all bench fuzz soak install clean sample

all: build

deps:
	@scripts/deps.sh build

build: deps
	@test -f $(BUILD)/build.ninja || meson setup $(BUILD) --prefix=$(PREFIX) $(MESON_EXTRA) >/dev/null
	@ninja -C $(BUILD) >/dev/null || ninja -C $(BUILD)

run: build
	$(BUILD)/tools/ctrack read --stats samples/sample.pcap

# A build/ configured by `make run` before the test packages were there
# has no tests (cmocka was not found): ask for them, which makes Meson look
# again (the README's two commands, in that order, on a fresh machine).
test:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory build SANITIZE=$(SANITIZE)
	@meson configure $(BUILD) -Dtests=enabled >/dev/null
	@ninja -C $(BUILD) >/dev/null || ninja -C $(BUILD)
	@scripts/run-tests.sh $(BUILD)

# Only the library and the concurrency tests are built under TSan (the
# ninja aliases 'concurrency-tests', and 'daemon-concurrency-tests' for the
# daemon's threads, tests/daemon/); tests/concurrency/README.md explains
# the annotations and suppressions.  CT_STRESS_MS=N runs each case longer.
test-tsan:
	@scripts/deps.sh test
	@test -f build-tsan/build.ninja || meson setup build-tsan -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug -Doptimization=1 >/dev/null
	@ninja -C build-tsan concurrency-tests daemon-concurrency-tests >/dev/null || ninja -C build-tsan concurrency-tests daemon-concurrency-tests
	@scripts/run-tests.sh build-tsan --suite concurrency --no-rebuild

bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory build
	@scripts/bench.sh

fuzz:
	@scripts/deps.sh fuzz
	@test -f build-fuzz/build.ninja || CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=disabled -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug -Doptimization=1 >/dev/null
	@ninja -C build-fuzz >/dev/null || ninja -C build-fuzz
	@scripts/run-fuzz.sh build-fuzz $(FUZZ_SECONDS)

soak:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory build SANITIZE=$(SANITIZE)
	$(BUILD)/tests/soak/ctrack-soak --minutes $(SOAK_MINUTES)

install: build
	meson install -C $(BUILD)

clean:
	rm -rf build build-asan build-tsan build-fuzz
