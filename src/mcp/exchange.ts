import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const isResponse = (message: JSONRPCMessage): boolean => 'result' in message || 'error' in message;

/**
 * The SDK transport of one POST /mcp in stateless streamable HTTP: the messages of the request body
 * go in through `deliver`, and `responses` settles once every request among them has its response.
 * The server sends nothing else: it asks the client nothing and no tool reports progress.
 */
export class PostExchange implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly responses: Promise<JSONRPCMessage[]>;
  private readonly sent: JSONRPCMessage[] = [];
  private answered!: (responses: JSONRPCMessage[]) => void;

  constructor(private readonly requests: number) {
    this.responses = new Promise((resolve) => (this.answered = resolve));
  }

  async start(): Promise<void> {}

  deliver(messages: readonly JSONRPCMessage[]): void {
    for (const message of messages) this.onmessage?.(message);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!isResponse(message)) return;
    this.sent.push(message);
    if (this.sent.length === this.requests) this.answered(this.sent);
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}
