#!/usr/bin/env python3
"""An independent verifier of docs/test-vectors/chain-v1.json, written from docs/FORMAT.md alone.

It uses only the Python standard library and `cryptography` (SHA-256, HMAC, AES-GCM, Ed25519), and checks:
key ids, header layout, payload digests, entry hashes, signatures (with rotation), links, AES-GCM opening
with the header as associated data, canonical JSON, the detached checkpoint, and that every tampered copy
is rejected at the entry the vectors name. Exit status 0 when everything agrees. Its primitives (hashes, key ids,
canonical JSON, the entry layout of versions 1 and 2) are shared with verify_vectors_v2.py, which verifies
chain-v2.json.
"""
import hashlib
import hmac
import json
import struct
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

D_PAYLOAD = b"audit-chain/v1/payload"
D_ENTRY = b"audit-chain/v1/entry"
D_SIG = b"audit-chain/v1/signature"
D_CHECKPOINT = b"audit-chain/v1/checkpoint"
D_SIGNING_ID = b"audit-chain/v1/signing-key-id"
DATA_ID_LABEL = b"audit-chain/v1/data-key-id"
KINDS = {
    0: "genesis",
    1: "event",
    2: "keyRotation",
    3: "accountedRemoval",
    4: "retentionPrune",
    5: "checkpoint",
    6: "epoch",
    7: "close",
    8: "crashRecovery",
    9: "erasure",
    10: "legalHold",
    11: "subjectKeyExport",
}
NOT_IN_VERSION = {1: {6, 7, 8, 9, 10, 11}, 2: {2}}  # kinds a version does not have (sections 6 and 13.2)
SIGNED_FLAG = 0x0001  # version 2 header flag (section 13.1)
SUBJECT_FLAG = 0x0002  # version 2 header flag of an event sealed under its subject's content key (section 13.9)
MAX_PAYLOAD = 1 << 20


def sha256(*parts):
    return hashlib.sha256(b"".join(parts)).digest()


def signing_key_id(public_key):
    return sha256(D_SIGNING_ID, public_key)[:16]


def data_key_id(key):
    return hmac.new(key, DATA_ID_LABEL, hashlib.sha256).digest()[:16]


def canonical(value):
    def enc_str(s):
        out = ['"']
        for ch in s:
            o = ord(ch)
            if ch == '"':
                out.append('\\"')
            elif ch == "\\":
                out.append("\\\\")
            elif ch in "\b\t\n\f\r":
                out.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}[ch])
            elif o < 0x20:
                out.append("\\u%04x" % o)
            else:
                out.append(ch)
        out.append('"')
        return "".join(out)

    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return enc_str(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: kv[0].encode("utf-8"))
        return "{" + ",".join(enc_str(k) + ":" + canonical(v) for k, v in items) + "}"
    raise ValueError("not a format value: %r" % (value,))


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key")
    return dict(pairs)


def parse_entry(raw):
    """The parts of a serialized entry of version 1 or 2 (sections 4, 5 and 13.1); ValueError when malformed."""
    if len(raw) < 152 or raw[0:4] != b"AUDC" or raw[4] not in NOT_IN_VERSION:
        raise ValueError("malformed")
    version, kind = raw[4], raw[5]
    (flags,) = struct.unpack(">H", raw[6:8])
    if kind not in KINDS or kind in NOT_IN_VERSION[version]:
        raise ValueError("malformed kind")
    if flags & ~(SIGNED_FLAG | SUBJECT_FLAG if version == 2 else 0):
        raise ValueError("malformed flags")
    if flags & SUBJECT_FLAG and kind != 1:
        raise ValueError("malformed flags")
    signed = version == 1 or bool(flags & SIGNED_FLAG)
    (length,) = struct.unpack(">I", raw[104:108])
    if length > MAX_PAYLOAD or len(raw) != (216 if signed else 152) + length:
        raise ValueError("malformed length")
    header = raw[:108]
    return {
        "header": header,
        "version": version,
        "kind": kind,
        "flags": flags,
        "signed": signed,
        "logId": raw[8:24],
        "seq": struct.unpack(">Q", raw[24:32])[0],
        "time": struct.unpack(">q", raw[32:40])[0],
        "signingKeyId": raw[40:56],
        "dataKeyId": raw[56:72],
        "prevHash": raw[72:104],
        "digest": raw[108:140],
        "nonce": raw[140:152],
        "payload": raw[152 : 152 + length],
        "signature": raw[152 + length :],
    }


