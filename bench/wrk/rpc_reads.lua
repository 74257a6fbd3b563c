-- JSON-RPC reads for wrk (gridledger_node_load --reads): account_get of existing accounts and
-- block_get of existing heights, alternated, each POSTed to the node's JSON-RPC as one request.
-- Arguments (after wrk's `--`): the highest height to read, then the addresses to read.
-- Every answer is checked: one that is not HTTP 200 carrying a "result" counts as an error, and
-- done() prints their number as rpc_errors=.

local height = 1
local accounts = {}
local sent = 0
errors = 0 -- a global: done() reads it from each thread
local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    height = tonumber(args[1])
    for i = 2, #args do
        accounts[#accounts + 1] = args[i]
    end
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
end

function request()
    sent = sent + 1
    local call
    if sent % 2 == 0 then
        call = string.format('"method":"account_get","params":["%s"]', accounts[sent % #accounts + 1])
    else
        call = string.format('"method":"block_get","params":["%d"]', math.random(height))
    end
    return wrk.format(nil, "/", nil, string.format('{"jsonrpc":"2.0","id":%d,%s}', sent, call))
end

function response(status, headers, body)
    if status ~= 200 or not body:find('"result":', 1, true) then
        errors = errors + 1
    end
end

function done(summary, latency, requests)
    local total = 0
    for _, thread in ipairs(threads) do
        total = total + thread:get("errors")
    end
    io.write(string.format("rpc_errors=%d\n", total))
end
