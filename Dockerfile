# The API server and the loader share one image; docker-compose.yml runs it twice.
# Node 24, a long-term support line: the version tests and development run on. Three stages: the
# compiler and dev dependencies stay in the first, the production dependencies are installed in
# the second, and the image holds only what runs, owned by root and run as the unprivileged `node`.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No scripts: `prepare` compiles, which needs the sources copied below.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY loader ./loader
RUN npm run build

FROM node:24-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts

FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080
# package.json: the modules are ES modules, and src/paths.ts finds the project folder by it.
COPY package.json ./
COPY --from=dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Read at run time: the migrations (by `serve` and every command), the index mappings, the sample data.
COPY src/stores/postgres/migrations ./src/stores/postgres/migrations
COPY mappings ./mappings
COPY data ./data
USER node
EXPOSE 8080
ENTRYPOINT ["node", "dist/loader/cli.js"]
CMD ["serve"]
