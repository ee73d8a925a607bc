# e3fabric: the two commands a user needs are `make demo` and `make test`.
# Everything else here is what they are built from.
SHELL := /bin/bash
BUILD := $(CURDIR)/build
BIN := $(BUILD)/bin
export PATH := $(BIN):$(PATH)

.PHONY: all deps deps-bench build datapath control web lint test test-repeat \
        package demo demo-down bench bench-quick bench-bundle bench-failover bench-multihoming bench-migration bench-upgrade bench-controller clean

all: build

deps:
	@./scripts/deps.sh

deps-bench:
	@./scripts/deps.sh --bench

build: datapath control

datapath: deps
	@[ -f $(BUILD)/datapath/build.ninja ] || meson setup $(BUILD)/datapath datapath --buildtype=release
	@ninja -C $(BUILD)/datapath
	@mkdir -p $(BIN)
	@ln -sf $(BUILD)/datapath/e3-vswitchd $(BIN)/e3-vswitchd
	@[ ! -f $(BUILD)/datapath/pktgen/e3-pktgen ] || ln -sf $(BUILD)/datapath/pktgen/e3-pktgen $(BIN)/e3-pktgen
	@ln -sf $(CURDIR)/datapath/client/e3-dpctl $(BIN)/e3-dpctl

control: deps web
	@[ ! -f control/go.mod ] || (cd control && go build -o $(BIN)/ ./cmd/...)

# The fabric page's vendored cytoscape.js (control/internal/web).
web: deps
	@./scripts/web.sh

test: build
	@./scripts/test.sh

# The static checks alone (shellcheck, pyflakes, staticcheck); make test runs them first.
lint: deps
	@./scripts/lint.sh

# Unit and packet suites N times; names any test that failed even once.
test-repeat: build
	@./scripts/test-repeat.sh -n $(or $(N),20) -g $(or $(GO_N),3) -p $(or $(PKT_N),3) $(if $(BUSY),--busy)

# Debian packages in build/package (debhelper, packaging/debian; docs/deploy.md).
package: build
	@./scripts/package.sh

demo: build
	@./scripts/demo.sh up

demo-down:
	@./scripts/demo.sh down

bench: build deps-bench
	@./bench/run.sh

bench-quick: build deps-bench
	@./bench/run.sh --quick

# The benchmark as one archive for another server (bench/README.md).
bench-bundle: build deps-bench
	@./bench/bundle.sh

# Loss windows of single failures (docs/ha.md): writes bench/FAILOVER.md.
bench-failover: build
	@python3 bench/failover.py $(FAILOVER_ARGS)

# Restarts, drains and a rolling upgrade under traffic: writes bench/UPGRADE.md.
bench-upgrade: build
	@python3 bench/upgrade.py $(UPGRADE_ARGS)

bench-multihoming: build
	@python3 bench/multihoming.py $(MULTIHOMING_ARGS)

# A VM's E-LAN endpoint live-migrates to another leaf (bench/FAILOVER.md).
bench-migration: build
	@python3 bench/migration.py $(MIGRATION_ARGS)

# Controller and agent at scale (bench/controller/README.md): 10,000 on
# 4 x 32 with the embedded etcd, then 8 x 32 on an etcd cluster (SIZES).
bench-controller: build
	@cd control && go run ./cmd/e3-bench-controller --batch 1000
	@SIZES="$(or $(SIZES),10000 30000 45000)" ./bench/controller/scale.sh
	@cd control && go run ./cmd/e3-bench-agent --vswitchd $(BIN)/e3-vswitchd && \
	  go run ./cmd/e3-bench-agent --vswitchd $(BIN)/e3-vswitchd --role spine --services 50000

clean:
	rm -rf $(BUILD)
