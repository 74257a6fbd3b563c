// An account: its balance and next nonce, the tasks it created, and its provider record if any.

import { RpcError } from "@gridledger/client";

import { fields, section, table } from "../dom.js";
import { num } from "../format.js";
import { hex, link, route } from "../links.js";
import { call, headHeight, listAll } from "../node.js";
import { pinned, title, type Page } from "../page.js";
import { TASK_HEADINGS, taskRows } from "./tasks.js";

export const accountPage: Page = async (main, [address = ""]) => {
    const height = await headHeight();
    const account = await call("account_get", { address: address as `0x${string}`, height });
    const provider = await call("provider_get", { address: account.address, height }).catch((error: unknown) => {
        if (error instanceof RpcError && error.reason === "provider_not_found") {
            return undefined;
        }
        throw error;
    });
    const validators = await call("validator_getSet", { height });
    const validator = validators.validators.find((v) => v.address === account.address);
    const tasks = await listAll("task_list", { by: "consumer", key: account.address, height });
    main.append(
        title("Account ", hex(account.address)),
        pinned(height),
        fields("account", [
            ["balance", num(account.balance, "dps", "balance")],
            ["next nonce", num(account.nonce, "count", "nonce")],
            ["provider", provider === undefined ? "no" : link(route.provider(account.address), provider.status)],
            ["validator", validator === undefined ? "no" : link(route.validators(), validator.name)],
        ]),
        section("Tasks it created", table("tasks", TASK_HEADINGS, taskRows(tasks.items))),
    );
};

