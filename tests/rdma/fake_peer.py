# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""A misbehaving peer for the exchange tests: sends garbage, a truncated
message, an oversized one, text (as ibv_rc_pingpong would), or nothing,
then closes."""
import socket
import struct
import sys
import time

MAGIC = 0x52444B54


def payload(kind):
    if kind == "garbage":
        return bytes(range(7, 7 + 92))
    if kind == "truncated":
        # A valid HELLO header, then only part of its body.
        return struct.pack(">IHHI", MAGIC, 1, 1, 92) + b"\0" * 20
    if kind == "oversized":
        return struct.pack(">IHHI", MAGIC, 1, 1, 1 << 20) + b"\0" * 100
    if kind == "close":
        return b""  # read the HELLO, answer nothing, close
    if kind == "text":
        return b"0000:000011:123456:00000000000000000000ffffc6120001\n"
    raise SystemExit("unknown kind " + kind)


def main():
    mode = sys.argv[1]
    if mode == "serve":
        port, kind = int(sys.argv[2]), sys.argv[3]
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("0.0.0.0", port))
        srv.listen(1)
        # The tests start their client on this line: a python start can take
        # seconds in a loaded emulated guest.
        print("listening on port %d" % port, flush=True)
        srv.settimeout(20)
        conn, _ = srv.accept()
        conn.recv(4096)  # the client's HELLO
        conn.sendall(payload(kind))
        time.sleep(0.5)
        conn.close()
    else:
        host, port, kind = sys.argv[2], int(sys.argv[3]), sys.argv[4]
        for _ in range(100):
            try:
                c = socket.create_connection((host, port), timeout=5)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise SystemExit("no server")
        c.sendall(payload(kind))
        time.sleep(1)
        c.close()


main()
