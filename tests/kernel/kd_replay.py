# SPDX-License-Identifier: BSD-3-Clause
"""kd_replay: any capture, replayed into the kernel's router.

The addresses in a replayed capture are arbitrary, so the router cannot route
them by destination.  Instead:
  * every flow gets a direction from its first packet: the side that sent it
    is the "client".  Client-to-server packets enter the router on r0, the
    others on r1.  An ICMP error goes the way a reply to the packet it quotes
    would go (it travels towards that packet's sender); a non-first fragment
    goes the way its first fragment went.
  * the router routes by the port a packet came in on (policy rules on iif):
    whatever enters on r0 leaves by r1 and the other way round, towards a
    gateway with a permanent neighbour entry, so every destination is
    forwardable and no ARP/ND waits.  rp_filter is off.
  * both ports' far ends live in one "inject" namespace with no addresses, no
    IPv6 and an ingress drop: nothing there answers the router, and one
    tcpreplay process sends every packet in capture order on the right port,
    steered by a tcpprep cache file this module writes itself (2 bits per
    packet: send, primary/secondary interface).
  * frames are rebuilt as Ethernet + IP with the router port's MAC as
    destination (tcprewrite 4.4.3 turns unicast IPv6 destination MACs into
    33:33:..., so MACs are written here), and checksums are recomputed
    (captures taken with transmit offload carry partial checksums, which
    nf_conntrack_checksum=1 calls INVALID).  VLAN tags, PPPoE, cooked and raw
    link layers are removed; frames that are not IP are left out.
  * gaps longer than 2 s are cut to 2 s, and if the result still takes longer
    than --replay-seconds, tcpreplay speeds it up evenly.  Both trackers see
    the same times, because ctrack reads what ctcap recorded at the router,
    not the original capture.
Packets the router never forwards (TTL <= 1, link-local, martians, multicast
it did not join) reach conntrack anyway and can update an existing entry, but
never leave an entry of their own: the comparison marks such extra entries.
"""

import os
import struct
import subprocess
import time

import kd_netns
import kd_pcap
import kd_run

MTU = 9000
GAP_CAP_S = 2.0


class ReplayTopology(kd_netns.Topology):
    """inject --a0/r0-- router --r1/b0-- inject"""

    def __init__(self):
        super().__init__()
        tag = self.names["router"][:-2]
        self.names = {"inject": tag + "-i", "router": tag + "-r"}

    def build(self, router_sysctls=None):
        kd_netns.remove_stale()
        for role in self.names:
            kd_netns.run(["ip", "netns", "add", self.names[role]])
            self.created.append(self.names[role])
            self.ip(role, "link", "set", "lo", "up")
        self._veth("inject", "a0", "router", "r0")
        self._veth("inject", "b0", "router", "r1")
        self.sysctl("inject", {"net.ipv6.conf.all.disable_ipv6": 1,
                               "net.ipv6.conf.default.disable_ipv6": 1,
                               "net.ipv6.conf.a0.disable_ipv6": 1,
                               "net.ipv6.conf.b0.disable_ipv6": 1})
        self.sysctl("router", {"net.ipv6.conf.all.accept_dad": 0,
                               "net.ipv6.conf.default.accept_dad": 0,
                               "net.ipv6.conf.all.router_solicitations": 0,
                               "net.ipv6.conf.default.router_solicitations": 0})
        for role, ifn in (("inject", "a0"), ("inject", "b0"), ("router", "r0"),
                          ("router", "r1")):
            self.ip(role, "link", "set", ifn, "mtu", str(MTU))
            kd_netns.offloads_off(self.names[role], ifn)
            self.ip(role, "link", "set", ifn, "up")
        self.nft("inject", "table netdev silence {\n"
                 " chain a { type filter hook ingress device a0 priority 0; policy drop; }\n"
                 " chain b { type filter hook ingress device b0 priority 0; policy drop; }\n}\n")
        mac_a, mac_b = self.mac("inject", "a0"), self.mac("inject", "b0")
        # Whatever enters on one port leaves by the other.
        for table, out, gw4, gw6, mac in ((100, "r1", "169.254.71.2", "fe80::71:2", mac_b),
                                          (200, "r0", "169.254.71.1", "fe80::71:1", mac_a)):
            iif = "r0" if out == "r1" else "r1"
            self.ip("router", "neigh", "replace", gw4, "lladdr", mac, "dev", out, "nud",
                    "permanent")
            self.ip("router", "-6", "neigh", "replace", gw6, "lladdr", mac, "dev", out, "nud",
                    "permanent")
            self.ip("router", "route", "add", "default", "via", gw4, "dev", out, "onlink",
                    "table", str(table))
            self.ip("router", "-6", "route", "add", "default", "via", gw6, "dev", out,
                    "table", str(table))
            self.ip("router", "rule", "add", "iif", iif, "lookup", str(table), "pref", "100")
            self.ip("router", "-6", "rule", "add", "iif", iif, "lookup", str(table), "pref",
                    "100")
        self.setup_router(router_sysctls or {})
        self.sysctl("router", {"net.ipv6.conf.all.accept_ra": 0})
        return self


