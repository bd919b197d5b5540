/**
 * The architecture rules `npm test` checks (scripts/run-tests.js runs dependency-cruiser before
 * the suites). Three rules:
 *
 * - No import circles, type-only imports included: a circle of types is still a circle to a reader.
 * - Layers, from the top: cli → server (with console) → service → config → webhooks → platform → catalogue → auth → store →
 *   odata → model → clock. A module imports only its own layer and layers below it, so the
 *   drawing of the pipeline in docs/architecture.md stays true.
 *   `src/config.ts` reads the environment into settings whose types come from store/ and odata/,
 *   and is read by the composition root (server/) and the service stage, so it sits just below
 *   service/. `src/clock.ts` imports nothing and every layer may take time from it: the bottom.
 * - catalogue/ and store/ do not import protocol errors: a broken rule is data (RuleViolation),
 *   answered with its status in one table at the service edge (service/error-reply.ts).
 */
const LAYERS = [
  ['cli', '^src/cli/'],
  // The seller console is HTTP-facing like the OData listener: it shares the server's layer.
  ['server', '^src/(server|console)/'],
  ['service', '^src/service/'],
  ['config', '^src/config\\.ts$'],
  // The webhook worker reads the outbox the store's writes fill, and is started by the server.
  ['webhooks', '^src/webhooks/'],
  ['platform', '^src/platform/'],
  ['catalogue', '^src/catalogue/'],
  ['auth', '^src/auth/'],
  ['store', '^src/store/'],
  ['odata', '^src/odata/'],
  ['model', '^src/model/'],
  ['clock', '^src/clock\\.ts$'],
];

const layerRules = LAYERS.slice(1).map(([name, pattern], index) => ({
  name: `layer-${name}`,
  comment: `${name} is below ${LAYERS.slice(0, index + 1).map(([above]) => above).join(', ')}: it may not import them`,
  severity: 'error',
  from: { path: pattern },
  to: { path: LAYERS.slice(0, index + 1).map(([, above]) => above) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules that import each other, directly or round a longer circle (type-only imports count)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'domain-errors-as-data',
      comment: 'catalogue/ and store/ throw RuleViolation (model/rule-violation.ts), which the service edge maps to a status; protocol errors are the service\'s',
      severity: 'error',
      from: { path: '^src/(catalogue|store)/' },
      to: { path: ['^src/odata/errors\\.ts$', '^src/odata/not-found\\.ts$'] },
    },
    {
      name: 'layer-unknown',
      comment: 'Every module under src/ belongs to a layer; a new top-level folder needs its place in LAYERS',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.map(([, pattern]) => pattern) },
      to: {},
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
