#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# scripts/run-tests.sh BUILD_DIR [meson test args...]
# Runs the Meson test suite in BUILD_DIR and ends with one line
# "N passed, N failed, N skipped" counting individual test cases: each TAP
# "ok"/"not ok" line of a TAP test (cmocka tests and the shell tests speak
# TAP), and each non-TAP test as one case.  Just before that line, when
# anything was skipped, it says why, grouped by reason (no ../shared/pcaps,
# not root, no network namespaces, a missing package...): the reason is
# what the test printed after "# SKIP" (per case, or "1..0 # SKIP" for a
# whole program), or a whole program's last line of output.
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
import collections, json, re, sys
passed = failed = skipped = 0
why = collections.OrderedDict()     # reason -> [cases, {test names}]


def skipped_for(reason, test, n=1):
    reason = reason.strip() or "no reason given"
    w = why.setdefault(reason, [0, []])
    w[0] += n
    if test not in w[1]:
        w[1].append(test)


for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        continue
    t = json.loads(line)
    res = t.get("result", "")
    out = t.get("stdout", "") or ""
    name = t.get("name", "?").split(" / ")[-1]
    oks = len(re.findall(r"^ok\b(?!.*# ?(?i:skip))", out, re.M))
    skips = re.findall(r"^ok\b.*?# ?(?i:skip)\b:?(.*)$", out, re.M)
    bad = len(re.findall(r"^not ok\b(?!.*# ?(?i:todo))", out, re.M))
    if oks or bad or skips:
        passed += oks; failed += bad; skipped += len(skips)
        for r in skips:
            skipped_for(r, name)
        if res in ("FAIL", "TIMEOUT", "ERROR") and bad == 0:
            failed += 1          # crashed or timed out outside a case
    elif res in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif res == "SKIP":
        skipped += 1
        m = re.search(r"^1\.\.0\s*#\s*(?i:skip)\b:?(.*)$", out, re.M)
        lines = [l for l in out.splitlines() if l.strip()]
        skipped_for(m.group(1) if m else (lines[-1] if lines else ""), name)
    else:
        failed += 1
if why:
    print("skipped, by reason:")
    for reason, (n, tests) in why.items():
        shown = ", ".join(tests[:6]) + (", ..." if len(tests) > 6 else "")
        print("  %s: %d case%s (%s)" % (reason, n, "" if n == 1 else "s", shown))
print(f"{passed} passed, {failed} failed, {skipped} skipped")
rc = int(sys.argv[2])
sys.exit(1 if (failed or rc) else 0)
PY