# -- preparing the frames -------------------------------------------------------

def _mac(text):
    return bytes(int(x, 16) for x in text.split(":"))


def plan(packets):
    """Assigns each IP packet a direction (0: enters on r0, 1: on r1).
    Returns [(ts, ip_bytes, direction)] and a dict of figures."""
    flows = {}
    pairs = {}
    frag_dir = {}
    out = []
    fig = {"packets": len(packets), "ip": 0, "not_ip": 0, "v4": 0, "v6": 0, "flows": 0,
           "icmp_errors": 0, "fragments": 0, "truncated": 0, "malformed": 0}

    def orient(key, a):
        """Direction of a packet whose sending endpoint is a, in flow key."""
        if key not in flows:
            flows[key] = a
            fig["flows"] += 1
        return 0 if flows[key] == a else 1

    def pair_dir(src, dst):
        k = (min(str(src), str(dst)), max(str(src), str(dst)))
        if k not in pairs:
            pairs[k] = str(src)
        return 0 if pairs[k] == str(src) else 1

    for pk in packets:
        _, ip = kd_pcap.l3_of(pk)
        if ip is None or not ip:
            fig["not_ip"] += 1
            continue
        info = kd_pcap.parse_ip(ip)
        if not info.ok:
            # Malformed IP still goes in (on r0): the router's IP layer drops it
            # before conntrack, and ctrack must drop it too.
            fig["ip"] += 1
            fig["malformed"] += 1
            out.append((pk.ts, ip, 0))
            continue
        fig["ip"] += 1
        fig["v%d" % info.v] += 1
        if len(pk.data) < pk.wire_len:
            fig["truncated"] += 1
        if info.frag_later:
            fig["fragments"] += 1
            d = frag_dir.get((info.v, str(info.src), str(info.dst), info.ipid))
            if d is None:
                d = pair_dir(info.src, info.dst)
        elif info.inner is not None:
            fig["icmp_errors"] += 1
            inner = info.inner
            if inner.src is not None:
                k = kd_pcap.flow_key(inner)
                if k in flows:
                    d = 1 - orient(k, kd_pcap.endpoint_pair(inner))
                else:
                    d = pair_dir(info.src, info.dst)
            else:
                d = pair_dir(info.src, info.dst)
        else:
            d = orient(kd_pcap.flow_key(info), kd_pcap.endpoint_pair(info))
            pair_dir(info.src, info.dst)
            if info.frag_first:
                fig["fragments"] += 1
                frag_dir[(info.v, str(info.src), str(info.dst), info.ipid)] = d
        out.append((pk.ts, ip, d))
    return out, fig


