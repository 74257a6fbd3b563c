// OpenRPC conformance of a running GridLedger node (docs/rpc.md, "OpenRPC").
//
// 1. Validates rpc/openrpc.json against the OpenRPC meta-schema (@open-rpc/meta-schema, checked
//    with ajv), and makes sure the validator does reject a broken copy.
// 2. Starts a dev node in a temporary home (`gridledger init` + `start`, short GFL epochs), and
//    fills its chain through the CLI: a transfer, a provider registration, a governance proposal
//    admitting the provider and its vote, PoCP attestations, a settled epoch and a task.
// 3. Calls every method of the document with @open-rpc/client-js over HTTP and over WebSocket,
//    and validates each result against the method's result schema with ajv. Calls that must fail
//    (an unknown task, a resent tx, a subscription over HTTP) are checked for their documented
//    error code; over WebSocket, a newHeads subscription's notification is checked against
//    #/components/schemas/Head.
//
// Usage: node conformance.mjs --bin <gridledger> --document <openrpc.json>
// Exits 0 when every check passed, 1 otherwise (each failure is printed).

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import nodeHttp from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";

import { Client, HTTPTransport, RequestManager, WebSocketTransport } from "@open-rpc/client-js";
import { jsonSchema } from "@json-schema-tools/meta-schema";
import { openrpcDocument } from "@open-rpc/meta-schema";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const kStartTimeoutMs = 60_000;
const kCommitTimeoutMs = 120_000;
const kPollMs = 100;

const failures = [];
function check(condition, what) {
    if (!condition) {
        failures.push(what);
        console.error(`FAIL ${what}`);
    }
    return condition;
}

