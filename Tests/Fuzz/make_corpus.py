#!/usr/bin/env python3
"""Writes the committed seed corpus of the parser fuzz tests (Tests/Fuzz/corpus/<target>/) from the format's
test vectors (docs/test-vectors/chain-v1.json and chain-v2.json) plus hand-written documents. Deterministic: run it again after the
vectors change and commit the result. Standard library only."""

import base64
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "corpus")
vectors = json.load(open(os.path.join(ROOT, "docs/test-vectors/chain-v1.json"), encoding="utf-8"))
vectors_v2 = json.load(open(os.path.join(ROOT, "docs/test-vectors/chain-v2.json"), encoding="utf-8"))


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def write(target, name, data):
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(OUT, target, name), "wb") as handle:
        handle.write(data)


shutil.rmtree(OUT, ignore_errors=True)
entries = vectors["entries"]
checkpoint = {k: v for k, v in vectors["checkpoint"].items() if k != "signedMessage"}
log_id = vectors["logId"]

# JSON values: the canonical examples, and a document with a number in every position.
for index, case in enumerate(vectors["canonicalJSON"]):
    write("json", "canonical-%d.json" % index, case["canonical"])
write("json", "numbers.json", '{"a":[0,-1,9007199254740991,-9007199254740991],"b":{"c":[[[1]]],"d":-0},"e":1}')
write("json", "strings.json", '["\\u00e9\\ud83d\\ude00","\\"\\\\\\/\\b\\f\\n\\r\\t",""," \\u0000"]')
write("json", "literals.json", ' [ true , false , null , {} , [] ] ')

# Producer input: one object, pretty-printed, and JSON Lines.
success = {"type": "BIOMETRIC_AUTH_SUCCESS", "userId": "user-1", "deviceId": "device-1",
           "attributes": {"unlockDurationMs": 120}}
failure = {"type": "BIOMETRIC_AUTH_FAILURE", "userId": "user-2", "deviceId": "device-1",
           "attributes": {"attemptCount": 2, "errorCode": "ERR-107-030"},
           "occurredAt": "2026-11-18T11:06:41.000Z", "idempotencyKey": "idem-7"}
write("event-input", "single.json", canonical(success))
write("event-input", "pretty.json", json.dumps(failure, indent=2))
write("event-input", "lines.jsonl", "\n".join(canonical(e) for e in [success, failure, success]) + "\n")

# Event payloads (decrypted) and system record payloads, from the vectors.
for item in entries:
    if item["kind"] == "event":
        write("event-payload", "seq-%d.json" % item["seq"], item["plaintext"])
    else:
        write("system-record", "%d-%s.json" % (item["kindByte"], item["kind"]), item["plaintext"])
    write("sealed-entry", "seq-%d-%s.bin" % (item["seq"], item["kind"]), bytes.fromhex(item["serialized"]))

# Format version 2 (docs/FORMAT.md section 13): signed and unsigned entries, and the records it adds (the genesis
# with epochSeconds, epoch, close, crash recovery), from the main chain and the migrated log's upgrade.
# The subjects part (section 13.9): events under subject keys (the subject flag), legal hold and erasure records.
for prefix, items in [
    ("v2", vectors_v2["entries"]),
    ("migrated", vectors_v2["migrated"]["entries"]),
    ("subjects", vectors_v2["subjects"]["entries"]),
]:
    for item in items:
        if item["kind"] != "event":
            name = "%s-seq-%d-%d-%s.json" % (prefix, item["seq"], item["kindByte"], item["kind"])
            write("system-record", name, item["plaintext"])
        write("sealed-entry", "%s-seq-%d-%s.bin" % (prefix, item["seq"], item["kind"]), bytes.fromhex(item["serialized"]))

write("checkpoint", "vector.json", canonical(checkpoint))
write("timestamp", "utc.txt", "2026-11-18T11:06:41.000Z")
write("timestamp", "offset.txt", "1999-12-31t23:59:59.123456-05:30")
write("timestamp", "edges.txt", "9999-12-31T23:59:59.999Z")
write("timestamp", "epoch.txt", "1970-01-01T00:00:00Z")

