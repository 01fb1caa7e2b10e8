#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A bounded client of tests/targets/evloop.c, on 127.0.0.1.

    evloop_client.py PORT CONNS REQUESTS QUIT

Opens CONNS connections at once, then sends each REQUESTS requests
"GET c<i>-k<j>", two at a time in one write (so that one wakeup of the
server may serve two), to every connection before it reads the replies of
any: the server sees several connections ready in one epoll_wait. Checks
every reply. Then the first QUIT connections send "QUIT" and wait for the
server to close them. Prints "conn <i> 127.0.0.1:<port>" per connection (the
server's subject for it), then "done", and holds the others open until the
server closes them or dies (a kill -9), 60 s at most. Exit status 0, or 1
with the reason on stderr.
"""
import socket
import sys

TIMEOUT = 30


def read_lines(sock, buf, n):
    """The next n lines from sock, and what is left of buf."""
    lines = []
    while len(lines) < n:
        if b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            lines.append(line.decode())
            continue
        data = sock.recv(4096)
        if not data:
            raise RuntimeError("the server closed a connection early")
        buf += data
    return lines, buf


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: evloop_client.py PORT CONNS REQUESTS QUIT")
    port, nconns, nreq, nquit = (int(a) for a in sys.argv[1:])
    conns = []
    for i in range(nconns):
        s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conns.append([s, b""])
        print("conn %d 127.0.0.1:%d" % (i, s.getsockname()[1]), flush=True)
    for j in range(0, nreq, 2):
        batch = range(j, min(j + 2, nreq))
        for i, (s, _) in enumerate(conns):
            s.sendall(b"".join(b"GET c%d-k%d\n" % (i, k) for k in batch))
        for i, c in enumerate(conns):
            lines, c[1] = read_lines(c[0], c[1], len(batch))
            want = ["VALUE c%d-k%d %d" % (i, k, k + 1) for k in batch]
            if lines != want:
                raise RuntimeError("conn %d: got %r, want %r" % (i, lines, want))
    for s, _ in conns[:nquit]:
        s.sendall(b"QUIT\n")
        s.settimeout(TIMEOUT)
        if s.recv(1) != b"":
            raise RuntimeError("QUIT was answered instead of closing")
        s.close()
    print("done", flush=True)
    for s, _ in conns[nquit:]:
        s.settimeout(60)
        try:
            s.recv(1)
        except OSError:
            pass
        s.close()


if __name__ == "__main__":
    try:
        main()
    except (OSError, RuntimeError) as e:
        sys.exit("evloop_client.py: %s" % e)
