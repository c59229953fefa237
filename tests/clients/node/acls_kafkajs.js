// Creates, describes and deletes ACLs with kafkajs's admin client (createAcls, describeAcls,
// deleteAcls).
//
// usage: node acls_kafkajs.js BOOTSTRAP
// Prints one JSON object: {"described": [...], "deleted": [...], "after": [...]}, each ACL as
// "type:name:pattern:principal:host:operation:permission" with kafkajs's numeric codes.
const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes,
  ResourcePatternTypes } = require('kafkajs');

function text(r, a) {
  return [r.resourceType, r.resourceName, r.resourcePatternType, a.principal, a.host,
    a.operation, a.permissionType].join(':');
}

async function main() {
  const [bootstrap] = process.argv.slice(2);
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'kjs-acls', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createAcls({
    acl: [
      {
        resourceType: AclResourceTypes.TOPIC, resourceName: 'kjs-topic',
        resourcePatternType: ResourcePatternTypes.LITERAL, principal: 'User:kjs', host: '*',
        operation: AclOperationTypes.DESCRIBE, permissionType: AclPermissionTypes.ALLOW,
      },
      {
        resourceType: AclResourceTypes.TRANSACTIONAL_ID, resourceName: 'kjs-',
        resourcePatternType: ResourcePatternTypes.PREFIXED, principal: 'User:kjs', host: '*',
        operation: AclOperationTypes.WRITE, permissionType: AclPermissionTypes.ALLOW,
      },
    ],
  });
  const flatten = (res) => res.resources.flatMap((r) => r.acls.map((a) => text(r, a))).sort();
  const described = flatten(await admin.describeAcls({
    resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY,
    principal: 'User:kjs', operation: AclOperationTypes.ANY,
    permissionType: AclPermissionTypes.ANY,
  }));
  const del = await admin.deleteAcls({
    filters: [{
      resourceType: AclResourceTypes.TRANSACTIONAL_ID, resourceName: 'kjs-1',
      resourcePatternType: ResourcePatternTypes.MATCH, operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    }],
  });
  const deleted = del.filterResponses.flatMap((f) => f.matchingAcls.map((a) => text(a, a))).sort();
  const after = flatten(await admin.describeAcls({
    resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY,
    principal: 'User:kjs', operation: AclOperationTypes.ANY,
    permissionType: AclPermissionTypes.ANY,
  }));
  await admin.disconnect();
  console.log(JSON.stringify({ described, deleted, after }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
