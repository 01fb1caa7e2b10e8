#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A real OTLP/HTTP (JSON) logs and traces receiver for the tests, on 127.0.0.1.

Checks every export request field by field, as OTLP/JSON has them: the
resource (service.name, process.pid as a decimal string, host.name), the
scope, each log record (timeUnixNano a decimal string, severityNumber an
integer of TRACE 1, DEBUG 5, INFO 9, WARN 13, ERROR 17, a body, traceId of 32
and spanId of 16 lower-case hex digits, attributes whose intValue are decimal
strings). A request that fails a check gets 400 and its reason goes to
--errors. Accepted records are appended to --out, one JSON object a line.

  receiver.py --port-file F --out F --errors F [--fail-first N] [--retry-after S]
              [--raw F] [--raw-traces F] [--spans F] [--mode check|hang|garbage]
  receiver.py --check logs|traces FILE

/v1/traces requests are checked the same way, span by span (traceId,
spanId, parentSpanId, name, kind an integer, start and end decimal strings,
start <= end, thread.id, code.filepath, code.lineno, recorder.subject,
recorder.recording, recorder.open and recorder.enter_unknown true if there);
accepted spans go to --spans (default OUT.spans). --check checks the
requests of FILE, a line each, without serving, and exits 1 if one fails.

--raw F appends each accepted request body to F, one JSON object a line
(for tests/otlp/schema-check.js).

--fail-first N answers the first N requests 503 (with Retry-After S if
given), to prove the client retries.

--mode hang accepts each connection, reads what comes, and never answers
(a receiver that hangs); --mode garbage answers each connection with bytes
that are not HTTP and closes it (an endpoint that is not HTTP). Both count
the connections they got in --out, one line each.
"""
import argparse
import json
import os
import re
import socket
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

HEX32 = re.compile(r"^[0-9a-f]{32}$")
HEX16 = re.compile(r"^[0-9a-f]{16}$")
DEC = re.compile(r"^-?[0-9]+$")
SPAN_FIELDS = {"traceId", "spanId", "parentSpanId", "traceState", "flags", "name", "kind",
               "startTimeUnixNano", "endTimeUnixNano", "attributes", "droppedAttributesCount",
               "events", "droppedEventsCount", "links", "droppedLinksCount", "status"}
SEVERITIES = {"TRACE": 1, "DEBUG": 5, "INFO": 9, "WARN": 13, "ERROR": 17}


class Bad(Exception):
    pass


def need(cond, why):
    if not cond:
        raise Bad(why)


def attrs(lst, where):
    need(isinstance(lst, list), f"{where}: attributes is not a list")
    out = {}
    for a in lst:
        need(isinstance(a, dict) and isinstance(a.get("key"), str), f"{where}: attribute without key")
        v = a.get("value")
        need(isinstance(v, dict), f"{where}.{a['key']}: value is not an object")
        need(len(v) <= 1, f"{where}.{a['key']}: more than one value kind")
        if "intValue" in v:
            need(isinstance(v["intValue"], str) and DEC.match(v["intValue"]),
                 f"{where}.{a['key']}: intValue {v['intValue']!r} is not a decimal string")
        if "stringValue" in v:
            need(isinstance(v["stringValue"], str), f"{where}.{a['key']}: stringValue not a string")
        if "boolValue" in v:
            need(isinstance(v["boolValue"], bool), f"{where}.{a['key']}: boolValue not a bool")
        if "doubleValue" in v:
            need(isinstance(v["doubleValue"], (int, float)), f"{where}.{a['key']}: doubleValue")
        out[a["key"]] = next(iter(v.values()), None)
    return out


def envelope(req, resource, scope, items):
    """What a request of either signal has around its items: one resource
    (service.name, process.pid, host.name) with one scope named recorder.
    Returns the resource's attributes and the items."""
    need(isinstance(req, dict) and list(req) == [resource], f"top level: only {resource}")
    r = req[resource]
    need(isinstance(r, list) and len(r) == 1, f"{resource}: one entry")
    res = attrs(r[0]["resource"]["attributes"], "resource")
    need(isinstance(res.get("service.name"), str) and res["service.name"], "resource: service.name")
    need(isinstance(res.get("process.pid"), str), "resource: process.pid as intValue")
    need(isinstance(res.get("host.name"), str) and res["host.name"], "resource: host.name")
    sc = r[0][scope]
    need(isinstance(sc, list) and len(sc) == 1, f"{scope}: one entry")
    need(sc[0]["scope"].get("name") == "recorder", "scope.name is not recorder")
    got = sc[0][items]
    need(isinstance(got, list) and got, f"{items}: a non-empty list")
    return res, got


def check(req):
    res, records = envelope(req, "resourceLogs", "scopeLogs", "logRecords")
    out = []
    for i, r in enumerate(records):
        w = f"logRecords[{i}]"
        need(isinstance(r.get("timeUnixNano"), str) and DEC.match(r["timeUnixNano"]),
             f"{w}: timeUnixNano is not a decimal string")
        need(isinstance(r.get("severityNumber"), int), f"{w}: severityNumber is not an integer")
        need(SEVERITIES.get(r.get("severityText")) == r["severityNumber"],
             f"{w}: severityNumber {r['severityNumber']} does not match {r.get('severityText')}")
        need(isinstance(r.get("body", {}).get("stringValue"), str), f"{w}: body.stringValue")
        need(HEX32.match(r.get("traceId", "")), f"{w}: traceId is not 32 lower-case hex digits")
        need(HEX16.match(r.get("spanId", "")), f"{w}: spanId is not 16 lower-case hex digits")
        a = attrs(r.get("attributes"), w)
        need("recorder.seq" in a and "recorder.subject" in a and "code.lineno" in a,
             f"{w}: recorder.seq, recorder.subject and code.lineno attributes")
        out.append({"service": res["service.name"], "pid": res["process.pid"],
                    "severity": r["severityText"], "body": r["body"]["stringValue"],
                    "traceId": r["traceId"], "spanId": r["spanId"], "attributes": a})
    return out


