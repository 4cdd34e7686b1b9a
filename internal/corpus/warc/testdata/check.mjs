// Reads every record of each WARC file with warcio.js and has warcio's own
// serializer recompute the block and payload digests, then prints a JSON
// array with one document per file: {records: [...], problems: [...]} or
// {error: "..."}.
//
// usage: node check.mjs <file URL of warcio dist/index.js> <warc path>...
import { createReadStream, statSync } from "node:fs";
import { createHash } from "node:crypto";

const [warcioURL, ...warcPaths] = process.argv.slice(2);
const { WARCParser, WARCSerializer } = await import(warcioURL);

function concat(chunks) {
  const n = chunks.reduce((a, c) => a + c.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

// recompute has warcio's serializer digest the record again (it reads the
// record's remaining stream) and returns [new block digest, new payload
// digest, bytes it read].
async function recompute(record) {
  const s = new WARCSerializer(record, { gzip: false, digest: { algo: "sha-256", prefix: "sha256:" } });
  await s.digestRecord({ recompute: true });
  const bytes = concat(s.externalBuffer.buffers);
  return [record.warcBlockDigest, record.warcPayloadDigest, bytes];
}

const label = (r) => `${r.warcHeaders.headers.get("WARC-Record-ID")} (${r.warcType})`;

async function check(warcPath) {
try {
  const records = [];
  const problems = [];

  // Pass 1: the block as raw bytes (no HTTP parsing), for block digests.
  {
    const parser = new WARCParser(createReadStream(warcPath), { parseHttp: false, keepHeadersCase: true });
    for await (const record of parser) {
      const recordedBlock = record.warcBlockDigest || "";
      const recordedPayload = record.warcPayloadDigest || "";
      const contentLength = Number(record.warcHeaders.headers.get("Content-Length"));
      const offset = parser.offset;
      let [computedBlock, , block] = await recompute(record);
      if (record.warcType === "warcinfo") {
        // warcio's serializer does not digest warcinfo records.
        computedBlock = "sha256:" + createHash("sha256").update(block).digest("hex");
      }
      const r = {
        id: record.warcHeaders.headers.get("WARC-Record-ID"),
        type: record.warcType,
        target: record.warcTargetURI || "",
        date: record.warcDate,
        concurrentTo: record.warcHeaders.headers.get("WARC-Concurrent-To") || "",
        contentType: record.warcContentType || "",
        offset,
        length: parser.recordLength,
        contentLength,
        blockLength: block.length,
        recordedBlock,
        computedBlock,
        recordedPayload,
        blockText: record.warcType === "metadata" || record.warcType === "warcinfo" ? new TextDecoder().decode(block) : "",
      };
      if (block.length !== contentLength) {
        problems.push(`${label(record)}: read ${block.length} block bytes, Content-Length says ${contentLength}`);
      }
      if (recordedBlock && recordedBlock !== computedBlock) {
        problems.push(`${label(record)}: WARC-Block-Digest ${recordedBlock}, computed ${computedBlock}`);
      }
      records.push(r);
    }
    // warcio stops quietly at a record it cannot inflate or parse; bytes
    // left after the last whole record mean the file is damaged there.
    const size = statSync(warcPath).size;
    const last = records[records.length - 1];
    const end = last ? last.offset + last.length : 0;
    if (end !== size) {
      problems.push(`warcio read whole records up to byte ${end} of ${size}; what follows offset ${end} is not a readable record`);
    }
  }

  // Pass 2: HTTP parsed, for status, headers, payload and payload digests.
  {
    const parser = new WARCParser(createReadStream(warcPath), { parseHttp: true, keepHeadersCase: true });
    let i = 0;
    for await (const record of parser) {
      const r = records[i++];
      if (!r) {
        problems.push(`${label(record)}: the second reading found a record the first did not`);
        break;
      }
      const recordedPayload = record.warcPayloadDigest || "";
      if (record.httpHeaders) {
        const [, computedPayload, payload] = await recompute(record);
        r.computedPayload = computedPayload;
        r.status = record.httpHeaders.statusCode || 0;
        r.statusline = record.httpHeaders.statusline;
        r.httpHeaders = Object.fromEntries([...record.httpHeaders.headers]);
        r.payloadB64 = Buffer.from(payload).toString("base64");
        if (recordedPayload && recordedPayload !== computedPayload) {
          problems.push(`${label(record)}: WARC-Payload-Digest ${recordedPayload}, computed ${computedPayload}`);
        }
      } else {
        await record.skipFully();
      }
    }
    if (i !== records.length) {
      problems.push(`the second reading found ${i} records, the first ${records.length}`);
    }
  }
  return { records, problems };
} catch (e) {
  return { error: String(e && e.stack ? e.stack : e) };
}
}

const results = [];
for (const p of warcPaths) {
  results.push(await check(p));
}
console.log(JSON.stringify(results));
