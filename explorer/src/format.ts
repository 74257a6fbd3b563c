// How the chain's numbers are shown. Each is an exact rendering of the decimal string the node
// returned, inside a <data> element whose value is that string unchanged.

import { h } from "./dom.js";

/** 10^18 base units are 1 DPS. */
export const DPS_DECIMALS = 18;
/** GFL amounts are GFLOP/s: 10^6 are 1 GFL. */
export const GFL_DECIMALS = 6;

/** A non-negative decimal integer string with thousands separated by commas. */
export function grouped(digits: string): string {
    return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** `raw` (a decimal integer string) divided by 10^decimals, exactly, without trailing zeros. */
export function scaled(raw: string, decimals: number): string {
    const digits = raw.replace(/^0+(?=\d)/, "").padStart(decimals + 1, "0");
    const whole = digits.slice(0, digits.length - decimals);
    const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
    return fraction === "" ? grouped(whole) : `${grouped(whole)}.${fraction}`;
}

export type Unit = "count" | "dps" | "gfl" | "gflops" | "ms" | "time" | "bps";

/** The text of `raw` in `unit`. */
export function show(raw: string, unit: Unit): string {
    switch (unit) {
        case "count":
            return grouped(raw);
        case "dps":
            return `${scaled(raw, DPS_DECIMALS)} DPS`;
        case "gfl":
            return `${scaled(raw, GFL_DECIMALS)} GFL`;
        case "gflops":
            return `${grouped(raw)} GFLOP/s`;
        case "ms":
            return `${grouped(raw)} ms`;
        case "bps":
            return `${grouped(raw)} bps`;
        case "time":
            return raw === "0" ? "—" : new Date(Number(raw)).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
    }
}

/** A number from the chain: shown in `unit`, carried unchanged as the element's value. */
export function num(raw: string | number, unit: Unit = "count", field?: string): HTMLDataElement {
    const text = String(raw);
    return h("data", { value: text, "data-field": field, "data-unit": unit }, show(text, unit));
}

/** `raw` divided by 10^decimals as a float, for charts only. */
export function toChart(raw: string, decimals = 0): number {
    return Number(raw) / 10 ** decimals;
}

/** A hash or address shortened for tables; the whole value stays in the title. */
export function shortHex(hex: string): string {
    return hex.length <= 14 ? hex : `${hex.slice(0, 8)}…${hex.slice(-6)}`;
}
