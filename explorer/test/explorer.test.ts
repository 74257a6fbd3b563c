// The explorer in headless Chromium against a real dev node that carries an epoch run
// (test/chain.ts): each page shows the values the node returns at the height the page names, the
// charts hold one point per value, and a new block appears on the live page without a reload.
// Every expected value is read from the node's JSON-RPC here, never from the explorer's code.
// Screenshots of every page go to GRIDLEDGER_SCREENSHOTS.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { get } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { chromium, type BrowserContext, type Page } from "playwright-core";

import type { MethodName, Methods, Schemas } from "@gridledger/client";

import { Driver, runEpochs, startNode, type DevNode, type Run } from "./chain.js";

const here = dirname(fileURLToPath(import.meta.url));
const bin = process.env.GRIDLEDGER_BIN;
if (bin === undefined) {
    throw new Error("GRIDLEDGER_BIN must name the gridledger binary");
}
const explorerDir = resolve(process.env.GRIDLEDGER_EXPLORER_DIR ?? join(here, "..", "dist"));
const shots = resolve(process.env.GRIDLEDGER_SCREENSHOTS ?? join(here, "screenshots"));
const chromiumPath = process.env.GRIDLEDGER_CHROMIUM ?? "/usr/bin/chromium";

let dir = "";
let node: DevNode;
let driver: Driver;
let run: Run;
let context: BrowserContext;
let page: Page;
const problems: string[] = [];

