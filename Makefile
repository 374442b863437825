# Hookwall build and test entry points. `make` (or `make help`) lists targets.
# Conventions: shared/design/style.md section 2.8. The local stack (DynamoDB Local +
# SQS server on 127.0.0.1) lives in scripts/ and installs into .local/.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

GO ?= go
GOTEST_TIMEOUT ?= 20m

# Local stack settings (also read by scripts/lib.sh).
DDB_PORT ?= 8000
SQS_PORT ?= 9324
TABLE_NAME ?= hookwall-events
QUEUE_NAME ?= hookwall-events
DLQ_NAME ?= hookwall-events-dlq
export DDB_PORT SQS_PORT TABLE_NAME QUEUE_NAME DLQ_NAME

# Test vectors shared with the other implementations (read-only sibling folder).
HOOKWALL_VECTORS_DIR ?= $(abspath $(ROOT)/../shared/vectors)
export HOOKWALL_VECTORS_DIR

# What the app and the integration tests need to reach the local stack.
STACK_ENV := \
	AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:$(DDB_PORT) \
	AWS_ENDPOINT_URL_SQS=http://127.0.0.1:$(SQS_PORT) \
	TABLE_NAME=$(TABLE_NAME) \
	QUEUE_URL=http://127.0.0.1:$(SQS_PORT)/000000000000/$(QUEUE_NAME) \
	DLQ_URL=http://127.0.0.1:$(SQS_PORT)/000000000000/$(DLQ_NAME) \
	AWS_REGION=us-east-1 \
	AWS_ACCESS_KEY_ID=test \
	AWS_SECRET_ACCESS_KEY=test \
	HOOKWALL_VECTORS_DIR=$(HOOKWALL_VECTORS_DIR)

BENCH_PKGS ?= ./...
BENCHTIME ?= 1s
BENCH ?= .
FUZZTIME ?= 30s
FUZZ_PKGS ?= ./...

# Lambda functions: every functions/<name>/main.go, built for provided.al2023 on arm64.
FUNCTIONS := $(patsubst functions/%/main.go,%,$(wildcard functions/*/main.go))
LAMBDA_GOOS ?= linux
LAMBDA_GOARCH ?= arm64
LAMBDA_BUILD = GOOS=$(LAMBDA_GOOS) GOARCH=$(LAMBDA_GOARCH) CGO_ENABLED=0 \
	$(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w'

.PHONY: help services-up services-down unit test bench fuzz lint build \
	build-ReceiverFunction build-ProcessorFunction events clean distclean

help: ## list targets
	@echo "Hookwall make targets:"
	@awk 'BEGIN {FS = ":.*## "} /^[A-Za-z0-9_-]+:.*## / {printf "  %-24s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo "Variables: DDB_PORT=$(DDB_PORT) SQS_PORT=$(SQS_PORT) TABLE_NAME=$(TABLE_NAME) QUEUE_NAME=$(QUEUE_NAME)"
	@echo "  DLQ_NAME=$(DLQ_NAME) FUZZTIME=$(FUZZTIME) BENCHTIME=$(BENCHTIME) BENCH_PKGS=$(BENCH_PKGS)"
	@echo "  HOOKWALL_VECTORS_DIR=$(HOOKWALL_VECTORS_DIR)"

services-up: ## install (if needed) and start DynamoDB Local + SQS server on 127.0.0.1, create table and queues
	@$(ROOT)/scripts/services-up.sh

services-down: ## stop the services that services-up started (by PID file)
	@$(ROOT)/scripts/services-down.sh

unit: ## unit tests: go test ./...
	$(GO) test -timeout $(GOTEST_TIMEOUT) ./...

test: services-up ## services-up, then unit tests, race + integration tests, and the processtest users on DynamoDB Local
	$(STACK_ENV) $(GO) test -timeout $(GOTEST_TIMEOUT) ./...
	$(STACK_ENV) $(GO) test -race -tags integration -count=1 -timeout $(GOTEST_TIMEOUT) ./...
	$(STACK_ENV) HOOKWALL_TEST_STORE=dynamodb $(GO) test -race -count=1 -timeout $(GOTEST_TIMEOUT) \
		./shared/process/processtest/ ./functions/processor/handlers/...

bench: ## benchmarks (BENCH_PKGS, BENCHTIME, BENCH pattern)
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) $(BENCH_PKGS)

fuzz: ## run every fuzz target for FUZZTIME each (scripts/fuzz.sh)
	@FUZZTIME=$(FUZZTIME) FUZZ_PKGS='$(FUZZ_PKGS)' GO=$(GO) $(ROOT)/scripts/fuzz.sh

lint: ## gofmt -l (fails if any file listed), go vet, go vet -tags integration
	@files=$$(find . -type f -name '*.go' -not -path './.*' -not -path '*/testdata/*' -not -path './build/*' -print0 \
		| xargs -0 -r gofmt -l); \
	if [ -n "$$files" ]; then echo "gofmt: these files need formatting (run gofmt -w):"; echo "$$files"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./...

build: ## cross-compile each functions/<name> to build/<name>/bootstrap (linux/arm64)
	@if [ -z "$(FUNCTIONS)" ]; then echo "build: no functions/*/main.go yet"; fi
	@set -e; for fn in $(FUNCTIONS); do \
		echo "build: functions/$$fn -> build/$$fn/bootstrap"; \
		$(LAMBDA_BUILD) -o build/$$fn/bootstrap ./functions/$$fn; \
	done

# Called by `sam build` (Metadata: BuildMethod: makefile), which sets ARTIFACTS_DIR.
define sam_build
	@test -n "$(ARTIFACTS_DIR)" || { echo "$@: ARTIFACTS_DIR is not set (sam build sets it)"; exit 1; }
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(1)
endef

build-ReceiverFunction: ## SAM: build functions/receiver to $(ARTIFACTS_DIR)/bootstrap
	$(call sam_build,receiver)

build-ProcessorFunction: ## SAM: build functions/processor to $(ARTIFACTS_DIR)/bootstrap
	$(call sam_build,processor)

events: ## regenerate the signed sample API Gateway events in events/receiver (local tenants)
	$(GO) test ./functions/receiver -run TestSampleEvents -count=1 -update

clean: ## remove build outputs (build/, .aws-sam/); keeps the installed stack in .local/
	rm -rf build .aws-sam

distclean: services-down ## clean, stop services, and remove .local/ (the installed stack)
	rm -rf build .aws-sam .local
