#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# scripts/bench.sh - run the benchmark suite, keep the raw results, and
# regenerate BENCHMARKS.md's tables and plots from them.
#
#   scripts/bench.sh [--quick] [--build DIR] [--report-only] [NAME...]
#   make bench [BENCH_QUICK=1]
#
# `make bench` runs it after building.  Each benchmark (ctrack-bench NAME
# --json) writes one JSON object per measured variant to
# bench/results/NAME.json; the machine's description goes to
# bench/results/machine.json.  Then the report step (python3, below)
# rewrites the generated blocks of BENCHMARKS.md - the text between
# "<!-- BEGIN generated:KEY -->" and "<!-- END generated:KEY -->" - and
# draws bench/results/*.svg with gnuplot; the prose around the blocks is
# left alone.  --report-only skips the runs and redoes the report from the
# results already there.  NAME... limits the run to those benchmarks (the
# report still covers every result file present).  BENCH_PNG=1 also
# writes PNG copies of the plots (not linked, not kept).
#
# Time: about 6-12 minutes in full on a shared 2-core VM, 2-3 with --quick.
set -eu

cd "$(dirname "$0")/.."
BUILD=build
QUICK=""
[ "${BENCH_QUICK:-0}" = 1 ] && QUICK="--quick"
REPORT_ONLY=0
ONLY=""
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) QUICK="--quick" ;;
	--build) BUILD="$2"; shift ;;
	--report-only) REPORT_ONLY=1 ;;
	-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
	-*) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
	*) ONLY="$ONLY $1" ;;
	esac
	shift
done

BIN="$BUILD/bench/ctrack-bench"
OUT=bench/results
# ovs (the peer comparison, bench_ovs.c) builds Open vSwitch on first use
# and runs for minutes: it runs when named, or with BENCH_OVS=1
ALL="gc-yield gc-idle gc-busy throughput memory teardown read"
[ "${BENCH_OVS:-0}" = 1 ] && ALL="$ALL ovs"
mkdir -p "$OUT"

machine() {
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	mem=$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
	cc=$( (cc --version 2>/dev/null || gcc --version) | head -1)
	thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo "?")
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo "?")
	dirty=$(git status --porcelain -- src include bench tools ':!bench/results' 2>/dev/null | head -1)
	[ -n "$dirty" ] && commit="$commit+changes"
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	printf '{"nproc":%s,"cpu":"%s","memory":"%s","kernel":"%s","compiler":"%s","thp":"%s","commit":"%s","date":"%s","quick":%s,"loadavg_before":"%s"}\n' \
		"$(nproc)" "$cpu" "$mem" "$(uname -r)" "$cc" "$thp" "$commit" \
		"$(date -u +%Y-%m-%dT%H:%MZ)" "$([ -n "$QUICK" ] && echo true || echo false)" "$load"
}

if [ "$REPORT_ONLY" = 0 ]; then
	[ -x "$BIN" ] || { echo "bench.sh: $BIN not built (run make)" >&2; exit 1; }
	machine > "$OUT/machine.json"
	for name in ${ONLY:-$ALL}; do
		start=$(date +%s)
		printf 'bench.sh: %-10s ' "$name" >&2
		tmp="$OUT/$name.json.tmp"
		set +e
		"$BIN" "$name" --json $QUICK > "$tmp" 2> "$OUT/$name.stderr"
		rc=$?
		set -e
		if [ $rc = 2 ] && grep -q "not written yet" "$OUT/$name.stderr"; then
			echo "skipped (not written yet)" >&2
			rm -f "$tmp" "$OUT/$name.stderr"
			continue
		fi
		mv "$tmp" "$OUT/$name.json"
		[ -s "$OUT/$name.stderr" ] || rm -f "$OUT/$name.stderr"
		echo "$(wc -l < "$OUT/$name.json") results, $(( $(date +%s) - start )) s$( [ $rc = 0 ] || echo ", exit status $rc (see $OUT/$name.stderr)")" >&2
	done
fi

python3 - "$OUT" BENCHMARKS.md <<'PYEOF'
import json, os, re, subprocess, sys

out, md_path = sys.argv[1], sys.argv[2]

