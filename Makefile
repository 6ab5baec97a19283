# fencebench: `make run` runs the main job, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
MINIO_MODULE := github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c
CACHE_BIN := $(CURDIR)/.cache/bin
MINIO := $(CACHE_BIN)/minio
export FENCEBENCH_MINIO_BIN ?= $(MINIO)

.PHONY: run smoke test nightly fuzz minio pydeps images lint bench

# The main job: the whole catalogue with the kill matrix against an embedded MinIO. The report
# is written under results/<run-id>/ and its path printed at the end.
run: minio
	$(GO) run ./cmd/fencebench run --matrix

smoke: minio
	$(GO) run ./cmd/fencebench smoke

# Every test. The catalogue and its kill matrix run on the simulated stack and once on MinIO
# with the minio-go client (two cells at a time); `make nightly` adds the rest of the MinIO
# matrix.
# versitygw (a store the bench did not write, built into .cache/stores, about five minutes the
# first time) is certified by TestThirdPartyStoreCertified, which here fails rather than skips
# when it is missing.
test: minio pydeps versitygw
	FENCEBENCH_REQUIRE_STORES=1 $(GO) test -race -count=1 -timeout 60m ./...

# The Python adapter's tests (runner: TestSystemPython) need python3 with boto3: Debian's package.
pydeps:
	@python3 -c 'import boto3' 2>/dev/null || { echo "installing python3-boto3 (Debian) for the Python adapter's tests"; \
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update && \
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends python3-boto3; }

# The nightly job: the whole catalogue with its kill matrix on MinIO for both store clients
# (TestCatalogue with FENCEBENCH_NIGHTLY=1 adds the aws-sdk pass), and every catalogue cell as
# a subtest of its own on seed 1 (TestCatalogueCell). .ci/nightly runs it.
nightly: minio
	FENCEBENCH_NIGHTLY=1 $(GO) test -race -count=1 -timeout 120m -v -run '^(TestCatalogue|TestCatalogueCell)$$' ./runner

# Each fuzz target of the decoders of untrusted input (scenario files, fence bodies and keys,
# history and ledger JSON Lines) for FUZZTIME, one after another; a crasher is saved under the
# package's testdata/fuzz/ and fails the target. FUZZTIME counts executions (Nx) rather than
# seconds: with a duration, Go's fuzzing coordinator before Go 1.27 can report its own deadline
# as a failure ("context deadline exceeded", no crasher; golang/go#75804) on a loaded machine.
FUZZTIME ?= 300000x
FUZZ_TARGETS := ./scenarios/:FuzzParse ./scenarios/:FuzzMarshalRoundTrip ./fence/:FuzzDecode ./fence/:FuzzParseKey \
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

# Known MinIO bugs as reproduction targets, one per bug: each builds the affected release into
# .cache/known-bugs/<bug>/, shows the bench catching it there, and the pinned MinIO passing the
# same check. They are not part of `make test`; see docs/stores.md#known-store-bugs.
# MinIO's RELEASE.* tags are not semver: a release is named by the pseudo-version of its commit.
KNOWN_BUGS := $(CURDIR)/.cache/known-bugs
# RELEASE.2025-10-15T17-29-55Z (commit 9e49d5e), the last tag: it still has #21603, fixed by
# 18f97e7 on master only, which the pin (7aac2a2, 2026-02-12) includes.
MINIO_21603 := github.com/minio/minio@v0.0.0-20251015172955-9e49d5e7a648
RELEASE_21603 := RELEASE.2025-10-15T17-29-55Z
# RELEASE.2025-07-23T15-54-02Z (commit 7ced966): If-Match on a missing key creates the object
# (#21526), answered 404 from RELEASE.2025-09-07 (07c3a42) on. Certification refuses it by A5.
MINIO_21526 := github.com/minio/minio@v0.0.0-20250723155402-7ced9663e6a7
RELEASE_21526 := RELEASE.2025-07-23T15-54-02Z
FAILS_21526 := A5

.PHONY: known-bugs known-bug-21603 known-bug-21526

known-bugs: known-bug-21526 known-bug-21603

