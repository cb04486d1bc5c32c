import { changePage, changesQuery, changesSince } from '../../services/changeFeed.js';
import { listChanges } from '../../mcp/tools.js';
import { errorResponse, rateHeaders } from '../responseDocs.js';
import type { Route } from '../route.js';
import { queryParam, sendJson } from '../messages.js';

export const changeRoutes: readonly Route[] = [
  {
    name: 'listChanges',
    method: 'GET',
    path: '/v1/changes',
    access: 'key',
    cost: 'unit',
    cache: 'none',
    tag: 'changes',
    query: changesQuery,
    tool: listChanges,
    doc: {
      summary: 'Changes since a cursor',
      description:
        'Every insert, update, delete and merge of a book, work or author, in sequence order, which is commit order: a consumer that ' +
        'keeps passing `next` back as `since` sees every change exactly once. Start with `since=0`. A merge names the survivor. ' +
        'Full pages never change and are cached briefly; the page at the head of the feed is always fresh.',
      responses: {
        '200': { description: 'A page of changes.', headers: rateHeaders, content: { 'application/json': { schema: changePage } } },
        '400': errorResponse(
          '`since` missing (`since cursor is required`), malformed, or ahead of the feed (unknown); or `limit` out of range.',
        ),
      },
    },
    async handle(ctx, { db, shortCache }) {
      sendJson(ctx, await changesSince(db, shortCache, queryParam(ctx, 'since'), queryParam(ctx, 'limit')));
    },
  },
];
