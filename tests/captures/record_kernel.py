#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""record_kernel.py [BUILD_DIR] [SCENARIO...] - record tests/captures/kernel/.

Real traffic from the kernel's own TCP/IP stacks, recorded the way
samples/make-sample.sh records samples/sample.pcap: each scenario of the
kernel oracle (tests/kernel/kd_scenarios.py) runs between a client and a
server namespace through a router namespace whose nf_conntrack tracks it;
ctcap keeps what the router's conntrack saw, in its order, and the harness
dumps the kernel's table and events at the end.  Namespaces are the
harness's (unique names, removed also on failure); addresses are private
(10.x, fd00::/8) and stay inside them.

Each recording is kept whole - capture.pcap, kernel-table.txt,
kernel-events.txt, router-sysctls.txt, run.json - because the kernel's table
and events are what tests/cli/test_capture_tables.py compares `ctrack read`
with: the expected result comes from the kernel, recorded with the traffic,
so a new recording (other ports, other timings) is as good as the old one.
Captures of bulk transfers are cut to their first 160 bytes per frame
(editcap -s, as a capture with that snapshot length would be): every header
stays, conntrack's counters come from the IP lengths, and the files stay
small.

Needs root, network namespaces, nftables, conntrack-tools, editcap (tshark's
package) and a build (ninja -C BUILD tests/kernel/ctcap).  Default scenarios:
SCENARIOS below, plus "bulk_lossy_1m", defined here: a 1 MiB download per
family through the lossy bridge (retransmissions, SACK, reordering) - the
harness's own tcp_bulk_lossy moves 4 MiB, too much to keep.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KERNEL_DIR = os.path.join(ROOT, "tests", "kernel")
sys.path.insert(0, KERNEL_DIR)

import kd_scenarios  # noqa: E402
import kdiff  # noqa: E402

OUT = os.path.join(HERE, "kernel")
KEEP = ("capture.pcap", "kernel-table.txt", "kernel-events.txt", "router-sysctls.txt",
        "run.json")
SCENARIOS = ["tcp4_http", "tcp6_http", "bulk_lossy_1m", "udp_reqresp", "udp_oneway",
             "udp_fragments", "udp_port_unreach", "ping", "tcp_refused", "tcp_rst_abort",
             "tcp_half_closed", "tcp_simultaneous_close", "ttl_expired", "mtu_small",
             "timeouts_udp_icmp", "timeouts_tcp"]
CUT = {"tcp4_http", "tcp6_http", "bulk_lossy_1m", "mtu_small"}
SNAPLEN = 160


@kd_scenarios.scenario("bulk_lossy_1m", "1 MiB TCP download on IPv4 and IPv6 through a bridge "
                       "that loses 2% and reorders 3% of the data segments", middle="l2",
                       fwd={"loss": 0.02, "reorder": 0.03, "delay_ms": 1, "hold_ms": 4})
def bulk_lossy_1m(ctx):
    kd_scenarios._bulk(ctx, 1 << 20, 0.02, 0.03)


kd_scenarios.expect("bulk_lossy_1m")(kd_scenarios._expect_bulk)


def main(argv):
    build = argv[0] if argv and not argv[0].startswith("-") and os.path.isdir(argv[0]) \
        else os.path.join(ROOT, "build")
    names = [a for a in argv if a in [s["name"] for s in kd_scenarios.SCENARIOS]] or SCENARIOS
    ctcap = os.path.join(build, "tests", "kernel", "ctcap")
    if not os.access(ctcap, os.X_OK):
        subprocess.run(["ninja", "-C", build, "tests/kernel/ctcap"], check=True,
                       stdout=subprocess.DEVNULL)
    if not shutil.which("editcap"):
        print("record_kernel: editcap is missing (apt-get install tshark)", file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix="ctrack-record-")
    try:
        args = ["live", "--ctrack", "none", "--ctcap", ctcap, "--out", tmp, "--retries", "2"]
        for n in names:
            args += ["--scenario", n]
        rc = kdiff.main(args)
        if rc != 0:
            print("record_kernel: the kernel side failed (exit %d); recordings in %s"
                  % (rc, tmp), file=sys.stderr)
            tmp = None
            return 1
        for n in names:
            src, dst = os.path.join(tmp, n), os.path.join(OUT, n)
            with open(os.path.join(src, "run.json")) as f:
                run = json.load(f)
            if run.get("problems"):
                print("record_kernel: %s: %s" % (n, run["problems"]), file=sys.stderr)
                return 1
            shutil.rmtree(dst, ignore_errors=True)
            os.makedirs(dst)
            for k in KEEP:
                shutil.copy(os.path.join(src, k), os.path.join(dst, k))
            if n in CUT:
                cut = os.path.join(dst, "capture.cut")
                subprocess.run(["editcap", "-F", "nsecpcap", "-s", str(SNAPLEN),
                                os.path.join(dst, "capture.pcap"),
                                cut], check=True)
                os.replace(cut, os.path.join(dst, "capture.pcap"))
            print("kernel/%s: %d bytes" % (n, sum(os.path.getsize(os.path.join(dst, k))
                                                 for k in KEEP)))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
