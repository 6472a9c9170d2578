/**
 * Jest runs TypeScript through @swc/jest. NestJS 12 ships ESM only, so its packages inside
 * node_modules are transformed to CommonJS as well (the only ESM packages we load in tests).
 */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
  },
];
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/web'],
  testRegex: '\\.(spec|e2e-spec)\\.ts$',
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|oidc-provider|openid-client|oauth4webapi|jose)/)'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testTimeout: 60000,
  // Three files at once: most of a file's time is waiting (the database, a browser, a timer), so on two
  // cores three workers finish in a third of the time of one (bench/RESULTS.md, 2026-12-01). Files share
  // nothing: each has its own database, Redis channel prefix, data folder and ports (test/helpers/app.ts).
  maxWorkers: 3,
};