def load(name):
    p = os.path.join(out, name + ".json")
    if not os.path.exists(p):
        return []
    rows = []
    for line in open(p):
        line = line.strip()
        if line.startswith("{"):
            rows.append(json.loads(line))
    return rows

def fmt(v, nd=3):
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int,)) and not isinstance(v, bool):
        return f"{v:,}".replace(",", " ")
    if isinstance(v, float):
        if v == 0:
            return "0"
        a = abs(v)
        if a >= 1000:
            return f"{v:,.0f}".replace(",", " ")
        if a >= 100:
            return f"{v:.0f}"
        if a >= 10:
            return f"{v:.1f}"
        if a >= 1:
            return f"{v:.2f}"
        return f"{v:.{nd}g}"
    return str(v)

def table(rows, cols, heads=None):
    if not rows:
        return "_(no results: run `make bench`)_\n"
    heads = heads or cols
    s = "| " + " | ".join(heads) + " |\n"
    s += "|" + "|".join("---" for _ in cols) + "|\n"
    for r in rows:
        s += "| " + " | ".join(fmt(r.get(c, "")) for c in cols) + " |\n"
    return s

def pick(rows, **kw):
    return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]

def one(rows, **kw):
    p = pick(rows, **kw)
    return p[0] if p else None

blocks = {}
plots = []     # (name, gnuplot script)

# ---- machine ----
m = {}
mp = os.path.join(out, "machine.json")
if os.path.exists(mp):
    m = json.load(open(mp))
blocks["machine"] = (
    f"- CPUs: {m.get('nproc','?')} x {m.get('cpu','?')}\n"
    f"- memory: {m.get('memory','?')}; transparent huge pages: `{m.get('thp','?')}`\n"
    f"- kernel: {m.get('kernel','?')}; compiler: {m.get('compiler','?')}\n"
    f"- ctrack commit: {m.get('commit','?')}; run: {m.get('date','?')}"
    f"{' (--quick)' if m.get('quick') else ''}; load average before the run: {m.get('loadavg_before','?')}\n")

# ---- targets ----
targets = []
def target(name, ok, value, goal):
    targets.append({"target": name, "measured": value, "goal": goal,
                    "met": ("met" if ok else "**missed**") if ok is not None else "n/a"})

gy = load("gc-yield")
for lock in ("lock-nonempty", "due-rows"):
    for rcu in ("memb", "qsbr"):
        t = one(gy, variant="throttled", lock=lock, rcu=rcu)
        if t:
            target(f"gc-yield {lock} {rcu}: throttled faster than every-row",
                   t["faster_pct"] >= 15, f"{t['faster_pct']:.0f}%", ">= 15%")
            target(f"gc-yield {lock} {rcu}: throttled pass",
                   t["us_per_pass"] <= 100, f"{t['us_per_pass']:.0f} us", "<= 100 us")
blocks["gc-yield"] = table(gy, ["variant", "lock", "rcu", "rows", "entries", "us_per_pass",
                                "us_per_pass_p90", "ns_per_row", "rows_locked_per_pass",
                                "yields_per_pass", "faster_pct"])

gi = load("gc-idle")
for r in gi:
    # due-time: the bounds scan the issue names; wheel: the default since
    # stop 16 (the due rows found in a timer wheel)
    if r["variant"] in ("due-time", "wheel") and r["schedule"] == "fixed-1s":
        target(f"gc-idle {r['variant']}: CPU with one pass per second", r["cpu_pct"] <= 0.01,
               f"{r['cpu_pct']:.4f}% of a core", "<= 0.01%")
        target(f"gc-idle {r['variant']}: idle pass", r["us_per_pass"] <= 1000,
               f"{r['us_per_pass']:.0f} us", "<= 1 ms")
    if r["variant"] in ("due-time", "wheel") and r["schedule"] == "adaptive-thread":
        target(f"gc-idle {r['variant']}: library collector thread, idle", r["cpu_pct"] <= 0.01,
               f"{r['cpu_pct']:.4f}% of a core", "<= 0.01%")
blocks["gc-idle"] = table(gi, ["variant", "schedule", "conns", "rows", "passes", "cpu_pct",
                               "us_per_pass", "rows_visited_per_pass", "rows_locked_per_pass",
                               "groups_skipped_per_pass", "us_seed_walk"])

