#include "tls.h"

#include <string>

#include <openssl/evp.h>
#include <openssl/x509.h>

namespace gridledger::p2p::tls {
namespace {

namespace ssl = boost::asio::ssl;

struct PkeyFree {
    void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct X509Free {
    void operator()(X509* cert) const { X509_free(cert); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using Cert = std::unique_ptr<X509, X509Free>;

/** Validity of the node certificate. Expiry is not checked by peers: identity is the key. */
constexpr long kValiditySeconds = 10L * 365 * 24 * 3600;

int peerCheckIndex() {
    static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    return index;
}

Result<Cert> selfSignedCertificate(EVP_PKEY* key, const NodeId& nodeId) {
    Cert cert(X509_new());
    if (!cert || X509_set_version(cert.get(), 2) != 1 ||
        ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1) != 1 ||
        X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) == nullptr ||
        X509_gmtime_adj(X509_getm_notAfter(cert.get()), kValiditySeconds) == nullptr ||
        X509_set_pubkey(cert.get(), key) != 1) {
        return fail(ErrorCode::kInternal, "p2p: cannot build the node certificate");
    }
    const std::string commonName = "gridledger node " + nodeId.hex();
    X509_NAME* name = X509_get_subject_name(cert.get());
    if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char*>(commonName.c_str()), -1,
                                   -1, 0) != 1 ||
        X509_set_issuer_name(cert.get(), name) != 1 ||
        X509_sign(cert.get(), key, nullptr) == 0) {  // Ed25519 signs without a digest
        return fail(ErrorCode::kInternal, "p2p: cannot sign the node certificate");
    }
    return cert;
}

/** Replaces OpenSSL's chain verification: a node certificate is judged by its key alone. */
int verifyCertificate(X509_STORE_CTX* store, void* /*arg*/) {
    auto* ssl =
        static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
    auto* check =
        ssl == nullptr ? nullptr : static_cast<PeerCheck*>(SSL_get_ex_data(ssl, peerCheckIndex()));
    X509* cert = X509_STORE_CTX_get0_cert(store);
    if (check == nullptr || cert == nullptr) {
        X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
        return 0;
    }
    const Result<NodeId> nodeId = nodeIdOfCertificate(cert);
    if (!nodeId) {
        check->refusal = CloseReason::kHandshakeFailed;
        X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
        return 0;
    }
    check->presented = *nodeId;
    if (check->expected && *check->expected != *nodeId) {
        check->refusal = CloseReason::kNodeIdMismatch;
        X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
        return 0;
    }
    check->verified = *nodeId;
    if (check->admit) {
        check->refusal = check->admit(*nodeId);
    } else {
        check->refusal = CloseReason::kNotAllowed;
    }
    if (check->refusal) {
        X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
        return 0;
    }
    X509_STORE_CTX_set_error(store, X509_V_OK);
    return 1;
}

}  // namespace

Result<NodeId> nodeIdOfCertificate(X509* cert) {
    EVP_PKEY* key = cert == nullptr ? nullptr : X509_get0_pubkey(cert);
    if (key == nullptr || EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
        return fail(ErrorCode::kInvalidArgument, "peer certificate key is not Ed25519");
    }
    crypto::Ed25519PublicKey pub;
    std::size_t length = pub.size();
    if (EVP_PKEY_get_raw_public_key(key, pub.data(), &length) != 1 || length != pub.size()) {
        return fail(ErrorCode::kInvalidArgument, "peer certificate key cannot be read");
    }
    return crypto::nodeIdOf(pub);
}

Result<std::unique_ptr<ssl::context>> makeContext(const crypto::NodeKey& key) {
    Pkey pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, key.seed().data(),
                                           key.seed().size()));
    if (!pkey) {
        return fail(ErrorCode::kInternal, "p2p: cannot load the node key");
    }
    GL_ASSIGN_OR_RETURN(cert, selfSignedCertificate(pkey.get(), key.nodeId()));
    std::unique_ptr<ssl::context> context;
    try {
        context = std::make_unique<ssl::context>(ssl::context::tls);
    } catch (const std::exception& e) {
        return fail(ErrorCode::kInternal,
                    std::string("p2p: cannot create a TLS context: ") + e.what());
    }
    SSL_CTX* ctx = context->native_handle();
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
        SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1 ||
        SSL_CTX_use_certificate(ctx, cert.get()) != 1 ||
        SSL_CTX_use_PrivateKey(ctx, pkey.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1 ||
        SSL_CTX_set_num_tickets(ctx, 0) != 1) {
        return fail(ErrorCode::kInternal, "p2p: cannot configure TLS 1.3 with the node key");
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    SSL_CTX_set_cert_verify_callback(ctx, verifyCertificate, nullptr);
    return context;
}

Status attach(SSL* ssl, PeerCheck* check) {
    if (ssl == nullptr || peerCheckIndex() < 0 ||
        SSL_set_ex_data(ssl, peerCheckIndex(), check) != 1) {
        return fail(ErrorCode::kInternal, "p2p: cannot attach the peer check");
    }
    return {};
}

}  // namespace gridledger::p2p::tls
