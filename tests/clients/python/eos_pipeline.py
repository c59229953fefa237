"""An exactly-once consume-transform-produce application (librdkafka / confluent-kafka), written
the way librdkafka's transactions guide tells applications to handle errors, so that it runs to
completion while the test SIGKILLs and restarts the broker (or a cluster's leader) under it.

usage:
  eos_pipeline.py run BOOTSTRAP IN OUT GROUP TXN_ID TOTAL [--batch N] [--deadline S]
                     [--hold-ms P]
      Consumes IN (read_committed, group GROUP), writes "out-<value>" to OUT (same partition)
      and commits the consumed positions in the same transaction (send_offsets_to_transaction),
      each transaction held open P ms before its commit (so that the test's kills land inside
      one), until the group's committed offsets add up to TOTAL. Prints a line "committed <n>" after
      every committed transaction (the test times its kills on them) and one last JSON line:
      {"done": bool, "committed": n, "transactions": t, "aborted": a, "fatal": f, "errors": [...]}
  eos_pipeline.py verify BOOTSTRAP OUT PARTITIONS
      Reads every partition of OUT from the beginning with read_committed until the LSO, and
      with read_uncommitted to the high watermark; prints one JSON line
      {"committed": [values...], "uncommitted": n}.
"""
import json
import os
import sys
import time

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_INVALID,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)


def kafka_error(e):
    return e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None


def run(bootstrap, topic_in, topic_out, group, txn_id, total, batch, deadline_s, hold_ms):
    deadline = time.time() + deadline_s
    stats = {"transactions": 0, "aborted": 0, "fatal": 0, "errors": []}

    def note(what, e):
        print(f"eos_pipeline: {time.strftime('%H:%M:%S')} {what}: {e}", file=sys.stderr, flush=True)
        if len(stats["errors"]) < 50:
            stats["errors"].append(f"{what}: {e}")

    def new_producer():
        while time.time() < deadline:
            p = Producer({
                "bootstrap.servers": bootstrap,
                "transactional.id": txn_id,
                "transaction.timeout.ms": 10000,
                "message.timeout.ms": 10000,
                "socket.timeout.ms": 5000,
                "reconnect.backoff.max.ms": 500,
                # librdkafka 2.16's re-bootstrap (KIP-899), triggered when the only broker is
                # down, decommissions the broker handle a pending TxnOffsetCommit waits on, and
                # send_offsets_to_transaction then hangs past its timeout: keep the handles.
                "metadata.recovery.strategy": "none",
                **({"debug": os.environ["EOS_DEBUG"]} if os.environ.get("EOS_DEBUG") else {}),
            })
            try:
                p.init_transactions(15)
                return p
            except KafkaException as e:
                note("init_transactions", e)
                time.sleep(0.5)
        raise SystemExit("init_transactions never succeeded")

    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "isolation.level": "read_committed",
        "fetch.wait.max.ms": 100,
        "socket.timeout.ms": 5000,
        "reconnect.backoff.max.ms": 500,
        "metadata.recovery.strategy": "none",
    })
    consumer.subscribe([topic_in])
    producer = new_producer()

    def committed_total():
        """What the group's commits cover, summed over the assigned partitions (the inputs
        start at offset 0 and hold no control records, so offsets count records)."""
        parts = consumer.assignment()
        if not parts:
            return None
        try:
            got = consumer.committed(parts, timeout=5)
        except KafkaException as e:
            note("committed", e)
            return None
        return sum(max(tp.offset, 0) for tp in got)

    def rewind():
        """Back to the group's committed positions: what an aborted transaction consumed is
        consumed again."""
        parts = consumer.assignment()
        if not parts:
            return
        while time.time() < deadline:
            try:
                got = consumer.committed(parts, timeout=5)
                break
            except KafkaException as e:
                note("committed (rewind)", e)
                time.sleep(0.5)
        else:
            return
        for tp in got:
            offset = tp.offset if tp.offset != OFFSET_INVALID and tp.offset >= 0 else OFFSET_BEGINNING
            consumer.seek(TopicPartition(tp.topic, tp.partition, offset))

    def abort():
        while time.time() < deadline:
            try:
                producer.abort_transaction(15)
                return
            except KafkaException as e:
                note("abort_transaction", e)
                err = kafka_error(e)
                if err is not None and not err.retriable():
                    raise
                time.sleep(0.2)

    done = False
    last_committed = 0
    while time.time() < deadline:
        msgs = [m for m in consumer.consume(num_messages=batch, timeout=0.5) if m.error() is None]
        if not msgs:
            # Idle: finished when the group's commits cover every input record.
            n = committed_total()
            if n is not None and n >= total:
                done = True
                last_committed = n
                break
            continue
        try:
            producer.begin_transaction()
            for m in msgs:
                while True:
                    try:
                        producer.produce(topic_out, value=b"out-" + m.value(), partition=m.partition())
                        break
                    except BufferError:
                        producer.poll(0.1)
            positions = consumer.position(consumer.assignment())
            producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 15)
            if hold_ms > 0:
                time.sleep(hold_ms / 1000)
            while True:
                try:
                    producer.commit_transaction(15)
                    break
                except KafkaException as e:
                    err = kafka_error(e)
                    if err is not None and err.retriable() and not err.txn_requires_abort():
                        note("commit_transaction (retried)", e)
                        if time.time() > deadline:
                            raise
                        continue
                    raise
            stats["transactions"] += 1
            last_committed = sum(max(tp.offset, 0) for tp in positions)
            print(f"committed {last_committed}", flush=True)
        except KafkaException as e:
            err = kafka_error(e)
            note("transaction", e)
            if err is not None and err.txn_requires_abort():
                stats["aborted"] += 1
                try:
                    abort()
                except KafkaException as fatal:
                    note("abort (fatal)", fatal)
                    stats["fatal"] += 1
                    producer = new_producer()
                rewind()
            else:
                # Fatal (fenced, or an error that is neither retriable nor abortable): a new
                # producer with the same id fences the old epoch and aborts what it left open.
                stats["fatal"] += 1
                producer = new_producer()
                rewind()
    consumer.close()
    out = {"done": done, "committed": last_committed}
    out.update(stats)
    print(json.dumps(out), flush=True)


