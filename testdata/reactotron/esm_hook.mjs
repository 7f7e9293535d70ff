// A Node module hook for capture_state.mjs: reactotron-react-query 2.0.2
// ships ES modules without "type": "module" and imports its own files
// without extensions, which Node refuses. The hook adds ".js" to such
// relative imports and loads that package's files as ES modules.
// Used as: node --import ./esm_hook.mjs capture_state.mjs OUTDIR
import { register } from "node:module"

if (!globalThis.__reactotronHookRegistered) {
  globalThis.__reactotronHookRegistered = true
  register(import.meta.url)
}

export async function resolve(specifier, context, next) {
  const fromPlugin = context.parentURL && context.parentURL.includes("/reactotron-react-query/")
  if (fromPlugin && specifier.startsWith(".") && !/\.[cm]?js$/.test(specifier)) {
    return next(specifier + ".js", context)
  }
  return next(specifier, context)
}

export async function load(url, context, next) {
  if (url.includes("/reactotron-react-query/") && url.endsWith(".js")) {
    return next(url, { ...context, format: "module" })
  }
  return next(url, context)
}
