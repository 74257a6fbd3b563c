// The SDK against a real GridLedger dev node (GRIDLEDGER_BIN names the node's binary): signs with
// the dev account's key, submits over JSON-RPC, and follows each transaction to its receipt.

import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import WebSocket from "ws";

import {
    addressOf,
    headHeight,
    HttpClient,
    publicKeyOf,
    RpcError,
    signingDomain,
    signTx,
    taskIdOf,
    toHex,
    type Hex,
    type Payload,
    type Receipt,
    type TxBody,
    type WebSocketConstructor,
    WsClient,
    type ChainEvent,
    accountKey,
    certifiedHeader,
    decodeAccount,
    fromHex,
    verifyStateProof,
} from "../../src/index.js";

const bin = process.env.GRIDLEDGER_BIN;
if (bin === undefined) {
    throw new Error("GRIDLEDGER_BIN must name the gridledger binary");
}

function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const server = createServer();
        server.listen(0, "127.0.0.1", () => {
            const address = server.address();
            server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()));
        });
    });
}

function cli(home: string, args: string[]): string {
    const run = spawnSync(bin!, [...args, "--home", home], { encoding: "utf8", timeout: 60_000 });
    assert.equal(run.status, 0, `gridledger ${args.join(" ")}: ${run.stderr}`);
    return run.stdout;
}

/** Waits until the node answers, up to 30 s; false as soon as it exits or when the time is up. */
async function serving(rpc: HttpClient, process: ChildProcess): Promise<boolean> {
    const deadline = Date.now() + 30_000;
    while (process.exitCode === null && Date.now() < deadline) {
        try {
            await rpc.nodeStatus();
            return true;
        } catch {
            await new Promise((resolve) => setTimeout(resolve, 100));
        }
    }
    return false;
}

let dir = "";
let node: ChildProcess | undefined;
let client: HttpClient;
let wsUrl: string;
let committee: Hex[];
let devSecret: Hex;
let devAddress: Hex;
let validatorSecret: Hex;
let domain: Uint8Array;
let fees: Record<string, bigint>;

before(async () => {
    dir = mkdtempSync(join(tmpdir(), "gridledger-sdk-"));
    const home = join(dir, "home");
    cli(home, ["init"]);
    const configPath = join(home, "config", "node.conf");
    const template = readFileSync(configPath, "utf8");
    // A port found free may be taken by another process before the node binds it: the node then
    // exits at once, and the start is tried again on other ports.
    for (let attempt = 1; ; ++attempt) {
        const rpcPort = await freePort();
        const config = template
            .replace("admin_port = 8546", `admin_port = ${await freePort()}`)
            .replace("port = 8545", `port = ${rpcPort}`)
            .replace("port = 9464", `port = ${await freePort()}`)
            .replace("port = 26656", `port = ${await freePort()}`);
        writeFileSync(configPath, config);
        const started = spawn(bin, ["start", "--home", home], { stdio: ["ignore", "ignore", "pipe"] });
        let stderr = "";
        started.stderr!.on("data", (chunk: Buffer) => {
            stderr += chunk.toString();
        });
        node = started;
        client = new HttpClient(`http://127.0.0.1:${rpcPort}/`);
        wsUrl = `ws://127.0.0.1:${rpcPort}/ws`;
        if (await serving(client, started)) {
            break;
        }
        started.kill("SIGKILL");
        assert.ok(attempt < 3 && started.exitCode !== null, `the node did not start: ${stderr}`);
    }
    devSecret = readFileSync(join(home, "keys", "dev.key"), "utf8").trim() as Hex;
    // The trust anchor of an auditor: the genesis committee's consensus keys, in order.
    const genesis = JSON.parse(readFileSync(join(home, "config", "genesis.json"), "utf8"));
    committee = genesis.validators.map((v: { consensus_key: Hex }) => v.consensus_key);
    validatorSecret = readFileSync(join(home, "keys", "validator-account.key"), "utf8").trim() as Hex;
    devAddress = addressOf(publicKeyOf(devSecret));
    domain = await client.signingDomain();
    fees = await client.fees();
    // The node's own CLI names the same address for the dev key.
    assert.match(cli(home, ["keys", "list"]), new RegExp(`dev\\s+${devAddress}`));
});

after(async () => {
    if (node !== undefined && node.exitCode === null) {
        const exited = new Promise((resolve) => node!.once("exit", resolve));
        node.kill("SIGTERM");
        await exited;
    }
    rmSync(dir, { recursive: true, force: true });
});

