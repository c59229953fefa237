#!/usr/bin/env python3
"""Records the request frames real Kafka clients send, for protocol/tests/golden.rs.

A TCP proxy between a client and a running broker (`cohort serve`): every client->broker frame
is written to OUT_DIR as `<label>-<api key>-v<version>.bin` (the frame without its length
prefix), the first of each (api key, version) per label only. Usage:

    cohort serve --listen 127.0.0.1:9092 --data-dir /tmp/golden &
    python3 capture.py 127.0.0.1:9092 19092 OUT_DIR LABEL   # then point a client at :19092

Stop it with Ctrl-C. Standard library only.
"""
import os
import socket
import struct
import sys
import threading


def pump(src, dst, on_frame=None):
    buf = b""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
            if on_frame is None:
                continue
            buf += data
            while len(buf) >= 4:
                (size,) = struct.unpack(">i", buf[:4])
                if len(buf) < 4 + size:
                    break
                on_frame(buf[4 : 4 + size])
                buf = buf[4 + size :]
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    upstream, port, out_dir, label = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    host, up_port = upstream.rsplit(":", 1)
    os.makedirs(out_dir, exist_ok=True)
    seen = set()
    lock = threading.Lock()

    def record(frame):
        api_key, version = struct.unpack(">hh", frame[:4])
        with lock:
            if (api_key, version) in seen:
                return
            seen.add((api_key, version))
        path = os.path.join(out_dir, f"{label}-{api_key}-v{version}.bin")
        with open(path, "wb") as f:
            f.write(frame)
        print("captured", path, flush=True)

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen()
    while True:
        client, _ = listener.accept()
        broker = socket.create_connection((host, int(up_port)))
        threading.Thread(target=pump, args=(client, broker, record), daemon=True).start()
        threading.Thread(target=pump, args=(broker, client), daemon=True).start()


if __name__ == "__main__":
    main()
