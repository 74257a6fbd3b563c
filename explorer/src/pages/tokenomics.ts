// Tokenomics: the emission state now, and per settled epoch the GFL supply, each provider's
// median, the DPS paid, the halvings and the reward pool, as charts and as a table.

import type { Schemas } from "@gridledger/client";

import { chart } from "../charts.js";
import { fields, h, section, table } from "../dom.js";
import { DPS_DECIMALS, GFL_DECIMALS, num, shortHex, toChart } from "../format.js";
import { blockLink } from "../links.js";
import { call, headHeight, listAll } from "../node.js";
import { pinned, title, type Page } from "../page.js";

/** provider → median (GFLOP/s) of each settled epoch, from the `provider_settled` events of the
 * system receipts that settled them. */
async function mediansByProvider(epochs: Schemas.EpochSettlement[]): Promise<Map<string, Map<string, string>>> {
    const blocks = new Map<string, Schemas.Event[]>();
    const medians = new Map<string, Map<string, string>>();
    for (const epoch of epochs) {
        let events = blocks.get(epoch.height);
        if (events === undefined) {
            events = (await call("block_get", { height: epoch.height })).system_receipt?.events ?? [];
            blocks.set(epoch.height, events);
        }
        for (const event of events) {
            const { provider, median } = event.attributes as Record<string, string | undefined>;
            if (event.kind !== "provider_settled" || event.attributes.epoch !== epoch.epoch || provider === undefined || median === undefined) {
                continue;
            }
            if (!medians.has(provider)) {
                medians.set(provider, new Map());
            }
            medians.get(provider)!.set(epoch.epoch, median);
        }
    }
    return medians;
}

export const tokenomicsPage: Page = async (main) => {
    const height = await headHeight();
    const t = await call("tokenomics_get", { height });
    const { items: epochs, truncated } = await listAll("epoch_list", { height });
    const medians = await mediansByProvider(epochs);
    const p = t.tokenomics;
    main.append(
        title("Tokenomics"),
        pinned(height),
        section(
            "Now",
            fields("emission", [
                ["GFL supply", num(t.gfl_supply, "gfl", "gfl_supply")],
                ["reward pool", num(t.reward_pool, "dps", "reward_pool")],
                ["halvings so far", num(t.halvings, "count", "halvings")],
                ["last halving", num(t.last_halving_ms, "time", "last_halving_ms")],
                ["GFL converted since it", num(t.converted_gfl, "gfl", "converted_gfl")],
                ["next epoch to settle", num(t.next_epoch, "count", "next_epoch")],
                ["genesis", num(t.genesis_time_ms, "time", "genesis_time_ms")],
            ]),
        ),
        section(
            "Parameters",
            fields("parameters", [
                ["epoch", num(p.epoch_ms, "ms", "epoch_ms")],
                ["slot", num(p.slot_ms, "ms", "slot_ms")],
                ["payout burn share", num(p.reward_share_bps, "bps", "reward_share_bps")],
                ["conversion rate (DPS base units per GFLOP/s, before halvings)", num(p.reward_rate, "count", "reward_rate")],
                ["halving period", num(p.halving_period_ms, "ms", "halving_period_ms")],
                ["halving threshold", num(p.halving_gfl_threshold, "gfl", "halving_gfl_threshold")],
                ["pool share of bills", num(p.pool_share_bps, "bps", "pool_share_bps")],
            ]),
        ),
    );
    const charts = section(`Per settled epoch (${epochs.length}${truncated ? ", the first ones only" : ""})`);
    main.append(charts);
    const x = epochs.map((e) => toChart(e.epoch));
    chart(charts, {
        name: "gfl-supply",
        title: "GFL supply after each settlement (the sum of the providers' medians)",
        x,
        xLabel: "epoch",
        yLabel: "GFL",
        series: [{ label: "GFL supply", values: epochs.map((e) => toChart(e.gfl_supply, GFL_DECIMALS)) }],
    });
    const providers = [...medians.keys()].sort();
    chart(charts, {
        name: "medians",
        title: "Each provider's median per epoch (the GFL it holds after the settlement)",
        x,
        xLabel: "epoch",
        yLabel: "GFL",
        series: providers.map((provider) => ({
            label: shortHex(provider),
            values: epochs.map((e) => {
                const median = medians.get(provider)!.get(e.epoch);
                return median === undefined ? null : toChart(median, GFL_DECIMALS);
            }),
        })),
    });
    chart(charts, {
        name: "dps-paid",
        title: "DPS paid per epoch (GFL burned for payouts, converted at the rate after halvings)",
        x,
        xLabel: "epoch",
        yLabel: "DPS",
        series: [{ label: "DPS paid", values: epochs.map((e) => toChart(e.dps_paid, DPS_DECIMALS)) }],
        style: "bars",
    });
    chart(charts, {
        name: "halvings",
        title: "Halvings after each settlement (each step halves the conversion rate)",
        x,
        xLabel: "epoch",
        yLabel: "halvings",
        series: [{ label: "halvings", values: epochs.map((e) => e.halvings) }],
        style: "steps",
    });
    chart(charts, {
        name: "reward-pool",
        title: "Reward pool over time (at each epoch's boundary)",
        x: epochs.map((e) => toChart(e.boundary_ms) / 1000),
        xLabel: "time",
        yLabel: "DPS",
        series: [{ label: "reward pool", values: epochs.map((e) => toChart(e.reward_pool, DPS_DECIMALS)) }],
        time: true,
    });
    main.append(
        section(
            "Settled epochs",
            table(
                "epochs",
                ["epoch", "boundary", "settled in", "providers", "GFL supply", "GFL burned (payout)", "GFL minted", "GFL burned (rebalance)", "DPS owed", "DPS paid", "DPS short", "halvings", "reward pool", "GFL converted"],
                epochs.map((e) => [
                    num(e.epoch, "count", "epoch"),
                    num(e.boundary_ms, "time", "boundary_ms"),
                    blockLink(e.height),
                    num(e.providers, "count", "providers"),
                    num(e.gfl_supply, "gfl", "gfl_supply"),
                    num(e.gfl_payout_burned, "gfl", "gfl_payout_burned"),
                    num(e.gfl_minted, "gfl", "gfl_minted"),
                    num(e.gfl_rebalance_burned, "gfl", "gfl_rebalance_burned"),
                    num(e.dps_owed, "dps", "dps_owed"),
                    num(e.dps_paid, "dps", "dps_paid"),
                    num(e.dps_shortfall, "dps", "dps_shortfall"),
                    h(
                        "span",
                        {},
                        num(e.halvings, "count", "halvings"),
                        e.halved_by_period || e.halved_by_threshold
                            ? ` (halved by ${[e.halved_by_period ? "period" : "", e.halved_by_threshold ? "threshold" : ""].filter(Boolean).join(" and ")})`
                            : "",
                    ),
                    num(e.reward_pool, "dps", "reward_pool"),
                    num(e.converted_gfl, "gfl", "converted_gfl"),
                ]),
            ),
        ),
    );
};