/** A body from `secret`'s account at its next nonce, with the kind's fee in force. */
async function bodyFor(secret: Hex, payload: Payload): Promise<TxBody> {
    const sender = publicKeyOf(secret);
    return {
        chainId: (await client.nodeStatus()).chain_id,
        sender,
        nonce: BigInt((await client.account(addressOf(sender))).nonce),
        validUntilHeight: (await headHeight(client)) + 1_000n,
        fee: fees[payload.kind]!,
        payload,
    };
}

const devBody = (payload: Payload): Promise<TxBody> => bodyFor(devSecret, payload);

test("a transfer signed by the SDK commits and moves the amount", async () => {
    const to = addressOf(publicKeyOf(`0x${"42".repeat(32)}`));
    const body = await devBody({ kind: "transfer", to, amount: 1_000n });
    const tx = signTx(body, devSecret, domain);
    assert.equal(await client.submit(tx), tx.hash);
    const receipt = await client.waitForReceipt(tx.hash);
    assert.ok(receipt.success, receipt.reason);
    assert.equal(BigInt(receipt.fee), body.fee);
    assert.equal((await client.account(to)).balance, "1000");
    assert.equal(BigInt((await client.account(devAddress)).nonce), body.nonce + 1n);

    // Trusting no node: a header certified by the genesis committee's QC names a state root that
    // includes the transfer, and the account's proof verifies against it.
    const committed = BigInt(receipt.height);
    const found = await waitFor("a certified header past the transfer", async () => {
        const raw = await client.request("block_getRaw", { from: committed.toString(), count: 256 });
        for (const { block, certificate } of raw.blocks) {
            if (certificate !== undefined) {
                const header = certifiedHeader(block, certificate, committee, domain);
                if (header.execHeight >= committed) {
                    return { header, block, certificate };
                }
            }
        }
        return undefined;
    });
    const header = found.header;
    const proof = await client.request("state_getProof", { key: { account: to }, height: header.execHeight.toString() });
    assert.equal(proof.key, accountKey(to));
    assert.ok(proof.value !== null);
    assert.ok(verifyStateProof(header.execStateRoot, accountKey(to), proof.value, proof.proof));
    assert.equal(decodeAccount(proof.value).balance, 1_000n);
    // A node that lies about the balance cannot make its proof verify.
    const lie = toHex(Uint8Array.from([...new Array(23).fill(0), 0xff]));
    assert.ok(!verifyStateProof(header.execStateRoot, accountKey(to), lie, proof.proof));
    // Nor against another root than the one the certified header names.
    const otherRoot = toHex(Uint8Array.from(fromHex(header.execStateRoot), (b, i) => (i === 0 ? b ^ 1 : b)));
    assert.ok(!verifyStateProof(otherRoot, accountKey(to), proof.value, proof.proof));
    // Nor does the certificate make the header pass for another committee.
    assert.throws(() => certifiedHeader(found.block, found.certificate, [publicKeyOf(devSecret)], domain));
    // And a certificate whose signature was forged (its last byte changed) certifies nothing.
    const forged = fromHex(found.certificate);
    forged[forged.length - 1]! ^= 1;
    assert.throws(() => certifiedHeader(found.block, toHex(forged), committee, domain), /not certified/);
});

test("a task's id is known before it commits; top-up and cancel follow it", async () => {
    const create = await devBody({
        kind: "task_create",
        category: "ml_training",
        minGflops: 1_000n,
        constraints: ["region == eu"],
        maxMinutes: 30n,
        specHash: `0x${"ab".repeat(32)}`,
    });
    const id = taskIdOf(devAddress, create.nonce);
    const created = await client.waitForReceipt(await client.submit(signTx(create, devSecret, domain)));
    assert.ok(created.success, created.reason);
    assert.equal(created.events.find((e) => e.kind === "task_created")?.attributes.task, id);
    for (const payload of [
        { kind: "task_top_up", taskId: id, extraMinutes: 15n },
        { kind: "task_cancel", taskId: id },
    ] as Payload[]) {
        const tx = signTx(await devBody(payload), devSecret, domain);
        const receipt = await client.waitForReceipt(await client.submit(tx));
        assert.ok(receipt.success, `${payload.kind}: ${receipt.reason}`);
    }
    const task = await client.request("task_get", { id });
    assert.equal(task.state, "cancelled");
    assert.equal(task.max_minutes, "45");
});

