// The benchmark baseline: a bare Koa route answering fixed bytes, nothing else.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

const body = process.env.BARE_BODY ?? '{}';
const app = new Koa();
app.use((ctx) => {
  ctx.type = 'application/json';
  ctx.body = body;
});
const callback = app.callback();
// Koa's callback answers its own errors: nothing is left to wait for.
const server = createServer((request, response) => void callback(request, response)).listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
