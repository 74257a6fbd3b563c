// `gridledger tx task-*`: the task lifecycle's payloads (docs/tasks.md), built, signed and
// submitted like every other payload (cmd_tx.cpp).

#include <gridledger/codec/payloads.h>

#include "cmd_tx_support.h"

namespace gridledger::node {
namespace po = boost::program_options;

const char* const kTaskTxUsage =
    R"(  task-create         --category C --min-gflops G           escrow DPS for a task of
                      --max-minutes M [--spec-hash 0x..]    at most M minutes; K providers
                      [--constraint "key op value"]...      run it and their results are
                      [--replicas K]                        compared (default 1)
  task-start          --task 0x..                           the assigned provider starts it
  task-refuse         --task 0x..                           the assigned provider refuses it
  task-top-up         --task 0x.. --extra-minutes M         the consumer adds escrow
  task-submit-result  --task 0x.. --result-hash 0x.. --duration-ms D [--output-uri U]
                      [--exit-code N]                       the assigned provider's result
  task-verify         --task 0x.. [--reject] [--reason R]   the consumer's or a verifier's verdict
                      [--result-hash 0x..]                  on a tied group: the upheld result
  task-report-failure --task 0x.. --duration-ms D [--exit-code N] [--error E]
  task-cancel         --task 0x..                           the consumer cancels it
  task-spot-check     --task 0x.. [--reason R]              a verifier challenges a settled
                      [--evidence 0x..]                     result, locking the spot-check bond
  task-spot-check-verdict --task 0x.. (--upheld | --rejected) [--reason R]
                                                            another verifier decides it)";

