// The layers of src/, top to bottom (docs/ARCHITECTURE.md). A module may import its own layer and the
// layers below it, never one above; no cycle anywhere. There is no exception list: a rule that does
// not hold is a design to change, not a line to add here.
const LAYERS = [
  { name: 'shell', path: '^src/(main\\.ts|cli/)' },
  { name: 'process', path: '^src/cluster\\.ts' },
  { name: 'server', path: '^src/server\\.ts' },
  { name: 'http', path: '^src/(app\\.ts|http/)' },
  { name: 'loops', path: '^src/(dispatch|webhooks|carriers)/' },
  { name: 'domain', path: '^src/domain/' },
  { name: 'store', path: '^src/store/(?!tables\\.ts$)' },
  { name: 'records', path: '^src/records/' },
  { name: 'base', path: '^src/(config\\.ts|lib/|store/tables\\.ts$)' },
];

const upward = LAYERS.flatMap((lower, i) =>
  LAYERS.slice(0, i).map((upper) => ({
    name: `no-${lower.name}-to-${upper.name}`,
    comment: `${lower.name} sits below ${upper.name}: an arrow may only point down the layers`,
    severity: 'error',
    from: { path: lower.path },
    to: { path: upper.path },
  })),
);

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'no-circular',
      comment: 'no cycle between modules, type-only imports included',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-cli-outside-cli',
      comment: 'cli/ is an entry point: nothing outside it imports it',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'no-import-of-main',
      comment: 'main.ts is the process shell: nothing imports it',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/main\\.ts$' },
    },
    {
      name: 'http-knows-no-store',
      comment: 'http/ never imports store modules or store types: it goes through domain functions',
      severity: 'error',
      from: { path: '^src/(app\\.ts|http/)' },
      to: { path: '^src/store/' },
    },
    {
      name: 'sql-only-in-store',
      comment: 'Kysely and the database drivers appear only in store/',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/store/' },
      to: { path: 'node_modules/(kysely|better-sqlite3|pg)/' },
    },
    {
      name: 'no-fastify-below-http',
      comment: 'domain, store and records know nothing of Fastify',
      severity: 'error',
      from: { path: '^src/(domain|store|records|lib)/' },
      to: { path: 'node_modules/fastify' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