def write_cache(path, dirs):
    """A tcpprep cache (version 04): per packet a send bit and an interface bit
    (1 = primary, -i; 0 = secondary, -I), four packets to a byte."""
    data = bytearray((len(dirs) + 3) // 4)
    for i, d in enumerate(dirs):
        bit = (i % 4) * 2 + 1
        data[i // 4] |= 1 << bit          # send
        if d == 0:
            data[i // 4] |= 1 << (bit - 1)  # primary interface
    comment = b"ctrack kernel oracle: per-flow direction"
    hdr = struct.pack(">8s4sQHH", b"tcpprep\0", b"04\0\0", len(dirs), 4, len(comment))
    with open(path, "wb") as f:
        f.write(hdr + comment + bytes(data))


def prepare(capture, outdir, mac_r0, mac_r1, mac_a0, mac_b0):
    """Writes replay.pcap and replay.cache; returns (figures, duration_s)."""
    packets = kd_pcap.read_capture(capture)
    planned, fig = plan(packets)
    frames = []
    dirs = []
    t_prev = t_new = None
    fig["too_big"] = 0
    for ts, ip, d in planned:
        if len(ip) > MTU:
            fig["too_big"] += 1  # no port takes it (a capture of offloaded super-packets)
            continue
        et = b"\x86\xdd" if (ip[0] >> 4) == 6 else b"\x08\x00"
        dst, src = (mac_r0, mac_a0) if d == 0 else (mac_r1, mac_b0)
        if t_prev is None:
            t_new = 1.0
        else:
            t_new += min(max(0.0, ts - t_prev), GAP_CAP_S)
        t_prev = ts
        frames.append((t_new, dst + src + et + kd_pcap.fix_checksums(ip)))
        dirs.append(d)
    kd_pcap.write_pcap(os.path.join(outdir, "replay.pcap"), frames, nanos=False)
    write_cache(os.path.join(outdir, "replay.cache"), dirs)
    fig["to_r0"] = dirs.count(0)
    fig["to_r1"] = dirs.count(1)
    duration = frames[-1][0] - frames[0][0] if frames else 0.0
    return fig, duration


def run_replay(capture, outdir, ctcap, max_seconds=20.0):
    os.makedirs(outdir, exist_ok=True)
    res = kd_run.KernelResult("replay " + os.path.basename(capture), outdir)
    topo = ReplayTopology()
    rec = None
    fig = {}
    try:
        topo.build()
        macs = [_mac(topo.mac(r, i)) for r, i in (("router", "r0"), ("router", "r1"),
                                                   ("inject", "a0"), ("inject", "b0"))]
        fig, duration = prepare(capture, outdir, *macs)
        res.notes.append("%(ip)d IP packets (%(v4)d v4, %(v6)d v6) of %(packets)d, %(flows)d "
                         "flows, %(to_r0)d in on r0 / %(to_r1)d on r1, %(icmp_errors)d ICMP "
                         "errors, %(fragments)d fragments, %(truncated)d cut short, %(malformed)d malformed, "
                         "%(not_ip)d not IP and %(too_big)d over %(mtu)d bytes (left out)"
                         % dict(fig, mtu=MTU))
        rec = kd_run.Recorder(topo, res, ctcap)
        time.sleep(0.2)
        if fig["ip"]:
            argv = ["tcpreplay", "-q", "-i", "a0", "-I", "b0", "-c",
                    os.path.join(outdir, "replay.cache")]
            if duration > max_seconds:
                argv += ["-x", "%.3f" % (duration / max_seconds)]
            argv.append(os.path.join(outdir, "replay.pcap"))
            p = subprocess.run(topo.exec_argv("inject", argv), capture_output=True, text=True,
                               timeout=max_seconds * 3 + 60)
            with open(os.path.join(outdir, "tcpreplay.log"), "w") as f:
                f.write(p.stdout + p.stderr)
            if p.returncode != 0:
                res.problems.append("tcpreplay exit %d: %s" % (p.returncode,
                                                                p.stderr.strip()[-300:]))
        time.sleep(0.5)
        rec.dump()
    except Exception as e:
        res.problems.append("replay failed: %r" % e)
    finally:
        if rec and res.t_dump is None:
            try:
                rec.dump()
            except Exception as e:
                res.problems.append("dump failed: %r" % e)
        if rec:
            rec.stop()
        topo.teardown()
    if res.notes and (res.notes[0].startswith("0 IP packets") or
                      fig.get("ip", 0) == fig.get("too_big", 0)):
        res.skip = "no IP packet to replay"
    elif os.path.exists(res.table_file):
        kd_run.load_kernel_side(res)
    res.save()
    return res
