// Module resolution hooks (node:module register): the k6 module names resolve to this shim's files.
// Any other k6 module, and remote (https://) imports such as jslib, are refused with a clear message.
const MODULES = {
  k6: 'k6.mjs',
  'k6/http': 'http.mjs',
  'k6/metrics': 'metrics.mjs',
  'k6/execution': 'execution.mjs',
};

export async function resolve(specifier, context, nextResolve) {
  if (Object.hasOwn(MODULES, specifier)) {
    return { url: new URL(`./modules/${MODULES[specifier]}`, import.meta.url).href, shortCircuit: true, format: 'module' };
  }
  if (specifier === 'k6' || specifier.startsWith('k6/') || /^https?:\/\//.test(specifier)) {
    throw new Error(`the k6 shim does not provide the module "${specifier}" (it maps: ${Object.keys(MODULES).join(', ')})`);
  }
  return nextResolve(specifier, context);
}
