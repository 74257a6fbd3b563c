// Tasks: how many are in each state, every task, and one task's timeline and bill.

import type { Schemas } from "@gridledger/client";

import { fields, h, section, table } from "../dom.js";
import { num } from "../format.js";
import { accountLink, blockLink, hex, link, route, taskLink } from "../links.js";
import { call, headHeight, listAll } from "../node.js";
import { pinned, title, type Page } from "../page.js";
import { eventsTable } from "./events.js";

/** Every task state (docs/tasks.md), hot ones first. */
export const TASK_STATES = [
    "pending",
    "assigned",
    "running",
    "result_submitted",
    "settled",
    "rejected",
    "failed",
    "cancelled",
    "out_of_credits",
    "panicked",
    "expired",
] as const;
const HOT = new Set<string>(["pending", "assigned", "running", "result_submitted"]);

export function taskRows(tasks: Schemas.Task[]): (Node | string)[][] {
    return tasks.map((task) => [
        taskLink(task.id),
        h("span", { "data-field": "state" }, task.state),
        accountLink(task.consumer),
        accountLink(task.provider),
        task.category,
        num(task.max_minutes, "count", "max_minutes"),
        num(task.escrow, "dps", "escrow"),
        blockLink(task.created_height),
    ]);
}

export const TASK_HEADINGS = ["id", "state", "consumer", "provider", "category", "max minutes", "escrow", "created at"];

export const tasksPage: Page = async (main) => {
    const height = await headHeight();
    const byState = await Promise.all(TASK_STATES.map((state) => listAll("task_list", { by: "state", key: state, height })));
    const all = byState.flatMap((list) => list.items);
    main.append(
        title("Tasks"),
        pinned(height),
        section(
            "By state",
            table(
                "task-states",
                ["state", "tasks"],
                TASK_STATES.map((state, i) => [h("span", { "data-state": state }, state), num(byState[i]!.items.length, "count", `count-${state}`)]),
            ),
        ),
        section("Every task", table("tasks", TASK_HEADINGS, taskRows(all))),
    );
};

/** The receipt event of the transition that ended `task`, from its block. */
async function endingEvent(task: Schemas.Task): Promise<Schemas.Event | undefined> {
    const last = task.history[task.history.length - 1];
    if (last === undefined || HOT.has(task.state)) {
        return undefined;
    }
    const block = await call("block_get", { height: last.height });
    const receipts: Schemas.Receipt[] = block.system_receipt === undefined ? [] : [block.system_receipt];
    for (const hash of block.txs) {
        const tx = await call("tx_get", { hash });
        if (tx.status === "committed") {
            receipts.push(tx.receipt);
        }
    }
    return receipts
        .flatMap((receipt) => receipt.events)
        .find((e) => e.kind === "task_transition" && e.attributes.task === task.id && e.attributes.to === task.state);
}

const BILL = ["escrow", "minutes", "charged", "to_pool", "to_provider", "refund", "deposit", "deposit_forfeit"] as const;

export const taskPage: Page = async (main, [id = ""]) => {
    const height = await headHeight();
    const task = await call("task_get", { id: id as `0x${string}`, height });
    const ending = await endingEvent(task);
    main.append(
        title("Task ", hex(task.id)),
        pinned(height),
        fields("task", [
            ["state", h("span", { "data-field": "state" }, task.state)],
            ["consumer", accountLink(task.consumer)],
            ["provider", accountLink(task.provider)],
            ["category", task.category],
            ["min GFLOP/s", num(task.min_gflops, "gflops", "min_gflops")],
            ["max minutes", num(task.max_minutes, "count", "max_minutes")],
            ["rate per minute", num(task.rate_per_minute, "dps", "rate_per_minute")],
            ["escrow held", num(task.escrow, "dps", "escrow")],
            ["creation deposit held", num(task.deposit, "dps", "deposit")],
            ["created at", blockLink(task.created_height)],
            ["reported duration", num(task.reported_ms, "ms", "reported_ms")],
            ["spec hash", hex(task.spec_hash)],
            ["result hash", hex(task.result_hash)],
        ]),
        section(
            "Timeline",
            h(
                "ol",
                { class: "timeline", "data-table": "history" },
                task.history.map((step) =>
                    h(
                        "li",
                        { "data-to": step.to },
                        h("strong", {}, `${step.from} → ${step.to}`),
                        ` (${step.trigger}) at block `,
                        blockLink(step.height),
                        ", ",
                        num(step.timestamp_ms, "time"),
                        ", by ",
                        accountLink(step.actor),
                    ),
                ),
            ),
        ),
        section(
            "Bill",
            ending === undefined
                ? h("p", {}, "Not billed yet: the escrow above is held while the task is hot.")
                : [
                      fields(
                          "bill",
                          BILL.map((key) => {
                              const value = String(ending.attributes[key] ?? "");
                              const unit = key === "minutes" ? "count" : "dps";
                              return [key.replace(/_/g, " "), /^\d+$/.test(value) ? num(value, unit, key) : h("span", { "data-field": key }, value)];
                          }),
                      ),
                      h("p", {}, "From the event of the transition that ended the task:"),
                      eventsTable("ending-event", [ending]),
                  ],
        ),
        h("p", {}, link(route.tasks(), "All tasks")),
    );
};
