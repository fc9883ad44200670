#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test_deps.sh DEPS_SH - scripts/deps.sh as a fresh machine meets it, with
# dpkg-query, id and apt-get replaced by shims on PATH (nothing is
# installed, nothing is asked of the real package manager): with every
# package there it does nothing; a user who is not root is told which
# packages are missing and the one apt-get line to run, and it fails; as
# root it runs apt-get update and installs exactly the missing ones, with
# no recommends; only the asked target's packages count; a wrong target is
# a usage error.
set -u
DEPS=$1
. "$(dirname "$0")/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
# dpkg-query -W -f='${Status}' PKG: "installed" unless PKG is in $FAKE_MISSING
cat >"$tmp/bin/dpkg-query" <<'SH'
#!/bin/sh
for a; do pkg=$a; done
case " $FAKE_MISSING " in *" $pkg "*) echo "dpkg-query: no packages found matching $pkg" >&2; exit 1 ;; esac
printf 'install ok installed'
SH
cat >"$tmp/bin/id" <<'SH'
#!/bin/sh
[ "$1" = -u ] && { echo "$FAKE_UID"; exit 0; }
exec /usr/bin/id "$@"
SH
cat >"$tmp/bin/apt-get" <<'SH'
#!/bin/sh
echo "apt-get $*" >>"$FAKE_LOG"
SH
cat >"$tmp/bin/debconf-set-selections" <<'SH'
#!/bin/sh
cat >/dev/null
SH
chmod +x "$tmp/bin/"*

# deps UID MISSING TARGET: runs deps.sh with the shims; leaves rc, out, err
deps() {
	: >"$tmp/apt.log"
	FAKE_UID=$1 FAKE_MISSING=$2 FAKE_LOG=$tmp/apt.log PATH="$tmp/bin:$PATH" \
		sh "$DEPS" "$3" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

all_there() {
	deps 1000 "" test
	[ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ] && [ ! -s "$tmp/apt.log" ]
}
ok_if "everything installed: nothing said, nothing run, exit 0" all_there

not_root() {
	deps 1000 "libcmocka-dev tshark" test
	[ "$rc" -eq 1 ] &&
		grep -q "these Debian packages are missing: libcmocka-dev tshark$" "$tmp/err" &&
		grep -q "install them with: sudo apt-get install libcmocka-dev tshark$" "$tmp/err" &&
		[ ! -s "$tmp/apt.log" ] || { sed 's/^/# /' "$tmp/err"; return 1; }
}
ok_if "not root, two packages missing: names them, gives the apt-get line, exit 1" not_root

as_root() {
	deps 0 "libcmocka-dev tshark" test
	[ "$rc" -eq 0 ] &&
		grep -q "installing missing packages: libcmocka-dev tshark$" "$tmp/err" &&
		[ "$(sed -n 1p "$tmp/apt.log")" = "apt-get update -qq" ] &&
		[ "$(sed -n 2p "$tmp/apt.log")" = "apt-get install -y -qq --no-install-recommends libcmocka-dev tshark" ] &&
		[ "$(wc -l <"$tmp/apt.log")" -eq 2 ] || { sed 's/^/# /' "$tmp/err" "$tmp/apt.log"; return 1; }
}
ok_if "root, two packages missing: apt-get update, then installs just those" as_root

other_target() {
	deps 1000 "tshark" build
	[ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && [ ! -s "$tmp/apt.log" ]
}
ok_if "a test-only package missing does not stop 'deps.sh build'" other_target

build_missing() {
	deps 1000 "liburcu-dev" bench
	[ "$rc" -eq 1 ] && grep -q "sudo apt-get install liburcu-dev$" "$tmp/err"
}
ok_if "a build package missing is missing for every target" build_missing

bad_target() {
	deps 1000 "" frobnicate
	[ "$rc" -eq 2 ] && grep -q "usage:" "$tmp/err"
}
ok_if "an unknown target: usage on stderr, exit 2" bad_target
finish
