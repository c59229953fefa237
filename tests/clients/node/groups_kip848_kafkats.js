// KIP-848 with kafka-ts, a pure TypeScript client with its own ConsumerGroupHeartbeat code
// (`groupProtocol: 'consumer'`): three consumers share a 6-partition topic (2 each), one leaves
// (the other two take 3 each), a new one joins (2 each again); records produced in each phase
// are all consumed exactly once and committed (OffsetCommit with the member epoch), so the
// committed offsets at the end are the log end. An ownership ledger samples every consumer's
// assignment every 10 ms and records any partition held by two at once.
//
// usage: node groups_kip848_kafkats.js BOOTSTRAP TOPIC GROUP — prints one JSON object
// (tests/groups_clients.rs, tests/cluster_kip848.rs check it). COHORT_BIN is the broker binary
// (its `configs` command lowers the broker-owned heartbeat interval).
const { execFileSync } = require('child_process');
const { createKafkaClient, setLogger } = require('kafka-ts');
const { Kafka, logLevel } = require('kafkajs');

const [bootstrap, topic, group] = process.argv.slice(2);
const PARTS = 6;
const BATCH = 300;
const servers = bootstrap.split(',').map((hp) => {
  const [host, port] = hp.split(':');
  return { host, port: Number(port) };
});

// kafka-ts logs JSON to stdout; the test reads stdout as one JSON object.
const errors = [];
setLogger({
  debug: () => {},
  info: () => {},
  warn: (m) => process.stderr.write(`warn ${m}\n`),
  error: (m, e) => {
    errors.push(String(m));
    process.stderr.write(`error ${m} ${e && e.message}\n`);
  },
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, done, ms) {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

async function main() {
  execFileSync(process.env.COHORT_BIN, [
    'configs', '--bootstrap-server', servers[0].host + ':' + servers[0].port, '--alter',
    '--broker-defaults', '--add-config',
    'group.consumer.min.heartbeat.interval.ms=100,group.consumer.heartbeat.interval.ms=500',
  ], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 60000 });

  const admin = new Kafka({ brokers: bootstrap.split(','), clientId: 'kts-admin', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTS }], waitForLeaders: true });

  const kafka = createKafkaClient({ clientId: 'kts', bootstrapServers: servers });
  const seen = [];
  const consumers = new Map();
  const violations = [];

  // The ledger: kafka-ts has no assign/revoke callbacks, so sample what each consumer fetches.
  const owned = (name) => {
    const a = consumers.get(name).metadata.getAssignment();
    return (a[topic] || []).slice().sort((x, y) => x - y);
  };
  const sampler = setInterval(() => {
    const owner = new Map();
    for (const name of consumers.keys()) {
      for (const p of owned(name)) {
        if (owner.has(p)) violations.push([p, owner.get(p), name]);
        owner.set(p, name);
      }
    }
  }, 10);

  const start = async (name) => {
    const c = await kafka.startConsumer({
      groupId: group,
      groupProtocol: 'consumer',
      topics: [topic],
      fromBeginning: true,
      maxWaitMs: 200,
      rebalanceTimeoutMs: 10000,
      onBatch: (messages) => {
        for (const m of messages) seen.push(`${m.partition}:${m.offset}:${m.key}`);
      },
    });
    consumers.set(name, c);
  };
  const counts = (names) => names.map((n) => owned(n).length).sort();
  const balanced = (names, want) => () =>
    JSON.stringify(counts(names)) === JSON.stringify(want) &&
    new Set(names.flatMap(owned)).size === PARTS;
  const distinct = () => new Set(seen.map((s) => s.split(':').slice(0, 2).join(':'))).size;

  const producer = kafka.createProducer({});
  const produce = async (first) => {
    const messages = [];
    for (let i = first; i < first + BATCH; i++) {
      messages.push({
        topic,
        partition: i % PARTS,
        key: Buffer.from(`k-${i}`),
        value: Buffer.from(String(i)),
        timestamp: BigInt(Date.now()),
      });
    }
    await producer.send(messages);
  };

  const out = {};
  for (const n of ['k1', 'k2', 'k3']) await start(n);
  out.three_balanced = await until('three', balanced(['k1', 'k2', 'k3'], [2, 2, 2]), 60000);
  await produce(0);
  out.first_consumed = await until('first', () => distinct() >= BATCH, 60000);

  const leaving = consumers.get('k3');
  consumers.delete('k3');
  await leaving.close();
  out.after_leave_balanced = await until('leave', balanced(['k1', 'k2'], [3, 3]), 60000);
  out.after_leave = counts(['k1', 'k2']);
  await produce(BATCH);
  out.second_consumed = await until('second', () => distinct() >= 2 * BATCH, 60000);

  await start('k4');
  out.after_join_balanced = await until('join', balanced(['k1', 'k2', 'k4'], [2, 2, 2]), 60000);
  out.after_join = counts(['k1', 'k2', 'k4']);
  await produce(2 * BATCH);
  out.third_consumed = await until('third', () => distinct() >= 3 * BATCH, 60000);

  // kafka-ts commits after each batch, asynchronously; close() drains and commits.
  clearInterval(sampler);
  for (const c of consumers.values()) await c.close();
  await producer.close();

  out.consumed = seen.length;
  out.distinct = distinct();
  out.distinct_keys = new Set(seen.map((s) => s.split(':')[2])).size;
  out.violations = violations.slice(0, 10);
  out.errors = [...new Set(errors)].sort();
  const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  out.committed = offsets[0].partitions
    .map((p) => [p.partition, Number(p.offset)])
    .sort((a, b) => a[0] - b[0]);
  await admin.disconnect();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`${e.stack || e}\n`);
    process.exit(1);
  },
);
