// What every page shares: the height it was read at, and a way to stop what a live page runs.

import { h } from "./dom.js";
import { num } from "./format.js";

/** Renders a page into `main`; may return what stops it (a live subscription) when the reader leaves. */
export type Page = (main: HTMLElement, args: string[], query: URLSearchParams) => Promise<(() => void) | void>;

/** The line that says which executed height a page shows. */
export function pinned(height: string): HTMLElement {
    return h(
        "p",
        { class: "pinned" },
        "Read at executed height ",
        num(height, "count", "pinned-height"),
        "; every number on this page is the chain's at that height.",
    );
}

export function title(text: string, ...rest: (Node | string)[]): HTMLElement {
    return h("h1", {}, text, ...rest);
}
