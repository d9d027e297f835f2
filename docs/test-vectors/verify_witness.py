#!/usr/bin/env python3
"""Checks witness-v1.json, the witness vectors of docs/WITNESS.md, from the specs alone:
c2sp.org/tlog-cosignature (key ID with type 0x04, vkey, the cosignature/v1 signed message, the timestamped
signature) and c2sp.org/tlog-witness (the add-checkpoint request and response bodies), over the checkpoint of
transparency-v1.json. Needs the `cryptography` package. `--write` writes the file instead of checking it.

Usage: verify_witness.py transparency-v1.json witness-v1.json [--write]
"""

import base64
import hashlib
import json
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def mth(leaves):
    if len(leaves) == 0:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + mth(leaves[:k]) + mth(leaves[k:])).digest()


def subproof(m, leaves, b):
    """RFC 6962 section 2.1.2, SUBPROOF(m, D[n], b)."""
    n = len(leaves)
    if m == n:
        return [] if b else [mth(leaves)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return subproof(m, leaves[:k], b) + [mth(leaves[k:])]
    return subproof(m - k, leaves[k:], False) + [mth(leaves[:k])]


def build(transparency):
    seed = bytes(range(0x20, 0x40))
    name = "witness.example/w1"
    private = Ed25519PrivateKey.from_private_bytes(seed)
    public = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    key_id = hashlib.sha256(name.encode() + b"\n" + b"\x04" + public).digest()[:4]
    vkey = name + "+" + key_id.hex() + "+" + base64.b64encode(b"\x04" + public).decode()
    text = transparency["checkpoint"]["text"]
    note = transparency["checkpoint"]["note"]
    timestamp = 1679315147
    message = b"cosignature/v1\ntime " + str(timestamp).encode() + b"\n" + text.encode()
    signature = private.sign(message)
    blob = key_id + timestamp.to_bytes(8, "big") + signature
    line = "\u2014 " + name + " " + base64.b64encode(blob).decode() + "\n"
    leaves = [bytes.fromhex(leaf) for leaf in transparency["tree"]["leaves"]]
    old = 3
    proof = subproof(old, leaves, True)
    body = "old %d\n" % old + "".join(base64.b64encode(h).decode() + "\n" for h in proof) + "\n" + note
    return {
        "description": "Witness vectors (docs/WITNESS.md): a cosignature/v1 of the checkpoint of "
        + "transparency-v1.json and an add-checkpoint request for it. Hex for bytes unless a field is named for its "
        + "text form. Checked by the Swift suite (WitnessVectorTests) and by verify_witness.py.",
        "specs": ["c2sp.org/tlog-cosignature", "c2sp.org/tlog-witness"],
        "witness": {
            "seed": seed.hex(),
            "name": name,
            "publicKey": public.hex(),
            "keyId": key_id.hex(),
            "vkey": vkey,
        },
        "cosignature": {
            "timestamp": timestamp,
            "message": message.decode(),
            "signature": signature.hex(),
            "line": line,
            "cosignedNote": note + line,
        },
        "addCheckpoint": {
            "oldSize": old,
            "proof": [h.hex() for h in proof],
            "body": body,
            "response": line,
            "conflictBody": "%d\n" % old,
        },
    }


def main():
    transparency = json.load(open(sys.argv[1]))
    built = build(transparency)
    if "--write" in sys.argv:
        with open(sys.argv[2], "w") as out:
            json.dump(built, out, indent=2, ensure_ascii=False)
            out.write("\n")
        print("wrote", sys.argv[2])
        return
    stored = json.load(open(sys.argv[2]))
    if stored != built:
        for key in built:
            if stored.get(key) != built[key]:
                print("witness-v1.json: %s differs from what the specs give" % key)
        sys.exit(1)
    print("witness-v1.json: every witness vector matches the specs")


if __name__ == "__main__":
    main()
