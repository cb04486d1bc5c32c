import test from 'ava';
import { useApi } from './helpers/env.js';

/**
 * MCP_ALLOWED_ORIGINS read from the environment by a real server: a browser page of a configured
 * origin is served, one of a look-alike or any other origin is refused.
 */

const CONFIGURED = 'https://app.example.com';
const api = useApi(test, { env: { MCP_ALLOWED_ORIGINS: ` ${CONFIGURED} , https://other.example.org` } });

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'origins', version: '1' } },
};

const fromOrigin = (origin: string) =>
  api.get('/mcp', {
    method: 'POST',
    headers: { Origin: origin, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(initialize),
  });

test('a page of an origin named in MCP_ALLOWED_ORIGINS is served; a look-alike or an unnamed origin is refused 403', async (t) => {
  for (const origin of [CONFIGURED, 'https://other.example.org']) {
    const served = await fromOrigin(origin);
    t.is(served.status, 200, origin);
    t.is(((await served.json()) as { result?: { serverInfo?: unknown } }).result?.serverInfo !== undefined, true, origin);
  }
  for (const origin of ['https://app.example.com.evil.example', 'http://app.example.com', 'https://evil.example']) {
    const refused = await fromOrigin(origin);
    t.is(refused.status, 403, origin);
    t.is(((await refused.json()) as { error: { code: string } }).error.code, 'forbidden', origin);
  }
});
