// Every system-contract payload survives encode → sign → decode unchanged, and malformed fixed-size
// fields are refused with kBadLength rather than decoded; the tx_decode fuzz corpus starts the
// fuzzer from a transaction of every payload kind and proposal action.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <gtest/gtest.h>

#include <gridledger/codec/tx.h>

namespace gridledger::codec::tx_payload_codec_test {
namespace {

const std::string kDomain = crypto::chainDomain("chain", Hash256{});

crypto::SecretKey key() {
    std::array<std::uint8_t, 32> seed{};
    seed[31] = 7;
    return *crypto::SecretKey::fromBytes(seed);
}

Address address(std::uint8_t n) {
    Address a;
    a[0] = n;
    return a;
}

Hash256 hash(std::uint8_t n) {
    Hash256 h;
    h[31] = n;
    return h;
}

std::vector<Payload> everyPayload() {
    PubKey validatorKey;
    validatorKey[0] = 3;
    NodeId node;
    node[0] = 4;
    DeviceModel device{"H100 SXM", 8,
                       989'000,    3'350,
                       80,         {"nvlink", "tensor_cores"},
                       700,        {{"interconnect_bandwidth", 900}}};
    return {
        Transfer{address(1), u128{12345}},
        Propose{AddValidator{"v-new", validatorKey, node, address(4)}},
        Propose{RemoveValidator{validatorKey}},
        Propose{AdmitProvider{address(2)}},
        Propose{SuspendProvider{address(2)}},
        Propose{ReinstateProvider{address(2)}},
        Propose{GrantVerifier{address(3)}},
        Propose{RevokeVerifier{address(3)}},
        Propose{SetParameter{"tokenomics.reward_share_bps", "1500"}},
        ProposalVote{17, true},
        ProposalVote{18, false},
        RegisterProvider{{device}, {{"region", "eu-west"}, {"tier", "3"}}, {"ml_training"}},
        Attest{4, 100, "ml_training", {{"H100 SXM", 6}}, 4'200, 7'500, {hash(1), hash(2)}},
        Attest{0, 0, "inference", {{"a", 1}, {"b", 2}}, 0, 0, {}},
        Challenge{address(2), 4, 100, "benchmark does not reproduce", hash(9)},
        Challenge{address(2), 4, 101, "", Hash256{}},
        TaskCreate{"ml_training", 1'000'000, {"region == eu", "tier >= 3"}, 60, hash(5)},
        TaskCreate{"hpc", 1, {}, 1, Hash256{}},
        TaskStart{hash(6)},
        TaskRefuse{hash(6)},
        TaskTopUp{hash(6), 30},
        TaskSubmitResult{hash(6), hash(7), "s3://bucket/out", 0, 2'700'000},
        TaskVerify{hash(6), true, "ok", {}},
        TaskVerify{hash(6), false, "", {}},
        TaskReportFailure{hash(6), 137, "oom", 600'000},
        TaskCancel{hash(6)},
        ProviderUnbond{},
        // Checked results: replicas, a tied group's upheld result, spot checks and their verdicts.
        TaskCreate{"ml_training", 1'000'000, {"region == eu"}, 60, hash(5), 3},
        TaskVerify{hash(6), true, "two of three agree", hash(7)},
        TaskSpotCheck{hash(6), "output does not reproduce", hash(8)},
        TaskSpotCheck{hash(6), "", Hash256{}},
        TaskSpotCheckVerdict{hash(6), true, "rerun differs"},
        TaskSpotCheckVerdict{hash(6), false, ""},
    };
}

TEST(TxPayloadCodec, EveryPayloadRoundTripsThroughASignedTransaction) {
    const auto k = key();
    for (const auto& payload : everyPayload()) {
        SCOPED_TRACE(std::string(payloadKind(payload)));
        const TxBody body{"chain", k.publicKey(), 3, 99, payload, 12'345};
        const SignedTx tx = signTx(body, k, kDomain);
        auto decoded = decodeTx(tx.raw);
        ASSERT_TRUE(decoded) << decoded.error().message;
        EXPECT_TRUE(decoded->body.payload == payload);
        EXPECT_EQ(decoded->body.fee, 12'345U);
        EXPECT_TRUE(verifyTxSignature(*decoded, kDomain));
        EXPECT_EQ(encodeTxBody(decoded->body), tx.bodyBytes);
    }
}

TEST(TxPayloadCodec, KindsHaveStableNames) {
    const auto all = everyPayload();
    EXPECT_EQ(payloadKind(all[0]), "transfer");
    EXPECT_EQ(payloadKind(all[1]), "propose");
    EXPECT_EQ(actionKind(std::get<Propose>(all[1]).action), "add_validator");
    EXPECT_EQ(actionKind(std::get<Propose>(all[8]).action), "set_parameter");
    EXPECT_EQ(payloadKind(all[9]), "vote");
    EXPECT_EQ(payloadKind(all[11]), "register_provider");
    EXPECT_EQ(payloadKind(all[12]), "attest");
    EXPECT_EQ(payloadKind(all[14]), "challenge");
    EXPECT_EQ(payloadKind(all[16]), "task_create");
    EXPECT_EQ(payloadKind(all[18]), "task_start");
    EXPECT_EQ(payloadKind(all[19]), "task_refuse");
    EXPECT_EQ(payloadKind(all[20]), "task_top_up");
    EXPECT_EQ(payloadKind(all[21]), "task_submit_result");
    EXPECT_EQ(payloadKind(all[22]), "task_verify");
    EXPECT_EQ(payloadKind(all[24]), "task_report_failure");
    EXPECT_EQ(payloadKind(all[25]), "task_cancel");
    EXPECT_EQ(payloadKind(all[26]), "provider_unbond");
    EXPECT_EQ(payloadKind(all[27]), "task_create");
    EXPECT_EQ(payloadKind(all[28]), "task_verify");
    EXPECT_EQ(payloadKind(all[29]), "task_spot_check");
    EXPECT_EQ(payloadKind(all[31]), "task_spot_check_verdict");
}

TEST(TxPayloadCodec, PayloadKindNamesFollowTheVariantOrderAndTheNewKindsComeLast) {
    for (const auto& payload : everyPayload()) {
        EXPECT_EQ(payloadKind(payload), kPayloadKinds[payload.index()]);
    }
    ASSERT_EQ(kPayloadKindCount, 17U);
    EXPECT_EQ(kPayloadKinds[14], "provider_unbond");
    EXPECT_EQ(kPayloadKinds[15], "task_spot_check");
    EXPECT_EQ(kPayloadKinds[16], "task_spot_check_verdict");
    EXPECT_EQ(Payload(TaskSpotCheck{}).index(), 15U);
    EXPECT_EQ(Payload(TaskSpotCheckVerdict{}).index(), 16U);
    const std::set<std::string_view> distinct(kPayloadKinds.begin(), kPayloadKinds.end());
    EXPECT_EQ(distinct.size(), kPayloadKindCount);
}

/** The body of a transaction carrying `payload`, encoded. */
Bytes bodyBytes(const Payload& payload) {
    return encodeTxBody(TxBody{"chain", key().publicKey(), 3, 99, payload, 12'345});
}

TEST(TxPayloadCodec, ReplicasAndAResultHashAreTheLastFieldsAndLeftOutWhenZero) {
    // The payload is the body's last field and the new fields are their message's last, so a
    // set field adds exactly its own bytes at the end (and to the message's length byte); unset,
    // the bytes are those a client that knows nothing of the fields writes.
    const TaskCreate single{"hpc", 1, {}, 1, Hash256{}};
    TaskCreate three = single;
    three.replicas = 3;
    const Bytes one = bodyBytes(single);
    const Bytes replicated = bodyBytes(three);
    ASSERT_EQ(replicated.size(), one.size() + 2);
    EXPECT_EQ(Bytes(replicated.end() - 2, replicated.end()), (Bytes{0x30, 0x03}));  // field 6

    const TaskVerify plain{hash(6), true, "", {}};
    const TaskVerify upholding{hash(6), true, "", hash(7)};
    const Bytes verdict = bodyBytes(plain);
    const Bytes named = bodyBytes(upholding);
    ASSERT_EQ(named.size(), verdict.size() + 34);
    Bytes tail{0x22, 0x20};  // field 4, length-delimited, 32 bytes
    append(tail, hash(7).view());
    EXPECT_EQ(Bytes(named.end() - 34, named.end()), tail);
}

TEST(TxPayloadCodec, AnyFlippedByteOfEachPayloadBreaksDecodingOrTheSignature) {
    const auto k = key();
    for (const auto& payload : everyPayload()) {
        SCOPED_TRACE(std::string(payloadKind(payload)));
        const SignedTx tx = signTx(TxBody{"chain", k.publicKey(), 0, 9, payload}, k, kDomain);
        for (std::size_t i = 0; i < tx.raw.size(); ++i) {
            Bytes bad = tx.raw;
            bad[i] ^= 0x01;
            auto decoded = decodeTx(bad);
            EXPECT_TRUE(!decoded || !verifyTxSignature(*decoded, kDomain)) << "byte " << i;
        }
    }
}

/** The kind of a payload, with the action for a proposal ("propose/set_parameter"). */
std::string kindOf(const Payload& payload) {
    std::string kind(payloadKind(payload));
    if (const auto* propose = std::get_if<Propose>(&payload)) {
        kind += "/" + std::string(actionKind(propose->action));
    }
    return kind;
}

TEST(TxPayloadCodec, TheFuzzCorpusHoldsATransactionOfEveryPayloadKindAndProposalAction) {
    std::set<std::string> wanted;
    for (const auto& payload : everyPayload()) {
        wanted.insert(kindOf(payload));
    }
    ASSERT_EQ(wanted.size(), kPayloadKindCount - 1 + std::variant_size_v<ProposalAction>);
    std::set<std::string> found;
    const std::filesystem::path corpus =
        std::filesystem::path(GRIDLEDGER_SOURCE_DIR) / "tests/fuzz/corpus/tx_decode";
    for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
        std::ifstream in(entry.path(), std::ios::binary);
        const Bytes raw{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        const auto tx = decodeTx(raw);
        ASSERT_TRUE(tx) << entry.path() << ": " << tx.error().message;
        found.insert(kindOf(tx->body.payload));
    }
    EXPECT_EQ(found, wanted);
}

}  // namespace
}  // namespace gridledger::codec::tx_payload_codec_test
