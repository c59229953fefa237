#!/usr/bin/env python3
"""Issue 11's end-to-end benchmark: consumers while their topic grows, consumer group protocol
(KIP-848) against the classic protocol in the same run, with librdkafka (confluent-kafka).

    scripts/bench-kip848-growth.py [--binary target/debug/cohort] [--consumers 10]
                                   [--from 100] [--to 1000] [--metadata-refresh-ms 5000]
                                   [--limit-s 300] [--protocols consumer,classic]
                                   [--classic-assignor cooperative-sticky]

For each protocol, on a fresh `cohort serve` it starts (defaults, as a user gets them: consumer
heartbeat interval 5 s from the broker; classic session 45 s, heartbeat 3 s, initial rebalance
delay 3 s, librdkafka's default eager range assignor), --consumers consumers in one group
subscribe to a topic of --from partitions and the script waits until every partition is owned.
Then it grows the topic to --to partitions (CreatePartitions) and writes one record to each
partition, and measures from the CreatePartitions call:

  owned     until the consumers' own assign/revoke callbacks show every partition owned by
            exactly one consumer
  consumed  until a record of every partition has been consumed (the records are written by
            a thread beside the consumers; "produced" is when the last was acknowledged)

--metadata-refresh-ms is librdkafka's topic.metadata.refresh.interval.ms for both protocols
(its default is 300 s): a classic consumer learns of new partitions only from a metadata
refresh, a consumer-protocol member from the broker's heartbeat answer.

Prints a table, the ratio consumer/classic, and the machine's facts. Not a test: nothing is
asserted.
"""
import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

ROOT = Path(__file__).resolve().parent.parent
TOPIC = "growth"


