#!/usr/bin/env python3
"""One node of a fencing protocol in Python with boto3, speaking fencebench's process
protocol (fencebench-system/1) on stdin and stdout; diagnostics go to stderr.

The protocol is the smallest one a compare-and-swap register gives: the whole shard is one
object, <prefix>py/state, holding {"term", "node", "ops"}. A promotion at term T reads it and
writes it back at T with If-Match on the ETag it read (If-None-Match: * when there is none),
refusing when the object already holds T or more. A write appends its op and writes the object
with If-Match on the ETag this node last wrote: 200 acknowledges, 412 means another node wrote
since (a promotion at a higher term), so the node is fenced for good. Any other failure is an
unknown outcome, resolved before the next write by reading the object back: still this node's
term and node, it adopts what is there; otherwise it is fenced. A read at term T takes the
object at T the same way and returns its ops.

--break no-cas writes without If-Match: the broken variant the bench must catch.
"""
import json
import sys
import threading

import boto3
import botocore.config
import botocore.exceptions

VERSION = "fencebench-system/1"


class Fenced(Exception):
    pass


class Unknown(Exception):
    pass


class NotOwner(Exception):
    pass


class Node:
    def __init__(self, cfg, emit, broken):
        self.emit = emit
        self.broken = broken
        self.node = cfg["node"]
        self.bucket = cfg["bucket"]
        self.key = cfg["prefix"] + "py/state"
        conf = botocore.config.Config(
            region_name=cfg.get("region") or "us-east-1",
            signature_version="s3v4",
            s3={"addressing_style": "path"},
            retries={"total_max_attempts": 1},
            connect_timeout=2,
            read_timeout=2,
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        )
        self.s3 = boto3.session.Session().client(
            "s3",
            endpoint_url=cfg["endpoint"],
            aws_access_key_id=cfg["access_key"],
            aws_secret_access_key=cfg["secret_key"],
            config=conf,
            verify=cfg.get("ca_file") or True,
        )
        self.lock = threading.Lock()
        self.term = 0
        self.etag = None
        self.ops = []
        self.fenced = False
        self.unresolved = False

    def get(self):
        try:
            o = self.s3.get_object(Bucket=self.bucket, Key=self.key)
        except botocore.exceptions.ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None, None
            raise Unknown("read: %s" % e)
        except Exception as e:  # timeouts, refused connections
            raise Unknown("read: %s" % e)
        return json.loads(o["Body"].read()), o["ETag"]

    def put(self, state, etag):
        args = dict(Bucket=self.bucket, Key=self.key, Body=json.dumps(state).encode())
        if self.broken != "no-cas":
            if etag is None:
                args["IfNoneMatch"] = "*"
            else:
                args["IfMatch"] = etag
        try:
            return self.s3.put_object(**args)["ETag"]
        except botocore.exceptions.ClientError as e:
            status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status == 412:
                raise Fenced("the state object changed: another node wrote it")
            raise Unknown("write: HTTP %s %s" % (status, e.response.get("Error", {}).get("Code")))
        except Exception as e:
            raise Unknown("write: %s" % e)

    def take(self, term):
        """Write the state object at term, keeping its ops; returns (ops, etag)."""
        for _ in range(3):
            state, etag = self.get()
            if state is not None and state["term"] >= term:
                raise Fenced("the state object is at term %d" % state["term"])
            ops = state["ops"] if state else []
            try:
                return ops, self.put({"term": term, "node": self.node, "ops": ops}, etag)
            except Fenced:
                continue  # a rival wrote between the read and the write: look again
        raise Unknown("the state object kept changing")

    def promote(self, term):
        with self.lock:
            if self.fenced:
                raise Fenced("fenced earlier")
            try:
                self.ops, self.etag = self.take(term)
            except Fenced as e:
                self.fence(term, str(e))
                raise
            self.term, self.unresolved = term, False
            self.emit({"type": "event", "event": "owner", "term": term})

    def fence(self, term, why):
        if not self.fenced:
            self.fenced = True
            self.emit({"type": "event", "event": "fenced", "term": term, "text": why})

    def resolve(self):
        state, etag = self.get()
        if state is None or state["term"] != self.term or state["node"] != self.node:
            self.fence(self.term, "superseded while an earlier write's outcome was unknown")
            raise Fenced("superseded")
        self.ops, self.etag, self.unresolved = state["ops"], etag, False

    def write(self, op):
        with self.lock:
            if self.fenced:
                raise Fenced("fenced earlier")
            if self.term == 0:
                raise NotOwner("not promoted")
            if self.unresolved:
                self.resolve()
            ops = self.ops + [op]
            try:
                self.etag = self.put({"term": self.term, "node": self.node, "ops": ops}, self.etag)
            except Fenced as e:
                self.fence(self.term, str(e))
                raise
            except Unknown:
                self.unresolved = True
                raise
            self.ops = ops
            return self.term

    def relocate(self, term, target):
        """Hand the shard over: once the write in flight (if any) ended, acknowledge nothing
        more; every write acknowledged is already in the state object."""
        with self.lock:
            if self.fenced:
                raise Fenced("fenced earlier")
            if self.term == 0:
                raise NotOwner("not the owner: nothing to hand over to %s" % target)
            if term <= self.term:
                raise NotOwner("relocation at term %d, not above this node's %d" % (term, self.term))
            self.term, self.etag, self.unresolved = 0, None, False

    def read(self, term):
        with self.lock:
            ops, _ = self.take(term)
            return ops


def main():
    broken = ""
    if len(sys.argv) == 3 and sys.argv[1] == "--break":
        broken = sys.argv[2]
    out_lock = threading.Lock()

    def send(m):
        line = json.dumps(m, separators=(",", ":"))
        with out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    node = None
    for line in sys.stdin:
        if not line.strip():
            continue
        m = json.loads(line)
        rid = m["id"]
        if m["type"] == "init":
            node = Node(m, send, broken)
            send({"type": "init_ok", "in_reply_to": rid, "protocol": VERSION, "name": "python-boto3-cas",
                  "version": "1" + (" (broken: %s)" % broken if broken else ""),
                  "capabilities": ["promote", "terms", "read", "relocate"]})
            continue

        def handle(m=m, rid=rid):
            try:
                if m["type"] == "write":
                    send({"type": "write_ok", "in_reply_to": rid, "op": m["op"], "term": node.write(m["op"])})
                elif m["type"] == "promote":
                    node.promote(m["term"])
                    send({"type": "promote_ok", "in_reply_to": rid, "term": m["term"]})
                elif m["type"] == "relocate":
                    node.relocate(m["term"], m["target"])
                    send({"type": "relocate_ok", "in_reply_to": rid, "term": m["term"]})
                elif m["type"] == "read":
                    send({"type": "read_ok", "in_reply_to": rid, "ops": node.read(m["term"])})
                else:
                    send({"type": "error", "in_reply_to": rid, "code": "unsupported", "text": m["type"]})
            except Fenced as e:
                send({"type": "error", "in_reply_to": rid, "code": "fenced", "text": str(e)})
            except NotOwner as e:
                send({"type": "error", "in_reply_to": rid, "code": "not_owner", "text": str(e)})
            except Exception as e:  # Unknown, and anything unforeseen: the outcome is not known
                print("fencenode: %s: %r" % (m["type"], e), file=sys.stderr, flush=True)
                send({"type": "error", "in_reply_to": rid, "code": "unknown", "text": str(e)})

        threading.Thread(target=handle, daemon=True).start()


if __name__ == "__main__":
    main()
