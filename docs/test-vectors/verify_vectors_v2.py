#!/usr/bin/env python3
"""An independent verifier of docs/test-vectors/chain-v2.json (format version 2), written from docs/FORMAT.md alone.

It shares the primitives of verify_vectors.py (hashes, key ids, canonical JSON, the entry layout) and implements the
verification algorithm of section 10 with the version 2 rules of section 13: the signed flag and the entry layout
(13.1), signature coverage (13.1), the epoch rules (13.4), the version rule of a migration (13.6), and subject keys,
erasure and legal holds (13.9: the content key derivation, the subject rules, erased entries counted apart). For every chain and
tampered copy of the vector file it computes the findings (seq, kind) and compares them with the ones the file lists;
it exits non-zero on any difference. Not implemented, as the file does not use them: removal records bridging a gap
(a gap is reported `missing`), range copies, a bundle's announced end, and the catalogue's checks of opened events
(docs/CATALOGUE.md; opened events are checked for their members and canonical form only).
"""
import json
import os
import re
import struct
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verify_vectors import (  # noqa: E402  (the shared primitives, one home)
    D_CHECKPOINT,
    D_ENTRY,
    D_PAYLOAD,
    D_SIG,
    KINDS,
    SUBJECT_FLAG,
    canonical,
    data_key_id,
    no_duplicates,
    parse_entry,
    sha256,
    signing_key_id,
)

MAX_UNSIGNED_RUN = 4096  # section 13.1
SKEW_MS = 60_000  # section 13.4 rule 3
MAX_EPOCH_SECONDS = 31_536_000  # section 13.3
TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
HEX = re.compile(r"^[0-9a-f]*$")
# The members of each system record (sections 8.3 and 13.3): required, optional.
RECORDS = {
    "genesis": ({"logId", "deviceId", "signingPublicKey", "dataKeyId", "createdAt"}, {"epochSeconds"}),
    "keyRotation": ({"newSigningPublicKey", "newDataKeyId", "reason"}, set()),
    "accountedRemoval": ({"reason", "firstSeq", "lastSeq", "count", "lastRemovedHash", "detail"}, set()),
    "retentionPrune": ({"reason", "firstSeq", "lastSeq", "count", "lastRemovedHash", "detail"}, set()),
    "checkpoint": ({"headSeq", "headHash"}, set()),
    "epoch": ({"epoch", "newSigningPublicKey", "newDataKeyId", "epochSeconds", "reason"}, set()),
    "close": ({"reason"}, set()),
    "crashRecovery": ({"reason"}, set()),
    "erasure": ({"keyIds", "reason", "requestedBy"}, set()),
    "legalHold": ({"action", "reason"}, {"holdSeq"}),
    "subjectKeyExport": ({"keyIds", "reason"}, set()),
}
SUBJECT_KEY_INFO = b"audit-chain/v2/subject-key"  # section 13.9
EVENT_MEMBERS = {"v", "type", "occurredAt", "userId", "deviceId", "attributes", "idempotencyKey"}
HEX_SIZES = {
    "logId": 16,
    "signingPublicKey": 32,
    "dataKeyId": 16,
    "newSigningPublicKey": 32,
    "newDataKeyId": 16,
    "lastRemovedHash": 32,
    "headHash": 32,
}


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def read_json(payload):
    body = json.loads(payload.decode("utf-8"), object_pairs_hook=no_duplicates)
    if canonical(body).encode("utf-8") != payload:
        raise ValueError("not canonical")
    return body