def write_port(port_file, port):
    with open(port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(port_file + ".tmp", port_file)


def raw_server(a):
    """--mode hang or garbage: a TCP server that is no OTLP receiver."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    write_port(a.port_file, srv.getsockname()[1])
    held = []
    while True:
        c, _ = srv.accept()
        with open(a.out, "a") as f:
            f.write("connection\n")
        if a.mode == "garbage":
            try:
                c.sendall(b"\x00\x01SSH-2.0-not-http garbage\r\n\r\n")
                c.shutdown(socket.SHUT_WR)
                c.recv(65536)
            except OSError:
                pass
            c.close()
        else:
            # Hang: keep the connection open, read nothing more, answer never.
            held.append(c)


def check_spans(req):
    """An export trace request: each span field by field (OTLP/JSON)."""
    res, spans = envelope(req, "resourceSpans", "scopeSpans", "spans")
    out = []
    for i, sp in enumerate(spans):
        w = f"spans[{i}]"
        need(isinstance(sp, dict) and set(sp) <= SPAN_FIELDS,
             f"{w}: fields OTLP spans do not have: {sorted(set(sp) - SPAN_FIELDS)}")
        need(HEX32.match(sp.get("traceId", "")), f"{w}: traceId is not 32 lower-case hex digits")
        need(HEX16.match(sp.get("spanId", "")), f"{w}: spanId is not 16 lower-case hex digits")
        if "parentSpanId" in sp:
            need(HEX16.match(sp["parentSpanId"]), f"{w}: parentSpanId is not 16 lower-case hex digits")
        need(isinstance(sp.get("name"), str) and sp["name"], f"{w}: name")
        need(isinstance(sp.get("kind"), int) and 0 <= sp["kind"] <= 5, f"{w}: kind is not an integer 0-5")
        for k in ("startTimeUnixNano", "endTimeUnixNano"):
            need(isinstance(sp.get(k), str) and DEC.match(sp[k]), f"{w}: {k} is not a decimal string")
        need(int(sp["startTimeUnixNano"]) <= int(sp["endTimeUnixNano"]), f"{w}: ends before it starts")
        a = attrs(sp.get("attributes"), w)
        for k in ("thread.id", "code.lineno"):
            need(isinstance(a.get(k), str), f"{w}: {k} as intValue")
        for k in ("code.filepath", "recorder.subject", "recorder.recording"):
            need(isinstance(a.get(k), str), f"{w}: {k} as stringValue")
        for k in ("recorder.open", "recorder.enter_unknown"):
            need(a.get(k, True) is True, f"{w}: {k} is not boolValue true")
        out.append({"service": res["service.name"], "pid": res["process.pid"], "name": sp["name"],
                    "traceId": sp["traceId"], "spanId": sp["spanId"],
                    "parentSpanId": sp.get("parentSpanId"), "start": sp["startTimeUnixNano"],
                    "end": sp["endTimeUnixNano"], "attributes": a})
    return out


def check_file(path, signal):
    """--check FILE: the requests of FILE, a line each, offline; 0 if all pass."""
    bad = 0
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                (check if signal == "logs" else check_spans)(json.loads(line))
            except (Bad, ValueError, KeyError, TypeError) as e:
                print(f"request {n}: {e}")
                bad += 1
    return 1 if bad else 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        return check_file(sys.argv[3], sys.argv[2])
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--errors", required=True)
    p.add_argument("--fail-first", type=int, default=0)
    p.add_argument("--retry-after", type=int, default=None)
    p.add_argument("--raw", help="append each accepted request body here, a line each")
    p.add_argument("--raw-traces", help="the same for /v1/traces")
    p.add_argument("--spans", help="accepted spans, a line each (default: OUT.spans)")
    p.add_argument("--mode", choices=["check", "hang", "garbage"], default="check")
    a = p.parse_args()
    if a.mode != "check":
        return raw_server(a)
    state = {"n": 0}

    class H(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, code, extra=None):
            self.send_response(code)
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            state["n"] += 1
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path not in ("/v1/logs", "/v1/traces"):
                self.answer(404)
                return
            traces = self.path == "/v1/traces"
            if state["n"] <= a.fail_first:
                self.answer(503, {"Retry-After": str(a.retry_after)} if a.retry_after is not None else None)
                return
            try:
                need(self.headers.get("Content-Type") == "application/json", "Content-Type")
                recs = (check_spans if traces else check)(json.loads(body))
            except (Bad, ValueError, KeyError, TypeError) as e:
                with open(a.errors, "a") as f:
                    f.write(f"request {state['n']}: {e}\n")
                self.answer(400)
                return
            raw = a.raw_traces if traces else a.raw
            if raw:
                with open(raw, "a") as f:
                    f.write(json.dumps(json.loads(body)) + "\n")
            with open((a.spans or a.out + ".spans") if traces else a.out, "a") as f:
                for r in recs:
                    f.write(json.dumps(r) + "\n")
            self.answer(200)

    srv = HTTPServer(("127.0.0.1", 0), H)
    write_port(a.port_file, srv.server_address[1])
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
