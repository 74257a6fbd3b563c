// The SDK against a real GridLedger dev node (GRIDLEDGER_BIN names the node's binary): signs with
// the dev account's key, submits over JSON-RPC, and follows each transaction to its receipt.

import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import {
    addressOf,
    headHeight,
    HttpClient,
    publicKeyOf,
    RpcError,
    signingDomain,
    signTx,
    taskIdOf,
    type Hex,
    type Payload,
    type TxBody,
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

let dir = "";
let node: ChildProcess | undefined;
let client: HttpClient;
let devSecret: Hex;
let devAddress: Hex;
let domain: Uint8Array;
let fees: Record<string, bigint>;

before(async () => {
    dir = mkdtempSync(join(tmpdir(), "gridledger-sdk-"));
    const home = join(dir, "home");
    cli(home, ["init"]);
    const configPath = join(home, "config", "node.conf");
    const rpcPort = await freePort();
    const config = readFileSync(configPath, "utf8")
        .replace("admin_port = 8546", `admin_port = ${await freePort()}`)
        .replace("port = 8545", `port = ${rpcPort}`)
        .replace("port = 9464", `port = ${await freePort()}`)
        .replace("port = 26656", `port = ${await freePort()}`);
    writeFileSync(configPath, config);
    node = spawn(bin, ["start", "--home", home], { stdio: "ignore" });
    client = new HttpClient(`http://127.0.0.1:${rpcPort}/`);
    const deadline = Date.now() + 30_000;
    for (;;) {
        try {
            await client.nodeStatus();
            break;
        } catch (error) {
            assert.ok(Date.now() < deadline && node.exitCode === null, `the node did not start: ${error}`);
            await new Promise((resolve) => setTimeout(resolve, 100));
        }
    }
    devSecret = readFileSync(join(home, "keys", "dev.key"), "utf8").trim() as Hex;
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

/** A body from the dev account at its next nonce, with the kind's fee in force. */
async function devBody(payload: Payload): Promise<TxBody> {
    const account = await client.account(devAddress);
    return {
        chainId: (await client.nodeStatus()).chain_id,
        sender: publicKeyOf(devSecret),
        nonce: BigInt(account.nonce),
        validUntilHeight: (await headHeight(client)) + 1_000n,
        fee: fees[payload.kind]!,
        payload,
    };
}

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
    const task = await client.call<{ state: string; max_minutes: string }>("task_get", [id]);
    assert.equal(task.state, "cancelled");
    assert.equal(task.max_minutes, "45");
});

test("the node's refusals reach the caller with their reason", async () => {
    const body = await devBody({ kind: "transfer", to: devAddress.replace(/.$/, "0") as Hex, amount: 1n });
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
