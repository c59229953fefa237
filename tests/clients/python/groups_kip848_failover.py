"""The group coordinator (Raft leader) killed mid-reconciliation, with librdkafka consumers on
the consumer group protocol. Two members share a 6-partition topic; a third joins, and as soon
as a partition has been revoked from its old owner but not yet given to the new one the script
prints "reconciling": the test SIGKILLs the leader, waits for a new one, restarts the killed
node (its partitions live only there) and writes "restarted" on stdin. The group must converge
on the new leader: every partition owned by exactly one member, in the consumers' own
assign/revoke ledger and in every ConsumerGroupDescribe sample taken (about every 200 ms)
during and after the failover; every record consumed (the test reads the committed offsets).

usage: groups_kip848_failover.py BOOTSTRAP TOPIC GROUP
Prints "reconciling", then one JSON object; tests/cluster_kip848.rs drives and checks it.
COHORT_BIN is the broker binary.
"""
import json
import sys
import threading
import time

from confluent_kafka import KafkaException
from confluent_kafka.admin import NewTopic

from kip848 import Ledger, Member, admin_client, distinct, fast_heartbeats, poll_until, produce

bootstrap, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
parts, batch = 6, 300

admin = admin_client(bootstrap)
fast_heartbeats(bootstrap)
admin.create_topics([NewTopic(topic, parts, 1)])[topic].result(30)

ledger = Ledger()
out = {}
c1 = Member(bootstrap, group, "c1", ledger, [topic])
c2 = Member(bootstrap, group, "c2", ledger, [topic])
everyone = [c1, c2]
out["two_balanced"] = poll_until(
    everyone, lambda: ledger.counts(["c1", "c2"]) == [3, 3] and len(ledger.owner) == parts, 60
)
produce(bootstrap, topic, parts, 0, batch)
out["first_consumed"] = poll_until(everyone, lambda: distinct(everyone) >= batch, 60)

restarted = threading.Event()


def wait_for_restart():
    for line in sys.stdin:
        if line.strip() == "restarted":
            restarted.set()
            return


threading.Thread(target=wait_for_restart, daemon=True).start()

samples = {"taken": 0, "failed": 0, "owned_twice": [], "errors": []}


describer = [admin_client(bootstrap)]


def sample():
    """One ConsumerGroupDescribe: each partition's owners by current assignment. After a
    failure the next sample uses a new AdminClient: librdkafka 2.16's keeps the coordinator it
    cached and answers NOT_COORDINATOR for ever once the coordinator has moved (a new client
    looks the coordinator up again, as `kafka-consumer-groups.sh` does on each run)."""
    try:
        d = describer[0].describe_consumer_groups([group], request_timeout=2)[group].result(5)
    except KafkaException as e:
        samples["failed"] += 1
        if len(samples["errors"]) < 5 and str(e) not in samples["errors"]:
            samples["errors"].append(str(e))
        describer[0] = admin_client(bootstrap)
        return None
    samples["taken"] += 1
    owners = {}
    for m in d.members:
        for tp in m.assignment.topic_partitions:
            owners.setdefault(tp.partition, []).append(m.client_id)
    twice = {p: o for p, o in owners.items() if len(o) > 1}
    if twice:
        samples["owned_twice"].append(twice)
    return owners


c3 = Member(bootstrap, group, "c3", ledger, [topic])
everyone.append(c3)
# Mid-reconciliation: a partition revoked from c1 or c2 and not yet assigned to c3.
out["caught_mid_reconciliation"] = poll_until(everyone, lambda: len(ledger.owner) < parts, 30)
out["owned_at_kill"] = len(ledger.owner)
print("reconciling", flush=True)

last_sample = 0.0
converged_at = None
after = 0  # successful samples since convergence
deadline = time.time() + 120
while time.time() < deadline:
    for m in everyone:
        m.poll()
    if time.time() - last_sample > 0.2:
        last_sample = time.time()
        owners = sample()
        balanced = ledger.counts(["c1", "c2", "c3"]) == [2, 2, 2] and len(ledger.owner) == parts
        if restarted.is_set() and balanced and owners is not None and converged_at is None:
            if sorted(owners) == list(range(parts)):
                converged_at = time.time()
        if converged_at is not None and owners is not None:
            after += 1
        if converged_at is not None and time.time() - converged_at > 2 and after >= 5:
            break  # keep sampling a little after convergence
out["restarted"] = restarted.is_set()
out["converged"] = converged_at is not None

produce(bootstrap, topic, parts, batch, batch)
out["all_consumed"] = poll_until(everyone, lambda: distinct(everyone) >= 2 * batch, 60)
final = sample()
out["final_owners"] = sorted(len(final.get(p, [])) for p in range(parts)) if final else None
for m in everyone:
    m.close()

seen = [(t, p, o) for m in everyone for (t, p, o, _) in m.seen]
out["consumed"] = len(seen)
out["distinct"] = len(set(seen))
out["commit_errors"] = sorted({e for m in everyone for e in m.commit_errors})
out["violations"] = ledger.violations
out["samples_taken"] = samples["taken"]
out["samples_after_convergence"] = after
out["samples_failed"] = samples["failed"]
out["samples_owned_twice"] = samples["owned_twice"][:10]
out["sample_errors"] = samples["errors"]
# The committed offsets are read by the test (OffsetFetch from whoever coordinates now):
# librdkafka 2.16's AdminClient crashes (SIGSEGV in rd_kafka_cgrp_op from
# rd_kafka_handle_OffsetFetch) when list_consumer_group_offsets meets NOT_COORDINATOR, which a
# coordinator that moved answers, as Kafka's does.
print(json.dumps(out), flush=True)
