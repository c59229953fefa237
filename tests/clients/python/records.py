"""The deterministic records every data-plane test produces and checks byte for byte.

Record i of a run named NAME: key b"NAME-key-<i>", value a sha256 chain of 20..1019 bytes,
partition i % partitions, timestamp BASE_TS + i (ms).
"""
import hashlib

BASE_TS = 1_700_000_000_000


def key(name, i):
    return f"{name}-key-{i}".encode()


def value(name, i):
    length = 20 + (i * 37) % 1000
    out = b""
    block = hashlib.sha256(f"{name}-{i}".encode()).digest()
    while len(out) < length:
        out += block
        block = hashlib.sha256(block).digest()
    return out[:length]


def timestamp(i):
    return BASE_TS + i


def index_of(name, k):
    """The i of a key produced by `key(name, i)`, or None."""
    prefix = f"{name}-key-".encode()
    if k is None or not k.startswith(prefix):
        return None
    return int(k[len(prefix):])
