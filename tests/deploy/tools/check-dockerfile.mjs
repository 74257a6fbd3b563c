// Checks GridLedger's Dockerfile (docker/Dockerfile): dockerfile-utils validates every
// instruction, flag and argument (errors and warnings both fail), then the image's rules are
// checked: a build stage and a runtime stage that copies from it, a non-root USER last, the
// home as a VOLUME, and a HEALTHCHECK that asks /livez.
//
//   node check-dockerfile.mjs FILE...                   each FILE passes
//   node check-dockerfile.mjs --expect-invalid FILE...  each FILE is refused
import fs from "node:fs";
import { validate } from "dockerfile-utils";

/** The instructions of a Dockerfile: keyword and arguments, continuation lines joined. */
function instructions(text) {
  const joined = text.replace(/\\\r?\n/g, " ");
  return joined.split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(" ") };
    });
}

function problems(file) {
  const text = fs.readFileSync(file, "utf8");
  const found = validate(text).map((d) =>
    `line ${d.range.start.line + 1}: ${d.message} (dockerfile-utils ${d.code})`);
  const all = instructions(text);
  const of = (keyword) => all.filter((i) => i.keyword === keyword);
  const stages = of("FROM");
  if (stages.length < 2) {
    found.push("a multi-stage build needs a build stage and a runtime stage");
  }
  const lastStage = all.lastIndexOf(stages[stages.length - 1]);
  const runtime = all.slice(lastStage);
  if (!runtime.some((i) => i.keyword === "COPY" && /--from=/.test(i.args))) {
    found.push("the runtime stage must copy the binary from the build stage");
  }
  const users = runtime.filter((i) => i.keyword === "USER");
  const user = users.length > 0 ? users[users.length - 1].args.split(":")[0] : "root";
  if (user === "root" || user === "0") {
    found.push("the runtime stage must end as a user other than root");
  }
  if (!runtime.some((i) => i.keyword === "VOLUME")) {
    found.push("the node's home must be a VOLUME");
  }
  if (!runtime.some((i) => i.keyword === "HEALTHCHECK" && i.args.includes("/livez"))) {
    found.push("a HEALTHCHECK must ask /livez");
  }
  return found;
}

function main(args) {
  const expectInvalid = args[0] === "--expect-invalid";
  const files = expectInvalid ? args.slice(1) : args;
  if (files.length === 0) {
    console.error("usage: check-dockerfile.mjs [--expect-invalid] FILE...");
    return 2;
  }
  let failed = 0;
  for (const file of files) {
    const found = problems(file);
    found.forEach((problem) => console.log(`${file}: ${problem}`));
    if (expectInvalid === (found.length === 0)) {
      console.log(`FAIL ${file}: ${expectInvalid ? "accepted but invalid" : "refused"}`);
      failed++;
    } else {
      console.log(`ok   ${file}: ${expectInvalid ? "refused" : "passes"}`);
    }
  }
  return failed === 0 ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
