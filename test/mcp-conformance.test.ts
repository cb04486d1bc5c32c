import test from 'ava';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { projectPath } from '../src/paths.js';
import type { RunningServer } from '../src/server.js';
import { createWorld, newKey, startTestServer, type TestWorld } from './helpers/env.js';
import { runProcess } from './helpers/processes.js';

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance) against /mcp: the server
 * scenarios that apply to a server of tools only (those of prompts, resources, logging, sampling and
 * the suite's own test tools do not), run on the Node that runs the tests. It has no option for
 * headers, so a forwarder adds the key to each request and passes Host and Origin through as the
 * suite sent them.
 */

const SUITE = projectPath('node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

let world: TestWorld;
let server: RunningServer;
let forwarder: Server;
let forwarderUrl: string;

test.before(async () => {
  world = await createWorld();
  server = await startTestServer(world);
  const { auth } = await newKey(world);
  const target = new URL(server.url);
  forwarder = createServer((incoming, outgoing) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, authorization: auth.Authorization },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  // On 127.0.0.1, as the suite's DNS-rebinding scenario requires of the URL it is given.
  await new Promise<void>((resolve) => forwarder.listen(0, '127.0.0.1', resolve));
  forwarderUrl = `http://127.0.0.1:${(forwarder.address() as AddressInfo).port}`;
});
test.after.always(async () => {
  forwarder?.closeAllConnections();
  await new Promise((resolve) => (forwarder ? forwarder.close(resolve) : resolve(undefined)));
  await server?.stop();
  await world?.destroy();
});

for (const scenario of SCENARIOS) {
  test(`the conformance suite's ${scenario} scenario passes, the key sent with each request`, async (t) => {
    const run = await runProcess(process.execPath, [SUITE, 'server', '--url', `${forwarderUrl}/mcp`, '--scenario', scenario]);
    const output = `${run.stdout}\n${run.stderr}`;
    t.is(run.code, 0, output);
    t.regex(output, /Passed: (\d+)\/\1, 0 failed/, output);
  });
}
