#!/usr/bin/env python3
"""Validates `auditctl log --format ocsf` against OCSF's published schema (docs/OCSF.md).

Usage: ocsf_check.py AUDITCTL [VERSION ...]   (default versions: 1.3.0 1.4.0)

Builds a log in a temporary state directory with the built `auditctl`: one event of every type of the catalogue
(`auditctl catalogue --json`: the built-in types and one a catalogue file adds), a key rotation, an event after it
and a checkpoint record; then prints it with `auditctl log --format ocsf`, and prints a bundle of it with only the
newest data key, so the events sealed before the rotation cannot be opened (the Base Events with
`unmapped.error`). Every line is checked against each OCSF version's JSON Schema, as the PyPI package
`ocsf-json-schema` builds it from schema.ocsf.io's export (JSON Schema 2020-12 with OCSF's `at_least_one` and
`just_one` constraints), for the class its `class_uid` names and the profiles its `metadata.profiles` declares,
with the `jsonschema` package. Besides, as OCSF's own validator warns: `class_name`, `category_name`, `type_name`,
`activity_name` (unless the activity is 99 Other), `status` and `severity` must be the schema's captions of their ids.

Exit 0 when every line validates under every version and every catalogue type was printed; 1 otherwise (each
problem is printed); 2 when auditctl fails. scripts/test runs it in a venv with pinned versions of both packages.
"""

import json
import os
import subprocess
import sys
import tempfile

from jsonschema import Draft202012Validator
from ocsf_json_schema import OcsfJsonSchemaEmbedded, get_ocsf_schema

CUSTOM_CATALOGUE = {
    "version": 1,
    "eventTypes": [
        {
            "type": "OCSF_CHECK_CUSTOM",
            "priority": "routine",
            "summary": "A type a deployment's catalogue file adds (a Base Event in OCSF).",
            "attributes": {"note": {"type": "string", "minLength": 1, "maxLength": 64}},
        }
    ],
}


def run(auditctl, args, stdin=None, allowed=(0,)):
    """Runs auditctl; returns its standard output."""
    result = subprocess.run([auditctl] + args, input=stdin, capture_output=True, text=True, check=False)
    if result.returncode not in allowed:
        sys.stderr.write(f"ocsf_check: auditctl {' '.join(args)} exited {result.returncode}: {result.stderr}\n")
        sys.exit(2)
    return result.stdout


def attribute_value(name, spec):
    """A value that satisfies one attribute's declaration in the catalogue layout."""
    if "enum" in spec:
        return spec["enum"][0]
    kind = spec["type"]
    if kind == "integer":
        value = max(spec.get("minimum", 1), 1)
        return min(value, spec["maximum"]) if "maximum" in spec else value
    if kind == "boolean":
        return True
    if kind == "string":
        if name in ("firstOccurredAt", "lastOccurredAt"):
            return "2026-11-21T10:00:00.000Z"
        if name == "errorCode":
            return "ERR-107-030"
        text = f"{name}-1"
        return text[: spec.get("maxLength", len(text))].ljust(spec.get("minLength", 0), "x")
    raise ValueError(f"attribute {name}: no sample value for type {kind}")


def build_log(auditctl, state, catalogue_file):
    """Emits every catalogue type, rotates the keys, emits once more and seals a checkpoint; returns the types."""
    common = ["--state-dir", state, "--catalogue", catalogue_file]
    run(auditctl, ["init", "--device-id", "phone-1"] + common)
    catalogue = json.loads(run(auditctl, ["catalogue", "--json"] + common))
    types = [entry["type"] for entry in catalogue["eventTypes"]]
    lines = []
    for index, entry in enumerate(catalogue["eventTypes"]):
        attributes = {name: attribute_value(name, spec) for name, spec in entry["attributes"].items()}
        event = {"type": entry["type"], "userId": "alice", "deviceId": "phone-1", "attributes": attributes}
        # Half with the producer's time and key, half stamped and keyed by auditctl.
        if index % 2 == 0:
            event["occurredAt"] = "2026-11-21T10:00:00.000Z"
            event["idempotencyKey"] = f"ocsf-check-{index}"
        lines.append(json.dumps(event))
    run(auditctl, ["emit", "--input", "-"] + common, stdin="\n".join(lines) + "\n")
    run(auditctl, ["keys", "rotate"] + common)
    after = {"type": types[0], "userId": "bob", "deviceId": "phone-1", "attributes": {}}
    first = catalogue["eventTypes"][0]
    after["attributes"] = {name: attribute_value(name, spec) for name, spec in first["attributes"].items()}
    run(auditctl, ["emit", "--input", "-"] + common, stdin=json.dumps(after))
    run(auditctl, ["checkpoint"] + common)
    return types


def newest_data_key(state):
    """The data key file of the rotation (the newest by modification time)."""
    keys = os.path.join(state, "keys")
    names = [name for name in os.listdir(keys) if name.startswith("data-")]
    return max((os.path.join(keys, name) for name in names), key=os.path.getmtime)


