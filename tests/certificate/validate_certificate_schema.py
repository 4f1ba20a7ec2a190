#!/usr/bin/env python3
"""Validates certificate files against docs/certificate.schema.json.

usage: validate_certificate_schema.py SCHEMA CERTIFICATE.json [CERTIFICATE.json ...]

Prints one line per file ("ok PATH" or "FAIL PATH: N error(s)" followed by the
JSON path and message of the first errors). Exit 0 when every file validates,
1 when one does not, 2 on a usage error or an invalid schema, 77 (the skip
code ctest is told about) when python3-jsonschema is missing, except under
CI=true, where that fails (tests/support/skip.sh decides, docs/testing.md).
"""

import json
import os
import subprocess
import sys

MAX_ERRORS_SHOWN = 5

try:
    import jsonschema
except ImportError:
    SKIP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support", "skip.sh")
    sys.exit(subprocess.run(["/bin/bash", SKIP, "certificate_schema_fixtures", "jsonschema",
                             "python3-jsonschema is not installed "
                             "(apt-get install python3-jsonschema)"], check=False).returncode)


def json_path(path):
    """$.nodes[0].inventory for the error's absolute path."""
    text = "$"
    for part in path:
        text += "[%d]" % part if isinstance(part, int) else "." + str(part)
    return text


def reject_constant(token):
    # Python's json accepts bare NaN/Infinity; JSON (and protobuf) do not.
    raise ValueError("bare %s is not JSON (proto3 JSON writes it as the string \"%s\")"
                     % (token, token))


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=reject_constant)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    schema_path, certificates = argv[1], argv[2:]
    try:
        schema = load_json(schema_path)
        jsonschema.Draft202012Validator.check_schema(schema)
    except (OSError, ValueError, jsonschema.exceptions.SchemaError) as error:
        print("cannot use %s as the schema: %s; regenerate it with "
              "`build/bin/controller schema > docs/certificate.schema.json`"
              % (schema_path, str(error).splitlines()[0]), file=sys.stderr)
        return 2
    validator = jsonschema.Draft202012Validator(schema)

    failed = 0
    for path in certificates:
        try:
            certificate = load_json(path)
        except (OSError, ValueError) as error:
            print("FAIL %s: not readable as JSON: %s" % (path, error))
            failed += 1
            continue
        errors = sorted(validator.iter_errors(certificate),
                        key=lambda e: [str(p) for p in e.absolute_path])
        if not errors:
            print("ok   %s" % path)
            continue
        failed += 1
        print("FAIL %s: %d error(s)" % (path, len(errors)))
        for error in errors[:MAX_ERRORS_SHOWN]:
            # For anyOf (64-bit integers, doubles) the most specific reason is
            # in the context; show it rather than "not valid under any".
            shown = jsonschema.exceptions.best_match([error]) if error.context else error
            print("  %s: %s" % (json_path(error.absolute_path), shown.message))
        if len(errors) > MAX_ERRORS_SHOWN:
            print("  ... and %d more" % (len(errors) - MAX_ERRORS_SHOWN))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
