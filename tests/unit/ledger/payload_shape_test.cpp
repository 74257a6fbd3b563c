// Stateless shape checks of the system-contract payloads (ledger::checkPayloadShape), which both
// admission and execution apply.

#include <gtest/gtest.h>

#include <gridledger/ledger/tx_validation.h>

namespace gridledger::ledger::payload_shape_test {
namespace {

const Address kSender = [] {
    Address a;
    a[0] = 1;
    return a;
}();

codec::RegisterProvider inventory() {
    codec::DeviceModel d{"A100", 4, 312'000, 2'039, 80, {"tensor_cores"}, 400, {}};
    return codec::RegisterProvider{{d}, {{"region", "eu"}}, {"ml_training"}};
}

codec::Attest attest() {
    return codec::Attest{0, 0, "ml_training", {{"A100", 2}}, 800, 5'000, {}};
}

Address someone() {
    Address a;
    a[0] = 9;
    return a;
}

TEST(PayloadShape, WellFormedPayloadsPass) {
    NodeId node;
    node[0] = 1;
    PubKey key;
    key[0] = 1;
    for (const codec::Payload& p : std::vector<codec::Payload>{
             inventory(),
             attest(),
             codec::Challenge{someone(), 0, 0, "why", {}},
             codec::ProposalVote{0, true},
             codec::Propose{codec::AddValidator{"v", key, node, someone()}},
             codec::Propose{codec::SetParameter{"tokenomics.pool_share_bps", "500"}},
             codec::TaskCreate{"ml_training", 1, {"region == eu"}, 1, {}},
             codec::TaskStart{Hash256{{1}}},
             codec::TaskRefuse{Hash256{{1}}},
             codec::TaskTopUp{Hash256{{1}}, 1},
             codec::TaskSubmitResult{Hash256{{1}}, Hash256{{2}}, "s3://out", 0, 0},
             codec::TaskVerify{Hash256{{1}}, false, "why", {}},
             codec::TaskReportFailure{Hash256{{1}}, 1, "oom", 0},
             codec::TaskCancel{Hash256{{1}}},
             codec::TaskCreate{"ml_training", 1, {}, 1, {}, kMaxTaskReplicas},
             codec::TaskVerify{Hash256{{1}}, true, "", Hash256{{2}}},
             codec::TaskSpotCheck{Hash256{{1}}, "does not reproduce", Hash256{{3}}},
             codec::TaskSpotCheck{Hash256{{1}}, "", {}},
             codec::TaskSpotCheckVerdict{Hash256{{1}}, true, "rerun differs"},
             codec::TaskSpotCheckVerdict{Hash256{{1}}, false, ""}}) {
        auto status = checkPayloadShape(p, kSender);
        EXPECT_TRUE(status) << codec::payloadKind(p) << ": " << status.error().message;
    }
}

TEST(PayloadShape, MalformedPayloadsAreRefusedWithTheirCode) {
    struct Case {
        std::string name;
        codec::Payload payload;
        ErrorCode code;
    };
    auto inv = [](auto change) {
        auto r = inventory();
        change(r);
        return codec::Payload{r};
    };
    auto att = [](auto change) {
        auto a = attest();
        change(a);
        return codec::Payload{a};
    };
    const std::string tooLong(kMaxNameBytes + 1, 'x');
    const std::vector<Case> cases{
        {"no device", inv([](auto& r) { r.devices.clear(); }), ErrorCode::kInvalidInventory},
        {"empty model", inv([](auto& r) { r.devices[0].model = ""; }),
         ErrorCode::kInvalidInventory},
        {"model too long", inv([&](auto& r) { r.devices[0].model = tooLong; }),
         ErrorCode::kInvalidInventory},
        {"non-printable model", inv([](auto& r) { r.devices[0].model = "a\nb"; }),
         ErrorCode::kInvalidInventory},
        {"duplicate model", inv([](auto& r) { r.devices.push_back(r.devices[0]); }),
         ErrorCode::kInvalidInventory},
        {"count 0", inv([](auto& r) { r.devices[0].count = 0; }), ErrorCode::kInvalidInventory},
        {"peak 0", inv([](auto& r) { r.devices[0].peakGflops = 0; }), ErrorCode::kInvalidInventory},
        {"a count beyond 10^6", inv([](auto& r) { r.devices[0].count = 1'000'001; }),
         ErrorCode::kInvalidInventory},
        {"a peak beyond 10^9 GFLOP/s",
         inv([](auto& r) { r.devices[0].peakGflops = 1'000'000'001; }),
         ErrorCode::kInvalidInventory},
        {"a count and a peak at their bounds", inv([](auto& r) {
             r.devices[0].count = 1'000'000;
             r.devices[0].peakGflops = 1'000'000'000;
         }),
         ErrorCode::kOk},
        {"duplicate feature", inv([](auto& r) {
             r.devices[0].features = {"a", "a"};
         }),
         ErrorCode::kInvalidInventory},
        {"duplicate factor", inv([](auto& r) {
             r.devices[0].factors = {{"x", 1}, {"x", 2}};
         }),
         ErrorCode::kInvalidInventory},
        {"duplicate label key", inv([](auto& r) { r.labels.push_back(r.labels[0]); }),
         ErrorCode::kInvalidInventory},
        {"no category", inv([](auto& r) { r.categories.clear(); }), ErrorCode::kInvalidInventory},
        {"too many models", inv([](auto& r) {
             r.devices.clear();
             for (std::size_t i = 0; i <= kMaxInventoryModels; ++i) {
                 r.devices.push_back({"m" + std::to_string(i), 1, 1, 0, 0, {}, 0, {}});
             }
         }),
         ErrorCode::kInvalidInventory},
        {"attest without category", att([](auto& a) { a.category = ""; }),
         ErrorCode::kInvalidArgument},
        {"attest without device", att([](auto& a) { a.devices.clear(); }),
         ErrorCode::kInvalidArgument},
        {"attest count 0", att([](auto& a) { a.devices[0].count = 0; }),
         ErrorCode::kInvalidArgument},
        {"attest duplicate model", att([](auto& a) { a.devices.push_back(a.devices[0]); }),
         ErrorCode::kInvalidArgument},
        {"renewable share above 100%", att([](auto& a) { a.renewableShareBps = 10'001; }),
         ErrorCode::kInvalidArgument},
        {"too much evidence", att([](auto& a) { a.evidence.resize(kMaxEvidence + 1); }),
         ErrorCode::kInvalidArgument},
        {"challenge reason too long",
         codec::Challenge{someone(), 0, 0, std::string(kMaxTextBytes + 1, 'r'), {}},
         ErrorCode::kInvalidArgument},
        {"empty parameter value", codec::Propose{codec::SetParameter{"a", ""}},
         ErrorCode::kInvalidProposal},
        {"zero provider address", codec::Propose{codec::AdmitProvider{Address{}}},
         ErrorCode::kInvalidProposal},
        {"zero consensus key",
         codec::Propose{codec::AddValidator{"v", PubKey{}, NodeId{{1}}, someone()}},
         ErrorCode::kInvalidProposal},
        {"zero validator account",
         codec::Propose{codec::AddValidator{"v", PubKey{{1}}, NodeId{{1}}, Address{}}},
         ErrorCode::kInvalidProposal},
        {"task without category", codec::TaskCreate{"", 1, {}, 1, {}}, ErrorCode::kInvalidTask},
        {"task of 0 GFLOP/s", codec::TaskCreate{"c", 0, {}, 1, {}}, ErrorCode::kInvalidTask},
        {"task of 0 minutes", codec::TaskCreate{"c", 1, {}, 0, {}}, ErrorCode::kInvalidTask},
        {"empty constraint", codec::TaskCreate{"c", 1, {""}, 1, {}}, ErrorCode::kInvalidTask},
        {"too many constraints",
         codec::TaskCreate{"c", 1, std::vector<std::string>(kMaxLabels + 1, "a == b"), 1, {}},
         ErrorCode::kInvalidTask},
        {"zero task id", codec::TaskCancel{Hash256{}}, ErrorCode::kInvalidTask},
        {"top-up of 0 minutes", codec::TaskTopUp{Hash256{{1}}, 0}, ErrorCode::kInvalidTask},
        {"result without hash", codec::TaskSubmitResult{Hash256{{1}}, Hash256{}, "", 0, 0},
         ErrorCode::kInvalidTask},
        {"output uri too long",
         codec::TaskSubmitResult{Hash256{{1}}, Hash256{{2}}, std::string(kMaxTextBytes + 1, 'u'), 0,
                                 0},
         ErrorCode::kInvalidTask},
        {"non-printable failure error", codec::TaskReportFailure{Hash256{{1}}, 1, "a\tb", 0},
         ErrorCode::kInvalidTask},
        // Checked results (docs/tasks.md "Redundant tasks", "Spot checks").
        {"replicas above the hard cap", codec::TaskCreate{"c", 1, {}, 1, {}, kMaxTaskReplicas + 1},
         ErrorCode::kInvalidTask},
        {"replicas at the hard cap", codec::TaskCreate{"c", 1, {}, 1, {}, kMaxTaskReplicas},
         ErrorCode::kOk},
        {"a rejecting verdict that upholds a result hash",
         codec::TaskVerify{Hash256{{1}}, false, "", Hash256{{2}}}, ErrorCode::kInvalidTask},
        {"verdict reason too long",
         codec::TaskVerify{Hash256{{1}}, true, std::string(kMaxTextBytes + 1, 'r'), Hash256{{2}}},
         ErrorCode::kInvalidTask},
        {"spot check of a zero task id", codec::TaskSpotCheck{Hash256{}, "why", Hash256{{3}}},
         ErrorCode::kInvalidTask},
        {"spot-check reason too long",
         codec::TaskSpotCheck{Hash256{{1}}, std::string(kMaxTextBytes + 1, 'r'), {}},
         ErrorCode::kInvalidTask},
        {"spot-check reason at the bound",
         codec::TaskSpotCheck{Hash256{{1}}, std::string(kMaxTextBytes, 'r'), {}}, ErrorCode::kOk},
        {"non-printable spot-check reason", codec::TaskSpotCheck{Hash256{{1}}, "a\nb", {}},
         ErrorCode::kInvalidTask},
        {"spot-check verdict on a zero task id",
         codec::TaskSpotCheckVerdict{Hash256{}, true, "why"}, ErrorCode::kInvalidTask},
        {"spot-check verdict reason too long",
         codec::TaskSpotCheckVerdict{Hash256{{1}}, false, std::string(kMaxTextBytes + 1, 'r')},
         ErrorCode::kInvalidTask},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        auto status = checkPayloadShape(c.payload, kSender);
        if (c.code == ErrorCode::kOk) {
            EXPECT_TRUE(status) << status.error().message;
            continue;
        }
        ASSERT_FALSE(status);
        EXPECT_EQ(status.error().code, c.code) << reasonOf(status.error().code);
    }
}

}  // namespace
}  // namespace gridledger::ledger::payload_shape_test