def verify(bootstrap, topic, partitions):
    def read(isolation):
        c = Consumer({
            "bootstrap.servers": bootstrap,
            "group.id": "eos-verify-unused",
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "fetch.wait.max.ms": 100,
        })
        tps = [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)]
        c.assign(tps)
        # Where each partition ends for this isolation level: the LSO for read_committed, the
        # high watermark otherwise (librdkafka reports the LSO as the high watermark then).
        ends = {}
        for p in range(partitions):
            lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=15, cached=False)
            ends[p] = hi
        values = []
        deadline = time.time() + 60
        idle_since = time.time()
        while time.time() < deadline:
            positions = {tp.partition: max(tp.offset, 0) for tp in c.position(tps)}
            if all(positions[p] >= ends[p] for p in ends):
                break
            # The last offset of a partition may be a transaction marker, which is never
            # returned: past it once nothing has arrived for a while.
            if time.time() - idle_since > 3 and all(positions[p] >= ends[p] - 1 for p in ends):
                break
            m = c.poll(0.2)
            if m is None or m.error() is not None:
                continue
            idle_since = time.time()
            values.append(m.value().decode())
        c.close()
        return values

    committed = read("read_committed")
    uncommitted = read("read_uncommitted")
    print(json.dumps({"committed": committed, "uncommitted": len(uncommitted)}), flush=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "run":
        args = sys.argv[2:]
        batch, deadline_s, hold_ms = 50, 240, 0
        if "--batch" in args:
            i = args.index("--batch")
            batch = int(args[i + 1])
            del args[i : i + 2]
        if "--deadline" in args:
            i = args.index("--deadline")
            deadline_s = float(args[i + 1])
            del args[i : i + 2]
        if "--hold-ms" in args:
            i = args.index("--hold-ms")
            hold_ms = float(args[i + 1])
            del args[i : i + 2]
        bootstrap, topic_in, topic_out, group, txn_id, total = args
        run(bootstrap, topic_in, topic_out, group, txn_id, int(total), batch, deadline_s, hold_ms)
    elif mode == "verify":
        bootstrap, topic, partitions = sys.argv[2:5]
        verify(bootstrap, topic, int(partitions))
    else:
        raise SystemExit(__doc__)
