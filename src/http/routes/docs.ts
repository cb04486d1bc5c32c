import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { errorResponse } from '../responseDocs.js';
import type { Route } from '../route.js';

/**
 * GET /docs: an interactive reference of /openapi.json, rendered in the browser by Swagger UI from
 * the project's own `swagger-ui-dist` package (no CDN: the page works offline and loads nothing
 * from anyone else). The page, its built assets and a few lines that start the renderer are
 * public, like the document they render.
 */

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

// Relative addresses, so the page also works behind a proxy that mounts the API under a prefix.
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>bookmeta API reference</title>
  <link rel="icon" type="image/png" href="docs/favicon-32x32.png">
  <link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="docs/swagger-ui-bundle.js"></script>
  <script src="docs/start.js"></script>
</body>
</html>
`;

// A script of its own rather than inline, so the page's policy can refuse every inline script.
const START = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
});
`;

interface Asset {
  type: string;
  read: () => Promise<Buffer | string>;
}

const packageFile = (name: string) => () => readFile(join(SWAGGER_UI_DIR, name));

const ASSETS: Record<string, Asset> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', read: packageFile('swagger-ui.css') },
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', read: packageFile('swagger-ui-bundle.js') },
  'favicon-32x32.png': { type: 'image/png', read: packageFile('favicon-32x32.png') },
  'start.js': { type: 'text/javascript; charset=utf-8', read: () => Promise.resolve(START) },
};

// Swagger UI sets element styles and shows inline SVG and data: images; nothing else is allowed.
const PAGE_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

// Read once per process, on first use: most API processes never serve the page.
const loaded = new Map<string, Promise<Buffer | string>>();
const contentOf = (name: string, asset: Asset): Promise<Buffer | string> => {
  let content = loaded.get(name);
  if (!content) {
    content = asset.read();
    loaded.set(name, content);
    content.catch(() => loaded.delete(name));
  }
  return content;
};

const assetOf = (name: string): Asset | undefined => (Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined);

export const docsRoutes: readonly Route[] = [
  {
    name: 'docs',
    method: 'GET',
    path: '/docs',
    access: 'public',
    cost: 'none',
    cache: 'none',
    tag: 'public',
    doc: {
      summary: 'Interactive API reference',
      description:
        'This document rendered as a page (Swagger UI, served from the service itself: nothing is loaded from elsewhere), its routes grouped by tag. Public: no key, not metered, not rate limited.',
      responses: { '200': { description: 'The HTML page.', content: { 'text/html': { schema: { type: 'string' } } } } },
    },
    handle(ctx) {
      ctx.set('Content-Security-Policy', PAGE_POLICY);
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = PAGE;
    },
  },
  {
    name: 'docsAsset',
    method: 'GET',
    path: '/docs/:asset',
    // The page's own files only: any other name is no public path, and needs the key like every other.
    access: ({ path }) => (assetOf(path.slice('/docs/'.length)) ? 'public' : 'key'),
    cost: 'unit',
    cache: 'none',
    tag: 'public',
    doc: {
      summary: 'A file of the reference page',
      description: 'The stylesheet, scripts and icon `/docs` loads. Public, like the page.',
      parameters: [{ name: 'asset', in: 'path', required: true, schema: { type: 'string', enum: Object.keys(ASSETS) } }],
      responses: {
        '200': {
          description: 'The file.',
          content: {
            'text/css': { schema: { type: 'string' } },
            'text/javascript': { schema: { type: 'string' } },
            'image/png': { schema: { type: 'string' } },
          },
        },
        '401': errorResponse('Any other name: not a public path, so it needs the key like every path outside the public list.'),
        '404': errorResponse('Any other name, with the key.'),
      },
    },
    async handle(ctx, _services, { asset: name }) {
      const asset = assetOf(name!);
      if (!asset) return; // no body: rendered as the contract's 404
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.type = asset.type;
      ctx.body = await contentOf(name!, asset);
    },
  },
];