def read_record(kind, payload):
    """The members of a system record (sections 8.3, 13.3); ValueError when it does not follow its layout."""
    body = read_json(payload)
    if not isinstance(body, dict) or not is_int(body.get("v")) or body["v"] != 1:
        raise ValueError("payload version")
    required, optional = RECORDS[kind]
    names = set(body) - {"v"}
    if not required <= names <= required | optional:
        raise ValueError("members")
    for name, size in HEX_SIZES.items():
        if name in body and not (isinstance(body[name], str) and len(body[name]) == 2 * size and HEX.match(body[name])):
            raise ValueError(name)
    if "keyIds" in body:  # 1 to 4096 distinct key ids, ascending (section 13.9)
        ids = body["keyIds"]
        if not (isinstance(ids, list) and 1 <= len(ids) <= 4096 and all(
            isinstance(i, str) and len(i) == 32 and HEX.match(i) for i in ids
        ) and all(a < b for a, b in zip(ids, ids[1:]))):
            raise ValueError("keyIds")
    if kind == "legalHold" and (body["action"] not in ("set", "clear") or (body["action"] == "clear") != ("holdSeq" in body)):
        raise ValueError("action")
    for name in ("firstSeq", "lastSeq", "count", "headSeq", "epoch", "epochSeconds", "holdSeq"):
        if name in body and not (is_int(body[name]) and body[name] >= 0):
            raise ValueError(name)
    for name in ("deviceId", "reason", "detail", "requestedBy"):
        if name in body and not isinstance(body[name], str):
            raise ValueError(name)
    if "createdAt" in body and not (isinstance(body["createdAt"], str) and TIME.match(body["createdAt"])):
        raise ValueError("createdAt")
    if "epochSeconds" in body and not 1 <= body["epochSeconds"] <= MAX_EPOCH_SECONDS:
        raise ValueError("epochSeconds")
    if kind == "epoch" and body["epoch"] < 1:
        raise ValueError("epoch")
    if kind in ("accountedRemoval", "retentionPrune"):
        if not (body["firstSeq"] <= body["lastSeq"] and 1 <= body["count"] <= body["lastSeq"] - body["firstSeq"] + 1):
            raise ValueError("range")
        if kind == "retentionPrune" and body["firstSeq"] != 1:
            raise ValueError("firstSeq")
    return body


def examine(raws, pinned):
    """Section 10 steps 1-2 for each entry: its parts, hash, digest check and signature status. Signatures are checked
    here with the pinned keys and every key a rotation or epoch record of the copy announces; the analyzer then takes a
    key as known only once the record announcing it was read (step 2), and its window decides where it signs (step
    4)."""
    candidates = {signing_key_id(k): k for k in pinned}
    parsed = []
    for raw in raws:
        try:
            parsed.append(parse_entry(raw))
        except ValueError:
            parsed.append(None)
    for e in parsed:
        if e is not None and KINDS[e["kind"]] in ("keyRotation", "epoch"):
            try:
                key = bytes.fromhex(read_record(KINDS[e["kind"]], e["payload"])["newSigningPublicKey"])
                candidates[signing_key_id(key)] = key
            except (ValueError, KeyError):
                pass
    out = []
    for e in parsed:
        if e is None:
            out.append({"e": None, "status": "invalid"})
            continue
        item = {
            "e": e,
            "hash": sha256(D_ENTRY, e["header"], e["digest"]),
            "digestOK": sha256(D_PAYLOAD, e["nonce"], e["payload"]) == e["digest"],
        }
        key = candidates.get(e["signingKeyId"])
        if key is None:
            item["status"] = "unknownKey"
        elif not e["signed"]:
            item["status"] = "unchecked"  # waits for the signature that covers it (section 13.1)
        else:
            try:
                Ed25519PublicKey.from_public_bytes(key).verify(e["signature"], D_SIG + item["hash"])
                item["status"] = "valid"
            except (InvalidSignature, ValueError):
                item["status"] = "invalid"
        out.append(item)
    return out


def cover(examined):
    """Section 13.1: settles which unsigned version 2 entries a later valid signature covers, in order."""
    held, settled = [], []

    def close():
        for item in held:
            if item["status"] == "unchecked":
                item["status"] = "uncovered"
        settled.extend(held)
        held.clear()

    for item in examined:
        e = item["e"]
        if e is None or e["version"] != 2:
            close()
            settled.append(item)
            continue
        if held:
            last = held[-1]["e"]
            if not (
                e["logId"] == last["logId"]
                and e["signingKeyId"] == last["signingKeyId"]
                and e["seq"] == last["seq"] + 1
                and e["prevHash"] == held[-1]["hash"]
            ):
                close()
        held.append(item)
        if e["signed"] and item["status"] == "valid":
            for waiting in held:
                if waiting["status"] == "unchecked":
                    waiting["status"] = "valid"
            settled.extend(held)
            held.clear()
        elif len(held) > MAX_UNSIGNED_RUN:
            close()
    close()
    return settled