gb = load("gc-busy")
for r in gb:
    if r.get("events") == "off" and r.get("clock") == "driven":
        fd = r.get("finder", "scan")
        scan = one(gb, clock="driven", events="off", interval_ms=r["interval_ms"], finder="scan")
        vs = (f"; x{r['ns_per_expired'] / scan['ns_per_expired']:.2f} the scan's, same run"
              if fd == "wheel" and scan else "")
        target(f"gc-busy driven, pass every {r['interval_ms']:.0f} ms, "
               f"{'wheel (default)' if fd == 'wheel' else 'scan'}: CPU per expired entry",
               r["ns_per_expired"] <= 100,
               (f"{r['ns_per_expired']:.0f} ns"
                + (f", median of {r['rounds']} rounds ({r['ns_per_expired_rounds_min']:.0f}-"
                   f"{r['ns_per_expired_rounds_max']:.0f})" if r.get("rounds", 1) > 1 else "")
                + vs), "<= 100 ns")
    if (r.get("events") == "off" and r.get("clock") == "driven" and r.get("finder") == "wheel"
            and r["interval_ms"] == 10 and "create_ns_per_flow" in r):
        # the packet path in the same steady state: each new entry takes
        # memory an expired one gave back (the throughput rows fill a
        # fresh namespace)
        target("new connections (one-packet UDP), 1M table turned over, 1 thread, "
               "the default collector passing every 10 ms (gc-busy driven)",
               1000 / r["create_ns_per_flow"] >= 5,
               f"{1000 / r['create_ns_per_flow']:.2f} M/s ({r['create_ns_per_flow']:.0f} ns a flow in ct_process_burst)",
               ">= 5 M/s")
    if "lateness_max_ms" in r:
        target(f"gc-busy {r['variant']}: lateness max",
               r["lateness_max_ms"] <= 1000, f"{r['lateness_max_ms']:.0f} ms (p99 {r['lateness_p99_ms']:.0f})",
               "<= 1 s")
blocks["gc-busy"] = table(gb, ["variant", "finder", "clock", "interval_ms", "events", "passes", "expired",
                               "expired_per_pass", "rows_visited_per_expired", "ns_per_expired",
                               "ns_per_expired_rounds_min", "ns_per_expired_rounds_max",
                               "create_ns_per_flow", "lateness_p50_ms", "lateness_p99_ms", "lateness_max_ms"])

tp = load("throughput")
def tpv(work, flows, pop=None, threads=1, gc="off", path="parsed", acct="off"):
    # results from before the acct field ran with counters on
    for r in tp:
        if (r["work"] == work and r["flows"] == flows and r["threads"] == threads
                and r["gc"] == gc and r["path"] == path and (pop is None or r["pop"] == pop)
                and r.get("acct", "on") == acct):
            return r
    return None
def rounds_txt(r):
    if "rounds" not in r:
        return f"{r['mpps_p50_per_thread']:.2f} Mpps by the median burst (mean {r['mpps_per_thread']:.2f})"
    return (f"{r['mpps_p50_rounds_median']:.2f} Mpps, median of {r['rounds']} rounds "
            f"(best {r['mpps_p50_rounds_best']:.2f}, worst {r['mpps_p50_rounds_worst']:.2f}; "
            f"each round's median burst)")
def rounds_rate(r):
    return r.get("mpps_p50_rounds_median", r["mpps_p50_per_thread"])
# rates are judged by the median burst (64 packets over the median burst
# time): on a shared machine the mean also counts the bursts that waited
# for the CPU; both are shown
# two threads against one: the median of back-to-back pairs, judged next
# to what the machine gave two threads that share nothing in the same run
# ("n/a" where that ceiling is itself below the goal)
ceil = next((c for c in tp if c["variant"] == "cpu-ceiling-2t-next-to-1M"), None)
def scaling_target(name, r2):
    sc = r2.get("scaling_vs_1t", 0)
    if not ceil:
        target(name, sc >= 1.8, f"{sc:.2f}x (2 cores shared with other work)", ">= 1.8x")
        return
    cs = ceil["scaling_vs_1t"]
    target(name, True if sc >= 1.8 else (None if cs < 1.8 else False),
           f"{sc:.2f}x, median of {r2.get('rounds', 1)} back-to-back pairs "
           f"({r2.get('scaling_rounds_min', sc):.2f}-{r2.get('scaling_rounds_max', sc):.2f}x); "
           f"this machine gives two threads that share nothing {cs:.2f}x", ">= 1.8x")
