// Test helpers are imported by their own paths (@vanish/testkit/net, ...); the root exports only what the
// benchmarks share with the tests.
export { npmStartNodeFlags } from './npm-start';
