#!/usr/bin/env node
// SPDX-License-Identifier: MIT
/*
 * A third-party schema check of our OTLP/JSON export requests: the message
 * types OpenTelemetry generated from opentelemetry-proto, as the official npm
 * package @opentelemetry/otlp-transformer ships them (build/src/generated/
 * root.js, protobufjs static code, 0.57.x), decide what a field is and
 * whether its value fits.
 *
 *   node schema-check.js logs|traces FILE
 *
 * FILE holds export requests, one JSON object a line. Each is read as
 * OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding)
 * into the generated message type, then checked by that type's own verify(),
 * then encoded to protobuf, decoded and compared:
 *  - a key that is not a field of the generated type is refused;
 *  - a field the generated verify() calls 64-bit ("integer|Long expected")
 *    may be a decimal string; anything else in it is refused by verify();
 *  - enums must be integers (OTLP/JSON), so verify() refuses a string;
 *  - a field verify() calls bytes ("buffer expected"), traceId, spanId and
 *    parentSpanId, must be lower-case hex of 16, 8 and 8 bytes (OTLP/JSON:
 *    hex, not base64; the lengths are OTLP's);
 *  - the nested messages are found by field name (NESTED below); their fields
 *    are checked the same way.
 * Prints "ok: N requests, M records" or the first fault of each request and
 * exits 1.
 */
"use strict";
const fs = require("fs");
const path = require("path");

const dir = process.env.OTLP_NPM_DIR || path.join(__dirname, "../../build/npm");
let root;
try {
	root = require(path.resolve(dir,
		"node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js"));
} catch (e) {
	console.error(`schema-check: cannot load @opentelemetry/otlp-transformer from ${dir}: ` +
		`${e.message}; run tools/install-deps.sh`);
	process.exit(2);
}
const pb = root.opentelemetry.proto;
const Long = require(path.resolve(dir, "node_modules/long"));

// Which generated type each message-valued field holds.
const NESTED = {
	resourceLogs: pb.logs.v1.ResourceLogs,
	scopeLogs: pb.logs.v1.ScopeLogs,
	logRecords: pb.logs.v1.LogRecord,
	resourceSpans: pb.trace.v1.ResourceSpans,
	scopeSpans: pb.trace.v1.ScopeSpans,
	spans: pb.trace.v1.Span,
	events: pb.trace.v1.Span.Event,
	links: pb.trace.v1.Span.Link,
	status: pb.trace.v1.Status,
	resource: pb.resource.v1.Resource,
	scope: pb.common.v1.InstrumentationScope,
	attributes: pb.common.v1.KeyValue,
	value: pb.common.v1.AnyValue,
	body: pb.common.v1.AnyValue,
	arrayValue: pb.common.v1.ArrayValue,
	kvlistValue: pb.common.v1.KeyValueList,
	values: null, // ArrayValue: AnyValue, KeyValueList: KeyValue (below)
};
const ID_BYTES = { traceId: 16, spanId: 8, parentSpanId: 8 };
const KIND = {
	logs: { req: pb.collector.logs.v1.ExportLogsServiceRequest, res: "resourceLogs",
		scope: "scopeLogs", recs: "logRecords" },
	traces: { req: pb.collector.trace.v1.ExportTraceServiceRequest, res: "resourceSpans",
		scope: "scopeSpans", recs: "spans" },
};

class Fault extends Error {}

function nestedType(Type, key) {
	if (key === "values")
		return Type === pb.common.v1.ArrayValue ? pb.common.v1.AnyValue : pb.common.v1.KeyValue;
	return NESTED[key];
}

// OTLP/JSON value v of Type, at where, into the generated type's message form.
function convert(Type, v, where) {
	if (typeof v !== "object" || v === null || Array.isArray(v))
		throw new Fault(`${where}: not an object`);
	const out = {};
	for (const [key, val] of Object.entries(v)) {
		const at = `${where}.${key}`;
		if (!Object.prototype.hasOwnProperty.call(Type.prototype, key))
			throw new Fault(`${at}: not a field of ${Type.getTypeUrl("").slice(1)}`);
		const probe = Type.verify({ [key]: 0.5 }) || "";
		const sub = nestedType(Type, key);
		if (sub && (probe.includes("object expected") || probe.includes("array expected"))) {
			if (Array.isArray(val))
				out[key] = val.map((x, i) => convert(sub, x, `${at}[${i}]`));
			else
				out[key] = convert(sub, val, at);
		} else if (probe.includes("buffer expected")) {
			const n = ID_BYTES[key];
			if (typeof val !== "string" || !/^([0-9a-f]{2})*$/.test(val))
				throw new Fault(`${at}: ${JSON.stringify(val)} is not lower-case hex`);
			if (n && val.length !== 2 * n)
				throw new Fault(`${at}: ${val.length / 2} bytes, not ${n}`);
			out[key] = Buffer.from(val, "hex");
		} else if (probe.includes("integer|Long expected") && typeof val === "string" &&
			   /^-?[0-9]+$/.test(val)) {
			out[key] = Long.fromString(val, BigInt(val) > 9223372036854775807n);
		} else {
			out[key] = val; // verify() decides
		}
	}
	return out;
}

function check(kind, req, where) {
	const k = KIND[kind];
	const msg = convert(k.req, req, where);
	const err = k.req.verify(msg);
	if (err)
		throw new Fault(`${where}: ${err}`);
	const bytes = k.req.encode(k.req.fromObject(msg)).finish();
	const back = k.req.toObject(k.req.decode(bytes), { longs: String });
	let n = 0, m = 0;
	for (const r of req[k.res] || [])
		for (const s of r[k.scope] || [])
			n += (s[k.recs] || []).length;
	for (const r of back[k.res] || [])
		for (const s of r[k.scope] || [])
			m += (s[k.recs] || []).length;
	if (n !== m)
		throw new Fault(`${where}: ${n} records sent, ${m} after a protobuf round trip`);
	if (!n)
		throw new Fault(`${where}: no ${k.recs}`);
	return n;
}

function main() {
	const [kind, file] = process.argv.slice(2);
	if (!KIND[kind] || !file) {
		console.error("usage: schema-check.js logs|traces FILE");
		return 2;
	}
	const lines = fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim());
	let bad = 0, recs = 0;
	lines.forEach((line, i) => {
		try {
			recs += check(kind, JSON.parse(line), `request ${i + 1}`);
		} catch (e) {
			if (!(e instanceof Fault) && !(e instanceof SyntaxError))
				throw e;
			console.log(`refused: ${e.message}`);
			bad++;
		}
	});
	if (!lines.length) {
		console.log(`refused: ${file} has no requests`);
		return 1;
	}
	if (bad)
		return 1;
	console.log(`ok: ${lines.length} requests, ${recs} ${KIND[kind].recs}`);
	return 0;
}

process.exit(main());