class Analyzer:
    """Section 10 steps 3-6 with the rules of section 13.4, fed the settled entries in order."""

    def __init__(self, pinned, data_keys, checkpoint=None, reference_time=None):
        self.problems = []
        self.known = {signing_key_id(k): k for k in pinned}
        self.windows = {}  # key id -> [first seq, last seq or None] (section 10 step 4)
        self.data_keys = data_keys
        self.checkpoint = checkpoint
        self.reference_time = reference_time
        self.active_data = None
        self.log_id = None
        self.tip = None  # {"seq", "hash" (None when damaged), "key" (None unless authentic)}
        self.pending = None
        self.gaps = []  # [first, last, bridge hash or None]
        self.checkpoint_hash_seen = None
        self.last_version = None
        self.state = None  # the current epoch: number, start, seconds, latest
        self.epochs, self.closed, self.last_epoch_time, self.format_version = 0, False, None, 0
        self.entries_checked, self.opened = 0, 0
        # Section 13.9: events per content key id, erased key ids (-> record seq), the hold in force, unopened subject
        # events (key id -> seqs) that an erasure record may explain, and the erasures read.
        self.subject_events, self.erased_by, self.active_hold, self.unopened, self.erasures = {}, {}, None, {}, []

    def problem(self, seq, kind):
        self.problems.append((seq, kind))

    def key_problem(self, key_id, seq):
        if not self.windows and key_id in self.known:
            return False
        window = self.windows.get(key_id)
        return window is None or seq < window[0] or (window[1] is not None and seq > window[1])

    def rotate(self, seq, signer, new):
        if new == signer:
            return
        outgoing = list(self.windows.get(signer, [0, None]))
        outgoing[1] = seq
        self.windows[signer] = outgoing
        if new not in self.windows:
            self.windows[new] = [seq + 1, None]

    def note_skipped(self, seq, bridge):
        if self.tip is not None:
            if not (seq > self.tip["seq"] and seq - 1 > self.tip["seq"]):
                return None
            self.gaps.append([self.tip["seq"] + 1, seq - 1, bridge])
        else:
            if seq == 0:
                return None
            self.gaps.append([0, seq - 1, bridge])
        self.active_data = None
        return len(self.gaps) - 1

    def fill_gap(self, seq):
        for index, (first, last, bridge) in enumerate(self.gaps):
            if first <= seq <= last:
                del self.gaps[index]
                if first < seq:
                    self.gaps.append([first, seq - 1, None])
                if seq < last:
                    self.gaps.append([seq + 1, last, bridge])
                return True
        return False

    def resolve_pending(self, next_prev_hash):
        p, self.pending = self.pending, None
        if p is None:
            return
        seq, entry_hash, kind, gap = p
        if next_prev_hash is not None and next_prev_hash == entry_hash:
            self.problem(seq, kind)
            if self.tip["seq"] == seq:
                self.tip["hash"] = entry_hash
        elif next_prev_hash is not None:
            if gap is not None:
                self.gaps[gap][2] = None
            self.problem(seq, "headerModified")
        elif self.checkpoint is not None and self.checkpoint["seq"] == seq:
            intact = bytes.fromhex(self.checkpoint["entryHash"]) == entry_hash
            if not intact and gap is not None:
                self.gaps[gap][2] = None
            self.problem(seq, kind if intact else "headerModified")
        else:
            self.problem(seq, kind)

    def examine(self, item, storage_seq=None):
        """One settled entry; `storage_seq` is the position the storage files it under (a bundle line's `seq`), if any."""
        self.entries_checked += 1
        expected = 0 if self.tip is None else self.tip["seq"] + 1
        e = item["e"]
        if e is None:
            position = expected if storage_seq is None else storage_seq
            self.resolve_pending(None)
            self.active_data = None
            self.note_skipped(position, None)
            self.problem(position, "malformed")
            self.tip = {"seq": max(position, self.tip["seq"] if self.tip else 0), "hash": None, "key": None}
            return
        self.resolve_pending(e["prevHash"])
        status, seq = item["status"], e["seq"]
        if status == "valid" and e["signingKeyId"] not in self.known:
            status = "unknownKey"  # step 2: only the pinned keys and those announced by the records read so far
        if status in ("invalid", "unknownKey", "uncovered"):
            self.active_data = None
            position = seq if seq == expected else (expected if storage_seq is None else storage_seq)
            gap = self.note_skipped(position, e["prevHash"])
            kind = {"invalid": "signatureInvalid", "unknownKey": "unknownKey", "uncovered": "unsealed"}[status]
            self.pending = (position, item["hash"], kind, gap)
            self.tip = {"seq": max(position, self.tip["seq"] if self.tip else 0), "hash": None, "key": None}
            if self.checkpoint is not None and position == self.checkpoint["seq"]:
                self.checkpoint_hash_seen = item["hash"]
            return
        if storage_seq is not None and storage_seq != seq:
            self.problem(seq, "misfiled")
        key_problem = self.key_problem(e["signingKeyId"], seq)
        if key_problem:
            self.problem(seq, "unknownKey")
        if not self.place(e, item["hash"]) or key_problem:
            return
        self.tip["key"] = e["signingKeyId"]
        self.check_version_and_epoch(e)
        if not item["digestOK"]:
            self.problem(seq, "payloadModified")
            return
        self.check_content(e)

    def place(self, e, entry_hash):
        seq = e["seq"]
        if self.log_id is not None and e["logId"] != self.log_id:
            self.problem(seq, "linkBroken")
            return False
        if self.log_id is None:
            self.log_id = e["logId"]
        tip = self.tip
        if tip is not None:
            if seq == tip["seq"] + 1:
                if tip["hash"] is not None and e["prevHash"] != tip["hash"]:
                    self.problem(seq, "linkBroken")
            elif seq > tip["seq"]:
                self.gaps.append([tip["seq"] + 1, seq - 1, e["prevHash"]])
                self.active_data = None
            else:
                if seq == tip["seq"]:
                    if (
                        e["version"] == 2
                        and tip["hash"] != entry_hash
                        and tip["key"] == e["signingKeyId"]
                        and not self.key_problem(e["signingKeyId"], seq)
                    ):
                        self.problem(seq, "equivocation")  # section 13.4 rule 4
                    else:
                        self.problem(seq, "duplicate")
                elif self.fill_gap(seq):
                    self.problem(seq, "reordered")
                else:
                    self.problem(seq, "duplicate")
                return False
        elif seq > 0:
            self.gaps.append([0, seq - 1, e["prevHash"]])
        self.tip = {"seq": seq, "hash": entry_hash, "key": None}
        if self.checkpoint is not None and seq == self.checkpoint["seq"]:
            self.checkpoint_hash_seen = entry_hash
        return True

    def check_version_and_epoch(self, e):
        """Section 13.6 (versions only go up, by an epoch record) and 13.4 rule 3 (not before the epoch began)."""
        if self.last_version is not None:
            if e["version"] < self.last_version or (e["version"] > self.last_version and KINDS[e["kind"]] != "epoch"):
                self.problem(e["seq"], "epochInvalid")
        self.last_version = max(self.last_version or 0, e["version"])
        self.format_version = max(self.format_version, e["version"])
        self.closed = False
        if KINDS[e["kind"]] == "epoch" or self.state is None:
            return
        if e["time"] < self.state["start"] - SKEW_MS:
            self.problem(e["seq"], "epochInvalid")
        self.state["latest"] = max(self.state["latest"], e["time"])

    def check_content(self, e):
        kind, seq = KINDS[e["kind"]], e["seq"]
        if (seq == 0) != (kind == "genesis"):
            self.problem(seq, "payloadInvalid")
            return
        if kind != "event":
            self.check_record(e, kind)
            return
        subject = bool(e["flags"] & SUBJECT_FLAG)
        if subject:  # section 13.9 rule 1
            if e["dataKeyId"] in (bytes(16), self.active_data) or e["dataKeyId"] in self.erased_by:
                self.problem(seq, "erasureInvalid")
                return
            self.subject_events[e["dataKeyId"]] = self.subject_events.get(e["dataKeyId"], 0) + 1
        if (
            e["dataKeyId"] == bytes(16)
            or (not subject and self.active_data is not None and e["dataKeyId"] != self.active_data)
            or len(e["payload"]) < 16
        ):
            self.problem(seq, "payloadInvalid")
            return
        if not self.data_keys:
            return
        key = self.data_keys.get(e["dataKeyId"])
        if key is None and subject:  # rule 4: an erasure record further on may explain it
            self.unopened.setdefault(e["dataKeyId"], []).append(seq)
            return
        try:
            plaintext = AESGCM(key).decrypt(e["nonce"], e["payload"], e["header"])
        except Exception:  # no such key, or AES-GCM refuses
            self.problem(seq, "payloadUndecryptable")
            return
        self.opened += 1
        try:
            body = read_json(plaintext)
            if set(body) != EVENT_MEMBERS or body["v"] != 1:
                raise ValueError("members")
        except ValueError:
            self.problem(seq, "payloadInvalid")

    def check_record(self, e, kind):
        seq, time = e["seq"], e["time"]
        if e["nonce"] != bytes(12) or e["dataKeyId"] != bytes(16):
            self.problem(seq, "payloadInvalid")
            return
        try:
            body = read_record(kind, e["payload"])
        except ValueError:
            self.problem(seq, "payloadInvalid")
            return
        if kind == "genesis":
            if (
                e["prevHash"] != bytes(32)
                or bytes.fromhex(body["logId"]) != e["logId"]
                or signing_key_id(bytes.fromhex(body["signingPublicKey"])) != e["signingKeyId"]
                or (e["version"] == 2) != ("epochSeconds" in body)
            ):
                self.problem(0, "payloadInvalid")
                return
            self.windows.setdefault(e["signingKeyId"], [0, None])
            self.active_data = bytes.fromhex(body["dataKeyId"])
            if "epochSeconds" in body:
                self.state = {"number": 0, "start": time, "seconds": body["epochSeconds"], "latest": time}
                self.epochs, self.last_epoch_time = 1, time
        elif kind in ("keyRotation", "epoch"):
            new_key = bytes.fromhex(body["newSigningPublicKey"])
            new_id = signing_key_id(new_key)
            if kind == "epoch" and self.epoch_violation(e, body, new_id):
                self.problem(seq, "epochInvalid")  # the new key is adopted all the same (rule 1)
            self.known[new_id] = new_key
            self.rotate(seq, e["signingKeyId"], new_id)
            self.active_data = bytes.fromhex(body["newDataKeyId"])
            if kind == "epoch":
                self.epochs = 2 if self.state is None else self.epochs + 1
                self.state = {"number": body["epoch"], "start": time, "seconds": body["epochSeconds"], "latest": time}
                self.last_epoch_time = time
        elif kind in ("accountedRemoval", "retentionPrune"):
            if body["lastSeq"] >= seq:
                self.problem(seq, "payloadInvalid")
        elif kind == "checkpoint":
            if not (seq > 0 and body["headSeq"] == seq - 1 and bytes.fromhex(body["headHash"]) == e["prevHash"]):
                self.problem(seq, "payloadInvalid")
        elif kind == "close":
            self.closed = True
        elif kind == "erasure":  # rule 2
            erased = 0
            for key_id in (bytes.fromhex(i) for i in body["keyIds"]):
                if key_id not in self.erased_by:
                    self.erased_by[key_id] = seq
                    erased += self.subject_events.get(key_id, 0)
                    self.unopened.pop(key_id, None)
            self.erasures.append({"recordSeq": seq, "entriesErased": erased})
            if self.active_hold is not None:
                self.problem(seq, "erasureInvalid")
        elif kind == "legalHold":  # rule 3
            if body["action"] == "set":
                if self.active_hold is not None:
                    self.problem(seq, "erasureInvalid")
                self.active_hold = seq
            elif body["holdSeq"] != self.active_hold:
                self.problem(seq, "erasureInvalid")
            else:
                self.active_hold = None

    def epoch_violation(self, e, body, new_id):
        """Section 13.4 rule 1: signed itself, the next number, not back in time, a fresh key."""
        if not e["signed"]:
            return True
        if body["epoch"] != (self.state["number"] + 1 if self.state else 1):
            return True
        if self.state and (e["time"] < self.state["start"] or e["time"] < self.state["latest"] - SKEW_MS):
            return True
        return new_id == e["signingKeyId"]

    def finish(self):
        self.resolve_pending(None)
        for seqs in self.unopened.values():  # section 13.9 rule 4: no erasure record explains them
            for seq in seqs:
                self.problem(seq, "payloadUndecryptable")
        if self.state is not None and not self.closed and self.reference_time is not None:
            if self.reference_time > self.state["start"] + self.state["seconds"] * 2000:  # rule 6
                self.problem((self.tip["seq"] if self.tip else 0) + 1, "openEnd")
        if self.entries_checked == 0:
            self.problem(0, "missing")
        if self.checkpoint is not None:
            self.check_checkpoint(self.checkpoint)
        for first, last, _ in sorted(self.gaps):
            if first == 0:
                self.problem(0, "missing")
                first = 1
            if first <= last:
                self.problem(first, "missing")  # no removal record bridges a gap in these vectors
        return sorted(self.problems)

    def check_checkpoint(self, c):
        seq, key = c["seq"], self.known.get(bytes.fromhex(c["signingKeyId"]))
        message = D_CHECKPOINT + bytes.fromhex(c["logId"]) + struct.pack(">Q", seq) + bytes.fromhex(c["entryHash"])
        try:
            Ed25519PublicKey.from_public_bytes(key).verify(bytes.fromhex(c["signature"]), message)
        except (InvalidSignature, TypeError, ValueError):
            self.problem(seq, "checkpointMismatch")
            return
        if self.log_id is not None and self.log_id != bytes.fromhex(c["logId"]):
            self.problem(seq, "checkpointMismatch")
        elif self.tip is None or self.tip["seq"] < seq:
            self.problem(self.tip["seq"] + 1 if self.tip else 0, "truncated")
        elif self.checkpoint_hash_seen is not None and self.checkpoint_hash_seen != bytes.fromhex(c["entryHash"]):
            self.problem(seq, "checkpointMismatch")


