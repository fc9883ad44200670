# SPDX-License-Identifier: BSD-3-Clause
"""kd_traffic: real traffic between the client and server namespaces.

Every packet in a scenario comes from the kernel's own TCP/IP stacks: the
helpers here open ordinary sockets inside the client or server namespace
(kd_netns.inside) and drive them from threads of the harness process, which
gives one clock and exact control over who does what when (a simultaneous
close, a peer that stops answering).  Ping uses the kernel's ICMP sockets
(ping_group_range is opened in the end hosts), so ids and checksums are the
stack's own.

A Ctx lives for one scenario: it remembers every socket and thread so that
they can be closed after the router's table was read (closing earlier would
add packets the scenario did not mean to send), and it sends the end marker:
one UDP datagram client -> server that nobody answers, so the capture's last
packet marks the end of the scenario for both trackers.
"""

import errno
import http.client
import http.server
import os
import socket
import socketserver
import threading
import time

MARKER_PORT = 9999


class Ctx:
    def __init__(self, topo, workdir):
        self.topo = topo
        self.workdir = workdir
        self.socks = []
        self.threads = []
        self.servers = []
        self.notes = []
        self._fw = set()
        self.stop = threading.Event()

    # -- addressing --------------------------------------------------------
    def server_addr(self, v):
        return self.topo.server4 if v == 4 else self.topo.server6

    def client_addr(self, v):
        return self.topo.client4 if v == 4 else self.topo.client6

    @staticmethod
    def fam(v):
        return socket.AF_INET if v == 4 else socket.AF_INET6

    # -- sockets -----------------------------------------------------------
    def sock(self, role, v, kind=socket.SOCK_STREAM, proto=0):
        with self.topo.ns(role):
            s = socket.socket(self.fam(v), kind, proto)
        if v == 6:
            # IPv4 and IPv6 servers share port numbers.
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        self.socks.append(s)
        return s

    def listen(self, role, v, port, backlog=16):
        s = self.sock(role, v)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("::" if v == 6 else "0.0.0.0", port))
        s.listen(backlog)
        return s

    def udp_bind(self, role, v, port):
        s = self.sock(role, v, socket.SOCK_DGRAM)
        s.bind(("::" if v == 6 else "0.0.0.0", port))
        return s

    def connect(self, v, port, timeout=5.0, ttl=None, src_port=0, **opts):
        s = self.sock("client", v)
        if ttl is not None:
            self.set_ttl(s, v, ttl)
        if src_port:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("::" if v == 6 else "0.0.0.0", src_port))
        s.settimeout(timeout)
        s.connect((self.server_addr(v), port))
        return s

    @staticmethod
    def set_ttl(s, v, ttl):
        if v == 4:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, ttl)
        else:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, ttl)

    def thread(self, fn, *args):
        t = threading.Thread(target=self._guard, args=(fn,) + args, daemon=True)
        t.start()
        self.threads.append(t)
        return t

    def _guard(self, fn, *args):
        try:
            fn(*args)
        except Exception as e:  # a server thread must not kill the run
            self.notes.append("thread %s: %r" % (getattr(fn, "__name__", fn), e))

    def host_drop(self, role, match):
        """Makes an end host's stack deaf to packets that match (an nft input drop)."""
        if role not in self._fw:
            self.topo.nft(role, "table inet hostfw {\n chain input {\n"
                          "  type filter hook input priority 0; policy accept;\n }\n}\n")
            self._fw.add(role)
        self.topo.nft(role, "add rule inet hostfw input %s drop\n" % match)

    # -- common servers ----------------------------------------------------
    def udp_echo(self, v, port, reply=True, reply_fn=None):
        """A UDP server in the server namespace that answers each datagram (or not);
        reply_fn(data) makes the answer (default: "R" + the first 2000 bytes)."""
        s = self.udp_bind("server", v, port)
        s.settimeout(0.2)

        def loop():
            while not self.stop.is_set():
                try:
                    data, peer = s.recvfrom(65535)
                except socket.timeout:
                    continue
                except OSError:
                    return
                if reply:
                    s.sendto(reply_fn(data) if reply_fn else b"R" + data[:2000], peer)
        self.thread(loop)
        return s

    def tcp_sink_source(self, v, port, send_bytes=0, close_after=True, shut_wr_wait=None):
        """A TCP server: reads a request line, sends send_bytes, then closes (or not)."""
        ls = self.listen("server", v, port)
        ls.settimeout(0.2)
        conns = []

        def loop():
            while not self.stop.is_set():
                try:
                    c, _ = ls.accept()
                except socket.timeout:
                    continue
                except OSError:
                    return
                conns.append(c)
                self.socks.append(c)
                self.thread(serve, c)

        def serve(c):
            c.settimeout(10)
            data = b""
            while b"\n" not in data:
                d = c.recv(4096)
                if not d:
                    break
                data += d
            left = send_bytes
            chunk = b"x" * 65536
            while left > 0:
                n = c.send(chunk[:min(left, len(chunk))])
                left -= n
            if close_after:
                # Read to EOF first when the client closes first.
                c.close()
        self.thread(loop)
        return ls, conns

    def http_server(self, v, port, files):
        """python's http.server in the server namespace, serving `files` {name: bytes}."""
        root = os.path.join(self.workdir, "www%d" % v)
        os.makedirs(root, exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(root, name), "wb") as f:
                f.write(data)

        class Handler(http.server.SimpleHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def __init__(self, *a, **kw):
                super().__init__(*a, directory=root, **kw)

            def log_message(self, *a):
                pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True
            address_family = self.fam(v)

        with self.topo.ns("server"):
            srv = Server(("::" if v == 6 else "0.0.0.0", port), Handler, bind_and_activate=False)
        if v == 6:
            srv.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        srv.server_bind()
        srv.server_activate()
        self.servers.append(srv)
        self.thread(srv.serve_forever, 0.1)
        return srv

    def http_get(self, v, port, paths, keepalive=True):
        """GETs paths over one connection (keep-alive) and returns the bodies."""
        host = self.server_addr(v)
        with self.topo.ns("client"):
            conn = http.client.HTTPConnection(host, port, timeout=10)
            conn.connect()
        bodies = []
        for p in paths:
            hdrs = {} if keepalive else {"Connection": "close"}
            conn.request("GET", p, headers=hdrs)
            r = conn.getresponse()
            bodies.append(r.read())
        conn.close()
        return bodies

    # -- ping --------------------------------------------------------------
    def ping(self, v, count=3, interval=0.1, ttl=None, payload=56, expect_reply=True,
             ident=None):
        s = self.sock("client", v, socket.SOCK_DGRAM,
                      socket.IPPROTO_ICMP if v == 4 else socket.IPPROTO_ICMPV6)
        if ident is not None:
            s.bind(("::" if v == 6 else "0.0.0.0", ident))
        if ttl is not None:
            self.set_ttl(s, v, ttl)
        s.settimeout(0.5)
        got = 0
        for seq in range(1, count + 1):
            hdr = bytes([8 if v == 4 else 128, 0, 0, 0, 0, 0, seq >> 8, seq & 0xFF])
            s.sendto(hdr + b"p" * payload, (self.server_addr(v), 0))
            if expect_reply:
                try:
                    s.recvfrom(65535)
                    got += 1
                except (socket.timeout, OSError):
                    pass
            if seq < count:
                time.sleep(interval)
        return got

    # -- UDP client --------------------------------------------------------
    def udp_client(self, v, ttl=None, src_port=0):
        s = self.sock("client", v, socket.SOCK_DGRAM)
        if src_port:
            s.bind(("::" if v == 6 else "0.0.0.0", src_port))
        if ttl is not None:
            self.set_ttl(s, v, ttl)
        s.settimeout(0.5)
        return s

    def udp_ask(self, s, v, port, payload=b"q" * 40, wait_reply=True):
        s.sendto(payload, (self.server_addr(v), port))
        if not wait_reply:
            return None
        try:
            return s.recvfrom(65535)[0]
        except (socket.timeout, ConnectionRefusedError, OSError):
            return None

    # -- end marker --------------------------------------------------------
    def marker_listener(self):
        self.udp_bind("server", 4, MARKER_PORT)  # bound, never read: no ICMP answer

    def marker(self):
        s = self.udp_client(4)
        s.sendto(b"ctk-end-marker", (self.topo.server4, MARKER_PORT))
        time.sleep(0.05)

    # -- end -----------------------------------------------------------------
    def close(self):
        self.stop.set()
        for srv in self.servers:
            try:
                srv.shutdown()
                srv.server_close()
            except OSError:
                pass
        for s in self.socks:
            try:
                s.close()
            except OSError:
                pass
        for t in self.threads:
            t.join(timeout=1.0)


def drain(s, limit=1 << 30):
    """Reads from a stream socket until EOF (or limit); returns the byte count."""
    n = 0
    while n < limit:
        try:
            d = s.recv(1 << 16)
        except socket.timeout:
            break
        except OSError as e:
            if e.errno in (errno.ECONNRESET,):
                break
            raise
        if not d:
            break
        n += len(d)
    return n
