// A dev node carrying an epoch run, for the explorer's browser tests: a genesis with a fixed block
// time and short epochs, two providers admitted by governance that attest slot by slot, a
// verifier's challenge, a task run to its settlement, and several epochs settled.
//
// The chain moves only for a transaction (long empty-block and round intervals): each transaction makes
// its block and the block that certifies it, so the next one lands at the executed head + 2, and
// that height alone gives its timestamp (genesis + height × block time), epoch and slot.

import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

import {
    addressOf,
    HttpClient,
    publicKeyOf,
    signTx,
    taskIdOf,
    type Device,
    type Hex,
    type Payload,
    type Receipt,
} from "@gridledger/client";

/** A minute a block, so that a task runs for minutes and its bill charges them. */
export const BLOCK_MS = 60_000n;
/** Six blocks a slot: two providers' attestations and one other transaction. */
export const SLOT_MS = 6n * BLOCK_MS;
export const SLOTS = 3n;
export const EPOCH_MS = SLOT_MS * SLOTS;
/** Epochs 0 … LAST_EPOCH are settled by the end of the run. */
export const LAST_EPOCH = 4n;

export const providerSecrets: Hex[] = [`0x${"11".repeat(32)}`, `0x${"22".repeat(32)}`];
export const verifierSecret: Hex = `0x${"33".repeat(32)}`;
const sink = addressOf(publicKeyOf(`0x${"44".repeat(32)}`));

/** Provider 0: 8 devices at every reference maximum; provider 1: 4 at half the bandwidth. */
const inventories: Device[] = [
    { model: "gpu-a", count: 8n, peakGflops: 312_000n, memoryBandwidthGbps: 4_000n, memoryCapacityGb: 80n, features: ["tensor_cores"], powerWatts: 700n, factors: [] },
    { model: "gpu-b", count: 4n, peakGflops: 989_000n, memoryBandwidthGbps: 2_000n, memoryCapacityGb: 80n, features: ["tensor_cores"], powerWatts: 700n, factors: [] },
];
const deviceCount = (p: number, e: bigint, s: bigint): bigint => (p === 0 ? 1n + ((5n * e + 3n * s) % 8n) : 1n + ((e + 2n * s) % 4n));
/** Slots a provider leaves out, so that medians and supply move. */
const misses = (p: number, e: bigint, s: bigint): boolean => p === 1 && e === 3n && s === 0n;

function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const server = createServer();
        server.listen(0, "127.0.0.1", () => {
            const address = server.address();
            server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))));
        });
    });
}

function cli(bin: string, home: string, args: string[]): string {
    const run = spawnSync(bin, [...args, "--home", home], { encoding: "utf8", timeout: 60_000 });
    assert.equal(run.status, 0, `gridledger ${args.join(" ")}: ${run.stderr}`);
    return run.stdout;
}

export interface DevNode {
    process: ChildProcess;
    port: number;
    client: HttpClient;
    home: string;
    genesisMs: bigint;
    devSecret: Hex;
}

