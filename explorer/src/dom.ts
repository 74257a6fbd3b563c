// Building the page: elements from tags, attributes and children. Text from the chain always goes
// in as text nodes, never as markup.

export type Child = Node | string | null | undefined | false;
export type Attributes = Record<string, string | number | boolean | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
    tag: K,
    attributes: Attributes = {},
    ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
        if (value === undefined || value === false) {
            continue;
        }
        element.setAttribute(name, value === true ? "" : String(value));
    }
    append(element, ...children);
    return element;
}

export function append(parent: Element, ...children: (Child | Child[])[]): void {
    for (const child of children.flat()) {
        if (child === null || child === undefined || child === false) {
            continue;
        }
        parent.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
}

/** A table with a header row and one row per item. */
export function table(name: string, headings: string[], rows: Child[][]): HTMLTableElement {
    return h(
        "table",
        { "data-table": name },
        h("thead", {}, h("tr", {}, headings.map((heading) => h("th", {}, heading)))),
        h(
            "tbody",
            {},
            rows.map((cells) => h("tr", {}, cells.map((cell) => h("td", {}, cell)))),
        ),
    );
}

/** A two-column table of named values: one row per field. */
export function fields(name: string, rows: [string, Child][]): HTMLTableElement {
    return h(
        "table",
        { class: "fields", "data-table": name },
        h(
            "tbody",
            {},
            rows.map(([label, value]) => h("tr", {}, h("th", {}, label), h("td", {}, value))),
        ),
    );
}

export function section(title: string, ...children: (Child | Child[])[]): HTMLElement {
    return h("section", {}, h("h2", {}, title), ...children);
}