test("the node's refusals reach the caller with their reason", async () => {
    const body = await devBody({ kind: "transfer", to: addressOf(publicKeyOf(`0x${"43".repeat(32)}`)), amount: 1n });
    // Signed for another chain: the signature does not verify in this one.
    const foreign = signTx(body, devSecret, signingDomain("another-chain", `0x${"00".repeat(32)}`));
    await assert.rejects(client.submit(foreign), (e: unknown) => e instanceof RpcError && e.reason === "bad_signature");
    // Below the kind's fee.
    const cheap = signTx({ ...body, fee: body.fee - 1n }, devSecret, domain);
    await assert.rejects(client.submit(cheap), (e: unknown) => e instanceof RpcError && e.reason === "fee_too_low");
    // Expired: valid until a height already past.
    const late = signTx({ ...body, validUntilHeight: 0n }, devSecret, domain);
    await assert.rejects(client.submit(late), (e: unknown) => e instanceof RpcError && e.reason === "expired");
});

/** Signs `payload` with `secret` at its account's next nonce and the kind's fee, submits it and
 * waits for its receipt. */
async function send(secret: Hex, payload: Payload): Promise<Receipt> {
    const body = await bodyFor(secret, payload);
    return client.waitForReceipt(await client.submit(signTx(body, secret, domain)));
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + 30_000;
    for (;;) {
        const value = await probe();
        if (value !== undefined) {
            return value;
        }
        assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
}

test("every payload kind, signed by the SDK, commits on the node; a task is followed over WebSocket", async () => {
    const kinds = new Set<string>();
    const ok = async (secret: Hex, payload: Payload): Promise<Receipt> => {
        const receipt = await send(secret, payload);
        assert.ok(receipt.success, `${payload.kind}: ${receipt.reason}`);
        kinds.add(payload.kind);
        return receipt;
    };
    const providerSecret: Hex = `0x${"11".repeat(32)}`;
    const verifierSecret: Hex = `0x${"22".repeat(32)}`;
    // A second verifier decides the first one's spot check: a challenger may not.
    const judgeSecret: Hex = `0x${"33".repeat(32)}`;
    const provider = addressOf(publicKeyOf(providerSecret));
    const verifier = addressOf(publicKeyOf(verifierSecret));
    const judge = addressOf(publicKeyOf(judgeSecret));
    for (const to of [provider, verifier, judge]) {
        await ok(devSecret, { kind: "transfer", to, amount: 10n ** 18n });
    }

    // A provider registers, governance admits it and grants the verifier its role.
    await ok(providerSecret, {
        kind: "register_provider",
        devices: [
            {
                model: "A100",
                count: 8n,
                peakGflops: 312_000n,
                memoryBandwidthGbps: 2_039n,
                memoryCapacityGb: 80n,
                features: ["tensor_cores"],
                powerWatts: 400n,
                factors: [],
            },
        ],
        labels: [{ key: "region", value: "eu" }],
        categories: ["ml_training"],
    });
    const admitted = await ok(validatorSecret, { kind: "propose", action: { kind: "admit_provider", provider } });
    const proposalId = BigInt(admitted.events.find((e) => e.kind === "proposal_created")!.attributes.id!);
    await ok(validatorSecret, { kind: "vote", proposalId, approve: true });
    for (const account of [verifier, judge]) {
        const granted = await ok(validatorSecret, { kind: "propose", action: { kind: "grant_verifier", account } });
        await ok(validatorSecret, {
            kind: "vote",
            proposalId: BigInt(granted.events.find((e) => e.kind === "proposal_created")!.attributes.id!),
            approve: true,
        });
    }
    await waitFor("the admission", async () =>
        (await client.request("provider_get", { address: provider })).status === "admitted" ? true : undefined,
    );

    // The provider attests the current slot (docs/encoding.md §10).
    const t = await client.request("tokenomics_get", {});
    const head = await client.request("chain_getHead", {});
    const since = BigInt(head.header.timestamp_ms) - BigInt(t.genesis_time_ms);
    const epoch = since / BigInt(t.tokenomics.epoch_ms);
    const slot = (since % BigInt(t.tokenomics.epoch_ms)) / BigInt(t.tokenomics.slot_ms);
    await ok(providerSecret, {
        kind: "attest",
        epoch,
        slot,
        category: "ml_training",
        devices: [{ model: "A100", count: 8n }],
        powerWatts: 3_200n,
        renewableShareBps: 5_000,
        evidence: [`0x${"aa".repeat(32)}`],
    });

    // Tasks: matched to the provider, which refuses one, finishes one and fails one; the consumer
    // tops one up, verifies it and cancels another.
    const task = async (): Promise<Hex> => {
        const nonce = BigInt((await client.account(devAddress)).nonce);
        await ok(devSecret, {
            kind: "task_create",
            category: "ml_training",
            minGflops: 1_000n,
            constraints: ["region == eu"],
            maxMinutes: 30n,
            specHash: `0x${"cd".repeat(32)}`,
        });
        return taskIdOf(devAddress, nonce);
    };
    const assigned = (id: Hex) =>
        waitFor(`the assignment of ${id}`, async () => {
            const state = (await client.request("task_get", { id })).state;
            return state === "assigned" ? true : undefined;
        });
    const refused = await task();
    await assigned(refused);
    await ok(providerSecret, { kind: "task_refuse", taskId: refused });
    // This one is followed over WebSocket, with the heads, from before its creation.
    const ws = await WsClient.connect(wsUrl, WebSocket as unknown as WebSocketConstructor);
    const transitions: ChainEvent[] = [];
    const heads: bigint[] = [];
    const taskSub = await ws.subscribe("taskTransitions", (event) => transitions.push(event));
    const headSub = await ws.subscribe("newHeads", (head) => heads.push(BigInt(head.height as string)));
    const done = await task();
    await assigned(done);
    await ok(providerSecret, { kind: "task_start", taskId: done });
    await ok(devSecret, { kind: "task_top_up", taskId: done, extraMinutes: 10n });
    await ok(providerSecret, {
        kind: "task_submit_result",
        taskId: done,
        resultHash: `0x${"ef".repeat(32)}`,
        outputUri: "s3://results/sdk-test",
        exitCode: 0,
        durationMs: 60_000n,
    });
    await ok(devSecret, { kind: "task_verify", taskId: done, accept: true, reason: "" });
    assert.equal((await client.request("task_get", { id: done })).state, "settled");
    const steps = () =>
        transitions
            .filter((e) => e.attributes.task === done)
            .map((e) => (e.kind === "task_transition" ? e.attributes.to! : e.kind));
    await waitFor("the settlement's notification", async () => (steps().includes("settled") ? true : undefined));
    assert.deepEqual(steps(), ["task_created", "assigned", "running", "task_topped_up", "result_submitted", "settled"]);
    assert.ok(await taskSub.unsubscribe());
    assert.ok(await headSub.unsubscribe());
    ws.close();
    assert.ok(heads.length >= 5, `${heads.length} heads`);
    heads.forEach((height, k) => assert.equal(height, heads[0]! + BigInt(k), "every head once, in order"));
    // The verifier spot-checks the settled result, locking the bond; the second verifier rejects
    // the spot check, and the bond goes to the provider (docs/tasks.md "Spot checks").
    const opened = await ok(verifierSecret, {
        kind: "task_spot_check",
        taskId: done,
        reason: "output does not reproduce",
        evidence: `0x${"dd".repeat(32)}`,
    });
    const bond = opened.events.find((e) => e.kind === "task_spot_check_opened")!.attributes.bond!;
    const providerBefore = BigInt((await client.account(provider)).balance);
    const decided = await ok(judgeSecret, { kind: "task_spot_check_verdict", taskId: done, upheld: false, reason: "reproduces" });
    const decision = decided.events.find((e) => e.kind === "task_spot_check_decided")!.attributes;
    assert.equal(decision.outcome, "rejected");
    assert.equal(decision.bond_to, provider);
    assert.equal(BigInt((await client.account(provider)).balance), providerBefore + BigInt(bond));
    // A second spot check of the same task is refused with its reason token.
    const again = await send(verifierSecret, { kind: "task_spot_check", taskId: done, reason: "", evidence: "0x" });
    assert.ok(!again.success);
    assert.equal(again.reason, "spot_check_closed");
    const failed = await task();
    await assigned(failed);
    await ok(providerSecret, { kind: "task_start", taskId: failed });
    await ok(providerSecret, {
        kind: "task_report_failure",
        taskId: failed,
        exitCode: 137,
        error: "out of memory",
        durationMs: 30_000n,
    });
    await ok(devSecret, { kind: "task_cancel", taskId: await task() });

    // The verifier challenges the provider's attestation.
    await ok(verifierSecret, {
        kind: "challenge",
        provider,
        epoch,
        slot,
        reason: "benchmark does not reproduce",
        evidence: `0x${"bb".repeat(32)}`,
    });
    assert.equal(kinds.size, 16, [...kinds].join(", "));
});
