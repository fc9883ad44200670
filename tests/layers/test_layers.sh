#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tests/layers/test_layers.sh SOURCE_ROOT - the layer check
# (scripts/check-layers.py) passes on the tree as it is, and fails - naming
# the file and the rule - on copies of the tree that break the order one
# way each: an upward include, a bare include, a circle between the
# modules of one folder, a circle in the table itself, the tool reaching
# into src/, a folder's README that disagrees with the table, a folder the
# table does not list.  TAP.
set -u
root=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cli/tap.sh"
check="$root/scripts/check-layers.py"
tmp=$(mktemp -d /tmp/ctrack-layers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# copy ROOT -> a fresh tree under $tmp/NAME
tree() {
	rm -rf "$tmp/$1"
	mkdir -p "$tmp/$1"
	cp -r "$root/src" "$root/include" "$root/tools" "$root/docs" "$tmp/$1/"
	echo "$tmp/$1"
}

# passes_on DIR: the check exits 0
passes_on() {
	python3 "$check" "$1" >"$tmp/out" 2>&1
}

# fails_on DIR PATTERN: the check exits 1 and says PATTERN
fails_on() {
	python3 "$check" "$1" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q -- "$2" "$tmp/out"; then
		echo "# exit $rc, expected 1 and \"$2\"; output:"
		sed 's/^/#   /' "$tmp/out"
		return 1
	fi
}

ok_if "the tree keeps the layer order" passes_on "$root"

t=$(tree upward)
sed -i '0,/#include "base\/hash.h"/s//#include "base\/hash.h"\n#include "table\/htab.h"/' "$t/src/base/hash.c"
ok_if "base including table (upward) fails, naming the line" \
	fails_on "$t" 'src/base/hash.c:[0-9]*: includes "table/htab.h": src/base/ may use nothing, not table/'

t=$(tree sideways)
sed -i '0,/#include "table\/reclaim.h"/s//#include "table\/reclaim.h"\n#include "track\/track.h"/' "$t/src/expire/gc.c"
ok_if "expire including track (a sibling) fails" \
	fails_on "$t" 'src/expire/gc.c:[0-9]*: includes "track/track.h": src/expire/ may use base, proto, table, not track/'

t=$(tree bare)
sed -i '0,/#include "table\/member.h"/s//#include "table\/member.h"\n#include "htab.h"/' "$t/src/table/view.c"
ok_if "an include that does not name its folder fails" \
	fails_on "$t" 'src/table/view.c:[0-9]*: includes "htab.h": an internal include names its folder'

t=$(tree modcycle)
sed -i '0,/#include "table\/htab.h"/s//#include "table\/htab.h"\n#include "table\/flush.h"/' "$t/src/table/member.h"
ok_if "two modules of one folder including each other fail" \
	fails_on "$t" 'src/table/: its modules include each other in a circle: .*flush.*member\|src/table/: its modules include each other in a circle: .*member.*flush'

t=$(tree tablecycle)
sed -i 's/^\(| `src\/base\/` |.*| \)nothing |$/\1table |/' "$t/docs/architecture.md"
ok_if "a table whose layers form a circle fails" \
	fails_on "$t" 'the layers form a circle'

t=$(tree tool)
sed -i '0,/#include "format.h"/s//#include "format.h"\n#include "base\/state.h"/' "$t/tools/ctrack/format.c"
ok_if "the tool including a library header fails" \
	fails_on "$t" 'tools/ctrack/format.c:[0-9]*: includes "base/state.h": the tool uses the public API'

t=$(tree readme)
sed -i 's/^May use: base, table\.$/May use: base./' "$t/src/ns/README.md"
ok_if "a folder README that disagrees with the table fails" \
	fails_on "$t" 'src/ns/README.md: "May use: base." but docs/architecture.md says base, table'

t=$(tree unlisted)
mkdir -p "$t/src/unlisted"
printf '/* SPDX-License-Identifier: BSD-3-Clause */\n#include "table/member.h"\n' >"$t/src/unlisted/unlisted.c"
ok_if "a folder the table does not list fails" \
	fails_on "$t" 'src/unlisted/: a folder docs/architecture.md does not list'

t=$(tree flat)
printf '/* SPDX-License-Identifier: BSD-3-Clause */\n' >"$t/src/loose.c"
ok_if "a source file outside the stage folders fails" \
	fails_on "$t" 'src/loose.c: every source file belongs to a stage folder'

finish
