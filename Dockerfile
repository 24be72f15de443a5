# syntax=docker/dockerfile:1
# Tollbook's container image: a build stage compiles src/ to dist/, a runtime stage holds the
# production dependencies only and runs as the unprivileged `node` user.
#
# This repository's CI cannot pull base images, so scripts/production-smoke.sh runs these same
# commands outside a container: `npm ci` and `npm run build`, then the runtime files below with
# `npm ci --omit=dev`, `tollbook migrate`, and `node <flags> --import ./dist/telemetry.js dist/main.js`
# under NODE_ENV=production as an unprivileged user. Change the two together.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund && npm run build --silent

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/packages ./packages
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/migrations ./migrations
COPY --from=build /app/contracts/build ./contracts/build
# Production dependencies only: no tsx, no compiler, no anvil (the development chain's node).
RUN npm ci --omit=dev --no-audit --no-fund --loglevel=error && npm cache clean --force \
  && ln -s /app/bin/tollbook.mjs /usr/local/bin/tollbook
USER node
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The server's node flags (its heap's bounds) are package.json's start script's, read by
# bin/node-flags.mjs; the shell hands over to node (exec), so node is the container's PID 1.
CMD ["sh", "-c", "exec node $(node bin/node-flags.mjs) --import ./dist/telemetry.js dist/main.js"]
