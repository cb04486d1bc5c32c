import { ErrorCode, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { createSchema } from 'zod-openapi';
import { z } from 'zod/v4';
import { ApiError, parseInput } from '../errors.js';
import { fieldsParameter, withoutSafeIntegerBounds } from '../http/responseDocs.js';
import type { Route, RouteAnswer, RouteInput } from '../http/route.js';
import type { Services } from '../services/context.js';
import { parseFields, projectRecords } from '../services/fields.js';
import { followMerges } from '../services/lookups.js';

/**
 * The MCP tools, each derived from the route entry that names one (Route.tool): its arguments are
 * the route's path parameters and query, or its body; its result the route's 200 body, as
 * structured content and as the same JSON in text; its answer the route's `answer`, a merged id
 * followed to the survivor as a client follows the 301. A route becomes a tool by its entry alone.
 */

export interface ToolContext {
  services: Services;
  requestId: string;
  tools: ToolSet;
}

/** What a tool answers: the route's JSON, as text and parsed, and a remark for the model when there is one. */
export interface ToolAnswer {
  text: string;
  structured: Record<string, unknown>;
  /** Said next to the JSON, never inside it (that a merged id was followed to its survivor). */
  note?: string;
}

export interface Tool {
  name: string;
  /** Checks the arguments (JSON-RPC invalid params when they do not fit the route's input) and answers as the route. */
  call(context: ToolContext, args: unknown): Promise<ToolAnswer>;
  /** A batch route's tool: the units of the key's budget a call with these arguments draws, as the route. */
  items?(args: unknown): number;
}

/**
 * JSON-RPC invalid params, answered in these very words: the SDK answers an error's `code` and
 * `message` (an McpError's message would carry an "MCP error -32602:" prefix).
 */
export class InvalidParams extends Error {
  readonly code = ErrorCode.InvalidParams;
}

/** The route that answers a GET of `path`, and its parameters: where a merged id's Location leads. */
export type Locate = (method: string, path: string) => { route: Route; params: Record<string, string> } | null;

type JsonSchema = { type?: unknown; properties?: Record<string, JsonSchema>; required?: string[] } & Record<string, unknown>;

const DEFS = '#/$defs/';

/** A zod schema as /openapi.json shows it, the parts it names under $defs, the root inlined (MCP wants `type: "object"` there). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { schema: root, components } = createSchema(schema, { io, schemaRefPath: DEFS, opts: { override: withoutSafeIntegerBounds } });
  const { [typeof root.$ref === 'string' ? root.$ref.slice(DEFS.length) : '']: named, ...defs } = components;
  const inlined = (named ?? root) as JsonSchema;
  return Object.keys(defs).length === 0 ? inlined : { ...inlined, $defs: defs };
}

/** The zod schema of a route's JSON body or 200 answer, as its documentation declares it. */
function documented(content: unknown): z.ZodType | undefined {
  const schema = (content as { 'application/json'?: { schema?: unknown } } | undefined)?.['application/json']?.schema;
  return schema instanceof z.ZodType ? schema : undefined;
}

const asInvalidParams = <T>(read: () => T): T => {
  try {
    return read();
  } catch (error) {
    // The same words as the route's 400 for the same mistake, as the protocol's invalid-params error.
    if (error instanceof ApiError) throw new InvalidParams(error.message);
    throw error;
  }
};

/** The `fields` argument of a tool whose route answers partial records, as the route's `fields=` parameter. */
const fieldsArgument = ({ record, what }: NonNullable<Route['partial']>): JsonSchema => {
  const parameter = fieldsParameter(record, what);
  return { type: 'string', description: parameter.description, examples: [String(parameter.example)] };
};

/**
 * The output schema of a tool whose route answers partial records: those records require only
 * their `id`. MCP asks that structured content conform to the declared output schema whenever one
 * is declared (clients check it, and refuse a result without structured content), so a call with
 * `fields` could neither send its cut records as they are under the whole records' schema nor leave
 * them out; the records' other fields are declared optional instead. A call without `fields` still
 * answers every one.
 */
function partialTolerant(schema: JsonSchema, { at }: NonNullable<Route['partial']>): JsonSchema {
  const defs = (schema.$defs ?? {}) as Record<string, JsonSchema>;
  const copy: JsonSchema = { ...schema, $defs: Object.fromEntries(Object.entries(defs).map(([name, def]) => [name, { ...def }])) };
  const resolved = (node: JsonSchema): JsonSchema => {
    const ref = node.$ref;
    return typeof ref === 'string' && ref.startsWith(DEFS)
      ? ((copy.$defs as Record<string, JsonSchema>)[ref.slice(DEFS.length)] ?? node)
      : node;
  };
  let nodes = [copy];
  for (const step of at) {
    nodes = nodes.flatMap((node) => {
      const found = resolved(node);
      const next = step === '*' ? found.items : found.properties?.[step];
      if (!next) return [];
      // A copy of what is changed, so that nothing shared with other tools is.
      const own = { ...(next as JsonSchema) };
      if (step === '*') found.items = own;
      else found.properties = { ...found.properties, [step]: own };
      return [own];
    });
  }
  for (const node of nodes) resolved(node).required = ['id'];
  if (Object.keys(defs).length === 0) delete copy.$defs;
  return copy;
}

interface Argument {
  name: string;
  in: 'params' | 'query';
  integer: boolean;
  /** What a call without it is told; undefined when it may be left out. */
  missing?: string;
}

/**
 * The arguments of a route without a body: its path parameters (required strings) and its query
 * parameters, typed as the document shows them. Only their types are checked here, as a URL's
 * text has none: what the values mean is the route's to check, so its error reads as the route's.
 */
function queryArguments(route: Route): { schema: JsonSchema; read: (args: unknown) => RouteInput } {
  const pathParams = (route.doc.parameters ?? []).filter((parameter) => 'in' in parameter && parameter.in === 'path') as {
    name: string;
    description?: string;
    schema?: object;
    example?: unknown;
  }[];
  const query: JsonSchema = route.query ? jsonSchema(route.query, 'input') : { properties: {}, required: [] };
  const fields: [string, JsonSchema][] = route.partial ? [['fields', fieldsArgument(route.partial)]] : [];
  const properties: Record<string, JsonSchema> = Object.fromEntries([
    ...pathParams.map(({ name, description, schema, example }): [string, JsonSchema] => [
      name,
      { ...schema, description, examples: [example] },
    ]),
    ...Object.entries(query.properties ?? {}),
    ...fields,
  ]);
  const requiredMessage = (name: string): string =>
    z.safeParse(route.query!.shape[name], undefined).error?.issues[0]?.message ?? `${name} is required`;
  const args: Argument[] = [
    ...pathParams.map(({ name }): Argument => ({ name, in: 'params', integer: false, missing: `${name} is required` })),
    ...Object.entries(query.properties ?? {}).map(([name, schema]): Argument => ({
      name,
      in: 'query',
      integer: schema.type === 'integer',
      missing: query.required?.includes(name) ? requiredMessage(name) : undefined,
    })),
    ...fields.map(([name]): Argument => ({ name, in: 'query', integer: false })),
  ];
  const names = args.map((arg) => arg.name);
  const read = (given: unknown): RouteInput => {
    const values = given ?? {};
    if (typeof values !== 'object' || values === null || Array.isArray(values)) throw new InvalidParams('arguments must be a JSON object');
    const unknown = Object.keys(values).find((name) => !names.includes(name));
    if (unknown !== undefined) throw new InvalidParams(`unknown argument "${unknown}": the arguments are ${names.join(', ')}`);
    const input = { params: {} as Record<string, string>, query: {} as Record<string, string> };
    for (const arg of args) {
      const value = (values as Record<string, unknown>)[arg.name];
      if (value === undefined) {
        if (arg.missing !== undefined) throw new InvalidParams(arg.missing);
        continue;
      }
      const text = arg.integer
        ? typeof value === 'number' && Number.isInteger(value)
          ? String(value)
          : null
        : typeof value === 'string'
          ? value
          : null;
      if (text === null) throw new InvalidParams(`${arg.name} must be ${arg.integer ? 'an integer' : 'a string'}`);
      input[arg.in][arg.name] = text;
    }
    return input;
  };
  return {
    schema: {
      type: 'object',
      properties,
      required: args.flatMap((arg) => (arg.missing === undefined ? [] : [arg.name])),
      additionalProperties: false,
    },
    read,
  };
}

/** The arguments of a route with a JSON body: the body itself, read as the route reads it (a batch route: as it counts its units). */
function bodyArguments(route: Route, body: z.ZodType): { schema: JsonSchema; read: (args: unknown) => RouteInput } {
  const check = route.batchUnits ?? ((args: unknown) => parseInput(body, args));
  return {
    schema: jsonSchema(body, 'input'),
    read: (args) => {
      asInvalidParams(() => check(args ?? {}));
      return { params: {}, query: {}, body: args ?? {} };
    },
  };
}

/** The tool of a route that names one, and its tools/list entry. */
function routeTool(route: Route, locate: Locate): { tool: Tool; listed: ListToolsResult['tools'][number] } {
  const { tool: names, answer } = route;
  const output = documented(
    route.doc.responses['200'] && 'content' in route.doc.responses['200'] ? route.doc.responses['200'].content : undefined,
  );
  if (!names || !answer || !output) throw new Error(`route ${route.name} names a tool but has no answer or documented 200 body`);
  const body = documented(route.doc.requestBody && 'content' in route.doc.requestBody ? route.doc.requestBody.content : undefined);
  const args = body ? bodyArguments(route, body) : queryArguments(route);

  /** What the route at `location` (a merged id's 301) answers: the survivor's, as a client that follows it is answered. */
  const answerAt = (services: Services, requestId: string, location: string): Promise<RouteAnswer> => {
    const url = new URL(location, 'http://bookmeta');
    const found = locate('GET', url.pathname);
    if (!found?.route.answer) throw new Error(`no route answers ${location}`);
    return found.route.answer(services, requestId, { params: found.params, query: Object.fromEntries(url.searchParams) });
  };

  const tool: Tool = {
    name: names.name,
    async call({ services, requestId }, given) {
      const {
        query: { fields: fieldsText, ...query },
        ...input
      } = args.read(given);
      const fields = route.partial ? asInvalidParams(() => parseFields(fieldsText, route.partial!.record, route.partial!.what)) : null;
      const [asked, value] = Object.entries(input.params)[0] ?? ['input', ''];
      const { answer: found, mergedInto } = await followMerges(
        value,
        await answer(services, requestId, { ...input, query }),
        ({ location }) => answerAt(services, requestId, location),
      );
      const whole = JSON.parse(found.text) as Record<string, unknown>;
      const structured = fields === null ? whole : (projectRecords(whole, route.partial!.at, fields) as Record<string, unknown>);
      const text = fields === null ? found.text : JSON.stringify(structured);
      if (mergedInto === null) return { text, structured };
      const note = `The ${asked} ${value} was merged into ${mergedInto}: the JSON above is for ${mergedInto}. Use ${mergedInto} from now on.`;
      return { text, structured, note };
    },
    ...(route.batchUnits && {
      items: (given: unknown) => {
        try {
          return route.batchUnits!(given ?? {});
        } catch (error) {
          if (error instanceof ApiError) return 1; // arguments that are no batch cost one unit, as any request
          throw error;
        }
      },
    }),
  };
  return {
    tool,
    listed: {
      ...names,
      inputSchema: { ...args.schema, type: 'object' },
      outputSchema: {
        ...(route.partial ? partialTolerant(jsonSchema(output, 'output'), route.partial) : jsonSchema(output, 'output')),
        type: 'object',
      },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
  };
}

/** The tools a server offers, by name, and their tools/list answer (built once: the tools do not change while the process runs). */
export interface ToolSet {
  byName: ReadonlyMap<string, Tool>;
  listing: ListToolsResult;
}

/** The tools of the routes that name one, in their order. */
export function toolSet(routes: readonly Route[], locate: Locate): ToolSet {
  const tools = routes.filter((route) => route.tool).map((route) => routeTool(route, locate));
  return { byName: new Map(tools.map(({ tool }) => [tool.name, tool])), listing: { tools: tools.map(({ listed }) => listed) } };
}

/** The tool a JSON-RPC message calls, and its arguments, read without checking the rest of the message; null when it calls none. */
export function toolCallIn(message: unknown, tools: ToolSet): { tool: Tool | undefined; name: string; args: unknown } | null {
  if (typeof message !== 'object' || message === null || !('method' in message) || message.method !== 'tools/call') return null;
  const params = 'params' in message && typeof message.params === 'object' && message.params !== null ? message.params : {};
  if (!('name' in params) || typeof params.name !== 'string') return null;
  return { tool: tools.byName.get(params.name), name: params.name, args: 'arguments' in params ? params.arguments : undefined };
}