def verify(raws, pinned, data_keys, checkpoint=None, reference_time=None, storage_seqs=None):
    """The findings (seq, kind), in seq order, the analyzer (for its summary) and the number of signatures checked.
    `storage_seqs`: the positions the storage files the entries under (section 10 steps 1, 3 and 4), if it has any."""
    examined = examine(raws, pinned)
    for index, item in enumerate(examined):
        item["storageSeq"] = None if storage_seqs is None else storage_seqs[index]
    analyzer = Analyzer(pinned, data_keys, checkpoint, reference_time)
    for item in cover(examined):
        analyzer.examine(item, item["storageSeq"])
    signatures = sum(1 for item in examined if item["e"] and item["e"]["signed"] and item["status"] in ("valid", "invalid"))
    return analyzer.finish(), analyzer, signatures


def check_entries(items, data_keys, failures):
    """Each listed entry's parts and intermediate values, recomputed from its serialized bytes (sections 4-7, 13.1)."""
    raws = []
    for item in items:
        raw = bytes.fromhex(item["serialized"])
        e = parse_entry(raw)
        seq = e["seq"]
        entry_hash = sha256(D_ENTRY, e["header"], e["digest"])
        checks = {
            "header": e["header"].hex() == item["header"],
            "version and flags": (e["version"], e["flags"], e["signed"]) == (item["version"], item["flags"], item["signed"]),
            "seq, time, kind": (seq, e["time"], KINDS[e["kind"]]) == (item["seq"], item["time"], item["kind"]),
            "payloadDigest": sha256(D_PAYLOAD, e["nonce"], e["payload"]).hex() == item["payloadDigest"],
            "entryHash": entry_hash.hex() == item["entryHash"],
            "size": len(raw) == (216 if e["signed"] else 152) + len(e["payload"]),
        }
        if e["signed"]:
            checks["signedMessage"] = (D_SIG + entry_hash).hex() == item["signedMessage"]
            checks["signature"] = e["signature"].hex() == item["signature"]
        else:
            checks["no signature"] = "signature" not in item and e["signature"] == b""
        if KINDS[e["kind"]] == "event":
            sealed = AESGCM(data_keys[e["dataKeyId"]]).encrypt(e["nonce"], item["plaintext"].encode(), e["header"])
            checks["ciphertext"] = sealed.hex() == item["payload"]
        else:
            checks["plaintext record"] = e["payload"].hex() == item["plaintextHex"]
        failures += ["entry %d: %s differs" % (seq, name) for name, ok in checks.items() if not ok]
        raws.append(raw)
    return raws