# `go install` of the affected release; where the module proxy does not serve it, MINIO_GIT
# (a clone of github.com/minio/minio) is checked out at the commit and built from source. A
# partial clone may lack some blobs: missing test data (*/testdata/*) is skipped, anything else
# missing fails the build.
$(KNOWN_BUGS)/%/minio:
	@mkdir -p $(@D)
	@mod='$(MINIO_$*)'; echo "building MinIO $$mod into $(@D); this takes minutes"; \
	CGO_ENABLED=0 GOBIN=$(@D) $(GO) install $$mod || { \
	  [ -n "$(MINIO_GIT)" ] || { echo "set MINIO_GIT to a clone of github.com/minio/minio to build from source"; exit 1; }; \
	  src=$$(mktemp -d) && commit=$${mod##*-} && export GIT_INDEX_FILE=$$src.idx && \
	  git --git-dir=$(MINIO_GIT) --work-tree=$$src read-tree $$commit && \
	  { git --git-dir=$(MINIO_GIT) --work-tree=$$src checkout-index -a -f 2>$$src.err || \
	    { sed 's/^/skipped: /' $$src.err; ! grep -v 'unable to read sha1 file of [^ ]*/testdata/' $$src.err; }; } && \
	  (cd $$src && CGO_ENABLED=0 $(GO) build -trimpath -o $(@D)/minio .) && rm -rf $$src $$src.idx $$src.err; }

# The same binaries named relative to the repository root.
.cache/known-bugs/%/minio: $(KNOWN_BUGS)/%/minio ;

# Conditions skipped when the read quorum is lost: the affected release must be caught by the
# read-quorum test (a conditional write succeeds where it cannot be checked); the pinned one
# must pass it.
known-bug-21603: minio $(KNOWN_BUGS)/21603/minio
	@out=$$(FENCEBENCH_MINIO_BIN=$(KNOWN_BUGS)/21603/minio $(GO) test -count=1 -v \
	  -run 'TestReadQuorumLostConditionalWritesFailClosed' ./compose/ 2>&1); echo "$$out" | grep -E '^\s+drives_test|^(--- |ok|FAIL)'; \
	  echo "$$out" | grep -q 'skipped the condition it could not check' || { echo "known-bug-21603: the affected release was NOT caught"; exit 1; }; \
	  echo "known-bug-21603: the affected release was caught"
	FENCEBENCH_MINIO_BIN=$(MINIO) $(GO) test -count=1 -v \
	  -run 'TestReadQuorumLostConditionalWritesFailClosed' ./compose/

# If-Match on a missing key creates the object: the run's pre-flight (A5) must refuse the
# affected release (exit 1) and pass the pinned one (exit 0).
known-bug-21526: minio $(KNOWN_BUGS)/21526/minio
	@out=$$(mktemp -d); FENCEBENCH_MINIO_BIN=$(KNOWN_BUGS)/21526/minio $(GO) run ./cmd/fencebench run --out $$out steady-state; \
	  code=$$?; rm -rf $$out; [ $$code -eq 1 ] || { echo "known-bug-21526: exit $$code on the affected release, want 1"; exit 1; }; \
	  echo "known-bug-21526: the affected release was refused"
	@out=$$(mktemp -d); FENCEBENCH_MINIO_BIN=$(MINIO) $(GO) run ./cmd/fencebench run --out $$out steady-state; \
	  code=$$?; rm -rf $$out; exit $$code

# Several stores side by side: builds versitygw, SeaweedFS and rclone into .cache/stores and
# another MinIO release (the known-bug build COMPARE_MINIO, default 21526; MINIO_GIT as above),
# then certifies the pinned MinIO, that release, the three third-party stores and a
# check-then-act front over the MinIO from one stores file that names each store's server, with
# ROUNDS rounds, runs the catalogue on each, and writes the comparison page under
# results/compare-stores/.
VERSITYGW_MODULE := github.com/versity/versitygw/cmd/versitygw@v1.8.0
STORES_BIN := $(CURDIR)/.cache/stores
VERSITYGW := $(STORES_BIN)/versitygw
ROUNDS ?= 3
COMPARE_MINIO ?= 21526
# COMPARE_MATRIX=0 runs the catalogue without its kill matrix (the correct protocol's cells only).
COMPARE_MATRIX ?= 1

# SeaweedFS (`weed mini`): its go.mod has replace directives, which `go install mod@version`
# refuses, so the module is downloaded at the pinned version and built as the main module
# (about fifteen minutes on two busy cores). rclone (`rclone serve s3`) is a plain go install.
SEAWEEDFS_VERSION := v0.0.0-20261109003541-7506e5f91cd6
WEED := $(STORES_BIN)/weed
RCLONE_MODULE := github.com/rclone/rclone@v1.76.0
RCLONE := $(STORES_BIN)/rclone

.PHONY: compare-stores versitygw seaweedfs rclone

versitygw: $(VERSITYGW)
seaweedfs: $(WEED)
rclone: $(RCLONE)

$(WEED):
	@mkdir -p $(STORES_BIN)
	@echo "building SeaweedFS $(SEAWEEDFS_VERSION) into .cache/stores; this takes about fifteen minutes"
	dir=$$($(GO) mod download -json github.com/seaweedfs/seaweedfs@$(SEAWEEDFS_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p') && \
	  [ -n "$$dir" ] && cd $$dir && CGO_ENABLED=0 GOFLAGS=-mod=mod $(GO) build -trimpath -o $(WEED) ./weed

$(RCLONE):
	@mkdir -p $(STORES_BIN)
	CGO_ENABLED=0 GOBIN=$(STORES_BIN) $(GO) install $(RCLONE_MODULE)

compare-stores: minio $(VERSITYGW) $(WEED) $(RCLONE) $(KNOWN_BUGS)/$(COMPARE_MINIO)/minio
	@mkdir -p $(CURDIR)/results/compare-stores
	FENCEBENCH_VERSITYGW_BIN=$(VERSITYGW) FENCEBENCH_COMPARE_ROUNDS=$(ROUNDS) \
		FENCEBENCH_SEAWEEDFS_BIN=$(WEED) FENCEBENCH_SEAWEEDFS_VERSION="$(SEAWEEDFS_VERSION)" \
		FENCEBENCH_RCLONE_BIN=$(RCLONE) FENCEBENCH_RCLONE_VERSION="$(RCLONE_MODULE:github.com/rclone/rclone@%=%)" \
		FENCEBENCH_OTHER_MINIO_BIN=$(KNOWN_BUGS)/$(COMPARE_MINIO)/minio \
		FENCEBENCH_OTHER_MINIO_SERVER="MinIO $(RELEASE_$(COMPARE_MINIO)) (minio#$(COMPARE_MINIO))" \
		FENCEBENCH_OTHER_MINIO_FAILS=$(FAILS_$(COMPARE_MINIO)) \
		FENCEBENCH_COMPARE_OUT=$(CURDIR)/results/compare-stores FENCEBENCH_COMPARE_MATRIX=$(COMPARE_MATRIX) \
		$(GO) test -count=1 -timeout 90m -v -run '^TestCompareStoresVersitygw$$' ./cmd/fencebench
	@ls -d $(CURDIR)/results/compare-stores/certify-*/compare.html

$(VERSITYGW):
	@mkdir -p $(STORES_BIN)
	CGO_ENABLED=0 GOBIN=$(STORES_BIN) $(GO) install $(VERSITYGW_MODULE)

# Stability of the verdicts: the catalogue with its kill matrix K times on each client (each
# round with a new seed), beside a CPU hog when HOG=1 (one busy process per core, as on a loaded
# CI machine); results/stability-<id>/stability.html shows each cell's flip rate, and the
# target fails when any verdict differed from the expected one. Not part of `make test`.
K ?= 10
HOG ?= 0
.PHONY: stability
stability: minio
	$(GO) run ./cmd/fencebench stability --rounds $(K) $(if $(filter 1,$(HOG)),--hog)

# Mutation score of the protocol's decision points (fence/, writers/): each mutant is built
# with `go build -overlay` and explored on the simulated stack; a mutant the exploration did
# not kill then meets the explorations of the broken variants named where it sits (fence/variant.go:
# killed-by-variant when one no longer fails), then its package's own tests (MUTATE_TEST, on MinIO; empty: no test stage).
# results/mutate/mutate.txt lists the survivors and gives the score with and without the test
# kills, and the target fails below MUTATE_MIN. Not part of `make test`: it builds and
# explores hundreds of binaries. MUTATE_MAX (0: all) draws a sample with MUTATE_SEED;
# mutate-equivalent.txt holds the mutants a person judged equivalent (not scored), and
# mutate-survivors.txt the survivors a person examined, with why they survive (still scored).
MUTATE_EXPLORE ?= explore --stack sim --schedules 1000 --seed 1 --first --shrink 0 --confirm none
MUTATE_TEST ?= go test -count=1 -vet=off -failfast
MUTATE_TIMEOUT ?= 3m
MUTATE_MAX ?= 0
MUTATE_SEED ?= 1
MUTATE_MIN ?= 0.9

.PHONY: mutate

mutate: minio
	$(GO) run ./cmd/mutate --jobs 2 --explore "$(MUTATE_EXPLORE)" --test "$(MUTATE_TEST)" --timeout $(MUTATE_TIMEOUT) \
		--variants fence/variant.go \
		--max $(MUTATE_MAX) --sample-seed $(MUTATE_SEED) --min $(MUTATE_MIN) \
		--equivalent mutate-equivalent.txt --survivors mutate-survivors.txt --out results/mutate

# Schedules to the first kill of every broken variant by generated schedules alone (no
# hand-written YAML): one exploration per variant on the simulated stack, from seed 1, with a
# budget of KILL_BUDGET schedules, each kill shrunk and replayed 20 times (KILL_CONFIRM=local
# also re-runs it on MinIO); a failure whose shrunk scenario does not replay 20 of 20 is
# listed and the exploration goes on to the next. The explorations' lines go to
# results/explore-kills.txt, and the table (variant, first failure, first kill that replays,
# its invariants, steps before and after shrinking, replays) to results/explore-kills.md.
KILL_BUDGET ?= 2000
KILL_CONFIRM ?= none

.PHONY: explore-kills

explore-kills: minio
	@mkdir -p results; : > results/explore-kills.txt; \
	$(GO) build -o .cache/bin/fencebench ./cmd/fencebench; \
	for v in $$(.cache/bin/fencebench list | awk '/^VARIANT/{f=1;next} f && NF && $$1 != "correct" {print $$1}'); do \
		echo "== $$v" | tee -a results/explore-kills.txt; \
		.cache/bin/fencebench explore --schedules $(KILL_BUDGET) --seed 1 --first --shrink 1 --replays 20 \
			--confirm $(KILL_CONFIRM) --variant $$v --out results/explore-kills 2>&1 \
			| grep -E 'schedules of|^FAIL|went on' | tee -a results/explore-kills.txt; \
	done; \
	{ echo '| variant | first failure | first kill replaying | violated | shrunk | replays |'; echo '|---|---|---|---|---|---|'; \
	awk 'function row() { if (v == "") return; if (kill == "") printf "| %s | %s | survived | | | |\n", v, (first ? first : "-"); \
			else printf "| %s | %s | %s |\n", v, first, kill } \
		/^== / { row(); v = $$2; first = 0; kill = ""; next } \
		/^FAIL / { match($$0, /\(schedule [0-9]+/); i = substr($$0, RSTART + 10, RLENGTH - 10) + 0; if (!first || i < first) first = i; \
			match($$0, /[0-9]+ steps -> [0-9]+/); st = substr($$0, RSTART, RLENGTH); sub(/ steps/, "", st); \
			match($$0, /replayed [0-9]+\/[0-9]+/); rp = substr($$0, RSTART + 9, RLENGTH - 9); split(rp, h, "/"); \
			inv = $$2; gsub(/\+/, ", ", inv); if (h[1] == h[2]) kill = i " | " inv " | " st " | " rp } \
		END { row() }' results/explore-kills.txt; } > results/explore-kills.md; cat results/explore-kills.md