/** Initialises a home in `dir` with the run's genesis, serving `explorerDir`, and starts it. */
export async function startNode(bin: string, dir: string, explorerDir: string): Promise<DevNode> {
    const home = join(dir, "home");
    cli(bin, home, ["init", "--chain-id", "explorer-test"]);
    const genesisPath = join(home, "config", "genesis.json");
    const genesis = JSON.parse(readFileSync(genesisPath, "utf8"));
    // A day back, whole minutes: the stamps (a minute a block) stay behind the clock.
    const genesisMs = BigInt(Math.floor((Date.now() - 86_400_000) / 60_000) * 60_000);
    genesis.genesis_time_ms = genesisMs.toString();
    Object.assign(genesis.consensus, {
        block_time_ms: BLOCK_MS.toString(),
        empty_block_interval_ms: "3600000",
        round_timeout_ms: "7200000",
    });
    Object.assign(genesis.tokenomics, {
        epoch_ms: EPOCH_MS.toString(),
        slot_ms: SLOT_MS.toString(),
        halving_period_ms: (2n * EPOCH_MS).toString(),
        halving_gfl_threshold: "3000000",
    });
    genesis.verifiers = [addressOf(publicKeyOf(verifierSecret))];
    for (const secret of [...providerSecrets, verifierSecret]) {
        genesis.accounts.push({ address: addressOf(publicKeyOf(secret)), balance: "1000000000000000000" });
    }
    writeFileSync(genesisPath, JSON.stringify(genesis));

    const configPath = join(home, "config", "node.conf");
    const template = readFileSync(configPath, "utf8");
    // A port found free may be taken by another process before the node binds it: the node then
    // exits at once, and the start is tried again on other ports.
    for (let attempt = 1; ; ++attempt) {
        const port = await freePort();
        const config = template
            .replace("admin_port = 8546", `admin_port = ${await freePort()}`)
            .replace("port = 8545", `port = ${port}`)
            .replace("port = 9464", `port = ${await freePort()}`)
            .replace("port = 26656", `port = ${await freePort()}`)
            .replace(/^explorer_dir =.*$/m, `explorer_dir = ${explorerDir}`);
        assert.match(config, /^explorer_dir = \//m);
        writeFileSync(configPath, config);
        const node = spawn(bin, ["start", "--home", home], { stdio: ["ignore", "ignore", "pipe"] });
        let stderr = "";
        node.stderr!.on("data", (chunk: Buffer) => {
            stderr += chunk.toString();
            process.stderr.write(chunk);
        });
        const client = new HttpClient(`http://127.0.0.1:${port}/`);
        if (await serving(client, node)) {
            const devSecret = readFileSync(join(home, "keys", "dev.key"), "utf8").trim() as Hex;
            return { process: node, port, client, home, genesisMs, devSecret };
        }
        node.kill("SIGKILL");
        assert.ok(attempt < 3 && node.exitCode !== null, `the node did not start: ${stderr}`);
    }
}

/** Waits until the node answers, false when it exited first or did not answer within 30 s. */
async function serving(client: HttpClient, node: ChildProcess): Promise<boolean> {
    const deadline = Date.now() + 30_000;
    while (node.exitCode === null && Date.now() < deadline) {
        try {
            await client.nodeStatus();
            return true;
        } catch {
            await new Promise((resolve) => setTimeout(resolve, 100));
        }
    }
    return false;
}

/** Sends one transaction at a time, each at the height it must land at. */
export class Driver {
    private readonly nonces = new Map<string, bigint>();

    private constructor(
        private readonly node: DevNode,
        private readonly chainId: string,
        private readonly domain: Uint8Array,
        private readonly fees: Record<string, bigint>,
    ) {}

    static async connect(node: DevNode): Promise<Driver> {
        const status = await node.client.nodeStatus();
        return new Driver(node, status.chain_id, await node.client.signingDomain(), await node.client.fees());
    }

    /** Where the next transaction lands: genesis + 1, else the executed head + 2. */
    async nextHeight(): Promise<bigint> {
        const head = await this.node.client.request("chain_getHead", {});
        const height = BigInt(head.height);
        assert.equal(BigInt(head.header.timestamp_ms), this.node.genesisMs + height * BLOCK_MS, "fixed block time");
        return height === 0n ? 1n : height + 2n;
    }

    /** Signs `payload` with `secret`, submits it and waits for its receipt: a success at `at`. */
    async send(secret: Hex, payload: Payload, at?: bigint): Promise<Receipt> {
        const height = at ?? (await this.nextHeight());
        const sender = publicKeyOf(secret);
        const address = addressOf(sender);
        const nonce = this.nonces.get(address) ?? BigInt((await this.node.client.account(address)).nonce);
        this.nonces.set(address, nonce + 1n);
        const tx = signTx({ chainId: this.chainId, sender, nonce, validUntilHeight: height + 100n, fee: this.fees[payload.kind]!, payload }, secret, this.domain);
        await this.node.client.submit(tx);
        const receipt = await this.node.client.waitForReceipt(tx.hash, 30_000, 5);
        assert.ok(receipt.success, `${payload.kind}: ${receipt.reason}`);
        assert.equal(BigInt(receipt.height), height, `${payload.kind} landed at another height`);
        return receipt;
    }

    /** A transfer from the dev account that only moves the chain on. */
    transfer(from: Hex, at?: bigint): Promise<Receipt> {
        return this.send(from, { kind: "transfer", to: sink, amount: 1n }, at);
    }
}

interface TaskPlan {
    id?: Hex;
    /** What is still to be done, in order, once the task is created. */
    steps: ("start" | "submit" | "verify" | "cancel")[];
}

/**
 * Sends the next transaction of `plan` at `at` and returns true, or returns false when its next
 * step must wait (a start waits for the chain to assign the task).
 */
async function taskStep(node: DevNode, driver: Driver, plan: TaskPlan, consumer: Hex, at: bigint): Promise<boolean> {
    if (plan.id === undefined) {
        const nonce = BigInt((await node.client.account(consumer)).nonce);
        await driver.send(
            node.devSecret,
            { kind: "task_create", category: "ml_training", minGflops: 1_000_000n, constraints: [], maxMinutes: 60n, specHash: `0x${"cd".repeat(32)}` },
            at,
        );
        plan.id = taskIdOf(consumer, nonce);
        return true;
    }
    const task = await node.client.request("task_get", { id: plan.id });
    const worker = providerSecrets[providerSecrets.map((secret) => addressOf(publicKeyOf(secret))).indexOf(task.provider as Hex)];
    const taskId = plan.id;
    switch (plan.steps[0]) {
        case "start":
            if (task.state !== "assigned" || worker === undefined) {
                return false;
            }
            await driver.send(worker, { kind: "task_start", taskId }, at);
            break;
        case "submit":
            await driver.send(
                worker!,
                { kind: "task_submit_result", taskId, resultHash: `0x${"ef".repeat(32)}`, outputUri: "s3://results/explorer-test", exitCode: 0, durationMs: 2_700_000n },
                at,
            );
            break;
        case "verify":
            await driver.send(node.devSecret, { kind: "task_verify", taskId, accept: true, reason: "" }, at);
            break;
        case "cancel":
            await driver.send(node.devSecret, { kind: "task_cancel", taskId }, at);
            break;
        case undefined:
            return false;
    }
    plan.steps.shift();
    return true;
}

/** What the run did that the tests look up. */
export interface Run {
    providers: Hex[];
    taskId: Hex;
}

/** Registers and admits the providers, then attests every slot (but the misses), challenges one
 * attestation, runs a task to its settlement, until epochs 0 … LAST_EPOCH are settled. */
export async function runEpochs(node: DevNode, driver: Driver): Promise<Run> {
    const validatorSecret = readFileSync(join(node.home, "keys", "validator-account.key"), "utf8").trim() as Hex;
    const providers = providerSecrets.map((secret) => addressOf(publicKeyOf(secret)));
    for (const [p, secret] of providerSecrets.entries()) {
        await driver.send(secret, {
            kind: "register_provider",
            devices: [inventories[p]!],
            labels: [{ key: "region", value: p === 0 ? "eu" : "us" }],
            categories: ["ml_training"],
        });
    }
    for (const provider of providers) {
        const proposed = await driver.send(validatorSecret, { kind: "propose", action: { kind: "admit_provider", provider } });
        const id = proposed.events.find((e) => e.kind === "proposal_created")!.attributes.id!;
        await driver.send(validatorSecret, { kind: "vote", proposalId: BigInt(id), approve: true });
    }

    const dev = addressOf(publicKeyOf(node.devSecret));
    const attested = new Set<string>();
    // Three tasks, one after the other: one run to its settlement, one left running, one
    // cancelled before it starts.
    const plans: TaskPlan[] = [{ steps: ["start", "submit", "verify"] }, { steps: ["start"] }, { steps: ["cancel"] }];
    let challenged = false;
    for (let sent = 0; ; ++sent) {
        assert.ok(sent < 500, "the run did not settle its epochs");
        const t = await node.client.request("tokenomics_get", {});
        const plan = plans.find((p) => p.id === undefined || p.steps.length > 0);
        if (BigInt(t.next_epoch) > LAST_EPOCH && plan === undefined) {
            break;
        }
        const at = await driver.nextHeight();
        const offset = at * BLOCK_MS;
        const e = offset / EPOCH_MS;
        const s = (offset % EPOCH_MS) / SLOT_MS;
        const due = [0, 1].find((p) => !misses(p, e, s) && !attested.has(`${p}/${e}/${s}`));
        if (due !== undefined) {
            await driver.send(
                providerSecrets[due]!,
                {
                    kind: "attest",
                    epoch: e,
                    slot: s,
                    category: "ml_training",
                    devices: [{ model: inventories[due]!.model, count: deviceCount(due, e, s) }],
                    powerWatts: 700n * deviceCount(due, e, s),
                    renewableShareBps: 5_000,
                    evidence: [],
                },
                at,
            );
            attested.add(`${due}/${e}/${s}`);
        } else if (!challenged && e === 2n && s === 2n) {
            await driver.send(
                verifierSecret,
                { kind: "challenge", provider: providers[0]!, epoch: e, slot: 1n, reason: "benchmark does not reproduce", evidence: `0x${"bb".repeat(32)}` },
                at,
            );
            challenged = true;
        } else if (plan === undefined || e < 1n || !(await taskStep(node, driver, plan, dev, at))) {
            await driver.transfer(node.devSecret, at);
        }
    }
    const settled = plans[0]!.id!;
    return { providers, taskId: settled };
}
