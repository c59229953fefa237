// An exactly-once consume-transform-produce application on kafkajs, in kafkajs's documented
// pattern: a read_committed consumer (readUncommitted: false, autoCommit: false) whose eachBatch
// runs producer.transaction() → send → sendOffsets → commit, and aborts on failure. Written to
// run to completion while the test SIGKILLs and restarts the broker (or a cluster's node) under
// it, the counterpart of eos_pipeline.py (librdkafka).
//
// usage:
//   node eos_pipeline_kafkajs.js run BOOTSTRAP IN OUT GROUP TXN_ID TOTAL [--batch N] [--deadline S]
//                                    [--hold-ms P]
//     Consumes IN (group GROUP), writes "out-<value>" to OUT (same partition) and commits the
//     consumed position in the same transaction, N records per transaction, each held open P ms
//     before its commit (so that the test's kills land inside one), until the group's committed
//     offsets add up to TOTAL. Prints "committed <n>" after every committed
//     transaction and one last JSON line
//     {"done": bool, "committed": n, "transactions": t, "aborted": a, "fatal": f, "errors": [...]}
//
// What a failed transaction does (kafkajs has no abortable/fatal classification like
// librdkafka's): abort if the transaction is still abortable, else — and whenever the abort
// fails — drop the producer and start a new one with the same transactional id, whose
// InitProducerId aborts (or waits out) whatever the old epoch left; then seek the partition back
// to the group's committed offset, so what the failed attempt consumed is consumed again.
const { Kafka, logLevel } = require('kafkajs');

const args = process.argv.slice(2);
const option = (name, dflt) => {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = Number(args[i + 1]);
  args.splice(i, 2);
  return v;
};
const BATCH = option('--batch', 50);
const DEADLINE_S = option('--deadline', 240);
const HOLD_MS = option('--hold-ms', 0);
const [mode, bootstrap, IN, OUT, GROUP, TXN_ID, TOTAL_ARG] = args;
if (mode !== 'run' || !TOTAL_ARG) {
  console.error('usage: eos_pipeline_kafkajs.js run BOOTSTRAP IN OUT GROUP TXN_ID TOTAL [--batch N] [--deadline S]');
  process.exit(2);
}
const TOTAL = Number(TOTAL_ARG);
const deadline = Date.now() + DEADLINE_S * 1000;
const stats = { transactions: 0, aborted: 0, fatal: 0, errors: [] };

const note = (what, e) => {
  const line = `${what}: ${e && e.type ? `${e.type} ` : ''}${e && e.message ? e.message : e}`;
  console.error(`eos_pipeline_kafkajs: ${new Date().toISOString()} ${line}`);
  if (stats.errors.length < 50) stats.errors.push(line);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Short timeouts and retries: the broker goes away for seconds at a time, and the loops below
// retry past kafkajs's own retries until the deadline.
const kafka = new Kafka({
  clientId: 'cohort-eos-kafkajs',
  brokers: bootstrap.split(','),
  logLevel: logLevel.NOTHING,
  connectionTimeout: 1000,
  requestTimeout: 5000,
  retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 10 },
});

let producer = null;

async function newProducer() {
  if (producer) {
    const old = producer;
    producer = null;
    await old.disconnect().catch(() => {});
  }
  while (Date.now() < deadline) {
    const p = kafka.producer({
      transactionalId: TXN_ID,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: 10000,
    });
    try {
      await p.connect(); // InitProducerId: fences the previous epoch, aborts its open transaction
      producer = p;
      return;
    } catch (e) {
      note('producer connect (InitProducerId)', e);
      await p.disconnect().catch(() => {});
      await sleep(300);
    }
  }
  throw new Error('InitProducerId never succeeded');
}

const admin = kafka.admin();

