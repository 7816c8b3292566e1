# The tokengate image: `tokengate gateway` and `tokengate epp` (deploy/ runs both from it).
#   docker build -t registry.example.com/tokengate:0.1.0 .
# Not built by CI (there is no Docker there); deploy/'s test renders the manifests, not this image.

# Build: every dependency, the TypeScript build, then only the production dependencies kept. No native
# module (SQLite is Node's own node:sqlite), so no compiler in either stage.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build \
  && find dist -name '*.test.js' -delete -o -name '*.test.js.map' -delete \
  && rm -rf dist/deploy \
  && npm prune --omit=dev --no-audit --no-fund

# Run: Node 24 LTS, production dependencies, a non-root user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
RUN groupadd --system --gid 10001 tokengate \
  && useradd --system --uid 10001 --gid tokengate --home-dir /var/lib/tokengate --shell /usr/sbin/nologin tokengate \
  && mkdir -p /var/lib/tokengate /etc/tokengate \
  && chown tokengate:tokengate /var/lib/tokengate
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# package.json: `tokengate --version`; proto/: the ext_proc and gRPC health protos `tokengate epp`
# loads at run time (dist/epp/protos.js reads ../../proto).
COPY package.json ./
COPY proto ./proto
USER 10001:10001
# The public listener (8080), the admin listener (9090: /metrics, /admin/*), the endpoint picker (9002).
EXPOSE 8080 9090 9002
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["gateway", "--config", "/etc/tokengate", "--history", "/var/lib/tokengate/history.db"]
