"""Alters and describes SCRAM credentials with confluent-kafka's AdminClient
(alter_user_scram_credentials / describe_user_scram_credentials, KIP-554).

usage: scram_admin.py BOOTSTRAP ACTION... [-X key=value ...]
ACTION: upsert:USER:MECHANISM:ITERATIONS:PASSWORD | delete:USER:MECHANISM | describe:USER[,USER]
        | describe-all
The actions run in order, each as its own request (a request may alter a user only once).
Prints one JSON line: a list with, per action, {"action": ..., "result": {user: "OK" or error
name}} for alterations and {user: [[mechanism, iterations], ...] or error name} for describes.
"""
import argparse
import json

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

ap = argparse.ArgumentParser()
ap.add_argument("bootstrap")
ap.add_argument("actions", nargs="+")
ap.add_argument("-X", dest="settings", action="append", default=[])
args = ap.parse_args()

security = dict(s.split("=", 1) for s in args.settings)
admin = AdminClient({"bootstrap.servers": args.bootstrap, **security})


def error_name(e):
    if isinstance(e, KafkaException) and e.args:
        return e.args[0].name()
    return f"{type(e).__name__}: {e}"


out = []
for action in args.actions:
    kind, _, rest = action.partition(":")
    if kind in ("upsert", "delete"):
        if kind == "upsert":
            user, mechanism, iterations, password = rest.split(":", 3)
            change = UserScramCredentialUpsertion(
                user,
                ScramCredentialInfo(ScramMechanism[mechanism.replace("-", "_")], int(iterations)),
                password.encode(),
            )
        else:
            user, mechanism = rest.split(":", 1)
            change = UserScramCredentialDeletion(user, ScramMechanism[mechanism.replace("-", "_")])
        result = {}
        for name, f in admin.alter_user_scram_credentials([change]).items():
            try:
                f.result(30)
                result[name] = "OK"
            except Exception as e:  # noqa: BLE001 - the error name is the answer
                result[name] = error_name(e)
        out.append({"action": action, "result": result})
    else:
        users = None if kind == "describe-all" else rest.split(",")
        result = {}
        try:
            futures = admin.describe_user_scram_credentials(users)
            if users is None:
                described = futures.result(30)
                items = described.items()
            else:
                items = []
                for name, f in futures.items():
                    try:
                        items.append((name, f.result(30)))
                    except Exception as e:  # noqa: BLE001
                        result[name] = error_name(e)
            for name, d in items:
                result[name] = sorted(
                    [str(i.mechanism).split(".")[-1], i.iterations] for i in d.scram_credential_infos
                )
        except Exception as e:  # noqa: BLE001
            result["*"] = error_name(e)
        out.append({"action": action, "result": result})

print(json.dumps(out))
