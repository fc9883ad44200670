#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# scripts/run-tests.sh BUILD_DIR [meson test args...]
# Runs the Meson test suite in BUILD_DIR and ends with one line
# "N passed, N failed, N skipped" counting individual test cases: each TAP
# "ok"/"not ok" line of a TAP test (cmocka tests and the shell tests speak
# TAP), and each non-TAP test as one case.
set -u
build=$1; shift
log="$build/meson-logs/testlog.json"
rm -f "$log"
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
rc=$?
if [ ! -f "$log" ]; then
	echo "0 passed, 1 failed"
	exit 1
fi
python3 - "$log" "$rc" <<'PY'
import json, re, sys
passed = failed = skipped = 0
for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        continue
    t = json.loads(line)
    res = t.get("result", "")
    out = t.get("stdout", "") or ""
    oks = len(re.findall(r"^ok\b(?!.*# ?(?i:skip))", out, re.M))
    skips = len(re.findall(r"^ok\b.*# ?(?i:skip)", out, re.M))
    bad = len(re.findall(r"^not ok\b(?!.*# ?(?i:todo))", out, re.M))
    if oks or bad or skips:
        passed += oks; failed += bad; skipped += skips
        if res in ("FAIL", "TIMEOUT", "ERROR") and bad == 0:
            failed += 1          # crashed or timed out outside a case
    elif res in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif res == "SKIP":
        skipped += 1
    else:
        failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
rc = int(sys.argv[2])
sys.exit(1 if (failed or rc) else 0)
PY
