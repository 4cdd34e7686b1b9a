// A test-only MCP client: the official TypeScript SDK, driven by a plan.
// Usage: node client.mjs PLAN.json, with MCP_SDK_DIR naming the installed
// @modelcontextprotocol/sdk. It prints one JSON object: what the server
// said about itself and, for each step, the result or the error.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const sdk = process.env.MCP_SDK_DIR;
const load = (p) => import(pathToFileURL(path.join(sdk, 'dist', 'esm', p)).href);
const { Client } = await load('client/index.js');
const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));

let transport;
if (plan.stdio) {
  const { StdioClientTransport } = await load('client/stdio.js');
  transport = new StdioClientTransport({
    command: plan.stdio.command,
    args: plan.stdio.args ?? [],
    env: { ...process.env, ...(plan.stdio.env ?? {}) },
    stderr: 'inherit',
  });
} else {
  const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
  transport = new StreamableHTTPClientTransport(new URL(plan.url), {
    requestInit: { headers: plan.headers ?? {} },
  });
}

const errorOf = (e) => ({ message: String(e?.message ?? e), code: e?.code ?? null });
const out = { steps: [] };
const client = new Client({ name: 'zhizhi-test', version: '1.0.0' });
try {
  await client.connect(transport);
} catch (e) {
  out.connectError = errorOf(e);
  console.log(JSON.stringify(out));
  process.exit(0);
}
out.server = client.getServerVersion();
out.instructions = client.getInstructions() ?? '';
for (const step of plan.steps) {
  const rec = { op: step.op, name: step.name ?? step.uri ?? '' };
  try {
    switch (step.op) {
      case 'listTools':
        rec.result = await client.listTools();
        break;
      case 'callTool':
        rec.result = await client.callTool({ name: step.name, arguments: step.arguments ?? {} });
        break;
      case 'listResourceTemplates':
        rec.result = await client.listResourceTemplates();
        break;
      case 'readResource':
        rec.result = await client.readResource({ uri: step.uri });
        break;
      default:
        throw new Error(`unknown step ${step.op}`);
    }
  } catch (e) {
    rec.error = errorOf(e);
  }
  out.steps.push(rec);
}
await client.close();
console.log(JSON.stringify(out));