namespace {

/** `--task` as a task id. */
Result<Hash256> taskArg(const std::string& text) {
    return fixedArg<Hash256>(text, "task");
}

/** Commands that name only the task: start, refuse, cancel. */
template <typename Payload>
int runTaskRef(const std::string& name, const Args& args) {
    TxCommon c;
    std::string task;
    po::options_description o(name);
    o.add_options()("task", po::value(&task)->required(), "task id (0x + 64 hex)");
    return runTxPayload(name, o, args, c, [&]() -> Result<TxBuild> {
        GL_ASSIGN_OR_RETURN(id, taskArg(task));
        return fixedPayload(Payload{id});
    });
}

int runCreate(const Args& args) {
    TxCommon c;
    codec::TaskCreate t;
    std::string spec;
    po::options_description o("task-create");
    o.add_options()("category", po::value(&t.category)->required(), "workload category")(
        "min-gflops", po::value(&t.minGflops)->required(), "corrected GFLOP/s the task needs")(
        "max-minutes", po::value(&t.maxMinutes)->required(), "minutes the escrow pays for")(
        "constraint", po::value(&t.constraints)->multitoken(),
        "label constraint \"key op value\", op one of == != < <= > >= in (repeatable)")(
        "spec-hash", po::value(&spec), "0x hash of the job description")(
        "replicas", po::value(&t.replicas), "how many providers run it (default 1)");
    return runTxPayload("task-create", o, args, c, [&]() -> Result<TxBuild> {
        GL_ASSIGN_OR_RETURN(hash, optionalHashArg(spec, "spec-hash"));
        t.specHash = hash;
        return fixedPayload(t);
    });
}

int runTopUp(const Args& args) {
    TxCommon c;
    std::string task;
    std::uint64_t extra = 0;
    po::options_description o("task-top-up");
    o.add_options()("task", po::value(&task)->required(), "task id")(
        "extra-minutes", po::value(&extra)->required(), "minutes to add at the task's rate");
    return runTxPayload("task-top-up", o, args, c, [&]() -> Result<TxBuild> {
        GL_ASSIGN_OR_RETURN(id, taskArg(task));
        return fixedPayload(codec::TaskTopUp{id, extra});
    });
}

int runSubmitResult(const Args& args) {
    TxCommon c;
    std::string task;
    std::string hash;
    codec::TaskSubmitResult r;
    po::options_description o("task-submit-result");
    o.add_options()("task", po::value(&task)->required(), "task id")(
        "result-hash", po::value(&hash)->required(), "0x hash of the result")(
        "duration-ms", po::value(&r.durationMs)->required(), "the run's duration in ms")(
        "output-uri", po::value(&r.outputUri), "where the output is")(
        "exit-code", po::value(&r.exitCode), "the job's exit code");
    return runTxPayload("task-submit-result", o, args, c, [&]() -> Result<TxBuild> {
        GL_ASSIGN_OR_RETURN(id, taskArg(task));
        GL_ASSIGN_OR_RETURN(result, fixedArg<Hash256>(hash, "result-hash"));
        r.taskId = id;
        r.resultHash = result;
        return fixedPayload(r);
    });
}

int runVerify(const Args& args) {
    TxCommon c;
    std::string task;
    bool reject = false;
    std::string reason;
    std::string hash;
    po::options_description o("task-verify");
    o.add_options()("task", po::value(&task)->required(), "task id (a tied group: its group id)")(
        "reject", po::bool_switch(&reject), "reject the result (default: accept)")(
        "reason", po::value(&reason), "why")("result-hash", po::value(&hash),
                                             "a tied group's result that the verdict upholds");
    return runTxPayload("task-verify", o, args, c, [&]() -> Result<TxBuild> {
        GL_ASSIGN_OR_RETURN(id, taskArg(task));
        GL_ASSIGN_OR_RETURN(upheld, optionalHashArg(hash, "result-hash"));
        return fixedPayload(codec::TaskVerify{id, !reject, reason, upheld});
    });
}

int runSpotCheck(const Args& args) {
    TxCommon c;
    std::string task;
    std::string evidence;
    codec::TaskSpotCheck check;
    po::options_description o("task-spot-check");
    o.add_options()("task", po::value(&task)->required(), "the settled task's id")(
        "reason", po::value(&check.reason), "why the result is doubted")(
        "evidence", po::value(&evidence), "0x hash of the evidence");
    return runTxPayload("task-spot-check", o, args, c, [&]() -> Result<TxBuild> {
        GL_ASSIGN_OR_RETURN(id, taskArg(task));
        check.taskId = id;
        GL_ASSIGN_OR_RETURN(hash, optionalHashArg(evidence, "evidence"));
        check.evidence = hash;
        return fixedPayload(check);
    });
}

int runSpotCheckVerdict(const Args& args) {
    TxCommon c;
    std::string task;
    bool upheld = false;
    bool rejected = false;
    codec::TaskSpotCheckVerdict verdict;
    po::options_description o("task-spot-check-verdict");
    o.add_options()("task", po::value(&task)->required(), "the spot-checked task's id")(
        "upheld", po::bool_switch(&upheld), "the spot check is right: slash the provider")(
        "rejected", po::bool_switch(&rejected), "the result stands: the bond goes to the provider")(
        "reason", po::value(&verdict.reason), "why");
    return runTxPayload("task-spot-check-verdict", o, args, c, [&]() -> Result<TxBuild> {
        if (upheld == rejected) {
            return fail(ErrorCode::kInvalidArgument, "give exactly one of --upheld and --rejected");
        }
        GL_ASSIGN_OR_RETURN(id, taskArg(task));
        verdict.taskId = id;
        verdict.upheld = upheld;
        return fixedPayload(verdict);
    });
}

int runReportFailure(const Args& args) {
    TxCommon c;
    std::string task;
    codec::TaskReportFailure f;
    po::options_description o("task-report-failure");
    o.add_options()("task", po::value(&task)->required(), "task id")(
        "duration-ms", po::value(&f.durationMs)->required(), "how long it ran, ms")(
        "exit-code", po::value(&f.exitCode), "the job's exit code")("error", po::value(&f.error),
                                                                    "what went wrong");
    return runTxPayload("task-report-failure", o, args, c, [&]() -> Result<TxBuild> {
        GL_ASSIGN_OR_RETURN(id, taskArg(task));
        f.taskId = id;
        return fixedPayload(f);
    });
}

}  // namespace

int runTaskTx(const std::string& name, const Args& args) {
    using Run = int (*)(const Args&);
    const std::pair<const char*, Run> commands[] = {
        {"task-create", runCreate},
        {"task-start", [](const Args& a) { return runTaskRef<codec::TaskStart>("task-start", a); }},
        {"task-refuse",
         [](const Args& a) { return runTaskRef<codec::TaskRefuse>("task-refuse", a); }},
        {"task-top-up", runTopUp},
        {"task-submit-result", runSubmitResult},
        {"task-verify", runVerify},
        {"task-report-failure", runReportFailure},
        {"task-cancel",
         [](const Args& a) { return runTaskRef<codec::TaskCancel>("task-cancel", a); }},
        {"task-spot-check", runSpotCheck},
        {"task-spot-check-verdict", runSpotCheckVerdict},
    };
    for (const auto& [command, run] : commands) {
        if (name == command) {
            return run(args);
        }
    }
    return -1;
}

}  // namespace gridledger::node
