"""Creates, describes and deletes ACLs with confluent-kafka's AdminClient (create_acls,
describe_acls, delete_acls).

usage: acl_admin.py BOOTSTRAP [-X key=value ...]
Creates three ACLs, describes with a MATCH filter and with an ANY filter, deletes by principal,
describes again. Prints one JSON object; each ACL is
"TYPE:name:PATTERN:principal:host:OPERATION:PERMISSION", lists sorted.
"""
import argparse
import json

from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

ap = argparse.ArgumentParser()
ap.add_argument("bootstrap")
ap.add_argument("-X", dest="settings", action="append", default=[])
args = ap.parse_args()
admin = AdminClient({"bootstrap.servers": args.bootstrap, **dict(s.split("=", 1) for s in args.settings)})


def text(b):
    return ":".join(
        [
            b.restype.name,
            b.name,
            b.resource_pattern_type.name,
            b.principal,
            b.host,
            b.operation.name,
            b.permission_type.name,
        ]
    )


bindings = [
    AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:alice", "*",
               AclOperation.READ, AclPermissionType.ALLOW),
    AclBinding(ResourceType.TOPIC, "orders-", ResourcePatternType.PREFIXED, "User:bob", "*",
               AclOperation.WRITE, AclPermissionType.ALLOW),
    AclBinding(ResourceType.GROUP, "g", ResourcePatternType.LITERAL, "User:alice", "10.0.0.1",
               AclOperation.READ, AclPermissionType.DENY),
]
out = {"created": []}
for b, f in admin.create_acls(bindings).items():
    f.result(30)
    out["created"].append(text(b))
out["created"].sort()


def describe(flt):
    return sorted(text(b) for b in admin.describe_acls(flt).result(30))


out["match_orders_eu"] = describe(
    AclBindingFilter(ResourceType.TOPIC, "orders-eu", ResourcePatternType.MATCH, None, None,
                     AclOperation.ANY, AclPermissionType.ANY))
out["match_orders"] = describe(
    AclBindingFilter(ResourceType.TOPIC, "orders", ResourcePatternType.MATCH, None, None,
                     AclOperation.ANY, AclPermissionType.ANY))
out["any"] = describe(
    AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                     AclOperation.ANY, AclPermissionType.ANY))
deleted = []
for _, f in admin.delete_acls([
    AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, "User:bob", None,
                     AclOperation.ANY, AclPermissionType.ANY)
]).items():
    deleted.extend(text(b) for b in f.result(30))
out["deleted"] = sorted(deleted)
out["after"] = describe(
    AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                     AclOperation.ANY, AclPermissionType.ANY))
print(json.dumps(out))
