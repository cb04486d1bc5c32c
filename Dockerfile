# The API server and the loader share one image; docker-compose.yml runs it twice.
FROM node:20-slim
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY loader ./loader
COPY mappings ./mappings
COPY data ./data
RUN npm ci --no-audit --no-fund && npm prune --omit=dev
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080
EXPOSE 8080
ENTRYPOINT ["node", "dist/loader/cli.js"]
CMD ["serve"]
