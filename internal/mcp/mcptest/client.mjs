// A test-only MCP client: the official TypeScript SDK, driven by a plan.
// Usage: node client.mjs PLANS.json, with MCP_SDK_DIR naming the installed
// @modelcontextprotocol/sdk. PLANS.json is a list of plans, each one
// connection; it prints a JSON list: for each plan, what the server said
// about itself and, for each step, the result or the error.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const sdk = process.env.MCP_SDK_DIR;
const load = (p) => import(pathToFileURL(path.join(sdk, 'dist', 'esm', p)).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport } = await load('client/stdio.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
const plans = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const errorOf = (e) => ({ message: String(e?.message ?? e), code: e?.code ?? null });

async function run(plan) {
  let transport;
  if (plan.stdio) {
    transport = new StdioClientTransport({
      command: plan.stdio.command,
      args: plan.stdio.args ?? [],
      env: { ...process.env, ...(plan.stdio.env ?? {}) },
      stderr: 'inherit',
    });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(plan.url), {
      requestInit: { headers: plan.headers ?? {} },
    });
  }
  const out = { steps: [] };
  const client = new Client({ name: 'zhizhi-test', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (e) {
    out.connectError = errorOf(e);
    await transport.close().catch(() => {});
    return out;
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
  return out;
}

const results = [];
for (const plan of plans) {
  results.push(await run(plan));
}
console.log(JSON.stringify(results));
