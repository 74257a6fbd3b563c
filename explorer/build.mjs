// Builds the explorer into dist/ (or the directory given as the first argument): index.html,
// explorer.js and explorer.css, the SDK (`@gridledger/client`, from sdk/typescript/src) and the
// chart library bundled in. Also bundles the browser tests into dist-test/ for `npm test`.

import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, "dist"));
const sdk = join(here, "..", "sdk", "typescript", "src", "index.ts");
const shared = {
    bundle: true,
    alias: { "@gridledger/client": sdk },
    // The SDK's sources import @noble/*: resolved from the explorer's own dependencies.
    nodePaths: [join(here, "node_modules")],
    logLevel: "warning",
};

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
    ...shared,
    entryPoints: { explorer: join(here, "src", "main.ts") },
    outdir: out,
    format: "esm",
    target: "es2022",
    platform: "browser",
    minify: true,
    sourcemap: true,
    legalComments: "linked",
});
copyFileSync(join(here, "index.html"), join(out, "index.html"));

const testOut = join(here, "dist-test");
rmSync(testOut, { recursive: true, force: true });
await build({
    ...shared,
    entryPoints: [join(here, "test", "explorer.test.ts")],
    outdir: testOut,
    outExtension: { ".js": ".mjs" },
    format: "esm",
    target: "node18",
    platform: "node",
    // Only the SDK is bundled; the browser driver comes from node_modules at run time.
    external: ["playwright-core"],
    sourcemap: "inline",
});
console.log(`explorer built in ${out}`);
