// Reads WARC files with warcio.js, an independent reader: every record
// parsed with its HTTP message, and warcio's serializer recomputes each
// record's payload digest to compare with the one recorded. Prints a JSON
// array, one {records, types, problems} (or {error}) per file.
//
// usage: node warcio_read.mjs <file URL of warcio dist/index.js> <warc>...
import { createReadStream } from "node:fs";

const [warcioURL, ...paths] = process.argv.slice(2);
const { WARCParser, WARCSerializer } = await import(warcioURL);

async function read(path) {
  try {
    const out = { records: 0, types: [], targets: [], problems: [] };
    const parser = new WARCParser(createReadStream(path), { parseHttp: true });
    for await (const record of parser) {
      out.records++;
      out.types.push(record.warcType);
      out.targets.push(record.warcTargetURI || "");
      const recorded = record.warcPayloadDigest || "";
      if (record.httpHeaders && recorded) {
        const s = new WARCSerializer(record, { gzip: false, digest: { algo: "sha-256", prefix: "sha256:" } });
        await s.digestRecord({ recompute: true });
        if (record.warcPayloadDigest !== recorded) {
          out.problems.push(`${record.warcType} ${record.warcTargetURI}: payload digest ${recorded}, computed ${record.warcPayloadDigest}`);
        }
      } else {
        await record.skipFully();
      }
    }
    return out;
  } catch (e) {
    return { error: String(e && e.stack ? e.stack : e) };
  }
}

const results = [];
for (const p of paths) results.push(await read(p));
console.log(JSON.stringify(results));
