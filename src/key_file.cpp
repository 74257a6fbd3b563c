#include "key_file.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <boost/json.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

namespace gridledger::node {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

/** Temp names tried beside a file before giving up: <file>.tmp, <file>.tmp1, ... */
constexpr int kTempAttempts = 16;

std::string_view kindName(KeyKind kind) {
    return kind == KeyKind::kNode ? "node" : "account";
}

std::string trimmed(std::string_view text) {
    const auto begin = text.find_first_not_of(" \t\r\n");
    const auto end = text.find_last_not_of(" \t\r\n");
    return begin == std::string_view::npos ? std::string()
                                           : std::string(text.substr(begin, end - begin + 1));
}

/**
 * The associated data of an encrypted key file: the format, the key's kind and name, and its
 * public key. A file renamed to another key, passed off as the other kind, or given another public
 * key fails to authenticate.
 */
Bytes associatedData(KeyKind kind, const std::string& name, const std::string& publicKeyHex) {
    const std::string text = "gridledger key file v" + std::to_string(kKeyFileVersion) + "\n" +
                             std::string(kindName(kind)) + "\n" + name + "\n" + publicKeyHex;
    return {text.begin(), text.end()};
}

/** Reads a line from the terminal with echo off; the echo is restored whatever happens. */
Result<std::string> promptNoEcho(const std::string& prompt) {
    std::cerr << prompt << std::flush;
    termios old{};
    const bool terminal = tcgetattr(STDIN_FILENO, &old) == 0;
    if (terminal) {
        termios quiet = old;
        quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    }
    std::string line;
    const bool read = static_cast<bool>(std::getline(std::cin, line));
    if (terminal) {
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
    }
    std::cerr << "\n";
    if (!read) {
        return fail(ErrorCode::kConfig, "no passphrase entered");
    }
    return line;
}

Result<std::string> readPassphraseFile(const fs::path& path) {
    std::string text;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return fail(ErrorCode::kConfig,
                    "cannot read passphrase file " + path.string() + ": " + errnoText());
    }
    std::array<char, 4096> buffer{};
    for (;;) {
        const ssize_t n = ::read(fd, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        text.append(buffer.data(), static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (text.ends_with("\r\n")) {
        text.resize(text.size() - 2);
    } else if (text.ends_with('\n')) {
        text.pop_back();
    }
    return text;
}

Result<std::uint64_t> uintField(const json::object& obj, std::string_view key) {
    const auto* value = obj.if_contains(key);
    boost::system::error_code ec;
    const auto number = value != nullptr ? value->to_number<std::uint64_t>(ec) : 0;
    if (value == nullptr || ec) {
        return fail(ErrorCode::kMalformed, "'" + std::string(key) + "' is not a whole number");
    }
    return number;
}

Result<std::string> stringField(const json::object& obj, std::string_view key) {
    const auto* value = obj.if_contains(key);
    if (value == nullptr || !value->is_string()) {
        return fail(ErrorCode::kMalformed, "'" + std::string(key) + "' is missing");
    }
    return std::string(value->as_string());
}

Result<Bytes> hexField(const json::object& obj, std::string_view key) {
    GL_ASSIGN_OR_RETURN(text, stringField(obj, key));
    auto bytes = fromHex(text);
    if (!bytes) {
        return fail(ErrorCode::kMalformed, "'" + std::string(key) + "' is not 0x hex");
    }
    return *bytes;
}

/** The sealed box of an encrypted key file's JSON, its version, kdf and cipher checked. */
Result<crypto::SealedBox> parseBox(const json::object& obj) {
    GL_ASSIGN_OR_RETURN(kdf, stringField(obj, "kdf"));
    GL_ASSIGN_OR_RETURN(cipher, stringField(obj, "cipher"));
    if (kdf != "scrypt" || cipher != "aes-256-gcm") {
        return fail(ErrorCode::kMalformed,
                    "kdf '" + kdf + "' and cipher '" + cipher + "' are not scrypt and aes-256-gcm");
    }
    crypto::SealedBox box;
    GL_ASSIGN_OR_RETURN(n, uintField(obj, "n"));
    GL_ASSIGN_OR_RETURN(r, uintField(obj, "r"));
    GL_ASSIGN_OR_RETURN(p, uintField(obj, "p"));
    if (r > UINT32_MAX || p > UINT32_MAX) {
        return fail(ErrorCode::kMalformed, "scrypt r or p out of range");
    }
    box.kdf = {.n = n, .r = static_cast<std::uint32_t>(r), .p = static_cast<std::uint32_t>(p)};
    GL_TRY(crypto::checkScryptParams(box.kdf));
    GL_ASSIGN_OR_RETURN(salt, hexField(obj, "salt"));
    GL_ASSIGN_OR_RETURN(nonce, hexField(obj, "nonce"));
    GL_ASSIGN_OR_RETURN(ciphertext, hexField(obj, "ciphertext"));
    GL_ASSIGN_OR_RETURN(tag, hexField(obj, "tag"));
    box.salt = std::move(salt);
    box.nonce = std::move(nonce);
    box.ciphertext = std::move(ciphertext);
    box.tag = std::move(tag);
    return box;
}

Result<json::object> parseEncrypted(std::string_view text, const std::string& name) {
    boost::system::error_code ec;
    auto value = json::parse(text, ec);
    if (ec || !value.is_object()) {
        return fail(ErrorCode::kConfig, "key file of '" + name + "' is not a JSON object");
    }
    auto& obj = value.as_object();
    auto version = uintField(obj, "version");
    if (!version) {
        return fail(ErrorCode::kConfig, "key file of '" + name + "' has no format version");
    }
    if (*version != kKeyFileVersion) {
        return fail(ErrorCode::kConfig, "key file of '" + name + "' has format version " +
                                            std::to_string(*version) +
                                            "; this gridledger reads "
                                            "version " +
                                            std::to_string(kKeyFileVersion));
    }
    return std::move(obj);
}

}  // namespace

Passphrase Passphrase::of(std::string text) {
    Passphrase passphrase;
    passphrase.value_ = std::move(text);
    return passphrase;
}

Result<std::string> Passphrase::get(std::string_view what, bool confirm) {
    if (value_) {
        return *value_;
    }
    std::string text;
    if (!source_.file.empty()) {
        GL_ASSIGN_OR_RETURN(fromFile, readPassphraseFile(source_.file));
        text = std::move(fromFile);
    } else if (const char* env =
                   source_.envVar.empty() ? nullptr : std::getenv(source_.envVar.c_str());
               env != nullptr && *env != '\0') {
        text = env;
    } else if (source_.prompt && ::isatty(STDIN_FILENO) == 1) {
        GL_ASSIGN_OR_RETURN(entered, promptNoEcho("passphrase for " + std::string(what) + ": "));
        if (confirm) {
            GL_ASSIGN_OR_RETURN(again, promptNoEcho("the same passphrase again: "));
            if (again != entered) {
                return fail(ErrorCode::kConfig, "the passphrases differ");
            }
        }
        text = std::move(entered);
    } else {
        return fail(ErrorCode::kConfig, "no passphrase given for " + std::string(what) +
                                            (source_.hint.empty() ? "" : ": " + source_.hint));
    }
    if (text.empty()) {
        return fail(ErrorCode::kConfig, "the passphrase for " + std::string(what) + " is empty");
    }
    value_ = std::move(text);
    return *value_;
}

Result<std::string> encodeKeyFile(ByteView secret, KeyKind kind, const std::string& name,
                                  const std::string& publicKeyHex,
                                  const KeyProtection& protection) {
    if (!protection.passphrase) {
        return toHex(secret) + "\n";
    }
    if (protection.passphrase->empty()) {
        return fail(ErrorCode::kInvalidArgument, "the passphrase is empty");
    }
    GL_ASSIGN_OR_RETURN(
        box, crypto::seal(secret, *protection.passphrase, associatedData(kind, name, publicKeyHex),
                          protection.kdf));
    const json::object obj{{"version", kKeyFileVersion},
                           {"kind", kindName(kind)},
                           {"public_key", publicKeyHex},
                           {"kdf", "scrypt"},
                           {"n", box.kdf.n},
                           {"r", box.kdf.r},
                           {"p", box.kdf.p},
                           {"salt", toHex(box.salt)},
                           {"cipher", "aes-256-gcm"},
                           {"nonce", toHex(box.nonce)},
                           {"ciphertext", toHex(box.ciphertext)},
                           {"tag", toHex(box.tag)}};
    return json::serialize(obj) + "\n";
}

Result<KeyFileInfo> inspectKeyFile(std::string_view text, const std::string& name) {
    const std::string body = trimmed(text);
    if (body.starts_with('{')) {
        GL_ASSIGN_OR_RETURN(obj, parseEncrypted(body, name));
        auto publicKey = stringField(obj, "public_key");
        if (!publicKey) {
            return fail(ErrorCode::kConfig,
                        "key file of '" + name + "': " + publicKey.error().message);
        }
        return KeyFileInfo{.encrypted = true, .publicKey = *publicKey};
    }
    if (!fromHex(body)) {
        return fail(ErrorCode::kConfig,
                    "key file of '" + name + "' is neither 0x hex nor an encrypted key file");
    }
    return KeyFileInfo{};
}

Result<Bytes> decodeKeyFile(std::string_view text, KeyKind kind, const std::string& name,
                            Passphrase& passphrase) {
    const std::string body = trimmed(text);
    if (!body.starts_with('{')) {
        auto bytes = fromHex(body);
        if (!bytes) {
            return fail(ErrorCode::kConfig,
                        "key file of '" + name + "' is neither 0x hex nor an encrypted key file");
        }
        return *bytes;
    }
    GL_ASSIGN_OR_RETURN(obj, parseEncrypted(body, name));
    auto box = parseBox(obj);
    auto publicKey = stringField(obj, "public_key");
    auto fileKind = stringField(obj, "kind");
    if (!box || !publicKey || !fileKind) {
        const Error& error =
            !box ? box.error() : (!publicKey ? publicKey.error() : fileKind.error());
        return fail(ErrorCode::kConfig, "key file of '" + name + "': " + error.message);
    }
    if (*fileKind != kindName(kind)) {
        return fail(ErrorCode::kConfig, "key file of '" + name + "' holds a key of kind '" +
                                            *fileKind + "', not '" + std::string(kindName(kind)) +
                                            "'");
    }
    const std::string what = "key '" + name + "'";
    GL_ASSIGN_OR_RETURN(secret, passphrase.get(what));
    auto opened = crypto::open(*box, secret, associatedData(kind, name, *publicKey));
    if (!opened) {
        if (opened.error().code == ErrorCode::kBadSignature) {
            return fail(ErrorCode::kConfig, "wrong passphrase for " + what +
                                                " (or its key file was altered or renamed)");
        }
        return fail(ErrorCode::kConfig, "key file of '" + name + "': " + opened.error().message);
    }
    return *opened;
}

Status writeFileAtomically(const fs::path& path, std::string_view content, mode_t mode,
                           mode_t dirMode) {
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
        fs::create_directories(dir, ec);
        if (ec || ::chmod(dir.c_str(), dirMode) != 0) {
            return fail(ErrorCode::kIo, "cannot create " + dir.string());
        }
    }
    fs::path tmp;
    int fd = -1;
    for (int attempt = 0; attempt < kTempAttempts && fd < 0; ++attempt) {
        tmp = path.string() + ".tmp" + (attempt == 0 ? "" : std::to_string(attempt));
        // O_EXCL with O_CREAT never opens an existing file and never follows a link at the temp
        // path; the mode is given at creation, so the file is never wider than `mode`.
        fd = ::open(tmp.c_str(), O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, mode);
        if (fd < 0 && errno != EEXIST) {
            return fail(ErrorCode::kIo, "cannot create " + tmp.string() + ": " + errnoText());
        }
    }
    if (fd < 0) {
        return fail(ErrorCode::kIo, "cannot create a temp file beside " + path.string() + ": " +
                                        std::to_string(kTempAttempts) +
                                        " names are taken; remove the stale " + path.string() +
                                        ".tmp* files");
    }
    // The umask may have narrowed `mode`; fchmod on the descriptor sets it exactly, with no
    // window in which the file is wider.
    bool ok = ::fchmod(fd, mode) == 0;
    std::size_t done = 0;
    while (ok && done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        ok = n > 0;
        done += ok ? static_cast<std::size_t>(n) : 0;
    }
    ok = ok && ::fsync(fd) == 0;
    const std::string failure = ok ? std::string() : errnoText();
    ::close(fd);
    if (!ok) {
        ::unlink(tmp.c_str());
        return fail(ErrorCode::kIo, "cannot write " + tmp.string() + ": " + failure);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string renameFailure = errnoText();
        ::unlink(tmp.c_str());
        return fail(ErrorCode::kIo, "cannot move " + tmp.string() + ": " + renameFailure);
    }
    // The rename is durable only once the directory entry is.
    return syncDirectory(dir);
}

std::string errnoText() {
    return std::strerror(errno);
}

Status syncDirectory(const fs::path& dir) {
    const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd < 0 || ::fsync(dirFd) != 0) {
        const std::string dirFailure = errnoText();
        if (dirFd >= 0) {
            ::close(dirFd);
        }
        return fail(ErrorCode::kIo, "cannot sync " + dir.string() + ": " + dirFailure);
    }
    ::close(dirFd);
    return {};
}

Result<std::string> readSecretFile(const fs::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        return fail(ErrorCode::kIo, "cannot read " + path.string() + ": " + errnoText());
    }
    if (S_ISLNK(st.st_mode)) {
        return fail(ErrorCode::kConfig, path.string() +
                                            " is a symbolic link; a key file must be a regular "
                                            "file (move the file it points to into its place)");
    }
    // O_NOFOLLOW closes the window between the lstat and the open; the fstat checks the file
    // actually opened.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return fail(ErrorCode::kIo, "cannot read " + path.string() + ": " + errnoText());
    }
    std::string text;
    bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (ok && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
        ::close(fd);
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777U));
        return fail(ErrorCode::kConfig, path.string() + " is accessible by group or others (mode " +
                                            mode + "); run: chmod 600 " + path.string());
    }
    std::array<char, 4096> buffer{};
    while (ok) {
        const ssize_t n = ::read(fd, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        ok = n >= 0;
        if (n <= 0) {
            break;
        }
        text.append(buffer.data(), static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (!ok) {
        return fail(ErrorCode::kIo, "cannot read " + path.string() + " as a regular file");
    }
    return text;
}

}  // namespace gridledger::node
