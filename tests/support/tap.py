# SPDX-License-Identifier: BSD-3-Clause
"""tap: TAP for the Python tests (tests/support) - a line per case, the
details of a case as comment lines, the plan at the end.

Tap() prints a case's details only when it fails, each cut to 60 lines (the
daemon's tests: a failure's context, not pages of it).  Tap(details_always=
True, detail_lines=None) prints them after every case, whole: the live
kernel oracle shows what differed even when a case passes within its
threshold.  done() prints the plan and returns the exit status (1 when a
case failed).
"""


class Tap:
    def __init__(self, details_always=False, detail_lines=60):
        self.n = 0
        self.failed = 0
        self.details_always = details_always
        self.detail_lines = detail_lines
        print("TAP version 13", flush=True)

    def ok(self, cond, name, details=()):
        self.n += 1
        if not cond:
            self.failed += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, name), flush=True)
        if not cond or self.details_always:
            for d in details:
                for line in str(d).splitlines()[:self.detail_lines]:
                    print("#   " + line)
        return cond

    def skip(self, name, why):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, name, why), flush=True)

    def note(self, text):
        for line in str(text).splitlines():
            print("# " + line, flush=True)

    def done(self):
        print("1..%d" % self.n, flush=True)
        return 1 if self.failed else 0
