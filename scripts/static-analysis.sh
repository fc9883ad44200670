#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# scripts/static-analysis.sh [BUILD_DIR] - cppcheck and clang-tidy over the
# library and the tool (src/, tools/), with the checked-in configuration:
#   cppcheck:   warning, style, performance and portability checks;
#               scripts/cppcheck/suppressions.txt (each suppression says
#               why) and scripts/cppcheck/urcu.cfg (liburcu's macros);
#   clang-tidy: .clang-tidy at the top (each disabled check says why),
#               with BUILD_DIR/compile_commands.json (default build/;
#               configured with `meson setup` if missing).
# One case per tool; a tool passes when it reports nothing.  Findings are
# printed.  The last line is "N passed, N failed"; exit 1 if any failed.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0
files=$(find src tools/ctrack -name "*.c" | sort)

result() { # result NAME OK(0/1) LOG
	if [ "$2" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok - $1: no findings"
	else
		failed=$((failed + 1))
		echo "not ok - $1:"
		sed 's/^/    /' "$3" | head -n 200
	fi
}

# --- cppcheck ---
if command -v cppcheck >/dev/null 2>&1; then
	# shellcheck disable=SC2086
	cppcheck --enable=warning,style,performance,portability --std=c11 \
		--inline-suppr --quiet --error-exitcode=1 -j "$jobs" \
		-D_GNU_SOURCE -D__x86_64__ -Iinclude -Isrc \
		--library=scripts/cppcheck/urcu.cfg \
		--suppressions-list=scripts/cppcheck/suppressions.txt \
		$files >"$tmp/cppcheck" 2>&1
	rc=$?
	[ $rc -eq 0 ] && [ -s "$tmp/cppcheck" ] && rc=1
	result "cppcheck $(cppcheck --version | sed 's/Cppcheck //')" $rc "$tmp/cppcheck"
else
	echo "cppcheck is not installed (scripts/deps.sh test installs it)" >"$tmp/cppcheck"
	result cppcheck 1 "$tmp/cppcheck"
fi

# --- clang-tidy ---
if command -v clang-tidy >/dev/null 2>&1; then
	if [ ! -f "$build/compile_commands.json" ]; then
		meson setup "$build" >/dev/null 2>&1
	fi
	if [ -f "$build/compile_commands.json" ]; then
		# shellcheck disable=SC2086
		printf '%s\n' $files | xargs -P "$jobs" -n 4 \
			clang-tidy -p "$build" --quiet >"$tmp/tidy" 2>"$tmp/tidy.err"
		# "N warnings generated" counts also warnings from system headers
		# that are not shown; only shown diagnostics are findings
		cat "$tmp/tidy" "$tmp/tidy.err" >"$tmp/tidy.all"
		grep -E ': (warning|error):' "$tmp/tidy.all" >/dev/null 2>&1
		rc=$((1 - $?))
		grep -E -A3 ': (warning|error):' "$tmp/tidy.all" >"$tmp/tidy.found"
		result "clang-tidy $(clang-tidy --version | sed -n 's/.*LLVM version //p')" $rc "$tmp/tidy.found"
	else
		echo "no $build/compile_commands.json and meson setup failed" >"$tmp/tidy"
		result clang-tidy 1 "$tmp/tidy"
	fi
else
	echo "clang-tidy is not installed (scripts/deps.sh test installs it)" >"$tmp/tidy"
	result clang-tidy 1 "$tmp/tidy"
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
