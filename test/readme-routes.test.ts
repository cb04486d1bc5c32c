import test from 'ava';
import { readFileSync } from 'node:fs';
import { projectPath } from '../src/paths.js';
import type { Route } from '../src/http/route.js';
import { routes } from '../src/http/routeTable.js';

/**
 * The README's route table (Method | Path | Access | Answers) against the route table it describes:
 * the same routes, each with the access it has. A row may name several paths. Its request is built
 * from its cells: a path's `?name=` or a following "with `name`" puts that parameter in the query,
 * and a path parameter takes each name the Answers cell quotes (`/docs/:asset` and its files).
 */

interface Row {
  methods: string[];
  paths: string[];
  query: Record<string, string>;
  access: string;
  answers: string;
  line: string;
}

function readmeRows(): Row[] {
  const lines = readFileSync(projectPath('README.md'), 'utf8').split('\n');
  const header = lines.findIndex((line) => /^\|\s*Method\s*\|\s*Path\s*\|\s*Access\s*\|\s*Answers\s*\|$/.test(line));
  if (header < 0) throw new Error('the README has no table headed | Method | Path | Access | Answers |');
  const rows: Row[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [methods = '', pathCell = '', access = '', ...answers] = line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim());
    const written = [...pathCell.matchAll(/`(\/[^`]*)`/g)].map(([, path]) => path!.split('?'));
    const named = [
      ...written.flatMap(([, search = '']) => [...new URLSearchParams(search).keys()]),
      ...[...pathCell.matchAll(/with `(\w+)`/g)].map(([, name]) => name!),
    ];
    rows.push({
      methods: methods.split(',').map((method) => method.trim()),
      paths: written.map(([path = '']) => path),
      query: Object.fromEntries(named.map((name) => [name, 'x'])),
      access,
      answers: answers.join('|'),
      line,
    });
  }
  return rows;
}

const rows = readmeRows();
const key = (method: string, path: string): string => `${method} ${path}`;

test("the README's route table names every route the service answers, and no other", (t) => {
  const listed = new Set(rows.flatMap((row) => row.methods.flatMap((method) => row.paths.map((path) => key(method, path)))));
  const served = new Set(routes.map((route) => key(route.method, route.path)));
  t.deepEqual(
    [...served].filter((route) => !listed.has(route)),
    [],
    'routes the README does not list',
  );
  t.deepEqual(
    [...listed].filter((route) => !served.has(route)),
    [],
    'README rows that are no route',
  );
});

test("each README row's access is the one the route table gives such a request", (t) => {
  const routeOf = new Map<string, Route>(routes.map((route) => [key(route.method, route.path), route]));
  for (const row of rows) {
    for (const [method, template] of row.methods.flatMap((method) => row.paths.map((path) => [method, path] as const))) {
      const route = routeOf.get(key(method, template));
      if (!route) continue; // the test above names it
      const { access } = route;
      if (typeof access === 'string') {
        t.is(row.access, access, row.line);
        continue;
      }
      const names = [...row.answers.matchAll(/`([^`/]+)`/g)].map(([, name]) => name!);
      const paths = template.includes('/:') ? names.map((name) => template.replace(/:\w+/, name)) : [template];
      t.not(paths.length, 0, `${row.line}: the Answers cell quotes no name for the path parameter`);
      for (const path of paths)
        t.is(row.access, access({ method, path, query: row.query }), `${method} ${path} ${JSON.stringify(row.query)}: ${row.line}`);
    }
  }
});
