# The two commands a newcomer needs: `make run` and `make test`.
# Both install what is missing (scripts/bootstrap) before building.
# `make dist`: dist/faultline for any GPU node (only glibc >= 2.31 needed),
# a tarball and a .deb (scripts/dist; root and debootstrap); `make dist-check`
# runs them in the old release's bare chroot. `make install PREFIX=...`.
JOBS ?= $(shell nproc)
BUILD_DIR ?= build
TEST_DIR ?= build-test
EXAMPLE ?= examples/seed-vllm-dp-rank/vllm.log
PREFIX ?= /usr/local

.PHONY: all bootstrap build run test bench clean format install dist dist-check

all: build

bootstrap:
	@scripts/bootstrap

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: bootstrap $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS) --target faultline

run: build
	./$(BUILD_DIR)/faultline triage $(EXAMPLE) || test $$? -eq 1

$(TEST_DIR)/build.ninja:
	cmake -S . -B $(TEST_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFAULTLINE_SANITIZE=ON -DFAULTLINE_TESTS=ON

test: bootstrap $(TEST_DIR)/build.ninja
	cmake --build $(TEST_DIR) -j $(JOBS)
	cd $(TEST_DIR) && ctest --output-on-failure -j $(JOBS)

install: build
	cmake --build $(BUILD_DIR) -j $(JOBS) --target faultline_docs
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

dist:
	scripts/dist

dist-check:
	scripts/dist-check

bench: build
	cmake --build $(BUILD_DIR) -j $(JOBS)
	bench/run_all.sh $(BUILD_DIR)

format:
	find src bench -name '*.cc' -o -name '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(TEST_DIR) build-dist dist

# libFuzzer harnesses (fuzz/): clang + ASan/UBSan in build-fuzz, each run
# FUZZ_SECONDS on seeds from the tests; findings in build-fuzz/findings/.
FUZZ_SECONDS ?= 600
.PHONY: fuzz fuzz-smoke
fuzz: bootstrap
	fuzz/run.sh $(FUZZ_SECONDS)

# CI (.ci/run, after `make test`): every harness FUZZ_SMOKE_SECONDS on its
# seeds, so a regression that any seed or a short fuzz reaches fails the build.
FUZZ_SMOKE_SECONDS ?= 30
fuzz-smoke: bootstrap
	FUZZ_JOBS=$(JOBS) FUZZ_PARALLEL=$(JOBS) fuzz/run.sh $(FUZZ_SMOKE_SECONDS)
