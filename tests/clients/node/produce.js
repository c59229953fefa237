// Produces the deterministic records of tests/clients/python/records.py with kafkajs (a third,
// pure-JavaScript client), so Python clients can check them byte for byte.
//
// usage: node produce.js BOOTSTRAP TOPIC NAME COUNT PARTITIONS [none|gzip|snappy|lz4]
// Prints one JSON line: {"acked": n}.
const crypto = require('crypto');
const { Kafka, CompressionTypes, CompressionCodecs, logLevel } = require('kafkajs');

const [bootstrap, topic, name, countArg, partitionsArg, compression = 'none'] =
  process.argv.slice(2);
const count = Number(countArg);
const partitions = Number(partitionsArg);
const BASE_TS = 1700000000000;

// kafkajs ships gzip only; the other codecs come from pure-JS packages.
const SnappyJS = require('snappyjs');
CompressionCodecs[CompressionTypes.Snappy] = () => ({
  async compress(encoder) { return SnappyJS.compress(encoder.buffer); },
  async decompress(buffer) { return SnappyJS.uncompress(buffer); },
});
const lz4 = require('lz4js');
CompressionCodecs[CompressionTypes.LZ4] = () => ({
  async compress(encoder) { return Buffer.from(lz4.compress(encoder.buffer)); },
  async decompress(buffer) { return Buffer.from(lz4.decompress(buffer)); },
});

function value(i) {
  const length = 20 + ((i * 37) % 1000);
  let out = Buffer.alloc(0);
  let block = crypto.createHash('sha256').update(`${name}-${i}`).digest();
  while (out.length < length) {
    out = Buffer.concat([out, block]);
    block = crypto.createHash('sha256').update(block).digest();
  }
  return out.subarray(0, length);
}

const codec = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
}[compression];

(async () => {
  const kafka = new Kafka({
    clientId: 'cohort-kafkajs',
    brokers: [bootstrap],
    logLevel: logLevel.ERROR,
  });
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  await producer.connect();
  let acked = 0;
  const batch = 500;
  for (let start = 0; start < count; start += batch) {
    const messages = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      messages.push({
        key: Buffer.from(`${name}-key-${i}`),
        value: value(i),
        partition: i % partitions,
        timestamp: String(BASE_TS + i),
      });
    }
    const res = await producer.send({ topic, messages, acks: -1, compression: codec });
    acked += messages.length;
    if (!res.every((r) => r.errorCode === 0)) throw new Error(JSON.stringify(res));
  }
  await producer.disconnect();
  console.log(JSON.stringify({ acked }));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
