import type { ExecutionContext } from 'ava';

/** The contract's 400: status 400 and `{"error":{"code":"bad_request","message"}}`; `label` names the request in a failure. */
export async function assertBadRequest(t: ExecutionContext, response: Response, message: string, label: string): Promise<void> {
  t.is(response.status, 400, label);
  t.deepEqual(await response.json(), { error: { code: 'bad_request', message } }, label);
}