def verify(entries, pinned, data_keys, checkpoint=None):
    """Returns a list of (seq, problem) pairs; empty when the chain verifies. Version 1 only (verify_vectors_v2.py
    verifies version 2)."""
    problems = []
    trusted = {signing_key_id(k): k for k in pinned}
    active = None
    active_data = None  # the genesis's dataKeyId, then each rotation's newDataKeyId (FORMAT.md section 7)
    tip_seq, tip_hash = None, None
    hashes = {}
    for position, raw in enumerate(entries):
        try:
            e = parse_entry(raw)
        except ValueError as err:
            problems.append((position, str(err)))
            tip_seq, tip_hash = position, None
            continue
        entry_hash = sha256(D_ENTRY, e["header"], e["digest"])
        key = trusted.get(e["signingKeyId"])
        try:
            if key is None or (active is not None and e["signingKeyId"] != active):
                raise InvalidSignature()
            Ed25519PublicKey.from_public_bytes(key).verify(e["signature"], D_SIG + entry_hash)
        except InvalidSignature:
            problems.append((e["seq"] if e["seq"] == (tip_seq or 0) + (tip_seq is not None) else position, "signature"))
            tip_seq, tip_hash = position, None
            continue
        if tip_seq is not None:
            if e["seq"] <= tip_seq:
                problems.append((e["seq"], "order"))
                continue
            if e["seq"] > tip_seq + 1:
                problems.append((tip_seq + 1, "gap"))
            elif tip_hash is not None and e["prevHash"] != tip_hash:
                problems.append((e["seq"], "link"))
        elif e["seq"] != 0:
            problems.append((0, "gap"))
        tip_seq, tip_hash = e["seq"], entry_hash
        hashes[e["seq"]] = entry_hash
        if sha256(D_PAYLOAD, e["nonce"], e["payload"]) != e["digest"]:
            problems.append((e["seq"], "payload"))
            continue
        kind = KINDS[e["kind"]]
        if kind == "event":
            assert e["dataKeyId"] != b"\0" * 16 and len(e["payload"]) >= 16
            if active_data is not None and e["dataKeyId"] != active_data:
                problems.append((e["seq"], "data key"))
                continue
            dk = data_keys[e["dataKeyId"]]
            plaintext = AESGCM(dk).decrypt(e["nonce"], e["payload"], e["header"])
        else:
            assert e["dataKeyId"] == b"\0" * 16 and e["nonce"] == b"\0" * 12
            plaintext = e["payload"]
        body = json.loads(plaintext.decode("utf-8"), object_pairs_hook=no_duplicates)
        assert canonical(body).encode("utf-8") == plaintext, "payload not canonical at %d" % e["seq"]
        assert body["v"] == 1
        if kind == "genesis":
            assert e["seq"] == 0 and e["prevHash"] == b"\0" * 32
            assert bytes.fromhex(body["logId"]) == e["logId"]
            assert signing_key_id(bytes.fromhex(body["signingPublicKey"])) == e["signingKeyId"]
            active = e["signingKeyId"]
            active_data = bytes.fromhex(body["dataKeyId"])
        elif kind == "keyRotation":
            new_key = bytes.fromhex(body["newSigningPublicKey"])
            trusted[signing_key_id(new_key)] = new_key
            active = signing_key_id(new_key)
            active_data = bytes.fromhex(body["newDataKeyId"])
        elif kind == "retentionPrune":
            assert body["firstSeq"] == 1
        elif kind == "checkpoint":
            assert body["headSeq"] == e["seq"] - 1 and bytes.fromhex(body["headHash"]) == e["prevHash"]
    if checkpoint is not None:
        message = D_CHECKPOINT + bytes.fromhex(checkpoint["logId"]) + struct.pack(">Q", checkpoint["seq"])
        message += bytes.fromhex(checkpoint["entryHash"])
        key = trusted[bytes.fromhex(checkpoint["signingKeyId"])]
        Ed25519PublicKey.from_public_bytes(key).verify(bytes.fromhex(checkpoint["signature"]), message)
        if tip_seq is None or tip_seq < checkpoint["seq"]:
            problems.append(((tip_seq or 0) + 1, "truncated"))
        elif hashes.get(checkpoint["seq"]) != bytes.fromhex(checkpoint["entryHash"]):
            problems.append((checkpoint["seq"], "checkpoint"))
    return problems


def main(path):
    doc = json.load(open(path, encoding="utf-8"))
    keys = {k: bytes.fromhex(v) for k, v in doc["keys"].items()}
    assert signing_key_id(keys["signingPublicKey"]) == keys["signingKeyId"]
    assert signing_key_id(keys["rotatedSigningPublicKey"]) == keys["rotatedSigningKeyId"]
    assert data_key_id(keys["dataKey"]) == keys["dataKeyId"]
    assert data_key_id(keys["rotatedDataKey"]) == keys["rotatedDataKeyId"]
    data_keys = {keys["dataKeyId"]: keys["dataKey"], keys["rotatedDataKeyId"]: keys["rotatedDataKey"]}
    for case in doc["canonicalJSON"]:
        assert canonical(case["value"]) == case["canonical"], case
    entries = []
    for item in doc["entries"]:
        raw = bytes.fromhex(item["serialized"])
        e = parse_entry(raw)
        assert e["header"].hex() == item["header"]
        assert sha256(D_PAYLOAD, e["nonce"], e["payload"]).hex() == item["payloadDigest"]
        assert sha256(D_ENTRY, e["header"], e["digest"]).hex() == item["entryHash"]
        if KINDS[e["kind"]] == "event":
            sealed = AESGCM(data_keys[e["dataKeyId"]]).encrypt(e["nonce"], item["plaintext"].encode(), e["header"])
            assert sealed.hex() == item["payload"], "ciphertext differs at %d" % e["seq"]
        entries.append(raw)
    clean = verify(entries, [keys["signingPublicKey"]], data_keys, doc["checkpoint"])
    assert clean == [], clean
    for case in doc["tampered"]:
        found = verify([bytes.fromhex(h) for h in case["entries"]], [keys["signingPublicKey"]], data_keys, doc["checkpoint"])
        expected_seqs = sorted({x["seq"] for x in case["expected"]})
        assert found, "tampering not detected: " + case["description"]
        assert sorted({seq for seq, _ in found})[:1] == expected_seqs[:1], (case["description"], found)
    print("independent verifier agrees: %d entries, %d tampered copies rejected" % (len(entries), len(doc["tampered"])))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/test-vectors/chain-v1.json")
