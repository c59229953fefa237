// Group administration through kafkajs: setOffsets on a group that never ran, fetchOffsets,
// describeGroups (a group that never ran is Dead with no error), listGroups and deleteGroups,
// on a group the Rust test committed offsets for (topic kjs-events, partitions 0 and 2).
//
// usage: node groups_kafkajs.js BOOTSTRAP — prints one JSON object (tests/groups_clients.rs).
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const kafka = new Kafka({ brokers: [process.argv[2]], clientId: 'kjs-admin', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const out = {};
  // setOffsets on a group that never ran: kafkajs checks DescribeGroups (Dead, no error),
  // joins the group with a temporary consumer and commits.
  await admin.setOffsets({
    groupId: 'kjs-fresh',
    topic: 'kjs-events',
    partitions: [{ partition: 1, offset: '3' }],
  });
  const fresh = await admin.fetchOffsets({ groupId: 'kjs-fresh', topics: ['kjs-events'] });
  out.set_fresh = fresh[0].partitions.map((p) => [p.partition, p.offset]).sort();
  const fetched = await admin.fetchOffsets({ groupId: 'kjs-group', topics: ['kjs-events'] });
  out.fetched = fetched[0].partitions.map((p) => [p.partition, p.offset]).sort();
  const described = await admin.describeGroups(['kjs-group', 'kjs-never']);
  out.described = described.groups.map((g) => [g.groupId, g.state, g.errorCode]);
  const listed = await admin.listGroups();
  out.listed = listed.groups.map((g) => g.groupId).sort();
  await admin.deleteGroups(['kjs-group', 'kjs-fresh']);
  out.after_delete = (await admin.listGroups()).groups.map((g) => g.groupId);
  await admin.disconnect();
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
