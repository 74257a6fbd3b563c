// src/methods.ts is what scripts/generate-methods.mjs makes of the node's OpenRPC document today.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";

test("the method types match the OpenRPC document", () => {
    const run = spawnSync(process.execPath, ["scripts/generate-methods.mjs", "--check"], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
});
