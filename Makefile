# fencebench: `make run` runs the main job, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
MINIO_MODULE := github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c
CACHE_BIN := $(CURDIR)/.cache/bin
MINIO := $(CACHE_BIN)/minio
export FENCEBENCH_MINIO_BIN ?= $(MINIO)

.PHONY: run smoke test minio images lint bench

# The main job: the whole catalogue with the kill matrix against an embedded MinIO. The report
# is written under results/<run-id>/ and its path printed at the end.
run: minio
	$(GO) run ./cmd/fencebench run --matrix

smoke: minio
	$(GO) run ./cmd/fencebench smoke

test: minio
	$(GO) test -race -count=1 -timeout 60m ./...

# MinIO is AGPL: it is built as a separate binary and only ever run as a process.
minio: $(MINIO)

$(MINIO):
	@mkdir -p $(CACHE_BIN)
	@echo "building MinIO ($(MINIO_MODULE)) into .cache/bin; the first build takes a few minutes"
	CGO_ENABLED=0 GOBIN=$(CACHE_BIN) $(GO) install $(MINIO_MODULE)

# FROM scratch images of the static MinIO and toxiproxy-server binaries, for the containers
# stack and compose/docker-compose.yml where no registry is reachable.
STATIC := $(CURDIR)/.cache/static
TOXIPROXY := $(STATIC)/toxiproxy

images: minio $(TOXIPROXY)
	$(GO) run ./compose/mkimages || { echo "no static MinIO: building one into $(STATIC)"; \
		CGO_ENABLED=0 GOBIN=$(STATIC) $(GO) install $(MINIO_MODULE) && $(GO) run ./compose/mkimages; }

$(TOXIPROXY):
	@mkdir -p $(STATIC)
	CGO_ENABLED=0 $(GO) build -o $(TOXIPROXY) github.com/Shopify/toxiproxy/v2/cmd/server

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

bench: minio
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Several stores side by side: builds versitygw into .cache/stores, then certifies the pinned
# MinIO, versitygw's posix backend and a check-then-act front over the MinIO from one stores
# file, with ROUNDS rounds; the comparison page is written under results/compare-stores/.
VERSITYGW_MODULE := github.com/versity/versitygw/cmd/versitygw@v1.8.0
STORES_BIN := $(CURDIR)/.cache/stores
VERSITYGW := $(STORES_BIN)/versitygw
ROUNDS ?= 3

.PHONY: compare-stores

compare-stores: minio $(VERSITYGW)
	@mkdir -p $(CURDIR)/results/compare-stores
	FENCEBENCH_VERSITYGW_BIN=$(VERSITYGW) FENCEBENCH_COMPARE_ROUNDS=$(ROUNDS) \
		FENCEBENCH_COMPARE_OUT=$(CURDIR)/results/compare-stores \
		$(GO) test -count=1 -timeout 60m -v -run '^TestCompareStoresVersitygw$$' ./cmd/fencebench
	@ls -d $(CURDIR)/results/compare-stores/certify-*/compare.html

$(VERSITYGW):
	@mkdir -p $(STORES_BIN)
	CGO_ENABLED=0 GOBIN=$(STORES_BIN) $(GO) install $(VERSITYGW_MODULE)
