#!/usr/bin/env python3
"""The smallest node fencebench can test (docs/bring-your-own.md): one state object that
every write compare-and-swaps, in boto3. One request at a time."""
import json, sys
import boto3, botocore.config, botocore.exceptions

s3 = bucket = key = etag = None
term, ops = 0, []

def reply(m, **kw):
    print(json.dumps(dict(in_reply_to=m["id"], **kw)), flush=True)

def put(state, match):  # If-Match the ETag we hold, or create: never a blind write
    cond = {"IfMatch": match} if match else {"IfNoneMatch": "*"}
    return s3.put_object(Bucket=bucket, Key=key, Body=json.dumps(state), **cond)["ETag"]

def take(t):  # the state at term t: refuse when it is already at t or above
    try:
        o = s3.get_object(Bucket=bucket, Key=key)
        state, tag = json.load(o["Body"]), o["ETag"]
    except s3.exceptions.NoSuchKey:
        state, tag = {"term": 0, "ops": []}, None
    if state["term"] >= t:
        raise PermissionError("the state is at term %d" % state["term"])
    return state["ops"], put({"term": t, "ops": state["ops"]}, tag)

for line in sys.stdin:
    m = json.loads(line)
    try:
        if m["type"] == "init":
            bucket, key = m["bucket"], m["prefix"] + "state"
            s3 = boto3.client("s3", endpoint_url=m["endpoint"], region_name=m["region"],
                              aws_access_key_id=m["access_key"], aws_secret_access_key=m["secret_key"],
                              config=botocore.config.Config(s3={"addressing_style": "path"},
                                  retries={"total_max_attempts": 1}, connect_timeout=2, read_timeout=2,
                                  request_checksum_calculation="when_required"))
            reply(m, type="init_ok", protocol="fencebench-system/1", name="minimal", version="1",
                  capabilities=["promote", "terms", "read"])
        elif m["type"] == "promote":
            ops, etag = take(m["term"])
            term = m["term"]
            reply(m, type="promote_ok", term=term)
        elif m["type"] == "write" and term == 0:
            reply(m, type="error", code="not_owner")
        elif m["type"] == "write":
            etag = put({"term": term, "ops": ops + [m["op"]]}, etag)
            ops.append(m["op"])
            reply(m, type="write_ok", op=m["op"], term=term)
        elif m["type"] == "read":
            reply(m, type="read_ok", ops=take(m["term"])[0])
    except (PermissionError, botocore.exceptions.ClientError) as e:
        if isinstance(e, PermissionError) or e.response["ResponseMetadata"]["HTTPStatusCode"] == 412:
            term = 0  # superseded: never acknowledge again
            reply(m, type="error", code="fenced", text=str(e))
        else:
            term = 0  # the outcome is unknown and our ETag may be stale: stop serving
            reply(m, type="error", code="unknown", text=str(e))
    except Exception as e:
        term = 0
        reply(m, type="error", code="unknown", text=str(e))
