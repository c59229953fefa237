#!/usr/bin/env python3
"""Transactions against their same-run baselines (issue 13's benchmark), with librdkafka
(confluent-kafka) as the client, on one `cohort serve` node or a three-node cluster it starts.

    scripts/bench-transactions.py [--binary target/release/cohort] [--nodes 1|3]
                                  [--seconds 15] [--records 100] [--serve-arg FLAG ...]

--serve-arg adds a `cohort serve` flag on every node (repeatable), e.g.
--serve-arg=--transaction-partition-verification-enable=false to measure without KIP-890's
produce-time verification in the same build (decision 0165).

Scenarios, each for --seconds, one after the other on the same broker:
  one-partition   a transaction of --records records to 1 partition, committed; baseline: the
                  same records from an idempotent producer, flushed (acks=all) per batch
  ten-partitions  --records records over 10 partitions plus the consumed offsets of a
                  10-partition input (send_offsets_to_transaction), committed; baseline: the
                  same records flushed per batch plus a synchronous consumer commit
  visibility      after each commit_transaction returns, the time until a read_committed
                  ListOffsets (the last stable offset) covers the transaction's records, polled
                  in a tight loop: the EndTxn-to-readable latency, p50/p99

Prints one table (figures and ratios to the baseline of the same run) and the machine's
facts. Not a test: nothing is asserted.
"""
import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

ROOT = Path(__file__).resolve().parent.parent


def start_single(binary, scratch, extra):
    log = open(scratch / "node.log", "w")
    child = subprocess.Popen(
        [binary, "serve", "--data-dir", str(scratch / "data"), "--listen", "127.0.0.1:0",
         "--http", "127.0.0.1:0", "--group-initial-rebalance-delay-ms", "0", *extra],
        stdout=subprocess.PIPE, stderr=log, text=True,
    )
    line = child.stdout.readline()
    kafka = next(w.split("=", 1)[1] for w in line.split() if w.startswith("kafka="))
    return kafka, lambda: (child.terminate(), child.wait(30))


def start_cluster(binary, scratch, extra):
    base = 24000 + os.getpid() % 500 * 40
    env = dict(os.environ, COHORT_BIN=str(binary), BASE=str(base),
               COHORT_SERVE_ARGS=" ".join(["--group-initial-rebalance-delay-ms 0", *extra]))
    out = subprocess.run([str(ROOT / "scripts/cluster.sh"), "up", str(scratch)],
                         env=env, capture_output=True, text=True, timeout=180)
    if out.returncode != 0:
        raise SystemExit(f"cluster.sh up failed: {out.stdout}{out.stderr}")
    kafka = ",".join(f"127.0.0.1:{base + n}" for n in (1, 2, 3))

    def stop():
        subprocess.run([str(ROOT / "scripts/cluster.sh"), "down", str(scratch)], env=env,
                       capture_output=True, timeout=120)

    return kafka, stop


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def run_for(seconds, step):
    """Calls step() until `seconds` pass; returns (steps, elapsed)."""
    n, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        step()
        n += 1
    return n, time.perf_counter() - started


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=str(ROOT / "target/release/cohort"))
    ap.add_argument("--nodes", type=int, choices=[1, 3], default=1)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--records", type=int, default=100)
    ap.add_argument("--serve-arg", action="append", default=[],
                    help="an extra `cohort serve` flag for every node (repeatable)")
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-txn-"))
    start = start_single if args.nodes == 1 else start_cluster
    bootstrap, stop = start(args.binary, scratch, args.serve_arg)
    try:
        rows = measure(bootstrap, args)
    finally:
        stop()
        shutil.rmtree(scratch, ignore_errors=True)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"# bench-transactions {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{args.nodes} node(s), {args.records} records per transaction, {args.seconds:g} s per run"
          + (f", serve flags {' '.join(args.serve_arg)}" if args.serve_arg else ""))
    print(f"# {cpu}, nproc {os.cpu_count()}, load {open('/proc/loadavg').read().split()[0]}, "
          f"{platform.python_implementation()} confluent-kafka (librdkafka)")
    print("| scenario | transactions/s | baseline batches/s | ratio | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


def measure(bootstrap, args):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = [NewTopic("bt-one", 1, 1), NewTopic("bt-ten", 10, 1), NewTopic("bt-in", 10, 1),
              NewTopic("bt-base-one", 1, 1), NewTopic("bt-base-ten", 10, 1)]
    for f in admin.create_topics(topics, operation_timeout=30).values():
        f.result(60)
    value = b"x" * 100
    rows = []

    # Input for the offsets: 10 partitions the group's consumer reads from.
    feeder = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for p in range(10):
        for _ in range(1000):
            feeder.produce("bt-in", value, partition=p)
    feeder.flush(60)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bt-group",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition("bt-in", p, 0) for p in range(10)])
    for _ in range(50):
        consumer.poll(0.1)
    positions = consumer.position([TopicPartition("bt-in", p) for p in range(10)])

    idem = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 0})
    txn = Producer({"bootstrap.servers": bootstrap, "transactional.id": "bench-txn",
                    "linger.ms": 0})
    txn.init_transactions(30)

    # One partition.
    def base_one():
        for _ in range(args.records):
            idem.produce("bt-base-one", value, partition=0)
        idem.flush(30)

    def txn_one():
        txn.begin_transaction()
        for _ in range(args.records):
            txn.produce("bt-one", value, partition=0)
        txn.commit_transaction(30)

    nb, tb = run_for(args.seconds, base_one)
    nt, tt = run_for(args.seconds, txn_one)
    rows.append(["one partition", f"{nt / tt:,.0f}", f"{nb / tb:,.0f}", f"{(nt / tt) / (nb / tb):.2f}", "", ""])

    # Ten partitions plus offsets.
    per = max(1, args.records // 10)

    def base_ten():
        for p in range(10):
            for _ in range(per):
                idem.produce("bt-base-ten", value, partition=p)
        idem.flush(30)
        consumer.commit(offsets=positions, asynchronous=False)

    def txn_ten():
        txn.begin_transaction()
        for p in range(10):
            for _ in range(per):
                txn.produce("bt-ten", value, partition=p)
        txn.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
        txn.commit_transaction(30)

    nb, tb = run_for(args.seconds, base_ten)
    nt, tt = run_for(args.seconds, txn_ten)
    rows.append(["ten partitions + offsets", f"{nt / tt:,.0f}", f"{nb / tb:,.0f}", f"{(nt / tt) / (nb / tb):.2f}", "", ""])

    # EndTxn to readable: the LSO (read_committed ListOffsets) covering the commit.
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "bt-reader",
                       "isolation.level": "read_committed"})
    tp = TopicPartition("bt-one", 0)
    waits = []

    def txn_visible():
        txn.begin_transaction()
        for _ in range(args.records):
            txn.produce("bt-one", value, partition=0)
        txn.flush(30)
        # The LSO stops at this open transaction's first record until its marker is written.
        _, first = reader.get_watermark_offsets(tp, timeout=10, cached=False)
        txn.commit_transaction(30)
        committed_at = time.perf_counter()
        target = first + args.records
        while True:
            _, lso = reader.get_watermark_offsets(tp, timeout=10, cached=False)
            if lso >= target:
                break
        waits.append((time.perf_counter() - committed_at) * 1000)

    run_for(args.seconds, txn_visible)
    rows.append(["EndTxn → readable (read_committed LSO)", "", "", "",
                 f"{percentile(waits, 50):.2f}", f"{percentile(waits, 99):.2f}"])
    reader.close()
    consumer.close()
    return rows


if __name__ == "__main__":
    sys.exit(main())
