// Compute providers: the list, and one provider's inventory, job counts and attestations per slot.

import type { Schemas } from "@gridledger/client";

import { chart } from "../charts.js";
import { fields, h, section, table } from "../dom.js";
import { num, toChart } from "../format.js";
import { accountLink, blockLink, hex, link, providerLink, route } from "../links.js";
import { call, headHeight, listAll } from "../node.js";
import { pinned, title, type Page } from "../page.js";

function deviceCount(inventory: Schemas.Inventory): string {
    return inventory.devices.reduce((sum, d) => sum + BigInt(d.count), 0n).toString();
}

export const providersPage: Page = async (main) => {
    const height = await headHeight();
    const { items } = await listAll("provider_list", { height });
    main.append(
        title("Providers"),
        pinned(height),
        table(
            "providers",
            ["address", "status", "devices", "models", "categories", "GFL balance", "tasks assigned", "tasks settled"],
            items.map((p) => [
                providerLink(p.address),
                h("span", { "data-field": "status" }, p.status),
                num(deviceCount(p.inventory), "count", "devices"),
                p.inventory.devices.map((d) => d.model).join(", "),
                p.inventory.categories.join(", "),
                num(p.gfl_balance, "gfl", "gfl_balance"),
                num(p.jobs.assigned, "count", "assigned"),
                num(p.jobs.settled, "count", "settled"),
            ]),
        ),
    );
};

const JOBS: (keyof Schemas.ProviderJobs)[] = [
    "assigned",
    "started",
    "refused",
    "claim_timeouts",
    "settled",
    "rejected",
    "failed",
    "out_of_credits",
    "panicked",
    "cancelled",
];

export const providerPage: Page = async (main, [address = ""], query) => {
    const head = await call("chain_getHead", {});
    const height = head.height;
    const provider = await call("provider_get", { address: address as `0x${string}`, height });
    const t = await call("tokenomics_get", { height });
    const since = BigInt(head.header.timestamp_ms) - BigInt(t.genesis_time_ms);
    const current = since < 0n ? 0n : since / BigInt(t.tokenomics.epoch_ms);
    const epoch = query.get("epoch") ?? current.toString();
    const { items: attestations } = await listAll("attestation_list", { provider: provider.address, epoch, height });
    const inventory = provider.inventory;
    main.append(
        title("Provider ", hex(provider.address)),
        pinned(height),
        fields("provider", [
            ["account", accountLink(provider.address)],
            ["status", h("span", { "data-field": "status" }, provider.status)],
            ["registered at", blockLink(provider.registered_height)],
            ["status since", blockLink(provider.status_height)],
            ["GFL balance", num(provider.gfl_balance, "gfl", "gfl_balance")],
            ["labels", inventory.labels.map((l) => `${l.key}=${l.value}`).join(", ") || "—"],
            ["categories", inventory.categories.join(", ")],
        ]),
        section(
            "Inventory",
            table(
                "inventory",
                ["model", "count", "peak GFLOP/s", "memory bandwidth (GB/s)", "memory (GB)", "features", "power (W)"],
                inventory.devices.map((d) => [
                    h("span", { "data-field": "model" }, d.model),
                    num(d.count, "count", "count"),
                    num(d.peak_gflops, "gflops", "peak_gflops"),
                    num(d.memory_bandwidth_gbps, "count", "memory_bandwidth_gbps"),
                    num(d.memory_capacity_gb, "count", "memory_capacity_gb"),
                    d.features.join(", "),
                    num(d.power_watts, "count", "power_watts"),
                ]),
            ),
        ),
        section("Job counts", fields("jobs", JOBS.map((job) => [job.replace(/_/g, " "), num(provider.jobs[job], "count", job)]))),
    );
    const epochs = h(
        "p",
        { class: "epochs" },
        BigInt(epoch) > 0n ? link(route.provider(provider.address, (BigInt(epoch) - 1n).toString()), "← previous epoch") : "",
        " Epoch ",
        num(epoch, "count", "epoch"),
        ", slots of ",
        num(t.tokenomics.slot_ms, "ms", "slot_ms"),
        " ",
        BigInt(epoch) < current ? link(route.provider(provider.address, (BigInt(epoch) + 1n).toString()), "next epoch →") : "",
    );
    const attested = section(`Attestations in epoch ${epoch}`, epochs);
    main.append(attested);
    chart(attested, {
        name: "attestations",
        title: `Attested GFLOP/s per slot, epoch ${epoch} (a slot left out or challenged counts 0 in the median)`,
        x: attestations.map((a) => toChart(a.slot)),
        xLabel: "slot",
        yLabel: "GFLOP/s",
        series: [{ label: "attested", values: attestations.map((a) => toChart(a.gflops)) }],
        style: "bars",
    });
    attested.append(
        table(
            "attestations",
            ["slot", "block", "time", "category", "devices", "GFLOP/s", "challenged"],
            attestations.map((a) => [
                num(a.slot, "count", "slot"),
                blockLink(a.height),
                num(a.timestamp_ms, "time"),
                a.category,
                a.devices.map((d) => `${d.model} × ${d.count}`).join(", "),
                num(a.gflops, "gflops", "gflops"),
                a.challenged ? h("span", {}, "by ", accountLink(a.challenger), `: ${a.challenge_reason}`) : "no",
            ]),
        ),
    );
};