def check_report(name, analyzer, signatures, expected, failures):
    found = {
        "closed": analyzer.closed,
        "epochs": analyzer.epochs,
        "formatVersion": analyzer.format_version,
        "lastEpochTime": analyzer.last_epoch_time,
        "signaturesChecked": signatures,
    }
    if found != expected:
        failures.append("%s: report %s, the vectors say %s" % (name, found, expected))


def content_key(secret, data_key):
    """Section 13.9: HKDF-SHA256(ikm = secret, salt = the data key, info = label || data key id), 32 bytes."""
    info = SUBJECT_KEY_INFO + data_key_id(data_key)
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=data_key, info=info).derive(secret)


def check_subjects(subjects, data_key, genesis_key, failures):
    """The subjects part: the content keys derive from the secrets, the chain verifies with the data key and subject
    B's key only (A's events erased under the record), and the forged erasure erases nothing."""
    for name in ("A", "B"):
        key = content_key(bytes.fromhex(subjects["secret" + name]), data_key)
        if key.hex() != subjects["contentKey" + name] or data_key_id(key).hex() != subjects["contentKeyId" + name]:
            failures.append("subject %s: content key or id" % name)
    key_a, key_b = (bytes.fromhex(subjects["contentKey" + n]) for n in ("A", "B"))
    all_keys = {data_key_id(k): k for k in (data_key, key_a, key_b)}
    raws = check_entries(subjects["entries"], all_keys, failures)
    given = {data_key_id(k): k for k in (data_key, key_b)}
    findings, analyzer, _ = verify(raws, [genesis_key], given)
    expected = subjects["report"]
    found = {"payloadsOpened": analyzer.opened, "erasures": analyzer.erasures, "activeHoldSeq": analyzer.active_hold}
    if findings or found != expected:
        failures.append("subjects: findings %s, report %s; the vectors say none, %s" % (findings, found, expected))
    forged = subjects["forged"]
    findings, analyzer, _ = verify([bytes.fromhex(h) for h in forged["entries"]], [genesis_key], given)
    if findings != [(x["seq"], x["kind"]) for x in forged["expected"]] or analyzer.erasures:
        failures.append("subjects, forged erasure: found %s, erasures %s" % (findings, analyzer.erasures))