// The group's committed offsets of IN by partition (missing partitions: none committed).
async function committedOffsets() {
  const got = await admin.fetchOffsets({ groupId: GROUP, topics: [IN] });
  const by = {};
  for (const t of got) for (const p of t.partitions) by[p.partition] = Math.max(Number(p.offset), 0);
  return by;
}

async function committedOffsetsRetried() {
  while (Date.now() < deadline) {
    try {
      return await committedOffsets();
    } catch (e) {
      note('fetchOffsets', e);
      await sleep(300);
    }
  }
  throw new Error('fetchOffsets never succeeded');
}

const sum = (by) => Object.values(by).reduce((a, b) => a + b, 0);

(async () => {
  await admin.connect();
  await newProducer();
  // What the application believes is committed, per partition (corrected from the group's
  // offsets after every failure).
  const committed = {};

  const consumer = kafka.consumer({
    groupId: GROUP,
    readUncommitted: false,
    sessionTimeout: 10000,
    rebalanceTimeout: 10000,
    heartbeatInterval: 1000,
    maxWaitTimeInMs: 100,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 10 },
  });
  consumer.on(consumer.events.CRASH, (e) => note('consumer crashed (kafkajs restarts it)', e.payload.error));
  await consumer.connect();
  await consumer.subscribe({ topic: IN, fromBeginning: true });

  // One transaction: the slice's records transformed, and the position after it, together.
  async function transact(partition, slice, next) {
    const txn = await producer.transaction();
    try {
      await txn.send({
        topic: OUT,
        messages: slice.map((m) => ({ value: `out-${m.value.toString()}`, partition })),
      });
      await txn.sendOffsets({
        consumerGroupId: GROUP,
        topics: [{ topic: IN, partitions: [{ partition, offset: String(next) }] }],
      });
      if (HOLD_MS > 0) await sleep(HOLD_MS);
      await txn.commit();
    } catch (e) {
      note('transaction', e);
      stats.aborted += 1;
      let aborted = false;
      if (txn.isActive()) {
        try {
          await txn.abort();
          aborted = true;
        } catch (abortError) {
          note('abort', abortError);
        }
      }
      if (!aborted) {
        // A commit that failed part-way (connection lost, coordinator moved) may still
        // complete; the new producer's InitProducerId waits for it or aborts it.
        stats.fatal += 1;
        await newProducer();
      }
      throw e;
    }
  }

  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
      const { partition } = batch;
      for (let i = 0; i < batch.messages.length; i += BATCH) {
        if (!isRunning() || isStale()) return;
        const slice = batch.messages.slice(i, i + BATCH);
        const last = Number(slice[slice.length - 1].offset);
        try {
          await transact(partition, slice, last + 1);
        } catch (e) {
          // Back to the group's committed offset: what the failed attempt consumed is
          // consumed again (and what a failed-looking commit did commit is not).
          const by = await committedOffsetsRetried();
          Object.assign(committed, by);
          consumer.seek({ topic: IN, partition, offset: String(by[partition] || 0) });
          return;
        }
        stats.transactions += 1;
        committed[partition] = last + 1;
        resolveOffset(String(last));
        console.log(`committed ${sum(committed)}`);
        await heartbeat().catch(() => {});
      }
    },
  });

  // Finished when the group's committed offsets cover every input record.
  let done = false;
  while (Date.now() < deadline) {
    await sleep(500);
    try {
      if (sum(await committedOffsets()) >= TOTAL) {
        done = true;
        break;
      }
    } catch (e) {
      note('fetchOffsets (progress)', e);
    }
  }
  const final = await committedOffsets().catch(() => committed);
  await consumer.disconnect().catch(() => {});
  await producer.disconnect().catch(() => {});
  await admin.disconnect().catch(() => {});
  console.log(JSON.stringify({ done, committed: sum(final), ...stats }));
  process.exit(0);
})().catch((e) => {
  note('fatal', e);
  console.log(JSON.stringify({ done: false, committed: 0, ...stats }));
  process.exit(1);
});
