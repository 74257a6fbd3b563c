// Charts (uPlot). Each chart is a <figure data-chart="name"> whose data-points and data-series
// attributes tell what uPlot holds: the number of x values, and [xs, ...ys] as JSON.

import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

import { h } from "./dom.js";

export interface Series {
    label: string;
    values: (number | null)[];
}

export interface ChartSpec {
    name: string;
    title: string;
    /** The x values: epochs or slots, or times in seconds when `time`. */
    x: number[];
    xLabel: string;
    yLabel: string;
    series: Series[];
    time?: boolean;
    /** How the values are joined: straight lines (the default), steps, or bars. */
    style?: "line" | "steps" | "bars";
}

const COLOURS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563"];

function pathsFor(style: ChartSpec["style"]): uPlot.Series.PathBuilder | undefined {
    const { stepped, bars } = uPlot.paths;
    if (style === "steps" && stepped !== undefined) {
        return stepped({ align: 1 });
    }
    if (style === "bars" && bars !== undefined) {
        return bars({ size: [0.6, 40] });
    }
    return undefined;
}

/** Draws `spec` into a new figure appended to `parent`; returns the figure. */
export function chart(parent: HTMLElement, spec: ChartSpec): HTMLElement {
    const plot = h("div", { class: "plot" });
    const figure = h("figure", { "data-chart": spec.name }, h("figcaption", {}, spec.title), plot);
    parent.append(figure);
    if (spec.x.length === 0) {
        figure.dataset.points = "0";
        figure.dataset.series = JSON.stringify([[], ...spec.series.map(() => [])]);
        plot.append(h("p", { class: "empty" }, "Nothing yet."));
        return figure;
    }
    const paths = pathsFor(spec.style);
    const options: uPlot.Options = {
        width: Math.max(320, Math.min(1040, parent.clientWidth || 1040)),
        height: 260,
        scales: {
            x: {
                time: spec.time ?? false,
                // Bars get half a step of room on each side.
                ...(spec.style === "bars" ? { range: (_u: uPlot, min: number, max: number): uPlot.Range.MinMax => [min - 0.5, max + 0.5] } : {}),
            },
            // Bars and steps are counts and amounts from zero.
            ...(spec.style === undefined || spec.style === "line" ? {} : { y: { range: (_u: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, max > 0 ? max * 1.1 : 1] } }),
        },
        axes: [
            // Epochs and slots are whole numbers: no ticks between them.
            spec.time ? { label: spec.xLabel } : { label: spec.xLabel, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] },
            { label: spec.yLabel, size: 100 },
        ],
        legend: { live: false },
        series: [
            { label: spec.xLabel },
            ...spec.series.map((series, i) => ({
                label: series.label,
                stroke: COLOURS[i % COLOURS.length]!,
                width: 2,
                ...(spec.style === "bars" ? { fill: `${COLOURS[i % COLOURS.length]!}99` } : {}),
                ...(paths === undefined ? {} : { paths }),
                points: { show: true, size: 6 },
            })),
        ],
    };
    const data: uPlot.AlignedData = [spec.x, ...spec.series.map((series) => series.values)];
    const drawn = new uPlot(options, data, plot);
    figure.dataset.points = String(drawn.data[0].length);
    figure.dataset.series = JSON.stringify(drawn.data.map((values) => Array.from(values)));
    return figure;
}