def start_broker(binary, scratch):
    log = open(scratch / "node.log", "w")
    child = subprocess.Popen(
        [str(binary), "serve", "--data-dir", str(scratch / "data"), "--listen", "127.0.0.1:0",
         "--http", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=log, text=True,
    )
    line = child.stdout.readline()
    if "kafka=" not in line:
        child.kill()
        child.wait(30)
        sys.exit(f"cohort did not start: {line!r}, log in {scratch / 'node.log'}")
    kafka = next(w.split("=", 1)[1] for w in line.split() if w.startswith("kafka="))

    def stop():
        child.terminate()
        child.wait(30)

    return kafka, stop


class Owners:
    """Partition -> consumer, from the consumers' callbacks; counts double ownership."""

    def __init__(self):
        self.owner = {}
        self.owned_twice = 0

    def assign(self, name, tps):
        for tp in tps:
            held = self.owner.get(tp.partition)
            if held is not None and held != name:
                self.owned_twice += 1
            self.owner[tp.partition] = name

    def revoke(self, name, tps):
        for tp in tps:
            if self.owner.get(tp.partition) == name:
                del self.owner[tp.partition]


def run(protocol, args, scratch):
    kafka, stop = start_broker(args.binary, scratch)
    consumers = []
    try:
        admin = AdminClient({"bootstrap.servers": kafka})
        admin.create_topics([NewTopic(TOPIC, args.start, 1)])[TOPIC].result(60)
        owners = Owners()
        for i in range(args.consumers):
            name = f"{protocol}-{i}"
            conf = {
                "bootstrap.servers": kafka,
                "group.id": f"growth-{protocol}",
                "group.protocol": protocol,
                "client.id": name,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": True,
                "topic.metadata.refresh.interval.ms": args.metadata_refresh_ms,
                "log_level": 3,
            }
            if protocol == "classic" and args.classic_assignor:
                conf["partition.assignment.strategy"] = args.classic_assignor
            c = Consumer(conf)
            c.subscribe(
                [TOPIC],
                on_assign=lambda _c, tps, n=name: owners.assign(n, tps),
                on_revoke=lambda _c, tps, n=name: owners.revoke(n, tps),
                on_lost=lambda _c, tps, n=name: owners.revoke(n, tps),
            )
            consumers.append(c)

        def poll_all():
            got = []
            for c in consumers:
                for m in c.consume(num_messages=1000, timeout=0.01):
                    if not m.error():
                        got.append(m.partition())
            return got

        t = time.monotonic()
        while len(owners.owner) < args.start:
            poll_all()
            if time.monotonic() - t > args.limit_s:
                return {"error": f"initial assignment incomplete: {len(owners.owner)}"}
        initial_s = time.monotonic() - t

        t0 = time.monotonic()
        admin.create_partitions([NewPartitions(TOPIC, args.to)])[TOPIC].result(60)
        produced = {}

        def produce():
            # Beside the consumers' polling, so that ownership is timed while records go out.
            producer = Producer({"bootstrap.servers": kafka, "linger.ms": 5})
            for p in range(args.to):
                producer.produce(TOPIC, value=b"x", partition=p)
            produced["left"] = producer.flush(60)
            produced["s"] = time.monotonic() - t0

        writer = threading.Thread(target=produce)
        writer.start()

        consumed = set()
        owned_s = None
        consumed_s = None
        while time.monotonic() - t0 < args.limit_s and (owned_s is None or consumed_s is None):
            consumed.update(poll_all())
            now = time.monotonic() - t0
            if owned_s is None and len(owners.owner) == args.to:
                owned_s = now
            if consumed_s is None and len(consumed) == args.to:
                consumed_s = now
        writer.join()
        return {
            "initial_s": initial_s,
            "produced_s": produced.get("s"),
            "unsent": produced.get("left"),
            "owned_s": owned_s,
            "consumed_s": consumed_s,
            "consumed_partitions": len(consumed),
            "owned_twice": owners.owned_twice,
        }
    finally:
        for c in consumers:
            c.close()
        stop()


def machine():
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"nproc {os.cpu_count()}, {cpu}, load average {os.getloadavg()}, {platform.platform()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=str(ROOT / "target/debug/cohort"))
    ap.add_argument("--consumers", type=int, default=10)
    ap.add_argument("--from", dest="start", type=int, default=100)
    ap.add_argument("--to", type=int, default=1000)
    ap.add_argument("--metadata-refresh-ms", type=int, default=5000)
    ap.add_argument("--limit-s", type=float, default=300)
    ap.add_argument("--protocols", default="consumer,classic")
    ap.add_argument("--classic-assignor", default="",
                    help="partition.assignment.strategy of the classic consumers "
                         "(default: librdkafka's, range,roundrobin: eager)")
    args = ap.parse_args()
    if not Path(args.binary).exists():
        sys.exit(f"{args.binary} is missing: cargo build -p cohort (or --binary)")

    print(f"machine: {machine()}", flush=True)
    results = {}
    for protocol in args.protocols.split(","):
        scratch = Path(tempfile.mkdtemp(prefix=f"kip848-growth-{protocol}-"))
        try:
            results[protocol] = run(protocol, args, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        print(f"{protocol}: {results[protocol]}", flush=True)

    print()
    print(f"{args.consumers} consumers, {args.start} -> {args.to} partitions, "
          f"metadata refresh {args.metadata_refresh_ms} ms, binary {args.binary}")
    print(f"{'protocol':<10} {'initial s':>10} {'owned s':>10} {'consumed s':>11} "
          f"{'produced s':>11} {'twice':>6}")
    for protocol, r in results.items():
        if "error" in r:
            print(f"{protocol:<10} {r['error']}")
            continue
        fmt = lambda v: "-" if v is None else f"{v:.2f}"
        print(f"{protocol:<10} {fmt(r['initial_s']):>10} {fmt(r['owned_s']):>10} "
              f"{fmt(r['consumed_s']):>11} {fmt(r['produced_s']):>11} {r['owned_twice']:>6}")
    c, k = results.get("consumer", {}), results.get("classic", {})
    for what in ("owned_s", "consumed_s"):
        if c.get(what) and k.get(what):
            print(f"ratio consumer/classic, {what[:-2]}: {c[what] / k[what]:.2f}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
