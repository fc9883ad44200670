#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# scripts/run-fuzz.sh BUILD_DIR SECONDS - run every libFuzzer target for a
# bounded time; `make fuzz` calls it after building BUILD_DIR with
# -Dfuzz=true (clang, ASan + UBSan).
#
# Targets are the executables BUILD_DIR/fuzz/fuzz_*.  Each runs for SECONDS
# on its corpus BUILD_DIR/corpus-NAME (NAME = the target without "fuzz_"),
# which is seeded from the captures in ../shared/pcaps the first time (or,
# in a clone without it, from the project's own tests/captures/crafted):
#   - by BUILD_DIR/fuzz/seedgen_NAME OUT_DIR CAPTURE... when the target
#     ships a seed generator (fuzz_track: programs, not frames);
#   - by scripts/make-fuzz-seeds.sh PCAPS OUT_DIR for fuzz_parse (frames
#     with its link-type selector byte);
#   - for fuzz_capture, with the capture files themselves (cut to 64 KiB)
#     and those tests/cli/craft_captures.py writes;
#   - from fuzz/seeds/NAME/ when the target has seeds of its own there
#     (fuzz_ctl_request: one control request of each command);
#   - otherwise with the captures' frames, one file per frame, raw bytes
#     (at most 64 frames per capture).
# Checked-in inputs in fuzz/regress/NAME/ (past crashes, kept as
# regression tests) are given to the target as a second, read-only corpus.
# A target passes when it ran its time without a crash, a leak, a timeout
# or running out of memory; crash inputs land in BUILD_DIR/artifacts-NAME/.
# The last line is "N passed, N failed"; the exit status is 1 if any failed.
#
# libFuzzer's per-input leak check is off (-detect_leaks=0): the library
# frees memory after RCU grace periods, on liburcu's thread, so an input's
# mallocs and frees never balance and every input would be re-run under
# LeakSanitizer (4x slower).  LeakSanitizer still checks the whole process
# when each target exits.
#
# FUZZ_ARGS adds libFuzzer options (e.g. FUZZ_ARGS=-jobs=2).
set -u
build=${1:?usage: run-fuzz.sh BUILD_DIR SECONDS}
secs=${2:?usage: run-fuzz.sh BUILD_DIR SECONDS}
root=$(cd "$(dirname "$0")/.." && pwd)
pcaps=$root/../shared/pcaps
if [ ! -d "$pcaps" ]; then
	echo "run-fuzz: $pcaps not found: seeding from tests/captures/crafted" >&2
	pcaps=$root/tests/captures/crafted
fi
build=$(cd "$build" && pwd) || exit 1
# UBSan built without -fno-sanitize-recover only prints: make it fatal
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}

passed=0
failed=0

# Frames of every capture, raw, one per file (classic pcap and pcapng).
extract_frames() {
	python3 - "$1" "$pcaps" <<'PY'
import os, struct, sys
out, pcaps = sys.argv[1], sys.argv[2]
def pcap_frames(b):
    m = b[:4]
    if m in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'): e = '<'
    elif m in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'): e = '>'
    else: return
    off = 24
    while off + 16 <= len(b):
        _, _, cap, _ = struct.unpack(e + 'IIII', b[off:off + 16])
        if cap > 262144 or off + 16 + cap > len(b): return
        yield b[off + 16:off + 16 + cap]
        off += 16 + cap
def pcapng_frames(b):
    off, e = 0, '<'
    while off + 12 <= len(b):
        t = struct.unpack('<I', b[off:off + 4])[0]
        if t == 0x0A0D0D0A:
            e = '<' if b[off + 8:off + 12] == b'\x4d\x3c\x2b\x1a' else '>'
        t, l = struct.unpack(e + 'II', b[off:off + 8])
        if l < 12 or off + l > len(b): return
        if t == 6 and l >= 32:
            cap = struct.unpack(e + 'I', b[off + 20:off + 24])[0]
            if 28 + cap <= l: yield b[off + 28:off + 28 + cap]
        off += l
for name in sorted(os.listdir(pcaps)):
    p = os.path.join(pcaps, name)
    if not os.path.isfile(p) or name.endswith(('.gz', '.md')) or name == 'SHA256SUMS':
        continue
    b = open(p, 'rb').read()
    gen = pcapng_frames(b) if b[:4] == b'\x0a\x0d\x0d\x0a' else pcap_frames(b)
    for i, f in enumerate(gen):
        if i >= 64: break
        open(os.path.join(out, '%s-%d' % (name, i)), 'wb').write(f)
PY
}

seed() { # seed NAME CORPUS_DIR
	if [ -x "$build/fuzz/seedgen_$1" ]; then
		find "$pcaps" -maxdepth 1 -type f \( -name '*.pcap' -o -name '*.pcapng' \
			-o -name '*.cap' \) | sort | xargs "$build/fuzz/seedgen_$1" "$2"
	elif [ "$1" = parse ] && [ -x "$root/scripts/make-fuzz-seeds.sh" ]; then
		"$root/scripts/make-fuzz-seeds.sh" "$pcaps" "$2"
	elif [ -d "$root/fuzz/seeds/$1" ]; then
		# inputs that are not frames (fuzz_ctl_request: requests)
		cp "$root/fuzz/seeds/$1/"* "$2/"
	elif [ "$1" = capture ]; then
		# whole capture files, cut to 64 KiB, and the crafted ones
		for f in "$pcaps"/*; do
			case "$f" in *.md|*/SHA256SUMS) continue ;; esac
			head -c 65536 "$f" >"$2/$(basename "$f")"
		done
		python3 "$root/tests/cli/craft_captures.py" "$2"
	else
		extract_frames "$2"
	fi
}

targets=$(find "$build/fuzz" -maxdepth 1 -type f -name 'fuzz_*' -perm -u+x 2>/dev/null | sort)
if [ -z "$targets" ]; then
	echo "run-fuzz: no fuzz targets in $build/fuzz (configure with -Dfuzz=true, CC=clang)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

for t in $targets; do
	name=$(basename "$t")
	name=${name#fuzz_}
	corpus=$build/corpus-$name
	arts=$build/artifacts-$name
	mkdir -p "$corpus" "$arts"
	if [ -z "$(ls -A "$corpus")" ]; then
		if [ -d "$pcaps" ]; then
			seed "$name" "$corpus" >/dev/null 2>&1 || echo "run-fuzz: $name: seeding failed, starting empty" >&2
		else
			echo "run-fuzz: $pcaps not found, $name starts from an empty corpus" >&2
		fi
	fi
	extra=
	[ -d "$root/fuzz/regress/$name" ] && extra=$root/fuzz/regress/$name
	log=$build/fuzz-$name.log
	echo "run-fuzz: $name for ${secs}s ($(ls "$corpus" | wc -l) corpus inputs)"
	# shellcheck disable=SC2086
	"$t" -max_total_time="$secs" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
		-detect_leaks=0 -artifact_prefix="$arts/" ${FUZZ_ARGS:-} "$corpus" $extra >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok - $name: ${execs:-?} executions, ${cov:-no coverage figures}, no crash"
	else
		failed=$((failed + 1))
		echo "not ok - $name: exit $rc after ${execs:-?} executions; see $log and $arts/"
		grep -E 'ERROR|invariant|SUMMARY' "$log" | head -n 5 | sed 's/^/#   /'
	fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