write("catalogue", "vault.json", json.dumps({
    "version": 1,
    "eventTypes": [{
        "type": "VAULT_EXPORTED", "priority": "critical", "summary": "A vault was exported.",
        "additionalAttributes": False,
        "attributes": {
            "format": {"type": "string", "enum": ["csv", "json"]},
            "itemCount": {"type": "integer", "minimum": 0, "maximum": 100000},
            "encrypted": {"type": "boolean"},
            "note": {"type": "string", "required": False, "minLength": 1, "maxLength": 200},
            "extra": {"type": "object", "required": False},
            "list": {"type": "array", "required": False},
        },
    }],
}, indent=2))

# The wire protocol, both ways.
batch = {
    "v": 1, "logId": log_id, "batchId": "b" * 64, "checkpoint": checkpoint,
    "entries": [{"seq": e["seq"], "idempotencyKey": "%s-%d" % (log_id, e["seq"]),
                 "entry": base64.b64encode(bytes.fromhex(e["serialized"])).decode()} for e in entries],
}
write("sync-batch", "vectors.json", canonical(batch))
write("sync-batch", "no-checkpoint.json", canonical(dict(batch, checkpoint=None, entries=batch["entries"][:2])))
receipt = {"v": 1, "logId": log_id, "seq": 7, "entryHash": entries[7]["entryHash"],
           "receivedAt": "2026-11-18T11:06:41.000Z", "collectorKeyId": "ab" * 16, "signature": "cd" * 64}
write("receipt", "receipt.json", canonical(receipt))
write("sync-response", "mixed.json", canonical({"v": 1, "receipt": receipt, "results": [
    {"seq": 6, "status": "duplicate", "code": 200, "reason": ""},
    {"seq": 7, "status": "accepted", "code": 200, "reason": ""},
    {"seq": 8, "status": "rejected", "code": 422, "reason": "the signature does not verify"},
    {"seq": 9, "status": "rejected", "code": 503, "reason": "unknown signing key"}]}))
write("sync-response", "no-receipt.json", canonical({"v": 1, "receipt": None, "results": []}))
# Version 2: the batch states the last verified tree size; the receipt is a checkpoint with proofs.
write("sync-batch", "tree-size.json", canonical(dict(batch, v=2, treeSize=5, entries=batch["entries"][:2])))
tree_hash = lambda n: base64.b64encode(bytes([n]) * 32).decode()
tree_receipt = {
    "v": 2, "logId": log_id, "seq": 7, "entryHash": entries[7]["entryHash"], "leafIndex": 7,
    "checkpoint": "audit-collector.localhost/%s\n8\n%s\n\n\u2014 audit-collector.localhost/%s AAAAAA==\n"
    % (log_id, tree_hash(9), log_id),
    "inclusion": [tree_hash(1), tree_hash(2), tree_hash(3)],
    "consistency": {"from": 5, "proof": [tree_hash(4), tree_hash(5)]},
}
write("tree-receipt", "receipt.json", canonical(tree_receipt))
write("tree-receipt", "no-consistency.json", canonical(dict(tree_receipt, consistency=None)))
write("sync-response", "tree.json", canonical({"v": 2, "receipt": tree_receipt, "results": [
    {"seq": 7, "status": "accepted", "code": 200, "reason": ""}]}))

# Key files and bundles.
keys = vectors["keys"]
public_keys = [{"keyId": keys["signingKeyId"], "publicKey": keys["signingPublicKey"]},
               {"keyId": keys["rotatedSigningKeyId"], "publicKey": keys["rotatedSigningPublicKey"]}]
