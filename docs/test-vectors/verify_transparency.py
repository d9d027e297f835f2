#!/usr/bin/env python3
"""An independent verifier of docs/test-vectors/transparency-v1.json, written from the C2SP specs alone.

c2sp.org/signed-note@v1.0.0 (key ID, vkey, note layout, Ed25519 signature), c2sp.org/tlog-checkpoint@v1.0.0 (the
note text), c2sp.org/tlog-proof@v1 (the proof file), RFC 6962 section 2.1 (the tree and its inclusion proofs) and
RFC 9162 section 2.1.3.2 (checking one). Uses only hashlib, base64 and `cryptography`.

It recomputes the key from the seed, the key ID and vkey, the tree and its root, the checkpoint text and note (Ed25519
is deterministic, so the signature too), the inclusion proof and the proof file, and compares each with the JSON byte
for byte; then it parses the proof file as a verifier would and checks the note signature and the inclusion proof.
It also checks the spec's own vkey example. Exit status 0 when everything agrees, 1 otherwise.
"""
import base64
import binascii
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

EM_DASH = "\u2014"
PROOF_HEADER = "c2sp.org/tlog-proof@v1"
failures = []


def check(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def b64(data):
    return base64.b64encode(data).decode("ascii")


def unb64(text):
    """Canonical standard base64 only (RFC 4648 section 4): re-encoding must give the text back."""
    data = base64.b64decode(text, validate=True)
    if b64(data) != text:
        raise ValueError("non-canonical base64: " + text)
    return data


def key_id(name, public_key):
    # c2sp.org/signed-note "Ed25519 signatures": SHA-256(key name || 0x0A || 0x01 || 32-byte public key)[:4]
    return hashlib.sha256(name.encode() + b"\n" + b"\x01" + public_key).digest()[:4]


def parse_vkey(vkey):
    # c2sp.org/signed-note "Verifier keys": <name>+hex(key ID)+base64(type || public key); the name holds no "+".
    name, hex_id, rest = vkey.split("+", 2)
    key = unb64(rest)
    assert key[0] == 0x01 and len(key) == 33, "an Ed25519 vkey"
    assert hex_id == hex_id.lower() and len(hex_id) == 8
    return name, bytes.fromhex(hex_id), key[1:]


def parse_note(note):
    # c2sp.org/signed-note "Format": the text ends at the last empty line; every line after it is a signature.
    assert note.endswith("\n") and all(c == "\n" or ord(c) >= 0x20 for c in note)
    cut = note.rindex("\n\n")
    text, block = note[: cut + 1], note[cut + 2 :]
    signatures = []
    for line in block.split("\n")[:-1]:
        dash, name, sig = line.split(" ")
        assert dash == EM_DASH and name and "+" not in name
        raw = unb64(sig)
        signatures.append((name, raw[:4], raw[4:]))
    assert signatures, "at least one signature"
    return text, signatures


def verify_note(note, keys):
    """The names of the known keys that signed; raises on a known key's bad signature or no known signature."""
    text, signatures = parse_note(note)
    signed = []
    for name, kid, sig in signatures:
        for known_name, known_id, public_key in keys:
            if (name, kid) == (known_name, known_id):
                Ed25519PublicKey.from_public_bytes(public_key).verify(sig, text.encode())
                signed.append(name)
    if not signed:
        raise InvalidSignature("no signature from a known key")
    return text, signed


def leaf_hash(data):
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def split(n):
    k = 1
    while k << 1 < n:
        k <<= 1
    return k


def mth(hashes):
    # RFC 6962 section 2.1, MTH over leaf hashes.
    if not hashes:
        return hashlib.sha256(b"").digest()
    if len(hashes) == 1:
        return hashes[0]
    k = split(len(hashes))
    return node_hash(mth(hashes[:k]), mth(hashes[k:]))


def path(m, hashes):
    # RFC 6962 section 2.1.1, PATH(m, D[n]).
    if len(hashes) <= 1:
        return []
    k = split(len(hashes))
    if m < k:
        return path(m, hashes[:k]) + [mth(hashes[k:])]
    return path(m - k, hashes[k:]) + [mth(hashes[:k])]


def subproof(m, hashes, complete):
    # RFC 6962 section 2.1.2, SUBPROOF(m, D[n], b).
    n = len(hashes)
    if m == n:
        return [] if complete else [mth(hashes)]
    k = split(n)
    if m <= k:
        return subproof(m, hashes[:k], complete) + [mth(hashes[k:])]
    return subproof(m - k, hashes[k:], False) + [mth(hashes[:k])]


def verify_consistency(first, second, first_root, second_root, proof):
    # RFC 9162 section 2.1.4.2, for 0 < first <= second.
    if first == second:
        return not proof and first_root == second_root
    if first & (first - 1) == 0:
        proof = [first_root] + proof
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    if not proof:
        return False
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == first_root and sr == second_root


def root_from_inclusion(leaf, index, size, proof):
    # RFC 9162 section 2.1.3.2.
    if index >= size:
        raise ValueError("index beyond size")
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise ValueError("proof too long")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ValueError("proof too short")
    return r


def decimal(text):
    assert text.isascii() and text.isdigit() and (text == "0" or not text.startswith("0"))
    value = int(text)
    assert value < 2**64
    return value


def parse_checkpoint(text):
    # c2sp.org/tlog-checkpoint "Note text": at least three non-empty lines.
    lines = text.split("\n")
    assert lines[-1] == "" and len(lines) >= 4 and all(lines[:-1])
    root = unb64(lines[2])
    assert len(root) == 32
    return lines[0], decimal(lines[1]), root


def parse_proof(data):
    # c2sp.org/tlog-proof@v1 "Format".
    lines = data.split("\n")
    assert lines[0] == PROOF_HEADER
    at, extra = 1, b""
    if lines[at].startswith("extra "):
        extra = unb64(lines[at][len("extra ") :])
        at += 1
    assert lines[at].startswith("index ")
    index = decimal(lines[at][len("index ") :])
    at += 1
    hashes = []
    while lines[at]:
        hashes.append(unb64(lines[at]))
        assert len(hashes[-1]) == 32
        at += 1
    checkpoint_note = "\n".join(lines[at + 1 :])
    return extra, index, hashes, checkpoint_note


def spec_vkey_example():
    # c2sp.org/signed-note "Verifier keys", "Example".
    vkey = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
    note = (
        "This is an example message.\n\n"
        + EM_DASH
        + " example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"
    )
    name, kid, public_key = parse_vkey(vkey)
    check("spec example: the vkey's key ID is SHA-256(name || 0x0A || 0x01 || key)[:4]", key_id(name, public_key) == kid)
    try:
        verify_note(note, [(name, kid, public_key)])
        check("spec example: the vkey verifies the example note", True)
    except (InvalidSignature, AssertionError, ValueError):
        check("spec example: the vkey verifies the example note", False)


def main(path_to_json):
    with open(path_to_json, encoding="utf-8") as f:
        v = json.load(f)
    spec_vkey_example()

    key, tree, cp, pf = v["key"], v["tree"], v["checkpoint"], v["proof"]
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(key["seed"]))
    public = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    check("public key from the seed", public.hex() == key["publicKey"])
    kid = key_id(key["name"], public)
    check("key ID", kid.hex() == key["keyId"])
    check("vkey", key["name"] + "+" + kid.hex() + "+" + b64(b"\x01" + public) == key["vkey"])
    check("vkey parses back to the name, key ID and key", parse_vkey(key["vkey"]) == (key["name"], kid, public))

    leaves = [bytes.fromhex(x) for x in tree["leaves"]]
    hashes = [leaf_hash(x) for x in leaves]
    check("leaf hashes", [h.hex() for h in hashes] == tree["leafHashes"])
    check("tree size", tree["size"] == len(leaves))
    root = mth(hashes)
    check("root hash", root.hex() == tree["rootHash"])

    # Every tree size's root, every inclusion proof and every consistency proof of the small tree (RFC 6962
    # definitions), each also verified by RFC 9162's algorithms, and each refused once a hash is changed.
    proofs = v["proofs"]
    check("roots of every size", proofs["roots"] == [mth(hashes[:n]).hex() for n in range(1, len(hashes) + 1)])
    expected_inclusion = [
        {"size": n, "index": m, "proof": [h.hex() for h in path(m, hashes[:n])]}
        for n in range(1, len(hashes) + 1) for m in range(n)
    ]
    check("every inclusion proof", proofs["inclusion"] == expected_inclusion)
    for case in proofs["inclusion"]:
        n, m, hs = case["size"], case["index"], [bytes.fromhex(x) for x in case["proof"]]
        good = root_from_inclusion(hashes[m], m, n, hs) == mth(hashes[:n])
        bad = bool(hs) and root_from_inclusion(hashes[m], m, n, [bytes([hs[0][0] ^ 1]) + hs[0][1:]] + hs[1:]) == mth(hashes[:n])
        check("inclusion proof of leaf %d in %d verifies, and not once changed" % (m, n), good and not bad)
    expected_consistency = [
        {"first": m, "second": n, "proof": [h.hex() for h in subproof(m, hashes[:n], True)]}
        for n in range(1, len(hashes) + 1) for m in range(1, n + 1)
    ]
    check("every consistency proof", proofs["consistency"] == expected_consistency)
    for case in proofs["consistency"]:
        m, n, hs = case["first"], case["second"], [bytes.fromhex(x) for x in case["proof"]]
        good = verify_consistency(m, n, mth(hashes[:m]), mth(hashes[:n]), hs)
        bad = bool(hs) and verify_consistency(m, n, mth(hashes[:m]), mth(hashes[:n]), hs[:-1] + [bytes([hs[-1][0] ^ 1]) + hs[-1][1:]])
        check("consistency proof from %d to %d verifies, and not once changed" % (m, n), good and not bad)

    text = cp["origin"] + "\n" + str(len(leaves)) + "\n" + b64(root) + "\n"
    check("checkpoint text", text == cp["text"])
    check("checkpoint text parses back", parse_checkpoint(cp["text"]) == (cp["origin"], len(leaves), root))
    signature = private.sign(text.encode())
    check("Ed25519 signature of the text (deterministic, RFC 8032)", signature.hex() == cp["signature"])
    note = text + "\n" + EM_DASH + " " + key["name"] + " " + b64(kid + signature) + "\n"
    check("signed checkpoint note", note == cp["note"])
    try:
        _, signed = verify_note(cp["note"], [(key["name"], kid, public)])
        check("the note verifies with the vkey", signed == [key["name"]])
    except (InvalidSignature, AssertionError, ValueError):
        check("the note verifies with the vkey", False)

    index = pf["index"]
    proof = path(index, hashes)
    check("inclusion proof", [h.hex() for h in proof] == pf["hashes"])
    check("extra data is the entry", bytes.fromhex(pf["extra"]) == leaves[index])
    rendered = (
        PROOF_HEADER + "\n" + "extra " + b64(leaves[index]) + "\n" + "index " + str(index) + "\n"
        + "".join(b64(h) + "\n" for h in proof) + "\n" + note
    )
    check("proof file", rendered == pf["file"])

    # As a verifier: read the proof file, take the entry from its extra data, check signature and inclusion.
    try:
        extra, p_index, p_hashes, p_note = parse_proof(pf["file"])
        c_text, _ = verify_note(p_note, [(key["name"], kid, public)])
        origin, size, c_root = parse_checkpoint(c_text)
        check("proof file: checkpoint origin", origin == cp["origin"])
        computed = root_from_inclusion(leaf_hash(extra), p_index, size, p_hashes)
        check("proof file: the inclusion proof leads to the signed root", computed == c_root)
        tampered = bytes([extra[0] ^ 1]) + extra[1:]
        check(
            "proof file: a changed entry does not lead to the root",
            root_from_inclusion(leaf_hash(tampered), p_index, size, p_hashes) != c_root,
        )
    except (InvalidSignature, AssertionError, ValueError, IndexError, binascii.Error):
        check("proof file parses and verifies", False)

    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("all transparency vectors agree")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/test-vectors/transparency-v1.json"))