class Checker:
    """One OCSF version's schemas, built per class and profile set on first use."""

    def __init__(self, version):
        self.version = version
        raw = get_ocsf_schema(version=version)
        self.raw = raw
        self.schema = OcsfJsonSchemaEmbedded(raw)
        self.validators = {}

    def validator(self, class_name, profiles):
        key = (class_name, tuple(sorted(profiles)))
        if key not in self.validators:
            schema = self.schema.get_class_schema(class_name=class_name, profiles=list(profiles))
            Draft202012Validator.check_schema(schema)
            self.validators[key] = Draft202012Validator(schema)
        return self.validators[key]

    def problems(self, event):
        """Every reason the event does not validate under this version."""
        class_uid = event.get("class_uid")
        try:
            class_name = self.schema.lookup_class_name_from_uid(class_uid)
        except ValueError:
            return [f"class_uid {class_uid} is not a class of OCSF {self.version}"]
        profiles = event.get("metadata", {}).get("profiles", [])
        found = [
            f"{'/'.join(str(part) for part in error.absolute_path) or '(event)'}: {self.describe(error)}"
            for error in self.validator(class_name, profiles).iter_errors(event)
        ]
        found += self.caption_problems(self.raw["classes"][class_name], event)
        return found

    @staticmethod
    def describe(error):
        """The error's message; for OCSF's at_least_one and just_one constraints, the members they name."""
        if error.validator in ("anyOf", "oneOf") and all("required" in part for part in error.validator_value):
            members = ", ".join(part["required"][0] for part in error.validator_value)
            rule = "at least one" if error.validator == "anyOf" else "exactly one"
            return f"{rule} of {members} is required (OCSF constraint)"
        return error.message

    def caption_problems(self, definition, event):
        """The names that must be the schema's captions of their ids (OCSF's validator warns on these)."""
        found = []
        attributes = definition["attributes"]

        def caption(attribute, value):
            entry = attributes.get(attribute, {}).get("enum", {}).get(str(value))
            return entry["caption"] if entry else None

        expectations = [
            ("class_name", definition["caption"]),
            ("category_name", caption("category_uid", event.get("category_uid"))),
            ("type_name", caption("type_uid", event.get("type_uid"))),
        ]
        if event.get("activity_id") != 99:
            expectations.append(("activity_name", caption("activity_id", event.get("activity_id"))))
        if event.get("status_id") not in (None, 99):
            expectations.append(("status", caption("status_id", event.get("status_id"))))
        if event.get("severity_id") not in (None, 99):
            expectations.append(("severity", caption("severity_id", event.get("severity_id"))))
        for name, expected in expectations:
            if name in event and event[name] != expected:
                found.append(f"{name}: {event[name]!r} is not the schema's caption {expected!r}")
        return found


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    auditctl = os.path.abspath(sys.argv[1])
    versions = sys.argv[2:] or ["1.3.0", "1.4.0"]
    with tempfile.TemporaryDirectory(prefix="ocsf-check-") as directory:
        state = os.path.join(directory, "state")
        catalogue_file = os.path.join(directory, "catalogue.json")
        with open(catalogue_file, "w", encoding="utf-8") as file:
            json.dump(CUSTOM_CATALOGUE, file)
        types = build_log(auditctl, state, catalogue_file)
        output = run(auditctl, ["log", "--format", "ocsf", "--state-dir", state])
        bundle = os.path.join(directory, "log.bundle")
        run(auditctl, ["export", "--out", bundle, "--state-dir", state])
        # Without the state directory: only the newest data key, so the older events cannot be opened (exit 2).
        unopened = run(
            auditctl,
            ["log", "--format", "ocsf", "--bundle", bundle, "--data-key", newest_data_key(state)],
            allowed=(2,),
        )
    events = [json.loads(line) for line in output.splitlines() + unopened.splitlines() if line.strip()]
    failures = 0
    printed = {event.get("message") for event in events}
    for missing in sorted(set(types) - printed):
        print(f"ocsf_check: type {missing} was not printed")
        failures += 1
    # A rotation is a keyRotation record in format version 1 and an epoch record in version 2 (docs/FORMAT.md 13).
    for needed in (("genesis",), ("keyRotation", "epoch"), ("checkpoint",)):
        if not printed.intersection(needed):
            print(f"ocsf_check: no {' or '.join(needed)} record was printed")
            failures += 1
    if not any("error" in event.get("unmapped", {}) for event in events):
        print("ocsf_check: no event that could not be opened was printed")
        failures += 1
    for version in versions:
        checker = Checker(version)
        for event in events:
            for problem in checker.problems(event):
                seq = event.get("metadata", {}).get("sequence")
                print(f"ocsf_check: OCSF {version}, seq {seq} ({event.get('message')}): {problem}")
                failures += 1
    classes = sorted({event.get("class_uid") for event in events})
    if failures:
        print(f"ocsf_check: {failures} problems in {len(events)} OCSF events")
        return 1
    print(
        f"ocsf_check: {len(events)} OCSF events ({len(types)} event types, classes {classes}) valid under OCSF "
        + ", ".join(versions)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
