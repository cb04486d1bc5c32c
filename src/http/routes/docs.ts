import type Router from '@koa/router';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { RequestState } from '../state.js';

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
  'start.js': { type: 'text/javascript; charset=utf-8', read: async () => START },
};

/** The paths the docs page is made of, every one public. */
export const DOCS_PATHS: readonly string[] = ['/docs', ...Object.keys(ASSETS).map((name) => `/docs/${name}`)];

// Swagger UI sets element styles and shows inline SVG and data: images; nothing else is allowed.
const PAGE_POLICY = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

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

export function docsRoutes(router: Router<RequestState>): void {
  router.get('/docs', (ctx) => {
    ctx.set('Content-Security-Policy', PAGE_POLICY);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get('/docs/:asset', async (ctx) => {
    const name = ctx.params.asset!;
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name]! : undefined;
    if (!asset) return; // the router's 404, rendered as the contract's error
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = asset.type;
    ctx.body = await contentOf(name, asset);
  });
}