before(async () => {
    dir = mkdtempSync(join(tmpdir(), "gridledger-explorer-"));
    mkdirSync(shots, { recursive: true });
    node = await startNode(bin, dir, explorerDir);
    driver = await Driver.connect(node);
    run = await runEpochs(node, driver);
    context = await chromium.launchPersistentContext(join(dir, "chromium-profile"), {
        executablePath: chromiumPath,
        headless: true,
        args: [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
        viewport: { width: 1280, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    // A script error, or anything the browser reports as an error (a refused request, a policy
    // violation), fails the page that caused it.
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
        if (message.type() === "error") {
            problems.push(message.text());
        }
    });
});

after(async () => {
    await context?.close();
    if (node !== undefined && node.process.exitCode === null) {
        const exited = new Promise((done) => node.process.once("exit", done));
        node.process.kill("SIGTERM");
        await exited;
    }
    rmSync(dir, { recursive: true, force: true });
});

const rpc = <M extends MethodName>(method: M, params: Methods[M]["params"]): Promise<Methods[M]["result"]> => node.client.request(method, params);

/** Loads `hash` afresh and waits until the page named `ready` has rendered; its pinned height. */
async function open(hash: string, ready: string): Promise<string> {
    await page.goto("about:blank");
    await page.goto(`http://127.0.0.1:${node.port}/explorer/#${hash}`);
    await page.waitForSelector(`main[data-ready="${ready}"]`, { timeout: 20_000 });
    assert.deepEqual(problems.splice(0), [], `errors on ${hash}`);
    await checkShownNumbers();
    return (await page.$eval('[data-field="pinned-height"]', (e) => (e as HTMLDataElement).value).catch(() => "")) || "";
}

async function screenshot(name: string): Promise<void> {
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

/** The chain's value of every `[data-field=field]` inside `scope`, in document order. */
function values(scope: string, field: string): Promise<string[]> {
    return page.$$eval(`${scope} [data-field="${field}"]`, (elements) =>
        elements.map((e) => (e instanceof HTMLDataElement ? e.value : (e.textContent ?? ""))),
    );
}

async function value(scope: string, field: string): Promise<string> {
    const all = await values(scope, field);
    assert.equal(all.length, 1, `${scope} ${field}: ${all.length} elements`);
    return all[0]!;
}

/** Decimal text (commas, an optional fraction) as an integer count of 10^-decimals. */
function unscale(text: string, decimals: number): bigint {
    const [whole = "", fraction = ""] = text.replace(/,/g, "").split(".");
    assert.ok(fraction.length <= decimals, text);
    return BigInt(whole + fraction.padEnd(decimals, "0"));
}

/** Every number on the page reads as the chain's value it carries: the text is that value. */
async function checkShownNumbers(): Promise<void> {
    const shown = await page.$$eval("data[data-unit]", (elements) =>
        elements.map((e) => ({ value: (e as HTMLDataElement).value, unit: e.getAttribute("data-unit")!, text: e.textContent ?? "" })),
    );
    for (const { value: raw, unit, text } of shown) {
        const what = `${text} for ${raw} (${unit})`;
        switch (unit) {
            case "dps":
                assert.ok(text.endsWith(" DPS"), what);
                assert.equal(unscale(text.slice(0, -4), 18), BigInt(raw), what);
                break;
            case "gfl":
                assert.ok(text.endsWith(" GFL"), what);
                assert.equal(unscale(text.slice(0, -4), 6), BigInt(raw), what);
                break;
            case "time":
                if (raw === "0") {
                    assert.equal(text, "—", what);
                } else {
                    assert.equal(BigInt(Date.parse(text.replace(" UTC", "Z").replace(" ", "T"))), (BigInt(raw) / 1000n) * 1000n, what);
                }
                break;
            default:
                assert.equal(unscale(text.replace(/ (GFLOP\/s|ms|bps)$/, ""), 0), BigInt(raw), what);
        }
    }
}

interface ChartData {
    points: number;
    series: (number | null)[][];
}

async function chartData(name: string): Promise<ChartData> {
    return page.$eval(`figure[data-chart="${name}"]`, (figure) => ({
        points: Number((figure as HTMLElement).dataset.points),
        series: JSON.parse((figure as HTMLElement).dataset.series ?? "[]"),
    }));
}

/** The chart holds exactly `expected` ([xs, ...ys]), floats within a rounding error. */
function assertSeries(name: string, chart: ChartData, expected: (number | null)[][]): void {
    assert.equal(chart.points, expected[0]!.length, `${name}: points`);
    assert.equal(chart.series.length, expected.length, `${name}: series`);
    expected.forEach((values, i) => {
        assert.equal(chart.series[i]!.length, values.length, `${name}: series ${i} length`);
        values.forEach((want, k) => {
            const got = chart.series[i]![k]!;
            if (want === null) {
                assert.equal(got, null, `${name}[${i}][${k}]`);
            } else {
                assert.ok(got !== null && Math.abs(got - want) <= 1e-9 * Math.max(1, Math.abs(want)), `${name}[${i}][${k}]: ${got} ≠ ${want}`);
            }
        });
    });
}

const scaled = (raw: string, decimals: number): number => Number(raw) / 10 ** decimals;

test("tokenomics: the emission state, every settled epoch and five charts with one point per epoch", async () => {
    const height = await open("/tokenomics", "tokenomics");
    const t = await rpc("tokenomics_get", { height });
    for (const key of ["gfl_supply", "reward_pool", "halvings", "last_halving_ms", "converted_gfl", "next_epoch", "genesis_time_ms"] as const) {
        assert.equal(await value('[data-table="emission"]', key), String(t[key]), key);
    }
    for (const [key, raw] of Object.entries(t.tokenomics)) {
        assert.equal(await value('[data-table="parameters"]', key), String(raw), key);
    }
    const epochs: Schemas.EpochSettlement[] = (await rpc("epoch_list", { height, limit: 1000 })).items;
    assert.ok(epochs.length >= 5, `${epochs.length} settled epochs`);
    for (const key of ["epoch", "boundary_ms", "providers", "gfl_supply", "gfl_payout_burned", "gfl_minted", "gfl_rebalance_burned", "dps_owed", "dps_paid", "dps_shortfall", "halvings", "reward_pool", "converted_gfl"] as const) {
        assert.deepEqual(await values('[data-table="epochs"]', key), epochs.map((e) => String(e[key])), key);
    }
    assert.ok(epochs.some((e) => BigInt(e.dps_paid) > 0n), "some DPS was paid");
    assert.ok(epochs.some((e) => e.halvings > 0), "a halving happened");

    const x = epochs.map((e) => Number(e.epoch));
    assertSeries("gfl-supply", await chartData("gfl-supply"), [x, epochs.map((e) => scaled(e.gfl_supply, 6))]);
    assertSeries("dps-paid", await chartData("dps-paid"), [x, epochs.map((e) => scaled(e.dps_paid, 18))]);
    assertSeries("halvings", await chartData("halvings"), [x, epochs.map((e) => e.halvings)]);
    assertSeries("reward-pool", await chartData("reward-pool"), [
        epochs.map((e) => Number(e.boundary_ms) / 1000),
        epochs.map((e) => scaled(e.reward_pool, 18)),
    ]);
    // Medians: the provider_settled events of the system receipts that settled each epoch.
    const medians = new Map<string, Map<string, string>>();
    for (const epoch of epochs) {
        const block = await rpc("block_get", { height: epoch.height });
        for (const event of block.system_receipt?.events ?? []) {
            if (event.kind === "provider_settled" && event.attributes.epoch === epoch.epoch) {
                const provider = String(event.attributes.provider);
                medians.set(provider, (medians.get(provider) ?? new Map()).set(epoch.epoch, String(event.attributes.median)));
            }
        }
    }
    assert.deepEqual([...medians.keys()].sort(), [...run.providers].sort(), "both providers settled");
    assertSeries("medians", await chartData("medians"), [
        x,
        ...[...medians.keys()].sort().map((p) => epochs.map((e) => {
            const median = medians.get(p)!.get(e.epoch);
            return median === undefined ? null : scaled(median, 6);
        })),
    ]);
    await screenshot("tokenomics");
});

test("providers: the list, and a provider's inventory, job counts and attestations per slot", async () => {
    let height = await open("/providers", "providers");
    const list = (await rpc("provider_list", { height })).items;
    assert.equal(list.length, 2);
    assert.deepEqual(await values('[data-table="providers"]', "status"), list.map((p) => p.status));
    assert.deepEqual(await values('[data-table="providers"]', "gfl_balance"), list.map((p) => p.gfl_balance));
    assert.deepEqual(await values('[data-table="providers"]', "settled"), list.map((p) => p.jobs.settled));
    await screenshot("providers");

    // The provider that ran the task, in an epoch where it attested every slot but one challenged.
    const task = await rpc("task_get", { id: run.taskId });
    const address = task.provider as `0x${string}`;
    height = await open(`/provider/${address}?epoch=2`, "provider");
    const provider = await rpc("provider_get", { address, height });
    assert.equal(await value('[data-table="provider"]', "status"), provider.status);
    assert.equal(await value('[data-table="provider"]', "gfl_balance"), provider.gfl_balance);
    for (const key of ["model", "count", "peak_gflops", "memory_bandwidth_gbps", "memory_capacity_gb", "power_watts"] as const) {
        assert.deepEqual(await values('[data-table="inventory"]', key), provider.inventory.devices.map((d) => String(d[key])), key);
    }
    for (const [job, count] of Object.entries(provider.jobs)) {
        assert.equal(await value('[data-table="jobs"]', job), count, job);
    }
    assert.equal(provider.jobs.settled, "1");
    const attestations = (await rpc("attestation_list", { provider: address, epoch: "2", height })).items;
    assert.equal(attestations.length, 3, "every slot of epoch 2 attested");
    assert.deepEqual(await values('[data-table="attestations"]', "gflops"), attestations.map((a) => a.gflops));
    assertSeries("attestations", await chartData("attestations"), [
        attestations.map((a) => Number(a.slot)),
        attestations.map((a) => Number(a.gflops)),
    ]);
    await screenshot("provider");
});

test("tasks: counts by state, and a settled task's timeline and bill", async () => {
    let height = await open("/tasks", "tasks");
    for (const state of ["pending", "assigned", "running", "result_submitted", "settled", "cancelled"]) {
        const count = (await rpc("task_list", { by: "state", key: state, height, limit: 1000 })).items.length;
        assert.equal(await value('[data-table="task-states"]', `count-${state}`), String(count), state);
    }
    await screenshot("tasks");

    // The search box finds the task by its id (no transaction has that hash).
    await page.fill('#search input[name="q"]', run.taskId);
    await page.press('#search input[name="q"]', "Enter");
    await page.waitForSelector('main[data-ready="task"]', { timeout: 20_000 });
    assert.equal(new URL(page.url()).hash, `#/task/${run.taskId}`);

    height = await open(`/task/${run.taskId}`, "task");
    const task = await rpc("task_get", { id: run.taskId, height });
    assert.equal(task.state, "settled");
    assert.equal(await value('[data-table="task"]', "state"), task.state);
    for (const key of ["escrow", "max_minutes", "rate_per_minute", "deposit", "min_gflops", "reported_ms"] as const) {
        assert.equal(await value('[data-table="task"]', key), task[key], key);
    }
    const steps = await page.$$eval('[data-table="history"] li', (items) => items.map((li) => li.getAttribute("data-to")));
    assert.deepEqual(steps, task.history.map((step) => step.to));
    assert.deepEqual(steps, ["assigned", "running", "result_submitted", "settled"]);
    // The bill: the settling transaction's task_transition event, found here from its block.
    const last = task.history[task.history.length - 1]!;
    const block = await rpc("block_get", { height: last.height });
    let ending: Schemas.Event | undefined;
    for (const hash of block.txs) {
        const tx = await rpc("tx_get", { hash });
        ending ??= tx.status === "committed" ? tx.receipt.events.find((e) => e.kind === "task_transition" && e.attributes.to === "settled") : undefined;
    }
    assert.ok(ending !== undefined);
    assert.ok(BigInt(String(ending.attributes.charged)) > 0n, "the run was billed");
    for (const key of ["escrow", "minutes", "charged", "to_pool", "to_provider", "refund", "deposit", "deposit_forfeit"]) {
        assert.equal(await value('[data-table="bill"]', key), String(ending.attributes[key]), key);
    }
    await screenshot("task");
});

test("validators, governance and an account show what the node returns", async () => {
    let height = await open("/validators", "validators");
    const set = await rpc("validator_getSet", { height });
    assert.equal(await value('[data-table="set"]', "version"), set.version);
    assert.deepEqual(await values('[data-table="validators"]', "name"), set.validators.map((v) => v.name));
    await screenshot("validators");

    height = await open("/proposals", "proposals");
    const proposals = (await rpc("proposal_list", { height })).items;
    assert.equal(proposals.length, 2, "one admission per provider");
    assert.deepEqual(await values('[data-table="proposals"]', "id"), proposals.map((p) => p.id));
    assert.deepEqual(await values('[data-table="proposals"]', "status"), proposals.map((p) => p.status));
    assert.deepEqual(await values('[data-table="proposals"]', "yes"), proposals.map((p) => String(p.yes.length)));
    await screenshot("proposals");

    const consumer = (await rpc("task_get", { id: run.taskId })).consumer;
    height = await open(`/account/${consumer}`, "account");
    const account = await rpc("account_get", { address: consumer, height });
    assert.equal(await value('[data-table="account"]', "balance"), account.balance);
    assert.equal(await value('[data-table="account"]', "nonce"), account.nonce);
    const created = (await rpc("task_list", { by: "consumer", key: consumer, height })).items;
    assert.deepEqual(await values('[data-table="tasks"]', "state"), created.map((task) => task.state));
    assert.deepEqual(created.map((task) => task.state).sort(), ["cancelled", "running", "settled"]);
    await screenshot("account");
});

test("blocks: the latest blocks, then a new block and its transaction appear without a reload", async () => {
    await open("/", "blocks");
    const head = await page.$eval('[data-field="head-height"]', (e) => (e as HTMLDataElement).value);
    const shown = await page.$$eval('[data-table="blocks"] tbody tr', (rows) => rows.map((r) => r.getAttribute("data-height")));
    const expected = (await rpc("block_list", { from: String(BigInt(head) - 19n), to: head, height: head })).items.map((b) => b.height).reverse();
    assert.deepEqual(shown, expected);
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    const receipt = await driver.transfer(node.devSecret);
    await page.waitForSelector(`[data-table="blocks"] tr[data-height="${receipt.height}"]`, { timeout: 15_000 });
    await page.waitForSelector(`[data-table="transactions"] tr[data-tx="${receipt.tx_hash}"]`, { timeout: 15_000 });
    assert.ok(BigInt(await page.$eval('[data-field="head-height"]', (e) => (e as HTMLDataElement).value)) >= BigInt(receipt.height));
    assert.equal(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true, "the page was not reloaded");
    await checkShownNumbers();
    assert.deepEqual(problems.splice(0), [], "errors on the live page");
    await screenshot("blocks");

    await open(`/block/${receipt.height}`, "block");
    const block = await rpc("block_get", { height: receipt.height });
    assert.equal(await value('[data-table="header"]', "tx_count"), String(block.header.tx_count));
    assert.equal(await value('[data-table="header"]', "timestamp_ms"), block.header.timestamp_ms);
    await open(`/tx/${receipt.tx_hash}`, "tx");
    assert.equal(await value('[data-table="tx"]', "fee"), receipt.fee);
    assert.deepEqual(await page.$$eval('[data-table="events"] tbody code', (codes) => codes.map((c) => c.textContent)), receipt.events.map((e) => e.kind));
    await screenshot("transaction");
});

test("the node serves the explorer with content types and refuses paths out of its directory", async () => {
    const base = `http://127.0.0.1:${node.port}/explorer/`;
    const index = await fetch(base);
    assert.equal(index.status, 200);
    assert.match(index.headers.get("content-type") ?? "", /^text\/html/);
    const script = await fetch(`${base}explorer.js`);
    assert.match(script.headers.get("content-type") ?? "", /^text\/javascript/);
    const css = await fetch(`${base}explorer.css`);
    assert.match(css.headers.get("content-type") ?? "", /^text\/css/);
    // Sent as written: a URL parser (fetch's included) would resolve the dot segments first.
    for (const path of ["/explorer/%2e%2e/config/node.conf", "/explorer/../config/node.conf"]) {
        const status = await new Promise<number | undefined>((done, fail) =>
            get({ host: "127.0.0.1", port: node.port, path }, (answer) => {
                answer.resume();
                done(answer.statusCode);
            }).on("error", fail),
        );
        assert.equal(status, 400, path);
    }
});
