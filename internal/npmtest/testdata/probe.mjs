// Imports warcio.js from the file URL in argv[2] and prints what the test
// checks: that the module loaded, the rest of argv, stdin, the variable
// NPMTEST_PROBE and the working directory.
import { readFileSync } from "node:fs";

const [warcioURL, ...rest] = process.argv.slice(2);
const { WARCParser } = await import(warcioURL);
process.stderr.write("probe ran\n");
process.stdout.write(JSON.stringify({
  parser: typeof WARCParser,
  args: rest,
  stdin: readFileSync(0, "utf8"),
  env: process.env.NPMTEST_PROBE ?? null,
  cwd: process.cwd(),
}));