def main(path):
    doc = json.load(open(path, encoding="utf-8"))
    keys = doc["keys"]
    failures = []
    def public_of(seed):
        private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed))
        return private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()

    for seed, public, key_id in zip(keys["epochSigningSeeds"], keys["epochPublicKeys"], keys["epochKeyIds"]):
        if public_of(seed) != public or signing_key_id(bytes.fromhex(public)).hex() != key_id:
            failures.append("epoch key %s" % public)
    for name in ("v1Signing", "upgradeSigning"):
        if public_of(keys[name + "Seed"]) != keys[name + "PublicKey"]:
            failures.append(name + " key")
    data_key = bytes.fromhex(keys["dataKey"])
    if data_key_id(data_key).hex() != keys["dataKeyId"]:
        failures.append("data key id")
    data_keys = {data_key_id(data_key): data_key}
    genesis_key = bytes.fromhex(keys["epochPublicKeys"][0])
    migrated = doc["migrated"]
    chains = [
        ("the chain", doc["entries"], genesis_key, doc["report"]),
        ("the migrated chain", migrated["entries"], bytes.fromhex(migrated["pinnedPublicKey"]), migrated["report"]),
    ]
    for name, items, pinned, expected in chains:
        raws = check_entries(items, data_keys, failures)
        findings, analyzer, signatures = verify(raws, [pinned], data_keys)
        if findings:
            failures.append("%s: findings %s, the vectors say none" % (name, findings))
        if analyzer.opened != sum(1 for item in items if item["kind"] == "event"):
            failures.append("%s: %d events opened" % (name, analyzer.opened))
        check_report(name, analyzer, signatures, expected, failures)
    for case in doc["tampered"]:
        findings, _, _ = verify(
            [bytes.fromhex(h) for h in case["entries"]],
            [bytes.fromhex(case["pinnedPublicKey"])],
            data_keys,
            doc["checkpoint"] if case["checkpoint"] else None,
            case.get("referenceTime"),
        )
        expected = [(x["seq"], x["kind"]) for x in case["expected"]]
        if findings != expected:
            failures.append("%s: found %s, the vectors say %s" % (case["description"], findings, expected))
    check_subjects(doc["subjects"], data_key, genesis_key, failures)
    if failures:
        print("independent verifier DISAGREES with %s:" % path)
        for failure in failures:
            print("  " + failure)
        return 1
    print(
        "independent verifier agrees (version 2): %d + %d entries, %d tampered copies give exactly the listed findings; "
        "subjects: %d entries, keys derived, erasure counted, forged erasure refused"
        % (len(doc["entries"]), len(doc["migrated"]["entries"]), len(doc["tampered"]), len(doc["subjects"]["entries"]))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/test-vectors/chain-v2.json"))