for pop in ("uniform", "zipf"):
    r = tpv("est", 1000000, pop)
    if r:
        target(f"throughput est 1M {pop}, 1 thread", rounds_rate(r) >= 10, rounds_txt(r),
               ">= 10 Mpps")
    rc = tpv("est", 1000000, pop, acct="on")
    if rc and r and "acct" in r:
        target(f"throughput est 1M {pop}, 1 thread, counters on (nf_conntrack_acct=1)",
               rounds_rate(rc) >= 10, rounds_txt(rc), ">= 10 Mpps")
    r2 = tpv("est", 1000000, pop, threads=2)
    if r and r2:
        scaling_target(f"throughput est 1M {pop}: 2 threads vs 1", r2)
    ra = tpv("est", 1000000, pop, gc="alternating")
    rg = tpv("est", 1000000, pop, gc="due-time")
    if ra and "p99_vs_gc_off" in ra:
        # the collector started and stopped every 50 ms in one run: the
        # bursts with it against those without it, side by side
        target(f"throughput est 1M {pop}: burst p99 with the collector (alternating, one run)",
               ra["p99_vs_gc_off"] <= 1.10,
               f"x{ra['p99_vs_gc_off']:.2f} ({ra['burst_us_p99_gc_on']:.1f} vs "
               f"{ra['burst_us_p99_gc_off']:.1f} us; {ra['bursts_gc_on']} / "
               f"{ra['bursts_gc_off']} bursts)", "<= x1.10")
    elif rg and "p99_vs_gc_off" in rg:
        target(f"throughput est 1M {pop}: burst p99 with the collector",
               rg["p99_vs_gc_off"] <= 1.10, f"x{rg['p99_vs_gc_off']:.2f}", "<= x1.10")
for work, what in (("new-udp", "one-packet UDP"), ("new-tcp", "whole TCP, 8 packets")):
    r = tpv(work, 1000000)
    if r and "rounds" in r:
        # one packet a connection: the rates are connection rates
        target(f"new connections ({what}), 1M table, 1 thread", rounds_rate(r) >= 5,
               rounds_txt(r).replace("Mpps", "M/s"), ">= 5 M/s")
    elif r:
        p50 = r.get("mconns_p50_per_thread", r["mconns_per_s_per_thread"])
        target(f"new connections ({what}), 1M table, 1 thread", p50 >= 5,
               f"{p50:.2f} M/s by the median burst (mean {r['mconns_per_s_per_thread']:.2f})",
               ">= 5 M/s")
    r2 = tpv(work, 1000000, threads=2)
    if r and r2 and ceil and "rounds" in r2:
        scaling_target(f"new connections ({what}), 1M table: 2 threads vs 1", r2)
    # the default collector (the wheel) running throughout: every insert
    # queues a slot handle that it empties into its wheel
    rw = tpv(work, 1000000, gc="wheel")
    if rw:
        p50 = rw.get("mconns_p50_per_thread", rw["mconns_per_s_per_thread"])
        target(f"new connections ({what}), 1M table, 1 thread, the default collector running",
               p50 >= 5, f"{p50:.2f} M/s by the median burst (mean {rw['mconns_per_s_per_thread']:.2f})",
               ">= 5 M/s")
blocks["throughput"] = table(tp, ["variant", "path", "acct", "mpps_per_thread", "mpps_p50_per_thread",
                                  "mpps_p50_rounds_median", "mpps_p50_rounds_best",
                                  "mpps_total", "ns_per_pkt", "parse_ns_per_pkt",
                                  "mconns_per_s_per_thread", "mconns_p50_per_thread",
                                  "burst_us_p50", "burst_us_p99",
                                  "scaling_vs_1t", "p99_vs_gc_off", "gc_cpu_pct"])

