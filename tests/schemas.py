"""schemas.py - the wire contract: every schema is valid, every example and
every result the tests kept validates, and the C codec's field tables match
the schemas (build/tests/test_msg --fields)."""
import glob
import json
import os
import subprocess
import sys

import jsonschema

from tap import done, ok, skip


schemas = {}
for path in sorted(glob.glob("schemas/*.json")):
    name = os.path.basename(path)[:-5]
    s = json.load(open(path))
    try:
        jsonschema.Draft202012Validator.check_schema(s)
        ok(True, "schema %s is a valid JSON Schema" % name)
    except jsonschema.SchemaError as e:
        ok(False, "schema %s: %s" % (name, e.message))
    schemas[name] = jsonschema.Draft202012Validator(s)


ok(len(schemas) >= 10, "the schemas were read (%d)" % len(schemas))  # a glob that matched nothing checks nothing

RECORDS = {"config"}  # schemas of records inside messages, not of messages


def validate(msg, where):
    v = schemas.get(msg.get("type"))
    if v is None or msg.get("type") in RECORDS:
        ok(False, "%s: unknown type %r" % (where, msg.get("type")))
        return
    errs = sorted(v.iter_errors(msg), key=str)
    # a run's config, wherever it travels, is one record (schemas/config.json)
    if isinstance(msg.get("config"), dict):
        errs += sorted(("config: " + e.message for e in schemas["config"].iter_errors(msg["config"])), key=str)
    ok(not errs, "%s validates as %s%s" % (where, msg["type"], (": " + str(getattr(errs[0], "message", errs[0]))) if errs else ""))


examples = 0
for path in sorted(glob.glob("schemas/examples/*.jsonl")):
    for i, line in enumerate(open(path)):
        validate(json.loads(line), "%s:%d" % (path, i + 1))
        examples += 1
ok(examples >= len(schemas) - len(RECORDS), "an example at least per message type was checked (%d)" % examples)

# results the CLI tests kept
kept = os.path.join(os.environ.get("ACCELOPT_TEST_TMP", "/nonexistent"), "results")
count = 0
for path in sorted(glob.glob(kept + "/*")):
    for line in open(path):
        line = line.strip()
        if line:
            validate(json.loads(line), os.path.basename(path))
            count += 1
if count == 0 and os.environ.get("ACCELOPT_ONLY"):  # a slice without the CLI scripts keeps none
    skip("the tests kept real results to check", "no CLI script ran in this slice (%s)" % os.environ["ACCELOPT_ONLY"])
else:
    ok(count >= 10 or not os.path.isdir(kept), "the tests kept real results to check (%d)" % count)

fields = json.loads(subprocess.check_output(["build/tests/test_msg", "--fields"]))
for name, v in schemas.items():
    s = v.schema
    c = fields.get(name)
    ok(c is not None, "the C codec knows %s" % name)
    if c is None:
        continue
    ok(set(c["required"]) == set(s["required"]), "%s: required fields match" % name)
    ok(set(c["required"]) | set(c["optional"]) == set(s["properties"]), "%s: all fields match" % name)

# a run's config: the schema's bounds are the C table's (lib/wire/runconfig.c)
cb = fields["config"]["bounds"]
props = schemas["config"].schema["properties"]
for name, (lo, hi) in sorted(cb.items()):
    p = props.get(name, {})
    ok(p.get("minimum") == lo and p.get("maximum") == hi,
       "config %s: schema bounds %s-%s are the C table's %s-%s" % (name, p.get("minimum"), p.get("maximum"), lo, hi))
ok(set(cb) == {k for k, p in props.items() if "minimum" in p}, "every bounded config field is bounded in both")

done()
