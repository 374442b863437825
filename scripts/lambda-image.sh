#!/usr/bin/env bash
# lambda-image.sh ARCH: the local Lambda base image for `sam local`, built from Debian
# packages because no registry image can be pulled here: an image FROM scratch holding
# busybox-static, which is all SAM's own build step on top of it needs (/bin/sh, mv,
# chmod: it adds the Runtime Interface Emulator it ships). The functions are static Go
# binaries (provided.al2023), so the image needs nothing else.
#
# ARCH is x86_64 or arm64 (the template's Architecture). arm64 on an x86-64 machine runs
# under QEMU user emulation (qemu-user-static, binfmt_misc) and takes Debian's arm64
# busybox-static (dpkg --add-architecture arm64). Missing packages are installed with apt
# (root, else sudo), saying so.
#
# Cached: the image is tagged hookwall-lambda-base:ARCH-<hash of this script and the
# busybox binary> and rebuilt only when that hash changes. A rebuild also removes SAM's
# image derived from the old one (hookwall-lambda-base:rapid-ARCH), which SAM would
# otherwise keep using. Prints the tag (for sam local --invoke-image) on stdout; its
# messages go to stderr.
# Env: LAMBDA_IMAGE_DIR (.local/lambda-image), DOCKER (docker).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=hookwall-lambda-base
ARCH=${1:-}
DIR=${LAMBDA_IMAGE_DIR:-$ROOT/.local/lambda-image}
DOCKER=${DOCKER:-docker}

say() { printf 'lambda-image: %s\n' "$*" >&2; }
die() {
	say "$*"
	exit 1
}

case $ARCH in
x86_64) deb_arch=amd64 qemu=x86_64 ;;
arm64) deb_arch=arm64 qemu=aarch64 ;;
*) die "usage: lambda-image.sh x86_64|arm64 (the template's Architecture)" ;;
esac
host_arch=$(dpkg --print-architecture 2>/dev/null || uname -m)

as_root() {
	if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}
apt_install() {
	say "installing the apt package(s) $* ($1: ${why:-})"
	as_root apt-get update -q >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2
}

# busybox for ARCH: the host's busybox-static, or Debian's arm64 one unpacked into DIR.
if [[ $deb_arch == "$host_arch" ]]; then
	if ! /bin/busybox --list 2>/dev/null | grep -qx sh; then
		why="the static shell of the local Lambda base image" apt_install busybox-static
	fi
	busybox=/bin/busybox
else
	busybox=$DIR/$deb_arch/busybox
	if [[ ! -x $busybox ]]; then
		if ! dpkg --print-foreign-architectures | grep -qx "$deb_arch"; then
			say "adding the dpkg architecture $deb_arch (for Debian's $deb_arch busybox-static)"
			as_root dpkg --add-architecture "$deb_arch"
			as_root apt-get update -q >&2
		fi
		mkdir -p "$DIR/$deb_arch/deb"
		say "downloading Debian's busybox-static:$deb_arch (apt-get download)"
		(cd "$DIR/$deb_arch/deb" && apt-get download "busybox-static:$deb_arch" >&2)
		dpkg-deb -x "$DIR/$deb_arch/deb"/busybox-static_*_"$deb_arch".deb "$DIR/$deb_arch/root"
		cp "$DIR/$deb_arch/root/bin/busybox" "$busybox"
	fi
	# Foreign binaries run through QEMU: binfmt_misc with the F flag, so that the
	# interpreter works inside containers too.
	if [[ ! -e /proc/sys/fs/binfmt_misc/qemu-$qemu ]]; then
		command -v qemu-$qemu-static >/dev/null 2>&1 || why="running $ARCH Lambda containers on $host_arch" apt_install qemu-user-static
		[[ -e /proc/sys/fs/binfmt_misc/register ]] || as_root mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
		# Register the interpreter as systemd-binfmt would, from qemu-user-static's own
		# binfmt.d entry (its flags include F).
		conf=/usr/lib/binfmt.d/qemu-$qemu.conf
		if [[ ! -e /proc/sys/fs/binfmt_misc/qemu-$qemu && -f $conf ]]; then
			say "registering qemu-$qemu with binfmt_misc ($conf)"
			grep -v '^#' "$conf" | grep . | as_root tee /proc/sys/fs/binfmt_misc/register >/dev/null
		fi
		[[ -e /proc/sys/fs/binfmt_misc/qemu-$qemu ]] || die "binfmt_misc has no qemu-$qemu entry after installing qemu-user-static: $ARCH containers cannot run here (use ARCH=x86_64)"
	fi
	grep -q '^flags:.*F' "/proc/sys/fs/binfmt_misc/qemu-$qemu" ||
		die "binfmt_misc's qemu-$qemu entry lacks the F (fix binary) flag: containers cannot find the interpreter"
fi

hash=$( { cat "${BASH_SOURCE[0]}"; printf '%s\n' "$ARCH"; cat "$busybox"; } | sha256sum | cut -c1-12)
tag=$REPO:$ARCH-$hash

if "$DOCKER" image inspect "$tag" >/dev/null 2>&1; then
	say "$tag is up to date (cached)"
	echo "$tag"
	exit 0
fi

ctx=$DIR/context-$ARCH
rm -rf "$ctx"
mkdir -p "$ctx"
cp "$busybox" "$ctx/busybox"
cat >"$ctx/Dockerfile" <<'EOF'
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "sh", "-c", "/bin/busybox --install -s /bin && /bin/busybox mkdir -p /tmp /var/task /var/runtime /opt && /bin/busybox chmod 1777 /tmp"]
ENV PATH=/usr/local/bin:/usr/bin:/bin:/opt/bin LANG=en_US.UTF-8 TZ=:UTC LAMBDA_TASK_ROOT=/var/task LAMBDA_RUNTIME_DIR=/var/runtime
WORKDIR /var/task
EOF
say "building $tag (FROM scratch + busybox-static, $ARCH)"
platform=linux/$deb_arch
DOCKER_BUILDKIT=0 "$DOCKER" build -q --platform "$platform" --label "org.hookwall.inputs=$hash" -t "$tag" "$ctx" >&2 ||
	DOCKER_BUILDKIT=0 "$DOCKER" build -q --label "org.hookwall.inputs=$hash" -t "$tag" "$ctx" >&2
# The old builds of this ARCH, and the image SAM derived from them.
for old in $("$DOCKER" image ls --format '{{.Repository}}:{{.Tag}}' "$REPO" | grep -E "^$REPO:($ARCH-|rapid-$ARCH$)" | grep -vx "$tag" || true); do
	say "removing $old (built from older inputs)"
	"$DOCKER" image rm -f "$old" >/dev/null 2>&1 || true
done
echo "$tag"