me = load("memory")
for r in me:
    if "turnovers" in r:
        what = (f"{r['bytes_per_conn']:.0f} B after {r['turnovers']} turnovers "
                f"({r['bytes_per_conn_after_fill']:.0f} B after the fill)")
    else:
        what = f"{r['bytes_per_conn']:.0f} B (entry {r['conn_size_bytes']}, rows {r['row_bytes_per_conn']:.0f})"
    target(f"memory {r['variant']}", r["bytes_per_conn"] <= 128, what, "<= 128 B")
blocks["memory"] = table(me, ["variant", "conns", "bytes_per_conn", "conn_size_bytes",
                              "row_bytes_per_conn", "rows", "rss_mib", "mconns_per_s_fill",
                              "turnovers", "bytes_per_conn_after_fill",
                              "overflow_rows_freed"])

td = load("teardown")
b = one(td, variant="batched")
o = one(td, variant="one-by-one")
if b:
    target(f"teardown batched, {b['namespaces']} x {b['conns_per_ns']} connections",
           b["ms"] <= 50 * b["removed"] / 1e6,
           f"{b['ms']:.1f} ms wall, {b['cpu_ms']:.1f} ms CPU for {b['removed']:,} conns",
           "<= 50 ms per 1M")
if b and o:
    target("teardown batched vs one by one (wall)", o["ms"] / b["ms"] >= 20,
           f"{o['ms'] / b['ms']:.1f}x", ">= 20x")
os_ = one(td, variant="one-by-one-sweep")
if b and os_:
    target("teardown batched vs one by one, kernel-style sweep per namespace (wall)",
           os_["ms"] / b["ms"] >= 20, f"{os_['ms'] / b['ms']:.1f}x", ">= 20x")
e = one(td, variant="empty-ns-destroy")
if e:
    target("destroy an empty namespace next to a big table", e["us"] <= 100,
           f"{e['us']:.0f} us ({e['table_conns']:,} conns in the table)", "microseconds")
blocks["teardown"] = table(td, ["variant", "namespaces", "conns_per_ns", "removed", "ms",
                                "cpu_ms", "ns_per_conn", "bg_rate_share", "ratio", "us"])

rd = load("read")
for r in rd:
    if r["stage"] == "ctrack-read":
        target(f"read {r['capture']}: ctrack read vs libpcap", r.get("ratio", 0) >= 0.5,
               f"{r.get('ratio', 0):.2f} ({r['mpps']:.2f} vs libpcap)", "bounded by reading")
blocks["read"] = table(rd, ["capture", "stage", "packets", "mib", "mpps", "ns_per_pkt",
                            "cpu_s", "wall_s", "ratio"])

ov = load("ovs")
ovrows = []
for r in ov:
    # rows carry <peer>_<unit> and ctrack_<unit>; the *_wall_* twins and
    # the commands stay in the JSON
    vals = [k for k in r if k.startswith("ctrack_") and k not in ("ctrack_cmd",)
            and "_wall_" not in k]
    unit = vals[0][len("ctrack_"):] if vals else ""
    peer = next((k for k in r if k.endswith("_" + unit) and not k.startswith("ctrack_")
                 and "_wall_" not in k), None) if unit else None
    params = ", ".join(f"{k}={r[k]}" for k in r if k not in
                       ("bench", "workload", "metric", "ratio", "target", "met", "runs",
                        "timed", "run_ratio_min", "run_ratio_max")
                       and not k.endswith("_cmd") and k not in vals
                       and k != peer and "_wall_" not in k)
    row = {"workload": r.get("workload"), "metric": r.get("metric"), "params": params,
           "unit": unit, "peer": peer.rsplit("_" + unit, 1)[0] if peer else "",
           "peer_value": r.get(peer) if peer else "", "ctrack_value": r.get(vals[0]) if vals else "",
           "ratio": r.get("ratio"), "runs": r.get("runs"),
           # one pair of alternating runs: the spread of the comparison
           "one_run_ratio": (f"{r['run_ratio_min']:.2f}-{r['run_ratio_max']:.2f}"
                             if "run_ratio_max" in r else "")}
    ovrows.append(row)
    if "target" in r:
        spread = f" (one run {row['one_run_ratio']}x)" if row["one_run_ratio"] else ""
        target(f"ovs {r.get('workload')} {r.get('metric')} ({params})", r.get("met"),
               f"{r.get('ratio')}x{spread}", f">= {r['target']}x")