function argument(name) {
    const at = process.argv.indexOf(name);
    if (at < 0 || at + 1 >= process.argv.length) {
        console.error(`usage: node conformance.mjs --bin <gridledger> --document <openrpc.json>`);
        process.exit(2);
    }
    return process.argv[at + 1];
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `count` distinct free ports: each listener stays open until every port is chosen. */
async function freePorts(count) {
    const servers = [];
    try {
        for (let i = 0; i < count; ++i) {
            const server = net.createServer();
            servers.push(server);
            await new Promise((resolve, reject) => {
                server.once("error", reject);
                server.listen(0, "127.0.0.1", resolve);
            });
        }
        return servers.map((server) => server.address().port);
    } finally {
        await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    }
}

// ---- 1. The document against the meta-schema ------------------------------------------------

/** An ajv instance that knows the OpenRPC meta-schema and the JSON Schema meta-schema it uses. */
function metaValidator() {
    const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    // The OpenRPC meta-schema refers to the JSON Schema meta-schema both with and without the
    // trailing slash of its id.
    const { $id, ...withoutId } = jsonSchema;
    ajv.addSchema(jsonSchema);
    ajv.addSchema(withoutId, "https://meta.json-schema.tools");
    const { $id: openrpcId, ...openrpc } = openrpcDocument;
    return ajv.compile(openrpc);
}

function validateDocument(document) {
    const validate = metaValidator();
    const valid = validate(document);
    check(valid, `the document is valid OpenRPC: ${JSON.stringify(validate.errors)}`);
    // The validator must be able to fail: a schema keyword of the wrong type is refused.
    const broken = structuredClone(document);
    broken.methods[0].result.schema.type = 7;
    check(!validate(broken), "the meta-schema validator rejects a broken copy of the document");
    console.log(`meta-schema: ${document.methods.length} methods, valid=${valid}`);
    // The old names (x-aliases, docs/rpc.md "Method names"): strings, each listed once, none the
    // name of a method.
    const names = new Set(document.methods.map((method) => method.name));
    const aliases = document.methods.flatMap((method) => method["x-aliases"] ?? []);
    check(aliases.length > 0, "the document lists old names under x-aliases");
    for (const alias of aliases) {
        check(typeof alias === "string" && !names.has(alias), `x-aliases ${alias}: not a method name`);
    }
    check(new Set(aliases).size === aliases.length, "no old name is listed twice");
}

// ---- 2. A node with something on its chain --------------------------------------------------

function cliAsync(bin, home, args) {
    return new Promise((resolve, reject) => {
        const child = spawn(bin, [...args, "--home", home], { stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        let err = "";
        child.stdout.on("data", (d) => { out += d; });
        child.stderr.on("data", (d) => { err += d; });
        child.on("exit", (code) => code === 0 ? resolve(out)
            : reject(new Error(`gridledger ${args.join(" ")} failed (${code}): ${err}`)));
    });
}

function cli(bin, home, args) {
    const run = spawnSync(bin, [...args, "--home", home], { encoding: "utf8", timeout: 120_000 });
    if (run.status !== 0) {
        throw new Error(`gridledger ${args.join(" ")} failed (${run.status}): ${run.stderr}`);
    }
    return run.stdout;
}

/** The last JSON line a `gridledger tx … --wait` printed: the committed transaction. */
function committedTx(output) {
    const lines = output.trim().split("\n");
    return JSON.parse(lines[lines.length - 1]);
}

async function startNode(bin) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gridledger-openrpc-"));
    const home = path.join(dir, "home");
    cli(bin, home, ["init"]);
    // Short GFL epochs (8 s of 1 s slots), so that an epoch settles while the test runs.
    const genesisPath = path.join(home, "config", "genesis.json");
    const genesis = JSON.parse(fs.readFileSync(genesisPath, "utf8"));
    genesis.tokenomics.epoch_ms = "8000";
    genesis.tokenomics.slot_ms = "1000";
    fs.writeFileSync(genesisPath, JSON.stringify(genesis, null, 2));

    const configPath = path.join(home, "config", "node.conf");
    const template = fs.readFileSync(configPath, "utf8");
    // A port found free may be taken by another process before the node binds it: the node then
    // exits, and the status that answered on its RPC port came from that other process (its P2P
    // node id is not the one this node logged). The start is then tried again on other ports.
    for (let attempt = 1; ; ++attempt) {
        const [rpcPort, adminPort, metricsPort, p2pPort] = await freePorts(4);
        fs.writeFileSync(configPath, template
            .replace("admin_port = 8546", `admin_port = ${adminPort}`)
            .replace("port = 8545", `port = ${rpcPort}`)
            .replace("port = 9464", `port = ${metricsPort}`)
            .replace("port = 26656", `port = ${p2pPort}`));
        const log = fs.openSync(path.join(dir, "node.log"), "w");
        const child = spawn(bin, ["start", "--home", home], { stdio: ["ignore", log, log] });
        fs.closeSync(log);  // the node writes through its own copy
        const node = { bin, dir, home, child, rpcPort, adminPort, exited: false };
        child.on("exit", () => {
            node.exited = true;
        });
        const status = await firstStatus(node);
        const own = /p2p listening .* node_id=(0x[0-9a-f]+)/.exec(nodeLog(node));
        if (status !== undefined && !node.exited && own && status.node_id === own[1]) {
            return node;
        }
        if (attempt === 3 || (status === undefined && !node.exited)) {
            throw new Error("the node did not start:\n" + nodeLog(node));
        }
        if (!node.exited) {
            const exited = new Promise((resolve) => child.once("exit", resolve));
            child.kill("SIGTERM");
            await exited;
        }
    }
}

/** The first node_getStatus answer on the node's RPC port; undefined once it exited or timed out. */
async function firstStatus(node) {
    const http = httpClient(node.rpcPort);
    const deadline = Date.now() + kStartTimeoutMs;
    while (!node.exited && Date.now() <= deadline) {
        try {
            return await http.request({ method: "node_getStatus", params: [] });
        } catch {
            await sleep(kPollMs);
        }
    }
    return undefined;
}

function nodeLog(node) {
    return fs.readFileSync(path.join(node.dir, "node.log"), "utf8");
}

async function stopNode(node) {
    if (!node.exited) {
        const exited = new Promise((resolve) => node.child.once("exit", resolve));
        node.child.kill("SIGTERM");
        await exited;
    }
    if (failures.length === 0) {
        fs.rmSync(node.dir, { recursive: true, force: true });
    } else {
        console.error(`node home and log kept in ${node.dir}`);
    }
}

function httpClient(port) {
    return new Client(new RequestManager([new HTTPTransport(`http://127.0.0.1:${port}/`)]));
}

async function waitFor(what, probe) {
    const deadline = Date.now() + kCommitTimeoutMs;
    for (;;) {
        const value = await probe();
        if (value !== undefined) {
            return value;
        }
        if (Date.now() > deadline) {
            throw new Error(`timed out waiting for ${what}`);
        }
        await sleep(kPollMs);
    }
}

/** Keys of the dev home: the funded `dev` account and the validator. */
function devAddress(node) {
    const status = cli(node.bin, node.home, ["keys", "list"]);
    const match = /dev\s+(0x[0-9a-f]{40})/.exec(status);
    if (!match) {
        throw new Error(`no dev key in: ${status}`);
    }
    return match[1];
}

/** Fills the chain so that every read has something to show; returns what the calls need. */
async function populate(node) {
    const http = httpClient(node.rpcPort);
    const rpc = `127.0.0.1:${node.rpcPort}`;
    const tx = (args) => committedTx(cli(node.bin, node.home, ["tx", ...args, "--rpc", rpc, "--wait"]));
    const dev = devAddress(node);
    const alice = "0x110e0be903000814a101d46d14ac95a8b17a487e";

    const transfer = tx(["transfer", "--from", "dev", "--to", alice, "--amount", "1000"]);
    check(transfer.receipt.success, "the transfer commits successfully");

    const inventory = path.join(node.dir, "inventory.json");
    fs.writeFileSync(inventory, JSON.stringify({
        devices: [{ model: "A100", count: "8", peak_gflops: "312000", memory_bandwidth_gbps: "2039",
                    memory_capacity_gb: "80", features: ["tensor_cores"], power_watts: "400",
                    factors: [] }],
        labels: [{ key: "region", value: "eu" }],
        categories: ["ml_training"],
    }));
    const registered = tx(["register-provider", "--from", "dev", "--inventory", inventory]);
    check(registered.receipt.success, "the provider registration commits successfully");

    const proposed = tx(["propose", "admit-provider", "--provider", dev, "--from", "validator-account"]);
    check(proposed.receipt.success, "the admit-provider proposal commits successfully");
    const proposalEvent = proposed.receipt.events.find((e) => e.attributes.id !== undefined);
    const proposalId = proposalEvent ? proposalEvent.attributes.id : "1";
    const proposal = await http.request({ method: "proposal_get", params: [proposalId] });
    if (proposal.status === "open") {
        const voted = tx(["vote", "--proposal", proposalId, "--from", "validator-account"]);
        check(voted.receipt.success, "the vote commits successfully");
    }
    const provider = await waitFor("the provider's admission", async () => {
        const p = await http.request({ method: "provider_get", params: [dev] });
        return p.status === "admitted" ? p : undefined;
    });

    const attested = tx(["attest", "--from", "dev", "--category", "ml_training", "--device", "A100=8"]);
    check(attested.receipt.success, `the attestation commits successfully: ${attested.receipt.reason}`);
    const attestedEpoch = attested.receipt.events[0]?.attributes.epoch ?? "0";
    const settled = await waitFor(`the settlement of epoch ${attestedEpoch}`, async () => {
        const t = await http.request({ method: "tokenomics_get", params: [] });
        return BigInt(t.next_epoch) > BigInt(attestedEpoch) ? t : undefined;
    });
    const epoch = await http.request({ method: "epoch_get", params: [attestedEpoch] });
    check(epoch.epoch === attestedEpoch, `epoch ${attestedEpoch} has a settlement record`);
    console.log(`chain: transfer at ${transfer.height}, proposal ${proposalId}, provider ` +
                `${provider.status}, epoch ${attestedEpoch} settled at ${epoch.height} ` +
                `(providers ${epoch.providers}), ` +
                `next epoch ${settled.next_epoch}`);
    // A task escrowed by the dev account: task_get and task_list answer with a real record.
    const created = tx(["task-create", "--from", "dev", "--category", "ml_training",
                        "--min-gflops", "1000000", "--max-minutes", "2"]);
    check(created.receipt.success, `the task creation commits successfully: ${created.receipt.reason}`);
    const taskEvent = created.receipt.events.find((e) => e.kind === "task_created");
    check(taskEvent !== undefined, "the task creation's receipt carries a task_created event");
    const taskId = taskEvent ? taskEvent.attributes.task : "0x" + "00".repeat(32);
    // A redundant task of two replicas: task_getGroup answers with its group.
    const redundant = tx(["task-create", "--from", "dev", "--category", "ml_training",
                          "--min-gflops", "1000000", "--max-minutes", "2", "--replicas", "2"]);
    check(redundant.receipt.success,
          `the redundant task's creation commits successfully: ${redundant.receipt.reason}`);
    const groupEvent = redundant.receipt.events.find((e) => e.kind === "task_group_created");
    check(groupEvent !== undefined, "its receipt carries a task_group_created event");
    const groupId = groupEvent ? groupEvent.attributes.group : "0x" + "00".repeat(32);
    return {
        dev, alice, transfer, proposalId, attestedEpoch, settledHeight: epoch.height, taskId, groupId,
    };
}

// ---- 3. Every method, its result against its schema ----------------------------------------

/**
 * The calls made for each method of the document: params, and either "result" (validated against
 * the result schema) or the JSON-RPC error code the document promises.
 */
function callsFor(chain, transportName) {
    const unknownTask = "0x" + "ab".repeat(32);
    return {
        node_getStatus: [{ params: [] }],
        node_getPeers: [{ params: [] }, { params: ["extra"], error: -32602 }],
        tx_submit: [
            { params: [chain.rawTxs[transportName]] },
            { params: { tx: chain.committedRawTx }, error: -32003 },
        ],
        tx_get: [{ params: [chain.transfer.hash] }, { params: { hash: chain.transfer.hash } }],
        account_get: [{ params: [chain.alice] }, { params: { address: chain.dev, height: "1" } }],
        chain_getHead: [{ params: [] }],
        block_get: [
            { params: { height: chain.transfer.height } },
            { params: { height: chain.settledHeight, full_txs: true } },
            { params: { id: chain.blockId } },
        ],
        block_getRaw: [
            { params: { from: "0", count: 3 } },
            { params: [chain.transfer.height] },
            { params: ["99999999999"], error: -32001 },
        ],
        state_getProof: [
            { params: [{ account: chain.alice }] },
            { params: { key: "0x" + "00".repeat(32), height: "1" } },
        ],
        validator_getSet: [{ params: [] }],
        proposal_get: [{ params: [chain.proposalId] }],
        provider_get: [{ params: [chain.dev] }],
        tokenomics_get: [{ params: [] }, { params: { height: "1" } }],
        epoch_get: [{ params: [chain.attestedEpoch] }],
        task_get: [{ params: [chain.taskId] }, { params: [unknownTask], error: -32001 }],
        task_getGroup: [
            { params: [chain.groupId] },
            { params: { id: chain.groupId, height: "1" }, error: -32001 },
            { params: [chain.taskId], error: -32001 },
        ],
        task_list: [
            { params: ["state", "pending"] },
            { params: { by: "consumer", key: chain.dev, height: chain.transfer.height } },
            { params: { by: "consumer", key: chain.dev, limit: 1 } },
            { params: { by: "provider", key: chain.dev } },
            { params: { by: "consumer", key: chain.dev, cursor: "0x00" }, error: -32602 },
            { params: { by: "consumer", key: chain.dev, limit: 0 }, error: -32602 },
        ],
        provider_list: [
            { params: [] },
            { params: { status: "admitted", limit: 1 } },
            { params: { height: "1" } },
            { params: { height: "999999999" }, error: -32602 },
        ],
        proposal_list: [
            { params: [] },
            { params: { limit: 1 } },
            { params: { height: "1" } },
        ],
        epoch_list: [
            { params: [] },
            { params: { height: chain.settledHeight, limit: 1 } },
            { params: { cursor: "0x" + "ab".repeat(30) }, error: -32602 },
        ],
        attestation_list: [
            { params: [chain.dev, chain.attestedEpoch] },
            { params: { provider: chain.dev, epoch: chain.attestedEpoch, limit: 1 } },
            { params: { provider: chain.dev, epoch: "0", height: "1" } },
        ],
        block_list: [
            { params: [] },
            { params: { from: chain.transfer.height, to: chain.settledHeight, limit: 2 } },
            { params: { limit: 1001 }, error: -32602 },
        ],
        chain_subscribe: transportName === "ws"
            ? [{ params: ["newHeads"], keep: "subscription" },
               { params: { topic: "noSuchTopic" }, error: -32602 }]
            : [{ params: ["newHeads"], error: -32002 }],
        chain_unsubscribe: transportName === "ws"
            ? [{ params: () => [chain.kept.subscription] }, { params: ["0x0000000000000000"] }]
            : [{ params: ["0x0000000000000001"], error: -32002 }],
        "rpc.discover": [{ params: [] }],
    };
}

/** With GRIDLEDGER_OPENRPC_EXAMPLES=<file>, the first HTTP call of each method is written there. */
const examples = new Map();
function recordExample(transportName, method, params, result) {
    if (transportName === "http" && !examples.has(method)) {
        examples.set(method, { params, result });
    }
}

function writeExamples() {
    const file = process.env.GRIDLEDGER_OPENRPC_EXAMPLES;
    if (file) {
        fs.writeFileSync(file, JSON.stringify(Object.fromEntries(examples), null, 1));
    }
}

/** Waits for a newHeads notification of the subscription just made and checks its shape. */
async function checkNotification(chain, validators) {
    const subscription = chain.kept.subscription;
    const notification = await waitFor("a newHeads notification", async () =>
        chain.notifications.find((n) => n.params?.subscription === subscription));
    check(notification.method === "chain_subscription",
          `ws: a notification's method is chain_subscription (${notification.method})`);
    const validate = validators.get("#Head");
    check(validate(notification.params.result),
          `ws: a newHeads notification matches #/components/schemas/Head: ` +
              JSON.stringify(validate.errors));
    chain.notificationsChecked = (chain.notificationsChecked ?? 0) + 1;
}

function resultValidators(document) {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    // The document itself is the root the result schemas' $refs (#/components/schemas/…) resolve in.
    ajv.addSchema({ ...document, $id: "gridledger-openrpc" }, "gridledger-openrpc");
    const validators = new Map();
    document.methods.forEach((method, index) => {
        const validate = ajv.compile({ $ref: `gridledger-openrpc#/methods/${index}/result/schema` });
        // A schema that accepts anything proves nothing: each one must refuse an empty object.
        check(!validate({}), `${method.name}: the result schema refuses an empty object`);
        validators.set(method.name, validate);
    });
    validators.set("#Head", ajv.compile({ $ref: "gridledger-openrpc#/components/schemas/Head" }));
    return validators;
}

/** True for a method the document tags "admin": served on the admin listener only. */
function isAdmin(method) {
    return (method.tags || []).some((tag) => tag.name === "admin");
}

/**
 * Calls every method of the document on `client` (the public listener), the admin methods on
 * `adminClient` (the admin listener), and checks that the public listener refuses those.
 */
async function callEverything(transportName, client, adminClient, document, chain, validators) {
    const calls = callsFor(chain, transportName);
    let checked = 0;
    for (const method of document.methods) {
        const list = calls[method.name];
        if (!check(list !== undefined, `${method.name}: the test has calls for it`)) {
            continue;
        }
        if (isAdmin(method)) {
            try {
                await client.request({ method: method.name, params: [] });
                check(false, `${transportName} ${method.name}: the public listener served it`);
            } catch (error) {
                check(error.code === -32601,
                      `${transportName} ${method.name}: the public listener answers -32601, ` +
                      `not ${error.code}`);
            }
        }
        const target = isAdmin(method) ? adminClient : client;
        for (const call of list) {
            const params = typeof call.params === "function" ? call.params() : call.params;
            const label = `${transportName} ${method.name} ${JSON.stringify(params)}`;
            try {
                const result = await target.request({ method: method.name, params });
                if (call.keep !== undefined) {
                    chain.kept[call.keep] = result;
                    if (transportName === "ws") {
                        await checkNotification(chain, validators);
                    }
                }
                if (call.error !== undefined) {
                    check(false, `${label}: expected error ${call.error}, got a result`);
                    continue;
                }
                recordExample(transportName, method.name, params, result);
                const validate = validators.get(method.name);
                check(validate(result), `${label}: result matches the schema: ` +
                                            JSON.stringify(validate.errors));
                checked += 1;
            } catch (error) {
                if (call.error !== undefined) {
                    check(error.code === call.error, `${label}: error ${error.code} is ${call.error}`);
                    checked += 1;
                } else {
                    check(false, `${label}: unexpected error ${error.code} ${error.message}`);
                }
            }
        }
    }
    console.log(`${transportName}: ${checked} calls checked`);
    return checked + await callAliases(transportName, client, adminClient, document, chain,
                                       validators);
}

/** The answer to one call: {result} or {error: {code, message, data}}. */
async function answerOf(client, method, params) {
    try {
        return { result: await client.request({ method, params }) };
    } catch (error) {
        return { error: { code: error.code, message: error.message, data: error.data } };
    }
}

/**
 * Calls each old name of the document's x-aliases with the params of its method's calls and
 * checks that it answers as the method does: the same result or the same error. A read of the
 * head may move between two calls, so the alias is called between two calls of the method and
 * must equal one of them (up to five tries).
 */
async function callAliases(transportName, client, adminClient, document, chain, validators) {
    const calls = callsFor(chain, transportName);
    let checked = 0;
    for (const method of document.methods) {
        const target = isAdmin(method) ? adminClient : client;
        for (const alias of method["x-aliases"] ?? []) {
            if (isAdmin(method)) {
                const refused = await answerOf(client, alias, []);
                check(refused.error?.code === -32601,
                      `${transportName} ${alias}: the public listener answers -32601`);
            }
            for (const call of calls[method.name].filter((c) => c.keep === undefined)) {
                const params = typeof call.params === "function" ? call.params() : call.params;
                const label = `${transportName} ${alias} (for ${method.name}) ${JSON.stringify(params)}`;
                let alike = false;
                let answer;
                for (let attempt = 0; attempt < 5 && !alike; ++attempt) {
                    const before = await answerOf(target, method.name, params);
                    answer = await answerOf(target, alias, params);
                    const after = await answerOf(target, method.name, params);
                    alike = isDeepStrictEqual(answer, before) || isDeepStrictEqual(answer, after);
                }
                check(alike, `${label}: answers as ${method.name}: ${JSON.stringify(answer)}`);
                if (call.error !== undefined) {
                    check(answer.error?.code === call.error, `${label}: error ${call.error}`);
                } else {
                    const validate = validators.get(method.name);
                    check(answer.result !== undefined && validate(answer.result),
                          `${label}: result matches the schema of ${method.name}`);
                }
                checked += 1;
            }
        }
    }
    console.log(`${transportName}: ${checked} alias calls checked`);
    return checked;
}

/**
 * A transfer signed by `gridledger tx` but not submitted: the CLI talks to a small proxy that
 * forwards its reads to the node and keeps the tx_submit for itself. Returns the raw tx hex.
 */
async function signedTransfer(node, chain, nonce) {
    let captured;
    const server = nodeHttp.createServer(async (request, response) => {
        let body = "";
        for await (const chunk of request) {
            body += chunk;
        }
        const message = JSON.parse(body);
        let answer;
        if (message.method === "tx_submit") {
            captured = message.params[0];
            answer = JSON.stringify({ jsonrpc: "2.0", id: message.id,
                                      result: { hash: "0x" + "00".repeat(32), status: "pending" } });
        } else {
            const forwarded = await fetch(`http://127.0.0.1:${node.rpcPort}/`, {
                method: "POST", headers: { "content-type": "application/json" }, body,
            });
            answer = await forwarded.text();
        }
        response.writeHead(200, { "content-type": "application/json" });
        response.end(answer);
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
        const proxy = `127.0.0.1:${server.address().port}`;
        await cliAsync(node.bin, node.home, ["tx", "transfer", "--from", "dev", "--to", chain.alice,
                                             "--amount", "1", "--nonce", String(nonce), "--rpc", proxy]);
    } finally {
        server.close();
    }
    if (!captured) {
        throw new Error("the CLI submitted nothing");
    }
    return captured;
}

async function main() {
    const bin = argument("--bin");
    const document = JSON.parse(fs.readFileSync(argument("--document"), "utf8"));
    validateDocument(document);
    const validators = resultValidators(document);

    const node = await startNode(bin);
    try {
        const chain = await populate(node);
        const http = httpClient(node.rpcPort);
        const block = await http.request({
            method: "block_get", params: { height: chain.transfer.height, full_txs: true },
        });
        chain.blockId = block.header.id;
        const account = await http.request({ method: "account_get", params: [chain.dev] });
        const nonce = BigInt(account.nonce);
        chain.rawTxs = {
            http: await signedTransfer(node, chain, nonce),
            ws: await signedTransfer(node, chain, nonce + 1n),
        };
        // A committed transaction sent again is refused with its documented code.
        chain.committedRawTx = block.txs[0];

        chain.kept = {};
        chain.notifications = [];
        const admin = httpClient(node.adminPort);
        const httpCount = await callEverything("http", http, admin, document, chain, validators);
        check(httpCount > document.methods.length, "http: every method was called");

        const ws = new Client(new RequestManager([
            new WebSocketTransport(`ws://127.0.0.1:${node.rpcPort}/ws`)]));
        ws.onNotification((notification) => chain.notifications.push(notification));
        const wsAdmin = new Client(new RequestManager([
            new WebSocketTransport(`ws://127.0.0.1:${node.adminPort}/ws`)]));
        try {
            const wsCount = await callEverything("ws", ws, wsAdmin, document, chain, validators);
            check(wsCount > document.methods.length, "ws: every method was called");
            check(chain.notificationsChecked === 1, "ws: a newHeads notification was checked");
        } finally {
            ws.close();
            wsAdmin.close();
        }
        writeExamples();
    } catch (error) {
        // Kept with the node's home (stopNode keeps them when a check failed) for the report.
        failures.push(String(error));
        console.error(`the node ${node.exited ? "had exited" : "was running"}; its log:\n` +
                      nodeLog(node));
        throw error;
    } finally {
        await stopNode(node);
    }
    if (failures.length > 0) {
        console.error(`${failures.length} check(s) failed`);
        process.exit(1);
    }
    console.log("OpenRPC conformance: every check passed");
}

main().catch((error) => {
    console.error(`FAIL ${error.stack ?? error}`);
    process.exit(1);
});
