// One jest configuration, one project per kind of suite, so `npm test` runs them all and
// each kind can still be run alone with --selectProjects.
const moduleNameMapper = {
  '^@vanish/envelope$': '<rootDir>/packages/envelope/envelope.js',
  '^@vanish/envelope/request-seal$': '<rootDir>/packages/envelope/request-seal.js',
  '^@vanish/(common|bus|database|testkit)$': '<rootDir>/packages/$1/src',
  '^@vanish/(notes|stats|mailer|webhooks|gateway|all-in-one)$': '<rootDir>/services/$1/src',
  '^@vanish/testkit/(.*)$': '<rootDir>/packages/testkit/src/$1',
};
const swc = ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }];
// The tus packages (and srvx, which @tus/server uses) ship ES modules only; jest's own require() of ESM needs
// --experimental-vm-modules, so they are compiled to CommonJS like our sources (the services run them natively).
const transform = { '^.+\\.(t|j)s$': swc, '^.+\\.mjs$': swc };
const transformIgnorePatterns = ['/node_modules/(?!(@tus|srvx)/)'];
const roots = ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test'];
const base = { transform, transformIgnorePatterns, moduleNameMapper, roots, testEnvironment: 'node', modulePathIgnorePatterns: ['/dist/'] };

const project = (displayName, testMatch, extra = {}) => ({ ...base, displayName, testMatch, ...extra });
/** Every project but unit talks to real servers, processes or a browser: see test/support/generous-timeout.js. */
const slow = { setupFilesAfterEnv: ['<rootDir>/test/support/generous-timeout.js'] };

module.exports = {
  projects: [
    project('unit', ['**/src/**/*.test.ts']),
    project('integration', ['**/test/**/*.int.test.ts'], slow),
    project('e2e', ['**/test/**/*.e2e.test.ts'], slow),
    project('browser', ['**/test/**/*.browser.test.ts'], slow),
    project('resilience', ['**/test/**/*.resilience.test.ts'], slow),
    project('containers', ['**/test/**/*.containers.test.ts'], slow),
    project('compose', ['**/test/**/*.compose.test.ts'], slow),
    // Real clusters (three RabbitMQ nodes, Redis with Sentinels, a MariaDB primary) started on loopback
    // ports by the tests themselves: `npm run test:cluster` (docs/testing.md).
    project('cluster', ['**/test/**/*.cluster.test.ts'], slow),
  ],
};