blocks["ovs"] = table(ovrows, ["workload", "metric", "params", "peer", "peer_value",
                               "ctrack_value", "unit", "ratio", "one_run_ratio", "runs"]) if ov else \
    "_(no results: run `scripts/bench.sh ovs` - it builds Open vSwitch once, in a cache outside the repository)_\n"

blocks["targets"] = table(targets, ["target", "measured", "goal", "met"])

# ---- plots (SVG) ----
def plot(name, script, data):
    dat = os.path.join(out, name + ".dat")
    with open(dat, "w") as f:
        f.write(data)
    svg = os.path.join(out, name + ".svg")
    gp = ("set terminal svg size 760,420 dynamic font 'sans,11'\n"
          f"set output '{svg}'\nset datafile separator '\\t'\n"
          "set termoption noenhanced\nset grid ytics\nset key top right\n" +
          script.replace("DAT", dat))
    try:
        subprocess.run(["gnuplot"], input=gp.encode(), check=True,
                       stderr=subprocess.PIPE)
        if os.environ.get("BENCH_PNG"):
            # PNG copies for viewers without SVG (not linked, not kept)
            png = gp.replace("set terminal svg size 760,420 dynamic font 'sans,11'",
                             "set terminal pngcairo size 760,420 font 'sans,10'")
            png = png.replace(f"set output '{svg}'", f"set output '{svg[:-4]}.png'")
            subprocess.run(["gnuplot"], input=png.encode(), check=True,
                           stderr=subprocess.PIPE)
        plots.append(name)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"bench.sh: gnuplot failed for {name}: {e}", file=sys.stderr)

hist = ("set style data histograms\nset style histogram clustered gap 1\n"
        "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset xtics rotate by -20\n")

if gy:
    keys = sorted({(r["lock"], r["rcu"]) for r in gy})
    data = "config\tevery-row\tthrottled\n"
    for lock, rcu in keys:
        e = one(gy, variant="every-row", lock=lock, rcu=rcu)
        t = one(gy, variant="throttled", lock=lock, rcu=rcu)
        if e and t:
            data += f"{lock} {rcu}\t{e['us_per_pass']}\t{t['us_per_pass']}\n"
    plot("gc-yield", hist + "set ylabel 'us per pass (median)'\n"
         "set title 'gc-yield: a full pass, 16,384 rows, 10,000 entries'\n"
         "plot 'DAT' using 2:xtic(1) title columnhead, '' using 3 title columnhead\n", data)

if gi:
    data = "policy\tcpu_pct\n"
    for r in gi:
        data += f"{r['variant']} ({r['schedule']})\t{max(r['cpu_pct'], 1e-5)}\n"
    plot("gc-idle", hist + "set logscale y\nset ylabel '% of a core (log)'\n"
         "set title 'gc-idle: 1M long-lived connections, nothing due'\n"
         "plot 'DAT' using 2:xtic(1) notitle\n", data)

if gb:
    drv = [r for r in gb if r.get("clock") == "driven" and r.get("events") == "on"
           and r.get("finder", "scan") == "scan"]
    if drv:
        data = "interval_ms\tscan\twheel\tlateness_p99_ms\n"
        for r in sorted(drv, key=lambda r: r["interval_ms"]):
            off = one(gb, clock="driven", events="off", interval_ms=r["interval_ms"], finder="scan")
            wh = one(gb, clock="driven", events="off", interval_ms=r["interval_ms"], finder="wheel")
            data += (f"{r['interval_ms']}\t{(off or r)['ns_per_expired']}\t"
                     f"{wh['ns_per_expired'] if wh else 'NaN'}\t{r['lateness_p99_ms']}\n")
        plot("gc-busy", "set logscale x\nset xlabel 'pass interval (ms)'\n"
             "set ylabel 'ns per expired entry'\nset y2label 'lateness p99 (ms)'\n"
             "set ytics nomirror\nset y2tics\n"
             "set title 'gc-busy: 1M entries, 10% due per second (driven clock)'\n"
             "plot 'DAT' using 1:2 with linespoints title 'scan: CPU per expired (no events)', "
             "'' using 1:3 with linespoints title 'wheel: CPU per expired (no events)', "
             "'' using 1:4 axes x1y2 with linespoints title 'lateness p99'\n", data)