write("public-key-file", "keys.json", canonical({"v": 1, "logId": log_id, "keys": public_keys}) + "\n")
write("public-key-file", "lines.txt", keys["signingPublicKey"] + "\n  " + keys["rotatedSigningPublicKey"] + "\n")
header = {"bundle": "audit-chain", "v": 1, "logId": log_id, "deviceId": "device-1", "publicKeys": public_keys,
          "firstSeq": 0, "lastSeq": 7, "checkpoint": checkpoint}
lines = [canonical(header)] + [canonical({"seq": e["seq"], "entry": e["serialized"]}) for e in entries]
write("bundle", "full.jsonl", "\n".join(lines) + "\n")
ranged = dict(header, firstSeq=5, checkpoint=None)
write("bundle", "range.jsonl", "\n".join([canonical(ranged), lines[1]] + lines[6:]) + "\n")

write("agent-config", "settings.json", json.dumps({
    "deviceId": "device-1", "backend": "http://127.0.0.1:8443", "maxEvents": 1000, "maxAgeHours": 72,
    "maxAttempts": 10, "maxDeadLetters": 100, "batchSize": 500, "retryScheduleSeconds": [1, 5, 30, 60, 300],
    "jitter": 0.2, "logLevel": "info", "retentionHours": None, "allowRemoteListen": False,
}, indent=2))
write("agent-config", "empty.json", "{}")
# The transparency log's C2SP formats (docs/test-vectors/transparency-v1.json).
transparency = json.load(open(os.path.join(ROOT, "docs/test-vectors/transparency-v1.json"), encoding="utf-8"))
write("signed-note", "checkpoint.note", transparency["checkpoint"]["note"])
write("signed-note", "two-signatures.note", transparency["checkpoint"]["note"]
      + transparency["checkpoint"]["note"].split("\n\n", 1)[1])
write("tlog-checkpoint", "checkpoint.txt", transparency["checkpoint"]["text"])
write("tlog-checkpoint", "extensions.txt", transparency["checkpoint"]["text"] + "an extension line\n")
write("tlog-proof", "proof.txt", transparency["proof"]["file"])
write("note-vkey", "vkey.txt", transparency["key"]["vkey"])
# tlog-tiles paths and entry bundles (c2sp.org/tlog-tiles): the spec's example index, partial tiles, the largest index.
for name, path in [("example", "tile/0/x001/x234/067"), ("partial", "tile/1/005.p/17"), ("entries", "tile/entries/000"),
                   ("entries-partial", "tile/entries/x001/000.p/255"), ("level", "tile/63/000"),
                   ("largest", "tile/0/x018/x446/x744/x073/x709/x551/615")]:
    write("tlog-tile-path", name + ".txt", path)
leaves = [bytes.fromhex(leaf) for leaf in transparency["tree"]["leaves"]]
write("tlog-entry-bundle", "vector-leaves.bin", b"".join(len(leaf).to_bytes(2, "big") + leaf for leaf in leaves))
write("tlog-entry-bundle", "empty-entries.bin", b"\x00\x00" * 3)
# busctl monitor --json=short lines (Tests/LinuxProducersTests/Fixtures, recorded with the real fprintd): the fprintd
# device calls, answers and signals, NameOwnerChanged, and a GetConnectionUnixUser question and answer.
fixture = os.path.join(ROOT, "Tests/LinuxProducersTests/Fixtures/fprintd-restart-caller.jsonl")
wanted = ['"member":"Claim"', '"member":"EnrollStart"', '"member":"EnrollStatus"', '"member":"VerifyStatus"',
          '"member":"DeleteEnrolledFingers2"', '"member":"NameOwnerChanged"', '"member":"GetConnectionUnixUser"',
          '"type":"method_return"', '"type":"error"']
picked = {}
for line in open(fixture, encoding="utf-8").read().splitlines():
    for marker in wanted:
        if marker in line and marker not in picked:
            picked[marker] = line
for index, marker in enumerate(wanted):
    if marker in picked:
        write("busctl-line", "line-%d.json" % index, picked[marker])
write("busctl-line", "session.jsonl", "\n".join(picked[marker] for marker in wanted if marker in picked) + "\n")
print("corpus written to", OUT)
