# fencebench: `make run` runs the main job, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
MINIO_MODULE := github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c
CACHE_BIN := $(CURDIR)/.cache/bin
MINIO := $(CACHE_BIN)/minio
export FENCEBENCH_MINIO_BIN ?= $(MINIO)

.PHONY: run smoke test fuzz minio images lint bench

# The main job: the whole catalogue with the kill matrix against an embedded MinIO. The report
# is written under results/<run-id>/ and its path printed at the end.
run: minio
	$(GO) run ./cmd/fencebench run --matrix

smoke: minio
	$(GO) run ./cmd/fencebench smoke

test: minio
	$(GO) test -race -count=1 -timeout 60m ./...

# Each fuzz target of the decoders of untrusted input (scenario files, fence bodies and keys,
# history and ledger JSON Lines) for FUZZTIME, one after another; a crasher is saved under the
# package's testdata/fuzz/ and fails the target.
FUZZTIME ?= 15s
FUZZ_TARGETS := ./scenarios/:FuzzParse ./fence/:FuzzDecode ./fence/:FuzzParseKey \
	./history/:FuzzDecode ./history/:FuzzDecodeLedger

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz: $$fn in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) $$pkg; done

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