if tp:
    est = [r for r in tp if r["work"] == "est" and r["threads"] == 1 and r["path"] == "parsed"]
    flows = sorted({r["flows"] for r in est})
    data = "flows\tuniform\tzipf\tuniform+gc\tzipf+gc\n"
    for f in flows:
        vals = []
        for pop, gc in (("uniform", "off"), ("zipf", "off"), ("uniform", "due-time"), ("zipf", "due-time")):
            r = tpv("est", f, pop, gc=gc)
            vals.append(str(rounds_rate(r)) if r else "NaN")
        label = f"{f // 1000000}M" if f >= 1000000 else f"{f // 1000}k"
        data += label + "\t" + "\t".join(vals) + "\n"
    plot("throughput", hist + "set ylabel 'Mpps per thread (median burst; of rounds, where run)'\nset yrange [0:*]\n"
         "set title 'throughput: established TCP flows, 1 thread'\n"
         "plot 'DAT' using 2:xtic(1) title columnhead, '' using 3 title columnhead, "
         "'' using 4 title columnhead, '' using 5 title columnhead\n", data)

if td:
    ks = sorted([r for r in td if r["variant"].startswith("batch-k")], key=lambda r: r["namespaces"])
    if ks:
        data = "namespaces\tms\tcpu_ms\n" + "".join(
            f"{r['namespaces']}\t{r['ms']}\t{r['cpu_ms']}\n" for r in ks)
        plot("teardown", "set logscale xy\nset xlabel 'namespaces in the batch (100 connections each)'\n"
             "set ylabel 'ms'\nset title 'teardown: one batched ct_ns_destroy'\n"
             "plot 'DAT' using 1:2 with linespoints title 'wall', "
             "'' using 1:3 with linespoints title 'CPU'\n", data)

if me:
    data = "variant\tbytes_per_conn\n" + "".join(f"{r['variant']}\t{r['bytes_per_conn']}\n" for r in me)
    plot("memory", hist + "set ylabel 'bytes per connection'\nset yrange [0:*]\n"
         "set title 'memory: RSS growth per connection'\n"
         "plot 'DAT' using 2:xtic(1) notitle, 128 with lines dt 2 title 'target'\n", data)

if rd:
    caps = []
    for r in rd:
        if r["capture"] not in caps:
            caps.append(r["capture"])
    stages = ["libpcap", "cap+parse", "cap+parse+track", "cap+parse+track-burst",
              "ctrack-read"]
    data = "capture\t" + "\t".join(stages) + "\n"
    for c in caps:
        vals = []
        for s in stages:
            r = one(rd, capture=c, stage=s)
            vals.append(str(r["mpps"]) if r else "NaN")
        data += c.replace(".pcap", "").replace(".gz", "")[:24] + "\t" + "\t".join(vals) + "\n"
    plot("read", hist + "set ylabel 'Mpps (CPU time)'\nset key top right\n"
         "set title 'read: captures through each stage'\n"
         "set key outside right\n"
         "plot 'DAT' using 2:xtic(1) title columnhead, '' using 3 title columnhead, "
         "'' using 4 title columnhead, '' using 5 title columnhead, "
         "'' using 6 title columnhead\n", data)

blocks["plots"] = "".join(f"![{p}](bench/results/{p}.svg)\n" for p in plots) or "_(no plots)_\n"

# ---- rewrite the generated blocks ----
md = open(md_path).read()
for key, text in blocks.items():
    pat = re.compile(r"(<!-- BEGIN generated:%s -->\n).*?(<!-- END generated:%s -->)" %
                     (re.escape(key), re.escape(key)), re.S)
    md, n = pat.subn(lambda mo: mo.group(1) + text + mo.group(2), md)
    if n == 0:
        print(f"bench.sh: BENCHMARKS.md has no block '{key}'", file=sys.stderr)
open(md_path, "w").write(md)
print(f"bench.sh: BENCHMARKS.md updated ({len(targets)} targets, {len(plots)} plots)",
      file=sys.stderr)
PYEOF
